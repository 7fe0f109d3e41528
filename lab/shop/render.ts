/** What an overlay of the shop repository renders to: the data of its ConfigMap shop-config. */
import { kustomizeBuild } from "../ports/kustomize";

export const SHOP_CONFIGMAP = "shop-config";

/** Renders an overlay with `kubectl kustomize` and returns shop-config's data (an error if it renders none). */
export async function renderShopConfig(dir: string, kubectl = "kubectl"): Promise<Record<string, string>> {
    const docs = await kustomizeBuild(dir, kubectl);
    const cm = docs.find((d: any) => d?.kind === "ConfigMap" && d?.metadata?.name === SHOP_CONFIGMAP);
    if (!cm) throw new Error(`kubectl kustomize ${dir} rendered no ConfigMap ${SHOP_CONFIGMAP}`);
    return cm.data ?? {};
}
