/**
 * The `tenants` ApplicationSet: a git files generator over tenants/*.yaml at main, one Application
 * per tenant, rolled out by RollingSync one tenant per step (a, b, c, d).
 */
import * as fs from "fs";
import { ARGOCD_NAMESPACE, IN_CLUSTER_SERVER } from "../argo/application";
import { ClusterPort } from "../ports/cluster";
import { toYaml, writeFileAtomic } from "../ports/files";
import { DeleteOptions, deleteAppSetAndNamespaces } from "../argo/teardown";
import { PLATFORM_REPO_URL, TENANT_LABEL, TENANTS, TENANTS_APPSET, TenantsLayout } from "./layout";
import type { ApplicationSet } from "../argo/types";

export type Log = (line: string) => void;

export function tenantsApplicationSet(opts: { repoURL?: string } = {}): ApplicationSet {
    const repoURL = opts.repoURL ?? PLATFORM_REPO_URL;
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "ApplicationSet",
        metadata: { name: TENANTS_APPSET, namespace: ARGOCD_NAMESPACE },
        spec: {
            generators: [{ git: { repoURL, revision: "main", files: [{ path: "tenants/*.yaml" }] } }],
            strategy: {
                type: "RollingSync",
                rollingSync: { steps: TENANTS.map((t) => ({ matchExpressions: [{ key: TENANT_LABEL, operator: "In", values: [t] }] })) },
            },
            template: {
                metadata: { name: "{{tenant}}", labels: { [TENANT_LABEL]: "{{tenant}}" } },
                spec: {
                    project: "default",
                    source: { repoURL, targetRevision: "main", path: "releases/{{release}}" },
                    destination: { server: IN_CLUSTER_SERVER, namespace: "{{tenant}}" },
                    syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ["CreateNamespace=true"] },
                },
            },
        },
    };
}

/** Creates the ApplicationSet (or updates its spec) and writes appset.yaml. */
export async function applyTenantsAppSet(
    cluster: ClusterPort,
    layout: TenantsLayout,
    desired: ApplicationSet,
    log: Log = () => {},
): Promise<void> {
    const { name, namespace } = desired.metadata;
    const live = await cluster.getApplicationSet(name, namespace);
    if (!live) {
        await cluster.createApplicationSet(desired);
        log(`created ApplicationSet ${namespace}/${name} (RollingSync, ${TENANTS.length} steps)`);
    } else {
        await cluster.jsonPatchApplicationSet(name, [{ op: "replace", path: "/spec", value: desired.spec }], namespace);
        log(`ApplicationSet ${namespace}/${name} exists; its spec is the lab's again`);
    }
    writeFileAtomic(layout.appsetFile, toYaml(desired));
}

/**
 * Deletes the ApplicationSet, waits for Argo CD to delete its Applications (their finalizer), then
 * the tenants' namespaces (with the tenant data), each with the one deadline; removes appset.yaml.
 */
export async function deleteTenantsAppSet(
    cluster: ClusterPort,
    layout: TenantsLayout,
    log: Log = () => {},
    opts: DeleteOptions = {},
): Promise<void> {
    await deleteAppSetAndNamespaces(cluster, { name: TENANTS_APPSET, namespace: ARGOCD_NAMESPACE }, [...TENANTS], log, opts);
    fs.rmSync(layout.appsetFile, { force: true });
}
