/**
 * What the rollout doctor reads: the Argo CD and Kubernetes objects of a cluster, from a dump file
 * (`kubectl get ... -A -o json`) or read live (inCluster.ts, watch.ts).
 */
import type { AppProject, Application, ApplicationSet, Job, Pod } from "../argo/types";
import type { ProgressiveSyncCount } from "../argo/appsetMetrics";

export interface Dump {
    applicationSets: ApplicationSet[];
    applications: Application[];
    jobs: Job[];
    pods: Pod[];
    /** The AppProjects, where the input holds them (their sync windows). */
    appProjects?: AppProject[];
    /** The tail of failed hook Pods' logs, by "namespace/pod" (live mode reads them; a dump has none). */
    logs?: Record<string, string>;
    /** Argo CD 3.6's own count of each step's Applications per status (its metrics), where read live; a dump has none. */
    progressiveSync?: ProgressiveSyncCount[];
    /** Read from a file (a dump made by someone, which may leave kinds out), not from the cluster. */
    fromFile?: boolean;
    /** Read live: the namespaces whose Jobs were read (a few, not all); unset: every namespace the input holds. */
    jobNamespaces?: string[];
}

export class DumpError extends Error {}

/** The fields of Argo CD's and Kubernetes' objects that say when something happened. */
const DUMP_TIMES = new Set([
    "reconciledAt",
    "lastTransitionTime",
    "startedAt",
    "finishedAt",
    "deployedAt",
    "creationTimestamp",
    "completionTime",
    "startTime",
    "lastProbeTime",
]);
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/**
 * The newest time a dump holds, near enough when it was taken: Argo CD writes each Application's
 * reconciledAt at every reconcile (every few minutes at rest). Undefined when it holds no time.
 */
export function newestTime(dump: Dump): Date | undefined {
    let newest = -Infinity;
    const walk = (v: unknown, depth: number): void => {
        if (depth > 12 || v === null || typeof v !== "object") return;
        if (Array.isArray(v)) {
            for (const x of v) walk(x, depth + 1);
            return;
        }
        for (const [k, x] of Object.entries(v)) {
            // times of what happened (not a deletionTimestamp, which lies ahead by the grace period); managedFields skipped
            if (typeof x === "string" && DUMP_TIMES.has(k) && RFC3339.test(x)) {
                const t = Date.parse(x);
                if (t > newest) newest = t;
            } else if (k !== "managedFields") walk(x, depth + 1);
        }
    };
    walk([dump.applicationSets, dump.applications, dump.jobs, dump.pods], 0);
    return Number.isFinite(newest) ? new Date(newest) : undefined;
}

/** Reads `kubectl get applicationsets.argoproj.io,applications.argoproj.io,appprojects.argoproj.io,jobs,pods -A -o json` (a v1 List). */
export function dumpFromList(list: unknown): Dump {
    const items = (list as { items?: unknown } | null)?.items;
    if (!list || typeof list !== "object" || !Array.isArray(items)) {
        throw new DumpError(
            "the dump is not a Kubernetes List (expected the output of kubectl get applicationsets.argoproj.io,applications.argoproj.io,appprojects.argoproj.io,jobs,pods -A -o json)",
        );
    }
    const dump: Dump = { applicationSets: [], applications: [], jobs: [], pods: [], fromFile: true };
    for (const [i, item] of items.entries()) {
        const o = item as { kind?: unknown; metadata?: { name?: unknown } } | null;
        if (!o || typeof o !== "object" || typeof o.kind !== "string" || typeof o.metadata?.name !== "string") {
            throw new DumpError(`item ${i} of the dump has no kind or metadata.name`);
        }
        // the kind and the name are checked; every other field is read as optional where it is used
        if (o.kind === "ApplicationSet") dump.applicationSets.push(o as ApplicationSet);
        else if (o.kind === "Application") dump.applications.push(o as Application);
        else if (o.kind === "Job") dump.jobs.push(o as Job);
        else if (o.kind === "Pod") dump.pods.push(o as Pod);
        else if (o.kind === "AppProject") (dump.appProjects ??= []).push(o as AppProject);
    }
    return dump;
}
