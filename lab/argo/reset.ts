/**
 * The reset of whatever a learner (or the stack) made of the labs in Argo CD, before Argo CD and the
 * git daemon go: a lab done by hand has no ApplicationSet the stack created, and its Applications
 * carry Argo CD's resources finalizer, which only the running application controller removes. So,
 * while Argo CD still runs, in the order it needs: the lab's ApplicationSets, then the lab's
 * Applications (each deleting what it deployed), then the lab's namespaces, under one deadline,
 * doing by hand at the deadline what the controllers did not, and saying what it took down and what
 * it kept.
 *
 * "The lab's" is read from the objects, never from their names alone (a learner misnames them): an
 * Application is the lab's when it reads a repository of the lab's git daemon or deploys to one of
 * the labs' namespaces; an ApplicationSet when its template or a generator does. Namespaces found
 * before the lab are kept. Applications of an Argo CD the stack installed that are not the lab's go
 * with Argo CD (its CRDs) without touching what they deployed: their finalizers are removed.
 */
import { ARGOCD_NAMESPACE } from "./application";
import { ClusterPort } from "../ports/cluster";
import { pollUntil, WaitTimeout } from "../ports/wait";
import { deleteNamespaces } from "./teardown";
import type { Application, ApplicationSet, ApplicationSource, ApplicationSpec } from "./types";

export type Log = (line: string) => void;

export interface LabScope {
    /** The namespaces the labs deploy to. */
    namespaces: string[];
    /** Of those, the ones that were there before the lab: never deleted. */
    kept: string[];
    /** The start of every repository URL the lab's git daemon serves. */
    repoPrefix: string;
    /** Whether Argo CD goes after this (the stack installed it): then no Application may keep a finalizer. */
    argocdGoes: boolean;
}

export interface ResetReport {
    tookDown: string[];
    kept: string[];
}

const sourcesOf = (spec: ApplicationSpec | undefined): ApplicationSource[] =>
    [spec?.source, ...(spec?.sources ?? [])].filter((s): s is ApplicationSource => !!s);

/** Whether an Application (or an ApplicationSet's template spec) reads the lab's repositories or deploys to its namespaces. */
function specIsLab(spec: ApplicationSpec | undefined, scope: LabScope): boolean {
    const ns = spec?.destination?.namespace ?? "";
    return sourcesOf(spec).some((s) => String(s.repoURL ?? "").startsWith(scope.repoPrefix)) || scope.namespaces.includes(ns);
}

export const isLabApplication = (app: Application, scope: LabScope) => specIsLab(app?.spec, scope);

export function isLabApplicationSet(set: ApplicationSet, scope: LabScope): boolean {
    if (specIsLab(set?.spec?.template?.spec, scope)) return true;
    const urls = JSON.stringify(set?.spec?.generators ?? []).match(/"repoURL":"[^"]*"/g) ?? [];
    return urls.some((u) => u.slice('"repoURL":"'.length).startsWith(scope.repoPrefix));
}

const named = (objs: { metadata: { name: string } }[]) => objs.map((o) => o.metadata.name).join(", ");

async function gone(check: () => Promise<boolean>, timeoutMs: number, pollMs: number): Promise<boolean> {
    return pollUntil(async () => ((await check()) ? true : undefined), { timeoutMs, intervalMs: pollMs, describe: () => "" }).catch((e) => {
        if (e instanceof WaitTimeout) return false;
        throw e;
    });
}

/**
 * Takes the labs' objects in Argo CD and their namespaces down, within `timeoutMs` in all (the
 * namespaces get what the Applications left of it, at least one poll). Safe to run again at any
 * point: what is gone is skipped.
 */
export async function resetLabObjects(
    cluster: ClusterPort,
    scope: LabScope,
    log: Log,
    opts: { timeoutMs: number; pollMs?: number },
): Promise<ResetReport> {
    const pollMs = opts.pollMs ?? 1_000;
    const t0 = Date.now();
    const left = () => Math.max(pollMs, opts.timeoutMs - (Date.now() - t0));
    const report: ResetReport = { tookDown: [], kept: [] };
    const ns = ARGOCD_NAMESPACE;

    const labApps = async () => (await cluster.listApplications(ns)).filter((a) => isLabApplication(a, scope));
    const apps = await labApps(); // before the ApplicationSets go: theirs go with them, and are said too
    const sets = (await cluster.listApplicationSets(ns)).filter((s) => isLabApplicationSet(s, scope));
    for (const s of sets) await cluster.deleteApplicationSet(s.metadata.name, ns);
    if (sets.length) report.tookDown.push(`ApplicationSets ${named(sets)}`);
    // the lab's applied outside argocd (kubectl apply without the namespace): Argo CD never read them, so no finalizer holds them
    const strays = [
        ...(await cluster.listApplicationSets())
            .filter((s) => s.metadata.namespace !== ns && isLabApplicationSet(s, scope))
            .map((o) => ({ kind: "ApplicationSet", plural: "applicationsets", o })),
        ...(await cluster.listApplications())
            .filter((a) => a.metadata.namespace !== ns && isLabApplication(a, scope))
            .map((o) => ({ kind: "Application", plural: "applications", o })),
    ];
    for (const { plural, o } of strays)
        await cluster.deleteCustomObject("argoproj.io/v1alpha1", plural, o.metadata.namespace!, o.metadata.name);
    if (strays.length)
        report.tookDown.push(
            `${strays.map(({ kind, o }) => `${kind} ${o.metadata.namespace}/${o.metadata.name}`).join(", ")} (outside ${ns}: Argo CD never read ${strays.length === 1 ? "it" : "them"})`,
        );
    for (const a of apps) await cluster.deleteCustomObject("argoproj.io/v1alpha1", "applications", ns, a.metadata.name);
    if (apps.length) {
        log(`deleting the lab's Applications ${named(apps)}; Argo CD deletes what each deployed (deadline ${Math.round(left() / 1000)} s)`);
        report.tookDown.push(`Applications ${named(apps)}`);
    }
    if (sets.length || apps.length) {
        const setsGone = async () => (await Promise.all(sets.map((s) => cluster.getApplicationSet(s.metadata.name, ns)))).every((s) => !s);
        if (!(await gone(async () => (await setsGone()) && (await labApps()).length === 0, left(), pollMs))) {
            const stuck = await labApps();
            for (const a of stuck) await cluster.removeApplicationFinalizers(a.metadata.name, ns);
            log(
                `Argo CD did not delete ${named(stuck) || "the ApplicationSets"} in time (is its application controller running?): ` +
                    `removed their finalizers by hand; what they deployed goes with the lab's namespaces`,
            );
        }
    }

    const others = (await cluster.listApplications(ns)).filter((a) => !isLabApplication(a, scope));
    if (others.length && scope.argocdGoes) {
        // not the lab's: what they deployed is kept; the Applications themselves go with Argo CD's CRDs
        for (const a of others) if (a.metadata.finalizers?.length) await cluster.removeApplicationFinalizers(a.metadata.name, ns);
        report.kept.push(`what the Applications ${named(others)} deployed (not the lab's; they go with Argo CD, their resources stay)`);
    } else if (others.length) report.kept.push(`the Applications ${named(others)} (not the lab's)`);

    const mine = [];
    for (const n of scope.namespaces.filter((n) => !scope.kept.includes(n))) if (await cluster.getNamespace(n)) mine.push(n);
    if (mine.length) {
        await deleteNamespaces(cluster, mine, log, { timeoutMs: left(), pollMs });
        report.tookDown.push(`namespaces ${mine.join(", ")}`);
    }
    const keptNs = scope.kept.filter((n) => scope.namespaces.includes(n));
    if (keptNs.length) report.kept.push(`namespaces ${keptNs.join(", ")} (there before the lab)`);
    // says only what it did: nothing when the labs' own deletes left nothing
    if (report.tookDown.length || report.kept.length)
        log(`took down ${report.tookDown.join("; ") || "nothing more"}${report.kept.length ? `; kept ${report.kept.join("; ")}` : ""}`);
    return report;
}
