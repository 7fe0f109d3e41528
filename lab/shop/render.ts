/** What an overlay of the shop repository renders to: the data of its ConfigMap shop-config. */
import { kustomizeBuild, KustomizeOptions } from "../ports/kustomize";
import { codeOf } from "../ports/errors";
import type { ConfigMap, KubeObject } from "../argo/types";

export const SHOP_CONFIGMAP = "shop-config";

/** Renders an overlay with `kubectl kustomize` and returns shop-config's data (an error if it renders none). */
export async function renderShopConfig(dir: string, kubectl = "kubectl", opts: KustomizeOptions = {}): Promise<Record<string, string>> {
    let docs: KubeObject[];
    try {
        docs = await kustomizeBuild(dir, kubectl, opts);
    } catch (e) {
        if (codeOf(e) !== "ENOENT") throw e;
        throw new Error(
            `the overlays are rendered with "${kubectl} kustomize", but ${kubectl} is not on PATH (${process.env.PATH ?? ""}). ` +
                `On a fresh host k3s's installer puts kubectl into /usr/local/bin; with kubeconfigPath (an adopted cluster) install kubectl yourself`,
        );
    }
    const cm = docs.find((d) => d?.kind === "ConfigMap" && d?.metadata?.name === SHOP_CONFIGMAP);
    if (!cm) throw new Error(`kubectl kustomize ${dir} rendered no ConfigMap ${SHOP_CONFIGMAP}`);
    return (cm as ConfigMap).data ?? {};
}
