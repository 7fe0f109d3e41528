/** Where the command-line tools find the cluster: the same kubeconfig the rest of the product uses. */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { KubeCluster } from "../lab/ports/cluster";
import { codeOf, messageOf } from "../lab/ports/errors";
import { shellWord } from "../lab/ports/shellWord";
import { shopLayout } from "../lab/shop/layout";
import { tenantsLayout } from "../lab/tenants/layout";

/** Where a Pod's service account is mounted. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * The kubeconfig of a Pod's own service account: what client-node's loadFromCluster builds (the CA
 * file, the API server from KUBERNETES_SERVICE_HOST/PORT, the token read from its file at each use,
 * so a rotated token is picked up), as text, so that everything takes one kind of input.
 */
export function inClusterKubeconfig(env: NodeJS.ProcessEnv = process.env, dir = SERVICE_ACCOUNT_DIR): string | null {
    const host = env.KUBERNETES_SERVICE_HOST;
    const port = env.KUBERNETES_SERVICE_PORT ?? "443";
    if (!host || !fs.existsSync(path.join(dir, "token"))) return null;
    const server = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
    return [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "  - name: in-cluster",
        `    cluster: {server: "${server}", certificate-authority: "${path.join(dir, "ca.crt")}"}`,
        "users:",
        "  - name: service-account",
        `    user: {auth-provider: {name: tokenFile, config: {tokenFile: "${path.join(dir, "token")}"}}}`,
        "contexts:",
        "  - name: in-cluster",
        "    context: {cluster: in-cluster, user: service-account}",
        "current-context: in-cluster",
        "",
    ].join("\n");
}

/**
 * In order: `--kubeconfig FILE`, $KUBECONFIG (its entries in turn), k3s's /etc/rancher/k3s/k3s.yaml,
 * ~/.kube/config, then (in a Pod) its service account. Returns the kubeconfig's text, or throws
 * saying where it looked.
 */
export function findKubeconfig(explicit?: string): { file: string; text: string } {
    const candidates = explicit
        ? [explicit]
        : [
              // every entry of a KUBECONFIG list (~/.kube/config:NEW): the first that exists, as kubectl reads the first
              // file that sets current-context (a missing entry is passed over by kubectl too)
              ...(process.env.KUBECONFIG?.split(path.delimiter) ?? []),
              "/etc/rancher/k3s/k3s.yaml",
              path.join(os.homedir(), ".kube", "config"),
          ].filter((x): x is string => !!x);
    const unreadable: string[] = [];
    for (const file of candidates) {
        if (!fs.existsSync(file)) continue;
        try {
            return { file, text: fs.readFileSync(file, "utf8") };
        } catch (e) {
            // k3s's file is root's alone: another user's kubectl goes on to ~/.kube/config, and so does the doctor
            if (explicit && codeOf(e) === "EISDIR")
                throw new Error(`the kubeconfig ${file} is a folder: give the kubeconfig file (a simulated lab's is DIR/kubeconfig)`);
            if (explicit)
                throw new Error(
                    `cannot read the kubeconfig ${file} (${codeOf(e) ?? messageOf(e)}): run as a user who may, or give another`,
                );
            unreadable.push(`${file} (${codeOf(e) ?? messageOf(e)})`);
        }
    }
    const inCluster = explicit ? null : inClusterKubeconfig();
    if (inCluster) return { file: `the Pod's service account (${SERVICE_ACCOUNT_DIR})`, text: inCluster };
    throw new Error(
        `no kubeconfig found (looked at ${candidates.join(", ")}${unreadable.length ? `; not readable: ${unreadable.join(", ")}` : ""}); pass --kubeconfig FILE with the lab's: a host's from its stack (pulumi stack output kubeconfig --show-secrets > FILE), ` +
            `or a simulated lab's DIR/kubeconfig (gitops-lab simulate --root DIR --serve writes it)`,
    );
}

/** The cluster of a kubeconfig found by findKubeconfig; a file that is no kubeconfig is named as such. */
export function clusterOf(kc: { file: string; text: string }): KubeCluster {
    try {
        return new KubeCluster(kc.text);
    } catch (e) {
        if (/names no current cluster/.test(messageOf(e))) {
            // a kubeconfig with contexts but no current-context (or one naming a context it lacks) is a kubeconfig still
            let contexts: string[] = [];
            let doc: unknown;
            try {
                doc = parse(kc.text);
                contexts = ((doc as { contexts?: { name?: unknown }[] } | null)?.contexts ?? []).map((c) => String(c?.name));
            } catch {
                contexts = [];
            }
            // a simulated lab's saved cluster (DIR/simulated-cluster.json): the lab's state, which its served API answers for
            const saved = doc as { rv?: unknown; objects?: unknown } | null;
            if (saved && typeof saved.rv === "number" && Array.isArray(saved.objects)) {
                const dir = path.dirname(path.resolve(kc.file));
                // the lab it holds, as simulate is told it (--lab tenants where only the tenants lab is there)
                const lab = fs.existsSync(tenantsLayout(dir).bareRepo)
                    ? fs.existsSync(shopLayout(dir).bareRepo)
                        ? " --lab both"
                        : " --lab tenants"
                    : "";
                throw new Error(
                    `${kc.file} is a simulated lab's saved cluster (simulate keeps its state there), not a kubeconfig: the lab answers while served (gitops-lab simulate --root ${shellWord(dir)}${lab} --serve), at ${path.join(dir, "kubeconfig")}`,
                );
            }
            throw new Error(
                contexts.length
                    ? `${kc.file} has no current-context naming one of its contexts (${contexts.slice(0, 5).join(", ")}): kubectl --kubeconfig ${kc.file} config use-context NAME`
                    : `${kc.file} is not a kubeconfig (it names no cluster and no current context): give the cluster's kubeconfig`,
            );
        }
        throw new Error(`${kc.file}: ${messageOf(e)}`);
    }
}
