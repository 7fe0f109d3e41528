/**
 * Step 1 of the tenants lab, the host's part: the platform repository (bare, served by the git
 * daemon, and the working clone) with its first commit, and each tenant's own data in the cluster
 * (its namespace and its `site-settings` ConfigMap), which Argo CD does not manage.
 */
import { ClusterPort } from "../ports/cluster";
import { createLabRepo, deleteLabRepo, LabRepoResult, labRepoPaths, Log, RepoKind } from "../platform/labRepo";
import { TenantsLayout, TENANTS } from "./layout";
import { TENANT_SETTINGS, tenantSettings } from "./repoFiles";

export const PLATFORM_OWNER = "platform-repo";
export const PLATFORM_INITIAL_MESSAGE = "Tenants at release 1.1.0; releases 1.1.0, 1.2.0, 1.2.1 (tenants lab step 1)";

/** What makes the platform repository the tenants lab's own. */
export const platformRepoKind: RepoKind = { owner: PLATFORM_OWNER, initialMessage: PLATFORM_INITIAL_MESSAGE };

export function createPlatformRepo(layout: TenantsLayout, files: Record<string, string>, log: Log = () => {}): Promise<LabRepoResult> {
    return createLabRepo(layout, platformRepoKind, files, log);
}

export function deletePlatformRepo(layout: TenantsLayout, log: Log = () => {}): Promise<void> {
    return deleteLabRepo(layout, platformRepoKind, log);
}

export function platformRepoPaths(layout: TenantsLayout) {
    return labRepoPaths(layout, platformRepoKind);
}

/** The label on everything the lab creates in the cluster for the tenants (their namespaces, their settings). */
export const TENANT_DATA_LABEL = { "app.kubernetes.io/part-of": "tenants-lab" };

/**
 * Each tenant's namespace and settings (tenant data, created before Argo CD deploys anything there).
 * Settings that exist are the tenant's and are kept as they are: a learner who gives mandant-b the
 * extension's keys has fixed the stall another way, and a rerun must not undo that.
 */
export async function createTenantData(cluster: ClusterPort, log: Log = () => {}): Promise<void> {
    const kept: string[] = [];
    for (const t of TENANTS) {
        await cluster.ensureNamespace(t, TENANT_DATA_LABEL);
        if (await cluster.getConfigMap(t, TENANT_SETTINGS)) kept.push(t);
        else await cluster.putConfigMap(tenantSettings(t));
    }
    log(
        `tenant data: site-settings in ${TENANTS.length} namespaces, news keys only in mandant-a's${kept.length ? `; ${kept.length} already there, kept` : ""}`,
    );
}
