/**
 * Where the tenants lab (Part 2, docs/tenants-lab.md) lives on a host. Every path hangs off one
 * `root` prefix: `/` on a real lab host, a temporary directory in tests and in `simulate`.
 */
import { LabSite, labSite } from "../kit/layout";
import type { TenantsResultName } from "./results";

/** The in-cluster URL Argo CD reads the platform repository from (the same git daemon as the shop lab's). */
export const PLATFORM_REPO_URL = "git://gitd.gitsrv.svc.cluster.local:9418/platform.git";
export const PLATFORM_REPO_NAME = "platform.git";
export const TENANTS_APPSET = "tenants";
/** The label the rollout's steps select on. */
export const TENANT_LABEL = "example.org/tenant";
/** The tenants, one RollingSync step each, in this order. */
export const TENANTS = ["mandant-a", "mandant-b", "mandant-c", "mandant-d"] as const;
export type Tenant = (typeof TENANTS)[number];
/** The PreSync hook Job of every release (releases/<release>/setup-job.yaml), whose failure stalls the rollout. */
export const HOOK_JOB = "site-setup";
/** The releases of the scenario: the first rollout, the faulty one, the fix. */
export const RELEASES = { first: "1.1.0", faulty: "1.2.0", fixed: "1.2.1" } as const;

/**
 * The tenants lab's paths: `<root>/srv/bare/platform.git`, `<root>/root/tenants-lab/repo`,
 * `<root>/root/tenants-lab/appset.yaml`, and `<root>/root/tenants-lab/stall.json`, `recovery.json`.
 */
export type TenantsLayout = LabSite<TenantsResultName>;

export function tenantsLayout(root = "/"): TenantsLayout {
    return labSite<TenantsResultName>(root, { workDir: "tenants-lab", repoName: PLATFORM_REPO_NAME });
}
