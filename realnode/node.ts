/**
 * A real single-node Kubernetes cluster on this machine, started as processes with their state under a
 * root folder: the control plane built here (etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler), a kubelet on containerd and runc (cgroup v1, cgroupfs), the CNI bridge, kube-proxy
 * (iptables) and CoreDNS, with its images pulled from a registry on the node through containerd's
 * mirror configuration. Nothing of Argo CD: a bare cluster, like k3s right after its installer.
 *
 * **Its start is ordered phases over one context** (realnode/phases: folders and host checks, builds,
 * cgroups, namespaces, link, registry, control plane, runtime and agents, cluster DNS), its files
 * rendered from the pins (config.ts), its changes to the host undone by its ledger (ledger.ts).
 *
 * **Its own namespaces, as a kind node is a container.** One holder process (`unshare --mount --net`)
 * owns a network namespace and a mount namespace; every daemon of the node joins both (`nsenter`).
 * In the mount namespace /run, /var/lib and /var/log are the node's own (a tmpfs each, /var/log bound
 * to the root's logs), so containerd's sockets, the shims', CNI's state and the pods' network
 * namespaces never touch the host's; every mount the kubelet and containerd make lives and dies with
 * that namespace. In the network namespace are the node's address (a veth pair to the host, 10.234.0.2),
 * the pods' bridge, kube-proxy's iptables rules and the node's sysctls (ip_forward): the host's routes,
 * iptables, DNS and interfaces are never changed, and the node has no route out, so Pod traffic cannot
 * leave the machine. The host reaches the API server and the registry at the node's address.
 *
 * **What it changes on the host**, recorded in a ledger before each change (NODE_LEDGER) so that
 * the next start undoes what a killed node left: the veth's host end, a cgroup `/gitops-lab-node` in
 * each cgroup v1 hierarchy (the kubelet's cgroup root; the node's daemons in its `system` child, so
 * every process of the node, containers included, is found there by its cgroup, never by a binary's
 * path), and the kernel settings the kubelet sets (vm.overcommit_memory, kernel.panic, ...), restored
 * at stop. One node per host (NODE_LOCK, NODE_LEDGER's names).
 */
import * as fs from "fs";
import * as path from "path";
import { acquireLockFile, RootLock } from "../lab/ports/lock";
import { CNI_DIR, NODE, nodePaths } from "./config";
import { CGROUP_ROOT, readLedger, reapNode, teardownNode, TRACKING_HIERARCHY } from "./ledger";
import { PHASES } from "./phases";
import { NodeContext } from "./phases/context";
import { REGISTRY } from "./phases/registry";

export const NODE_LOCK = process.env.GITOPS_LAB_NODE_LOCK ?? "/run/gitops-lab-node.lock";

/** The programs the node runs, and how to get each on Debian or Ubuntu. */
const NODE_TOOLS: Record<string, string> = {
    ip: "apt-get install iproute2",
    iptables: "apt-get install iptables",
    "iptables-restore": "apt-get install iptables",
    nsenter: "apt-get install util-linux",
    unshare: "apt-get install util-linux",
    setpriv: "apt-get install util-linux",
    mount: "apt-get install mount",
    runc: "apt-get install runc",
    "docker-registry": "apt-get install docker-registry (the node's image registry)",
    mmdebstrap: "apt-get install mmdebstrap (the images are made from Debian's packages)",
    chroot: "apt-get install coreutils",
    tar: "apt-get install tar",
    kubectl: "install kubectl 1.33 or later",
    gcc: "apt-get install gcc libc6-dev (the pause program of the sandbox image)",
};
const CNI_PLUGINS = ["bridge", "host-local", "loopback"];

const which = (tool: string) => (process.env.PATH ?? "").split(path.delimiter).some((d) => d && fs.existsSync(path.join(d, tool)));

/** What is missing to run the node: one entry per tool, with how to install it; also the kernel's and the host's. */
export function missingNodeTools(): string[] {
    const missing = Object.entries(NODE_TOOLS)
        .filter(([tool]) => !which(tool))
        .map(([tool, how]) => `${tool} (${how})`);
    const cni = CNI_PLUGINS.filter((p) => !fs.existsSync(path.join(CNI_DIR, p)));
    if (cni.length) missing.push(`the CNI plugins ${cni.join(", ")} in ${CNI_DIR} (apt-get install containernetworking-plugins)`);
    if (!fs.readFileSync("/proc/filesystems", "utf8").includes("overlay"))
        missing.push("the overlay filesystem in the kernel (modprobe overlay)");
    if (!fs.existsSync(path.join(CGROUP_ROOT, TRACKING_HIERARCHY, "cgroup.procs")))
        missing.push(`cgroup v1's ${TRACKING_HIERARCHY} hierarchy at ${CGROUP_ROOT}/${TRACKING_HIERARCHY} (this node runs on cgroup v1)`);
    return missing;
}

/** Refuses at once, in one line, when something the node needs is missing. */
export function checkNodeTools(): void {
    if (process.getuid?.() !== 0) throw new Error("the real node runs a kubelet and containers: run it as root");
    const missing = missingNodeTools();
    if (missing.length) throw new Error(`the real node needs ${missing.join(", ")}; nothing was started`);
}

export function acquireNodeLock(): RootLock {
    const what = `${path.basename(process.argv[1] ?? "node")} ${process.argv.slice(2).join(" ")}`.trim();
    return acquireLockFile(
        NODE_LOCK,
        (pid, holder) =>
            `a real node already runs on this host (PID ${pid}${holder ? `: ${holder}` : ""}); one node per host: stop it, then run again`,
        what,
    );
}

export interface RealNode {
    root: string;
    /** The admin kubeconfig (root/kubeconfig), server https://10.234.0.2:6443. */
    kubeconfigFile: string;
    kubeconfig: string;
    /** The registry the images are pushed to (host:port, reached from the host). */
    registry: string;
    /** The holder of the node's namespaces (nsenter -t PID -m -n to look inside). */
    holderPid: number;
    /** The node's state and logs: root/node. */
    dir: string;
    stop(): Promise<void>;
}

export async function startRealNode(opts: {
    root: string;
    log?: (line: string) => void;
    /** Given the node's stop as soon as there is something to stop: a signal while it starts takes down what started. */
    onStop?: (stop: () => Promise<void>) => void;
}): Promise<RealNode> {
    const log = opts.log ?? (() => {});
    const root = path.resolve(opts.root);
    checkNodeTools();
    const lock = acquireNodeLock();
    if (lock.note) log(lock.note);
    const ctx = new NodeContext(
        root,
        nodePaths(root),
        log,
        path.join(CGROUP_ROOT, TRACKING_HIERARCHY, NODE.name, "system", "cgroup.procs"),
    );
    let stopping: Promise<void> | undefined;
    const stop = () =>
        (stopping ??= (async () => {
            ctx.stopping = true;
            for (const p of ctx.procs.slice().reverse()) if (p.exitCode === null && p.signalCode === null) p.kill("SIGTERM");
            // the ledger on disk when it is this node's (it may hold more than the context's, never another node's)
            const recorded = readLedger();
            await teardownNode(recorded?.pid === process.pid ? recorded : ctx.ledger, log);
            lock.release();
        })());
    opts.onStop?.(stop);
    try {
        await reapNode(log);
        for (const phase of PHASES) await phase.run(ctx);
        return {
            root,
            kubeconfigFile: ctx.kubeconfigFile,
            kubeconfig: fs.readFileSync(ctx.kubeconfigFile, "utf8"),
            registry: REGISTRY,
            holderPid: ctx.holderPid,
            dir: ctx.p.dir,
            stop,
        };
    } catch (e) {
        await stop().catch((err) => log(`stopping after the failure: ${err.message}`));
        throw e;
    }
}
