/**
 * Reads, while the program runs (a preview too: reads change nothing), what the cluster had before
 * this stack (lab/platform/found.ts). Synchronous because the program decides from it which
 * resources exist; through kubectl with an argument array, with a deadline.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import { ARGOCD_NAMESPACE } from "../lab/argo/application";
import { ClusterReads, Found, foundBeforeStack } from "../lab/platform/found";
import { codeOf, stderrOf } from "../lab/ports/errors";
import type { KubeObject } from "../lab/argo/types";

/** What kubectl get -o json printed: an object (or a List of them), undefined when --ignore-not-found found none. */
type KubectlOut = (KubeObject & { items?: KubeObject[]; data?: Record<string, string> }) | undefined;

function kubectlJson(kubeconfig: string, args: string[]): KubectlOut {
    try {
        const out = execFileSync("kubectl", ["--kubeconfig", kubeconfig, ...args, "--ignore-not-found", "-o", "json"], {
            encoding: "utf8",
            timeout: 30_000,
            stdio: ["ignore", "pipe", "pipe"],
        });
        return out.trim() ? JSON.parse(out) : undefined;
    } catch (e) {
        const why = codeOf(e) === "ENOENT" ? "kubectl is not on PATH" : stderrOf(e).trim().split("\n").pop();
        throw new Error(`cannot read the cluster of ${kubeconfig} to see what it has before the lab (${why}); is it running?`);
    }
}

/** Nothing is found when there is no cluster yet (no kubeconfig file). */
export function foundInCluster(kubeconfigFile: string | undefined, namespaces: string[]): Found {
    if (!kubeconfigFile || !fs.existsSync(kubeconfigFile)) return { argocd: false, progressiveSyncs: false, namespaces: [] };
    const list = kubectlJson(kubeconfigFile, ["get", "namespace", ARGOCD_NAMESPACE, ...namespaces]);
    const items: KubeObject[] = list ? (list.kind === "List" ? (list.items ?? []) : [list]) : [];
    const reads: ClusterReads = {
        namespaces: items.map((n) => ({ name: n.metadata?.name ?? "", labels: n.metadata?.labels ?? {} })),
        applicationCrd: !!kubectlJson(kubeconfigFile, ["get", "crd", "applications.argoproj.io"]),
        cmdParams: items.some((n) => n.metadata?.name === ARGOCD_NAMESPACE)
            ? kubectlJson(kubeconfigFile, ["-n", ARGOCD_NAMESPACE, "get", "configmap", "argocd-cmd-params-cm"])?.data
            : undefined,
    };
    return foundBeforeStack(reads, ARGOCD_NAMESPACE);
}
