/**
 * Where the lab lives on a host. Every path of the shop lab (docs/shop-lab.md) hangs off one `root` prefix:
 * `/` on a real lab host, a temporary directory in tests and in `npm run simulate`.
 */
import { LabSite, labSite } from "../kit/layout";
import type { ShopResultName } from "./results";

/** The in-cluster URL Argo CD reads the repository from (the git daemon Pod's Service). */
export const REPO_URL = "git://gitd.gitsrv.svc.cluster.local:9418/shop-envs.git";
export const REPO_NAME = "shop-envs.git";
export const APPSET_NAME = "shop";

/**
 * The shop lab's paths: `<root>/srv/bare/shop-envs.git` (the bare repository the git daemon serves),
 * `<root>/root/cnpa-env/repo` (the working clone), `<root>/root/cnpa-env/appset.yaml` and the result
 * files `<root>/root/cnpa-env/<name>.json`.
 */
export type ShopLayout = LabSite<ShopResultName>;

export function shopLayout(root = "/"): ShopLayout {
    return labSite<ShopResultName>(root, { workDir: "cnpa-env", repoName: REPO_NAME });
}

/**
 * The name the dynamic providers' delete code already kept in Pulumi's state calls (components/*.ts as they were serialized).
 * @public (required by name from stored states: test/architecture.test.ts)
 * @alias
 */
export const labLayout = shopLayout;
