/**
 * The shop ApplicationSet: apply it, keep /root/cnpa-env/appset.yaml equal to what is applied,
 * and remove it. The generator's elements belong to the scenario (or the learner) once the
 * ApplicationSet exists: re-applying changes the template only, so a pin to release/prod stays.
 */
import * as fs from "fs";
import { ClusterPort } from "../ports/cluster";
import { DeleteOptions, deleteAppSetAndNamespaces } from "../argo/teardown";
export type { DeleteOptions } from "../argo/teardown";
import { toYaml, writeFileAtomic } from "../ports/files";
import { ARGOCD_NAMESPACE, IN_CLUSTER_SERVER } from "../argo/application";
import { APPSET_NAME, ShopLayout, REPO_URL } from "./layout";
import type { ApplicationSet } from "../argo/types";

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

export function shopApplicationSet(opts: ShopAppSetOptions = {}): ApplicationSet {
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
                    destination: { server: IN_CLUSTER_SERVER, namespace: "shop-{{env}}" },
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
export function listElements(appset: ApplicationSet): ShopElement[] {
    const els = appset?.spec?.generators?.[0]?.list?.elements;
    if (!Array.isArray(els)) {
        throw new Error(`ApplicationSet ${appset?.metadata?.name ?? "?"} has no list generator at spec.generators[0].list.elements`);
    }
    // an element's env and revision are read as strings where they are compared: a list element is free-form
    return els as unknown as ShopElement[];
}

export type Log = (line: string) => void;

/** The manifest for appset.yaml: the given ApplicationSet with only the fields we set. */
export function appsetFileContent(desired: ApplicationSet, elements: ShopElement[]): string {
    const obj = JSON.parse(JSON.stringify(desired));
    obj.spec.generators[0].list.elements = elements.map((e) => ({ env: String(e.env), revision: String(e.revision) }));
    return toYaml(obj);
}

/** Creates the ApplicationSet, or updates its template keeping the live elements; writes appset.yaml. */
export async function applyShopAppSet(
    cluster: ClusterPort,
    layout: ShopLayout,
    desired: ApplicationSet,
    log: Log = () => {},
): Promise<ShopElement[]> {
    const { name, namespace } = desired.metadata;
    const live = await cluster.getApplicationSet(name, namespace);
    let elements: ShopElement[];
    if (!live) {
        await cluster.createApplicationSet(desired);
        elements = listElements(desired);
        log(`created ApplicationSet ${namespace}/${name}`);
    } else {
        await cluster.patchApplicationSetTemplate(name, desired.spec?.template, namespace);
        elements = listElements(live);
        log(
            `ApplicationSet ${namespace}/${name} exists; template updated, elements kept (${elements.map((e) => `${e.env}=${e.revision}`).join(", ")}); ${layout.appsetFile} ${fs.existsSync(layout.appsetFile) ? "written again" : "was missing: written"} from them`,
        );
    }
    writeFileAtomic(layout.appsetFile, appsetFileContent(desired, elements));
    return elements;
}

/** Rewrites appset.yaml from the live ApplicationSet (after the scenario changed an element). */
export async function syncAppSetFile(
    cluster: ClusterPort,
    layout: ShopLayout,
    name: string,
    namespace: string,
    repoURL?: string,
): Promise<void> {
    const live = await cluster.getApplicationSet(name, namespace);
    if (!live) throw new Error(`ApplicationSet ${namespace}/${name} does not exist`);
    writeFileAtomic(layout.appsetFile, appsetFileContent(shopApplicationSet({ name, namespace, repoURL }), listElements(live)));
}

/** The shop lab's namespaces (made by CreateNamespace=true, so never deleted by Argo CD). */
export const SHOP_NAMESPACES = ["shop-dev", "shop-prod"];

/**
 * Deletes the ApplicationSet and waits, with a deadline, until it and its Applications are gone:
 * each generated Application carries Argo CD's resources finalizer, which only the running
 * application controller removes, so Argo CD must not be uninstalled before this returns. At the
 * deadline it removes the finalizers itself and says so. Then the shop-* namespaces, likewise.
 */
export async function deleteShopAppSet(
    cluster: ClusterPort,
    layout: ShopLayout,
    name: string,
    namespace: string,
    log: Log = () => {},
    opts: DeleteOptions = {},
): Promise<void> {
    await deleteAppSetAndNamespaces(cluster, { name, namespace }, SHOP_NAMESPACES, log, opts);
    fs.rmSync(layout.appsetFile, { force: true });
}
