/**
 * gitops-lab node --root DIR: a real single-node cluster on this machine (realnode/node.ts), held until
 * Ctrl-C or SIGTERM, then taken down, leaving nothing of it on the host but the caches and DIR's files.
 */
import * as path from "path";
import { checkRoot, checkRootWritable, Command, stringOption, UsageError } from "./command";
import { LAB_REGISTRY } from "../lab/ports/images";

/** Where the node's mount namespace has folders of its own: a root there would be hidden from the node. */
const NODE_PRIVATE = ["/run", "/var/run", "/var/lib", "/var/log"];

/** Refuses a root the node could not see (under one of NODE_PRIVATE), in one line. */
export function checkNodeVisible(root: string, rootArg: string): void {
    const hidden = NODE_PRIVATE.find((d) => root === d || root.startsWith(`${d}/`));
    if (hidden)
        throw new UsageError(
            `--root ${rootArg} is under ${hidden}, which the node has a folder of its own for; choose another directory, e.g. /tmp/gitops-lab-node`,
        );
}

/** Exit codes of a run stopped by a signal (128 + the signal's number), as shells report them. */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

export const nodeCommand: Command = {
    name: "node",
    summary: "run a real single-node Kubernetes cluster here (kubelet, containerd, runc, CNI, kube-proxy, CoreDNS), until Ctrl-C",
    usage: "node --root DIR",
    details: [
        "--root DIR   the node's state and logs go under DIR/node (emptied at each start), its admin kubeconfig to DIR/kubeconfig; required",
        "needs root, cgroup v1, Go (the first build takes minutes, cached), and Debian's runc, containernetworking-plugins, docker-registry,",
        "mmdebstrap, iptables: a missing one is named with its install command. Nothing of Argo CD: a bare cluster, like k3s after its installer.",
        "One node per host. Its Pod traffic stays on this machine: the node has its own network namespace and no route out.",
    ],
    options: { root: { type: "string" } },
    async run(values) {
        const rootArg = stringOption(values, "root");
        if (!rootArg) throw new UsageError("--root DIR is required (see gitops-lab node --help)");
        const root = checkRoot(rootArg);
        checkRootWritable(root, rootArg);
        checkNodeVisible(root, rootArg);
        if (root !== rootArg) console.log(`root: ${root}`);
        const { startRealNode } = await import("../realnode/node");
        const { NODE } = await import("../realnode/config");
        const say = (l: string) => console.log(l);
        let stopping = false;
        let node: { stop(): Promise<void> } | undefined;
        let resolve!: (code: number) => void;
        const stopped = new Promise<number>((r) => (resolve = r));
        const handlers = (Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[]).map((sig) => {
            const h = () => {
                if (stopping) return;
                stopping = true;
                say(`node: ${sig}: stopping the real node`);
                Promise.resolve(node?.stop())
                    .catch((e) => say(`node: stopping: ${e.message}`))
                    .then(() => {
                        resolve(SIGNAL_EXIT[sig]);
                        process.exit(SIGNAL_EXIT[sig]);
                    });
            };
            process.on(sig, h);
            return [sig, h] as const;
        });
        try {
            say(
                "REAL NODE: a real Kubernetes cluster on this machine; its Pods are real containers (containerd, runc), its images pulled from its registry.",
            );
            const n = await startRealNode({ root, log: say });
            node = n;
            if (stopping) return await stopped;
            for (const l of [
                "",
                "SERVING the real node until Ctrl-C (or SIGTERM):",
                `  export KUBECONFIG=${n.kubeconfigFile}`,
                "  kubectl get nodes,pods -A",
                `  nsenter -t ${n.holderPid} -m -n    # a shell in the node's namespaces (ip addr, iptables-save)`,
                `  logs: ${path.join(n.dir, "logs")}; images: ${n.registry} (the node's registry, mirroring ${Object.keys((await import("../realnode/config")).MIRRORED).join(", ")}; and ${LAB_REGISTRY}, the lab's own)`,
                `  the API server: https://${NODE.nodeIp}:${NODE.apiPort}`,
            ])
                say(l);
            return await stopped;
        } catch (e) {
            if (stopping) return await stopped;
            throw e;
        } finally {
            handlers.forEach(([sig, h]) => process.off(sig, h));
            if (!stopping) await node?.stop();
        }
    },
};
