/** What an overlay of the shop repository renders to: the data of its ConfigMap shop-config. */
import * as path from "path";
import { isDeepStrictEqual } from "util";
import type { BareRepo } from "../grader/bareRepo";
import { kustomizeBuild, KustomizeOptions, kustomizeProblem } from "../ports/kustomize";
import { codeOf, stderrOf } from "../ports/errors";
import type { ConfigMap, KubeObject } from "../argo/types";

export const SHOP_CONFIGMAP = "shop-config";

/** Renders an overlay with `kubectl kustomize` and returns shop-config's data (an error if it renders none). */
export async function renderShopConfig(dir: string, kubectl = "kubectl", opts: KustomizeOptions = {}): Promise<Record<string, string>> {
    return (await renderShopConfigMap(dir, kubectl, opts)).data ?? {};
}

/** Renders an overlay with `kubectl kustomize` and returns shop-config as rendered (an error if it renders none). */
export async function renderShopConfigMap(dir: string, kubectl = "kubectl", opts: KustomizeOptions = {}): Promise<ConfigMap> {
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
    if (!cm) {
        // renamed by the overlay (a namePrefix or nameSuffix): the name it has now
        const other = docs.filter((d) => d?.kind === "ConfigMap").map((d) => d?.metadata?.name);
        throw new Error(
            `kubectl kustomize ${dir} rendered no ConfigMap ${SHOP_CONFIGMAP}${other.length ? ` but ${other.join(", ")} (renamed by a namePrefix or nameSuffix? the lab's ConfigMap is ${SHOP_CONFIGMAP} in every environment)` : ""}`,
        );
    }
    return cm as ConfigMap;
}

/** A commit's overlay rendered; one that does not render is an error saying why (a listed resource missing), not kustomize's log line. */
export async function renderShopConfigAt(repo: BareRepo, sha: string, dir: string, kubectl = "kubectl"): Promise<Record<string, string>> {
    return (await renderShopConfigMapAt(repo, sha, dir, kubectl)).data ?? {};
}

/** A commit's overlay's shop-config as rendered (its namespace too); an error as renderShopConfigAt's. */
export function renderShopConfigMapAt(repo: BareRepo, sha: string, dir: string, kubectl = "kubectl"): Promise<ConfigMap> {
    return repo.withTree(sha, async (tree) => {
        try {
            return await renderShopConfigMap(path.join(tree, dir), kubectl, { checkout: tree });
        } catch (e) {
            const stderr = stderrOf(e);
            if (!stderr) throw e;
            throw new Error(`${dir} at ${sha.slice(0, 7)} does not render: ${kustomizeProblem(stderr, tree)}`);
        }
    });
}

/** Whether two commits render an overlay to the same objects (both rendering, neither failing). */
export async function rendersAlike(repo: BareRepo, a: string, b: string, dir: string, kubectl = "kubectl"): Promise<boolean> {
    const render = (sha: string) => repo.withTree(sha, (tree) => kustomizeBuild(path.join(tree, dir), kubectl, { checkout: tree }));
    try {
        return isDeepStrictEqual(await render(a), await render(b));
    } catch {
        return false;
    }
}
