/**
 * Taking the shop lab down, in the order `pulumi destroy` takes its resources down (the reverse of
 * their dependencies): the result files (Scenario), the ApplicationSet with its Applications and
 * namespaces (ShopAppSet, which waits for Argo CD's finalizer), then the repository and the clone
 * (ShopRepo). Argo CD itself goes only after all of this. The components' delete methods call the
 * same functions one by one; `gitops-lab simulate --reset` calls them all.
 */
import * as path from "path";
import { ARGOCD_NAMESPACE } from "../argo/application";
import { ClusterPort } from "../ports/cluster";
import { DeleteOptions, deleteShopAppSet } from "./appset";
import { APPSET_NAME, ShopLayout } from "./layout";
import { deleteShopRepo } from "./repo";
import { SHOP_RESULT_FILES } from "./results";
import { removeResultFiles } from "../kit/results";

export type Log = (line: string) => void;

/** Scenario's delete: the six result files. */
export function removeResults(layout: ShopLayout, log: Log = () => {}): void {
    // and step 7's note to itself
    removeResultFiles([...SHOP_RESULT_FILES.map((k) => layout.resultFile(k)), path.join(layout.workDir, ".revert-observed.json")], log);
    log(`removed the result files from ${layout.workDir}`);
}

export async function teardownShopLab(
    layout: ShopLayout,
    cluster: ClusterPort,
    log: Log = () => {},
    opts: DeleteOptions = {},
): Promise<void> {
    removeResults(layout, (l) => log(`[scenario] ${l}`));
    await deleteShopAppSet(cluster, layout, APPSET_NAME, ARGOCD_NAMESPACE, (l) => log(`[appset] ${l}`), opts);
    await deleteShopRepo(layout, (l) => log(`[shop-repo] ${l}`));
}
