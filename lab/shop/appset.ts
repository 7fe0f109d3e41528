/**
 * The shop ApplicationSet: apply it, keep /root/cnpa-env/appset.yaml equal to what is applied,
 * and remove it. The generator's elements belong to the scenario (or the learner) once the
 * ApplicationSet exists: re-applying changes the template only, so a pin to release/prod stays.
 */
import * as fs from "fs";
import { ClusterPort } from "../ports/cluster";
import { toYaml, writeFileAtomic } from "../ports/files";
import { pollUntil, WaitTimeout } from "../ports/wait";
import { ARGOCD_NAMESPACE } from "../argo/application";
import { APPSET_NAME, LabLayout, REPO_URL } from "./layout";

/** One list-generator element. Argo CD requires every value to be a string. */
export interface ShopElement {
    env: "dev" | "prod";
    revision: string;
}

export const INITIAL_ELEMENTS: ShopElement[] = [
    { env: "dev", revision: "main" },
    { env: "prod", revision: "main" },
];

export interface ShopAppSetOptions {
    name?: string;
    namespace?: string;
    repoURL?: string;
    elements?: ShopElement[];
}

export function shopApplicationSet(opts: ShopAppSetOptions = {}): any {
    const elements = (opts.elements ?? INITIAL_ELEMENTS).map((e) => ({ env: String(e.env), revision: String(e.revision) }));
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "ApplicationSet",
        metadata: { name: opts.name ?? APPSET_NAME, namespace: opts.namespace ?? ARGOCD_NAMESPACE },
        spec: {
            generators: [{ list: { elements } }],
            template: {
                metadata: { name: "shop-{{env}}" },
                spec: {
                    project: "default",
                    source: { repoURL: opts.repoURL ?? REPO_URL, targetRevision: "{{revision}}", path: "envs/{{env}}" },
                    destination: { server: "https://kubernetes.default.svc", namespace: "shop-{{env}}" },
                    syncPolicy: {
                        automated: { prune: true, selfHeal: true },
                        syncOptions: ["CreateNamespace=true"],
                    },
                },
            },
        },
    };
}

/** The list elements of an ApplicationSet object (live or generated), or a clear error. */
export function listElements(appset: any): ShopElement[] {
    const els = appset?.spec?.generators?.[0]?.list?.elements;
    if (!Array.isArray(els)) {
        throw new Error(`ApplicationSet ${appset?.metadata?.name ?? "?"} has no list generator at spec.generators[0].list.elements`);
    }
    return els;
}

export type Log = (line: string) => void;

/** The manifest for appset.yaml: the given ApplicationSet with only the fields we set. */
export function appsetFileContent(desired: any, elements: ShopElement[]): string {
    const obj = JSON.parse(JSON.stringify(desired));
    obj.spec.generators[0].list.elements = elements.map((e) => ({ env: String(e.env), revision: String(e.revision) }));
    return toYaml(obj);
}

/** Creates the ApplicationSet, or updates its template keeping the live elements; writes appset.yaml. */
export async function applyShopAppSet(cluster: ClusterPort, layout: LabLayout, desired: any, log: Log = () => {}): Promise<ShopElement[]> {
    const { name, namespace } = desired.metadata;
    const live = await cluster.getApplicationSet(name, namespace);
    let elements: ShopElement[];
    if (!live) {
        await cluster.createApplicationSet(desired);
        elements = listElements(desired);
        log(`created ApplicationSet ${namespace}/${name}`);
    } else {
        await cluster.patchApplicationSetTemplate(name, desired.spec.template, namespace);
        elements = listElements(live);
        log(`ApplicationSet ${namespace}/${name} exists; template updated, elements kept (${elements.map((e) => `${e.env}=${e.revision}`).join(", ")})`);
    }
    writeFileAtomic(layout.appsetFile, appsetFileContent(desired, elements));
    return elements;
}

/** Rewrites appset.yaml from the live ApplicationSet (after the scenario changed an element). */
export async function syncAppSetFile(cluster: ClusterPort, layout: LabLayout, name: string, namespace: string, repoURL?: string): Promise<void> {
    const live = await cluster.getApplicationSet(name, namespace);
    if (!live) throw new Error(`ApplicationSet ${namespace}/${name} does not exist`);
    writeFileAtomic(layout.appsetFile, appsetFileContent(shopApplicationSet({ name, namespace, repoURL }), listElements(live)));
}

export interface DeleteOptions {
    /** How long to wait for Argo CD to delete the Applications (and for the namespaces to go) before doing it by hand. */
    timeoutMs?: number;
    /** Time between two looks. */
    pollMs?: number;
}

/** The shop lab's namespaces (made by CreateNamespace=true, so never deleted by Argo CD). */
export const SHOP_NAMESPACES = ["shop-dev", "shop-prod"];

const ownedBy = (appsetName: string) => (app: any) => (app.metadata?.ownerReferences ?? []).some((r: any) => r.kind === "ApplicationSet" && r.name === appsetName);

/**
 * Deletes the ApplicationSet and waits, with a deadline, until it and its Applications are gone:
 * each generated Application carries Argo CD's resources finalizer, which only the running
 * application controller removes, so Argo CD must not be uninstalled before this returns. At the
 * deadline it removes the finalizers itself and says so. Then the shop-* namespaces, likewise.
 */
export async function deleteShopAppSet(cluster: ClusterPort, layout: LabLayout, name: string, namespace: string, log: Log = () => {}, opts: DeleteOptions = {}): Promise<void> {
    const timeoutMs = opts.timeoutMs ?? 120_000;
    const pollMs = opts.pollMs ?? 1_000;
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
    } else {
        const { apps } = await left();
        for (const app of apps) await cluster.removeApplicationFinalizers(app.metadata.name, namespace);
        log(
            `Argo CD did not delete ${apps.map((a) => a.metadata.name).join(", ") || "the ApplicationSet"} within ${timeoutMs / 1000} s ` +
                `(is its application controller running?): removed the finalizers by hand; their resources go with their namespaces`,
        );
    }
    // one deadline for the whole delete: the namespaces get what is left of it
    await deleteNamespaces(cluster, SHOP_NAMESPACES, log, { timeoutMs: Math.max(pollMs, timeoutMs - (Date.now() - t0)), pollMs });
    fs.rmSync(layout.appsetFile, { force: true });
}

/** Deletes namespaces and waits until they are gone; at the deadline, finalizes them itself and says so. */
export async function deleteNamespaces(cluster: ClusterPort, names: string[], log: Log, opts: Required<DeleteOptions>): Promise<void> {
    for (const ns of names) await cluster.deleteNamespace(ns);
    const remaining = async () => (await Promise.all(names.map(async (n) => ((await cluster.getNamespace(n)) ? n : null)))).filter((n): n is string => !!n);
    const gone = await pollUntil(async () => ((await remaining()).length === 0 ? true : undefined), { timeoutMs: opts.timeoutMs, intervalMs: opts.pollMs, describe: () => "" }).catch((e) => {
        if (e instanceof WaitTimeout) return false;
        throw e;
    });
    if (gone) {
        log(`namespaces ${names.join(", ")} are gone`);
        return;
    }
    const stuck = await remaining();
    for (const n of stuck) await cluster.finalizeNamespace(n);
    log(`namespaces ${stuck.join(", ")} were still Terminating at the deadline: finalized them by hand (objects still in them may be left behind in etcd)`);
}
