/**
 * Taking a lab's ApplicationSet down with Argo CD's finalizers in mind: each generated Application
 * carries the resources finalizer, which only the running application controller removes, so Argo
 * CD must not be uninstalled before these return. Each wait has a deadline, after which the lab
 * does by hand what the controllers did not, and says so.
 */
import { ClusterPort } from "../ports/cluster";
import { pollUntil, WaitTimeout } from "../ports/wait";
import type { Application } from "./types";

export type Log = (line: string) => void;

export interface DeleteOptions {
    /** How long to wait for Argo CD to delete the Applications (and for the namespaces to go) before doing it by hand. */
    timeoutMs?: number;
    /** Time between two looks. */
    pollMs?: number;
}

const ownedBy = (appsetName: string) => (app: Application) =>
    (app.metadata?.ownerReferences ?? []).some((r) => r.kind === "ApplicationSet" && r.name === appsetName);

/**
 * Deletes an ApplicationSet and waits, with a deadline, until it and its Applications are gone.
 * At the deadline it removes the Applications' finalizers itself and says so.
 */
export async function deleteApplicationSetAndApps(
    cluster: ClusterPort,
    name: string,
    namespace: string,
    log: Log,
    opts: Required<DeleteOptions>,
): Promise<void> {
    const { timeoutMs, pollMs } = opts;
    const t0 = Date.now();
    await cluster.deleteApplicationSet(name, namespace);
    log(`deleting ApplicationSet ${namespace}/${name}; waiting for Argo CD to delete its Applications (deadline ${timeoutMs / 1000} s)`);
    const left = async () => {
        const apps = (await cluster.listApplications(namespace)).filter(ownedBy(name));
        const set = await cluster.getApplicationSet(name, namespace);
        return { apps, set };
    };
    const done = await pollUntil(
        async () => {
            const l = await left();
            return !l.set && l.apps.length === 0 ? true : undefined;
        },
        { timeoutMs, intervalMs: pollMs, describe: () => "" },
    ).catch((e) => {
        if (e instanceof WaitTimeout) return false;
        throw e;
    });
    if (done) {
        log(`ApplicationSet ${namespace}/${name} and its Applications are gone after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        return;
    }
    const { apps } = await left();
    for (const app of apps) await cluster.removeApplicationFinalizers(app.metadata.name, namespace);
    log(
        `Argo CD did not delete ${apps.map((a) => a.metadata.name).join(", ") || "the ApplicationSet"} within ${timeoutMs / 1000} s ` +
            `(is its application controller running?): removed the finalizers by hand; their resources go with their namespaces`,
    );
}

/** Deletes namespaces and waits until they are gone; at the deadline, finalizes them itself and says so. */
export async function deleteNamespaces(cluster: ClusterPort, names: string[], log: Log, opts: Required<DeleteOptions>): Promise<void> {
    for (const ns of names) await cluster.deleteNamespace(ns);
    const remaining = async () =>
        (await Promise.all(names.map(async (n) => ((await cluster.getNamespace(n)) ? n : null)))).filter((n): n is string => !!n);
    const gone = await pollUntil(async () => ((await remaining()).length === 0 ? true : undefined), {
        timeoutMs: opts.timeoutMs,
        intervalMs: opts.pollMs,
        describe: () => "",
    }).catch((e) => {
        if (e instanceof WaitTimeout) return false;
        throw e;
    });
    if (gone) {
        log(`namespaces ${names.join(", ")} are gone`);
        return;
    }
    const stuck = await remaining();
    for (const n of stuck) await cluster.finalizeNamespace(n);
    log(
        `namespaces ${stuck.join(", ")} were still Terminating at the deadline: finalized them by hand (objects still in them may be left behind in etcd)`,
    );
}

/**
 * A lab's ApplicationSet and the namespaces its Applications deploy to, under one deadline: the
 * ApplicationSet and its Applications first (Argo CD's finalizer), the namespaces with what is left
 * of the deadline.
 */
export async function deleteAppSetAndNamespaces(
    cluster: ClusterPort,
    appset: { name: string; namespace: string },
    namespaces: string[],
    log: Log,
    opts: DeleteOptions = {},
): Promise<void> {
    const timeoutMs = opts.timeoutMs ?? 120_000;
    const pollMs = opts.pollMs ?? 1_000;
    const t0 = Date.now();
    await deleteApplicationSetAndApps(cluster, appset.name, appset.namespace, log, { timeoutMs, pollMs });
    await deleteNamespaces(cluster, namespaces, log, { timeoutMs: Math.max(pollMs, timeoutMs - (Date.now() - t0)), pollMs });
}
