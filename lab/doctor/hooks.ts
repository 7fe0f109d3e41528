/**
 * The hook Jobs of an Application's sync, as the doctor reads them: which hook failed, its Job's
 * reason, and the error text of its newest Pod (the log's error line, else a termination message).
 */
import { errorLine } from "./errorLine";
import { FAILED_PHASES, HOOK_ANNOTATION, INSTANCE_LABEL, TRACKING_ANNOTATION } from "../argo/application";
import { isoOf, newestFirst, timeMs, type Application, type Job, type Pod, type ResourceResult } from "../argo/types";
import type { Dump } from "./dump";

/** Where a hook's own error text is when its Pod wrote no termination message. */
export const logCommand = (ns: string, job: string) => `kubectl logs -n ${ns} job/${job}`;

export interface HookInfo {
    namespace: string;
    job: string;
    reason: string;
    message: string;
    log: string;
    /** The Job is not in the cluster: deleted, by hand or by its delete policy, and its Pods' logs with it. */
    jobGone?: boolean;
}

/**
 * The real error text of a Job, from its newest Pod: the error line of the Pod's log (errorLine.ts),
 * where the program wrote it; else of a failed container's termination message (which the default
 * terminationMessagePolicy leaves empty).
 */
function jobLog(dump: Dump, job: Job): string {
    const pods = jobPods(dump, job);
    // the Pod's log, where the program's own error is (the default terminationMessagePolicy writes no message)
    for (const p of pods) {
        const log = dump.logs?.[`${p.metadata?.namespace}/${p.metadata?.name}`];
        if (log && errorLine(log)) return errorLine(log);
    }
    for (const p of pods) {
        for (const cs of [...(p.status?.containerStatuses ?? []), ...(p.status?.initContainerStatuses ?? [])]) {
            const t = cs.state?.terminated ?? cs.lastState?.terminated;
            if (t && t.exitCode !== 0 && t.message && errorLine(String(t.message))) return errorLine(String(t.message));
        }
    }
    // an exit code is not the cause: the caller names the command that shows the Pod's log instead
    return "";
}

/** A Job's Pods in the dump, newest first (by its job-name labels or its owner reference). */
function jobPods(dump: Dump, job: Job): Pod[] {
    const name = job.metadata.name;
    const ns = job.metadata.namespace;
    return dump.pods
        .filter(
            (p) =>
                p.metadata?.namespace === ns &&
                (p.metadata?.labels?.["job-name"] === name ||
                    p.metadata?.labels?.["batch.kubernetes.io/job-name"] === name ||
                    (p.metadata?.ownerReferences ?? []).some((r) => r.kind === "Job" && r.name === name)),
        )
        .sort(newestFirst);
}

export const jobFailed = (j: Job | undefined) => (j?.status?.conditions ?? []).find((c) => c.type === "Failed" && c.status === "True");

/** Whether a Job belongs to this Application: Argo CD's tracking annotation (v3's default) or its instance label. */
function trackedBy(job: Job, app: Application): boolean {
    const id: string | undefined = job.metadata?.annotations?.[TRACKING_ANNOTATION];
    if (id !== undefined) return id.startsWith(`${app.metadata?.name}:`);
    return job.metadata?.labels?.[INSTANCE_LABEL] === app.metadata?.name;
}

/**
 * The hook that failed in the last sync, with its Job's reason and its Pods' error text. v3.5.1 keeps
 * the last attempt's syncResult while a retry waits and clears it when the retry starts: then the
 * sync result names no hook, and the cause is the newest failed hook Job of this Application (its
 * tracking annotation or label) created during the current operation: never another Application's
 * Job in a shared namespace, never one left from an earlier release.
 */
export function failedHook(dump: Dump, app: Application): HookInfo | null {
    const resources = app.status?.operationState?.syncResult?.resources ?? [];
    let hook: ResourceResult | undefined = resources.find((r) => r.hookType && FAILED_PHASES.includes(r.hookPhase ?? ""));
    if (!hook) {
        const ns = app.spec?.destination?.namespace;
        const startedAt: string | undefined = app.status?.operationState?.startedAt;
        const job = dump.jobs
            .filter((j) => j.metadata?.namespace === ns && j.metadata?.annotations?.[HOOK_ANNOTATION] && jobFailed(j) && trackedBy(j, app))
            .filter((j) => !startedAt || timeMs(j.metadata?.creationTimestamp) >= Date.parse(startedAt) - 1000) // whole seconds on both
            .sort(newestFirst)[0];
        if (!job) return null;
        hook = { name: job.metadata.name, namespace: ns, hookType: job.metadata.annotations?.[HOOK_ANNOTATION], hookPhase: "Failed" };
    }
    const ns = hook.namespace || app.spec?.destination?.namespace || "";
    const name = hook.name;
    const job = dump.jobs.find((j) => j.metadata?.namespace === ns && j.metadata?.name === name);
    const failed = jobFailed(job);
    return {
        namespace: ns,
        job: name,
        reason: failed?.reason ?? hook.hookPhase ?? "",
        message: failed?.message ?? hook.message ?? "",
        log: job ? jobLog(dump, job) : "",
        ...(!job && { jobGone: true }),
    };
}

/**
 * The hook Job a Running operation waits for that is not in the cluster (deleted while it ran): the
 * operation waits on for it until terminated (gitops-engine's sync waits on a running hook task that
 * has no live object). Null when the Job is there, or the input holds no Jobs to tell.
 */
export function goneHookJob(dump: Dump, app: Application, now: Date, stuckAfterSeconds: number): { namespace: string; job: string } | null {
    const op = app.status?.operationState;
    if (op?.phase !== "Running") return null;
    const name = /waiting for completion of hook (?:[\w.]*\/)?Job\/(\S+)/.exec(op.message ?? "")?.[1];
    if (!name || (dump.fromFile && !dump.jobs.length)) return null;
    // the hook's own namespace, as the sync result records it (a hook may name one), else the destination's
    const ns =
        (op.syncResult?.resources ?? []).find((r) => r.kind === "Job" && r.name === name && r.hookType)?.namespace ||
        app.spec?.destination?.namespace ||
        "";
    if (dump.jobNamespaces && !dump.jobNamespaces.includes(ns)) return null; // its Jobs not read: nothing to tell
    // an operation waiting longer than a rollout is given: not the instant of a hook deleted to be made again
    // (BeforeHookCreation), nor one a cache shows a moment after its Job ended and went (HookSucceeded)
    if (!((now.getTime() - timeMs(op.startedAt)) / 1000 > stuckAfterSeconds)) return null;
    return dump.jobs.some((j) => j.metadata?.namespace === ns && j.metadata?.name === name) ? null : { namespace: ns, job: name };
}

/**
 * The hook Job a Running operation waits for ("waiting for completion of hook batch/Job/NAME") while
 * its Pods fail and the Job makes new ones (its backoffLimit not reached yet): how many failed, and
 * their error text; null when none has failed or the Job is not in the dump.
 */
export function retryingHook(dump: Dump, app: Application): { namespace: string; job: string; failed: number; log: string } | null {
    const op = app.status?.operationState;
    if (op?.phase !== "Running") return null;
    const name = /waiting for completion of hook (?:[\w.]*\/)?Job\/(\S+)/.exec(op.message ?? "")?.[1];
    const ns = app.spec?.destination?.namespace ?? "";
    const job = name ? dump.jobs.find((j) => j.metadata?.namespace === ns && j.metadata?.name === name) : undefined;
    const failed = Number(job?.status?.failed ?? 0);
    if (!job || failed < 1 || jobFailed(job)) return null;
    return { namespace: ns, job: job.metadata.name, failed, log: jobLog(dump, job) };
}

/**
 * The hook Job a Running operation waits for whose newest Pod has not started: Pending, its container
 * waiting (ContainerCreating while a volume is missing, ErrImagePull, CreateContainerConfigError). The
 * kubelet says why in the Pod's Events, which a dump does not hold; null when none waits.
 */
export function waitingHookPod(
    dump: Dump,
    app: Application,
): { namespace: string; job: string; pod: string; reason: string; since: string | undefined } | null {
    const op = app.status?.operationState;
    if (op?.phase !== "Running") return null;
    const name = /waiting for completion of hook (?:[\w.]*\/)?Job\/(\S+)/.exec(op.message ?? "")?.[1];
    const ns = app.spec?.destination?.namespace ?? "";
    const job = name ? dump.jobs.find((j) => j.metadata?.namespace === ns && j.metadata?.name === name) : undefined;
    const [pod] = job ? jobPods(dump, job) : [];
    if (!job || !pod || pod.status?.phase !== "Pending") return null;
    const reason = pod.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? "Pending";
    return { namespace: ns, job: job.metadata.name, pod: pod.metadata.name, reason, since: isoOf(pod.metadata.creationTimestamp) };
}

export function hookType(dump: Dump, app: Application, hook: HookInfo): string {
    const r = (app.status?.operationState?.syncResult?.resources ?? []).find((x) => x.name === hook.job && x.hookType);
    const job = dump.jobs.find((j) => j.metadata?.namespace === hook.namespace && j.metadata?.name === hook.job);
    return r?.hookType ?? job?.metadata?.annotations?.[HOOK_ANNOTATION] ?? "";
}
