/**
 * Where the tenants lab (Part 2, docs/tenants-lab.md) lives on a host. Every path hangs off one
 * `root` prefix: `/` on a real lab host, a temporary directory in tests and in `simulate`.
 */
import * as path from "path";
import type { RepoSite } from "../platform/labRepo";
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

export interface TenantsLayout extends RepoSite {
    /** The prefix everything below hangs off (`/` on a real host). */
    root: string;
    /** The ApplicationSet manifest as applied: `<root>/root/tenants-lab/appset.yaml`. */
    appsetFile: string;
    /** `<root>/root/tenants-lab/stall.json`, `recovery.json`. */
    resultFile(name: TenantsResultName): string;
}

export function tenantsLayout(root = "/"): TenantsLayout {
    if (!path.isAbsolute(root)) {
        throw new Error(`root must be an absolute path, got "${root}"; use "/" on a lab host or a temporary directory in tests`);
    }
    const r = path.resolve(root);
    const bareDir = path.join(r, "srv", "bare");
    const workDir = path.join(r, "root", "tenants-lab");
    return {
        root: r,
        bareDir,
        bareRepo: path.join(bareDir, PLATFORM_REPO_NAME),
        workDir,
        clone: path.join(workDir, "repo"),
        appsetFile: path.join(workDir, "appset.yaml"),
        resultFile: (name) => path.join(workDir, `${name}.json`),
    };
}
