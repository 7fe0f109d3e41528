/** Where the command-line tools find the cluster: the same kubeconfig the rest of the product uses. */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

/**
 * In order: `--kubeconfig FILE`, $KUBECONFIG (first entry), k3s's /etc/rancher/k3s/k3s.yaml,
 * ~/.kube/config. Returns the file's text, or throws saying where it looked.
 */
export function findKubeconfig(explicit?: string): { file: string; text: string } {
    const candidates = explicit
        ? [explicit]
        : [process.env.KUBECONFIG?.split(path.delimiter)[0], "/etc/rancher/k3s/k3s.yaml", path.join(os.homedir(), ".kube", "config")].filter((x): x is string => !!x);
    for (const file of candidates) {
        if (fs.existsSync(file)) return { file, text: fs.readFileSync(file, "utf8") };
    }
    throw new Error(`no kubeconfig found (looked at ${candidates.join(", ")}); pass --kubeconfig FILE, or run pulumi stack output kubeconfig --show-secrets > FILE`);
}
