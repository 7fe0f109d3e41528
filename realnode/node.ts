/**
 * A real single-node Kubernetes cluster on this machine, started as processes with their state under a
 * root folder: the control plane built here (etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler), a kubelet on containerd and runc (cgroup v1, cgroupfs), the CNI bridge, kube-proxy
 * (iptables) and CoreDNS, with its images pulled from a registry on the node through containerd's
 * mirror configuration. Nothing of Argo CD: a bare cluster, like k3s right after its installer.
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
import { ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { run } from "../lab/ports/exec";
import { pollUntil } from "../lab/ports/wait";
import { acquireLockFile, RootLock } from "../lab/ports/lock";
import { LAB_REGISTRY } from "../lab/ports/images";
import { binPath, buildRealPlane } from "../realplane/build";
import { REAL_NODE, REAL_PLANE } from "../realplane/versions";
import { buildRealNode, nodeBinPath } from "./build";
import {
    CNI_DIR,
    cniConfig,
    containerdConfig,
    hostsToml,
    IMAGE_VOLUME_GATE,
    kubeadmConfig,
    kubeletConfig,
    kubeProxyConfig,
    labRegistryToml,
    MARKER,
    MIRRORED,
    NODE,
    nodePaths,
    registryConfig,
    registryStorage,
} from "./config";
import {
    CGROUP_ROOT,
    cgroupHierarchies,
    hostLinkExists,
    KUBELET_SYSCTLS,
    Ledger,
    readLedger,
    reapNode,
    sysctlFile,
    teardownNode,
    TRACKING_HIERARCHY,
    writeLedger,
} from "./ledger";
import { buildImageLayers, imageRecipes, pushImage } from "./images";

export const NODE_LOCK = process.env.GITOPS_LAB_NODE_LOCK ?? "/run/gitops-lab-node.lock";
const MANIFESTS = path.join(__dirname, "manifests");

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

/** The host's routes that overlap the node's link (the only addresses the host learns of the node). */
export async function overlappingRoutes(): Promise<string[]> {
    const routes: { dst: string; dev?: string }[] = JSON.parse((await run("ip", ["-j", "route", "show", "table", "all"])).stdout || "[]");
    const toInt = (ip: string) => ip.split(".").reduce((a, o) => a * 256 + Number(o), 0);
    const net = (cidr: string) => {
        const [ip, bits] = cidr.split("/");
        const size = 2 ** (32 - Number(bits ?? 32));
        const start = Math.floor(toInt(ip) / size) * size;
        return [start, start + size - 1];
    };
    const [a0, a1] = net(`${NODE.hostIp}/${NODE.linkPrefix}`);
    return routes
        .filter((r) => /^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(r.dst) && r.dev !== NODE.hostVeth)
        .filter((r) => {
            const [b0, b1] = net(r.dst);
            return a0 <= b1 && b0 <= a1;
        })
        .map((r) => `${r.dst}${r.dev ? ` dev ${r.dev}` : ""}`);
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

export async function startRealNode(opts: { root: string; log?: (line: string) => void }): Promise<RealNode> {
    const log = opts.log ?? (() => {});
    const root = path.resolve(opts.root);
    const t0 = Date.now();
    const since = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
    checkNodeTools();
    const lock = acquireNodeLock();
    if (lock.note) log(lock.note);
    let ledger: Ledger = { pid: process.pid, root };
    const procs: ChildProcess[] = [];
    let holder: ChildProcess | undefined;
    let stopping: Promise<void> | undefined;
    const stop = () =>
        (stopping ??= (async () => {
            for (const p of procs.slice().reverse()) if (p.exitCode === null && p.signalCode === null) p.kill("SIGTERM");
            // the ledger on disk when it is this node's (it may hold more than `ledger`, never another node's)
            const recorded = readLedger();
            await teardownNode(recorded?.pid === process.pid ? recorded : ledger, log);
            lock.release();
        })());
    try {
        await reapNode(log);
        const p = nodePaths(root);
        if (fs.existsSync(p.dir)) {
            if (!fs.existsSync(path.join(p.dir, MARKER)))
                throw new Error(`${p.dir} exists and is not a real node's folder; choose another --root, or remove it yourself`);
            fs.rmSync(p.dir, { recursive: true, force: true });
        }
        for (const d of [p.logs, p.pki, p.kubeconfigs, p.config, path.join(p.dir, "cni", "net.d")]) fs.mkdirSync(d, { recursive: true });
        fs.writeFileSync(path.join(p.dir, MARKER), "the state of a real node of gitops-lab: removed at its next start\n");

        const overlap = await overlappingRoutes();
        if (overlap.length)
            throw new Error(
                `the host already routes ${overlap.join(", ")}, which overlaps the node's link ${NODE.hostIp}/${NODE.linkPrefix}; nothing was changed`,
            );
        if (hostLinkExists(NODE.hostVeth))
            throw new Error(`the host already has an interface ${NODE.hostVeth}, which the node would create; nothing was changed`);

        // what it runs, built once (cached)
        await buildRealPlane(log);
        await buildRealNode(log);
        const recipes = imageRecipes();
        await buildImageLayers(recipes, log);

        // the node's cgroup, recorded first
        ledger = { ...ledger, cgroup: NODE.name };
        writeLedger(ledger);
        for (const h of cgroupHierarchies()) {
            for (const sub of ["", "system"]) {
                const dir = path.join(h, NODE.name, sub);
                fs.mkdirSync(dir, { recursive: true });
                // a new cpuset cgroup starts with no CPUs and no memory nodes: its parent's
                if (path.basename(h) === "cpuset")
                    for (const f of ["cpuset.cpus", "cpuset.mems"])
                        fs.writeFileSync(path.join(dir, f), fs.readFileSync(path.join(path.dirname(dir), f), "utf8").trim());
            }
        }
        const systemProcs = path.join(CGROUP_ROOT, TRACKING_HIERARCHY, NODE.name, "system", "cgroup.procs");

        // the holder of the node's namespaces: its own /run, /var/lib, /var/log (realnode/holder.sh)
        log("making the node's network and mount namespaces ...");
        holder = spawn(
            "sh",
            [
                "-c",
                'echo $$ > "$1" && shift && exec "$@"',
                "sh",
                systemProcs,
                "unshare",
                "--mount",
                "--net",
                "--propagation",
                "private",
                "--",
                "setpriv",
                "--pdeathsig",
                "KILL",
                "--",
                "sh",
                path.join(__dirname, "holder.sh"),
                p.logs,
                NODE.serviceCidr,
            ],
            {
                stdio: ["ignore", "pipe", fs.openSync(path.join(p.logs, "holder.log"), "a")],
            },
        );
        procs.push(holder);
        const holderPid = holder.pid!;
        ledger = { ...ledger, holderPid };
        writeLedger(ledger);
        await new Promise<void>((resolve, reject) => {
            let out = "";
            holder!.stdout!.on("data", (d) => {
                out += d;
                if (out.includes("ready")) resolve();
            });
            holder!.on("exit", (code) =>
                reject(new Error(`the node's namespaces could not be made (exit ${code}; see ${path.join(p.logs, "holder.log")})`)),
            );
        });
        const inNode = (cmd: string, args: string[]) => ["--target", String(holderPid), "--mount", "--net", "--", cmd, ...args];
        const nodeRun = (cmd: string, args: string[], timeoutMs = 60_000) => run("nsenter", inNode(cmd, args), { timeoutMs });

        // the link to the host: the only addresses the host learns of the node
        ledger = { ...ledger, hostVeth: NODE.hostVeth };
        writeLedger(ledger);
        await run("ip", ["link", "add", NODE.hostVeth, "type", "veth", "peer", "name", NODE.nodeVeth, "netns", String(holderPid)]);
        await run("ip", ["addr", "add", `${NODE.hostIp}/${NODE.linkPrefix}`, "dev", NODE.hostVeth]);
        await run("ip", ["link", "set", NODE.hostVeth, "up"]);
        await nodeRun("ip", ["addr", "add", `${NODE.nodeIp}/${NODE.linkPrefix}`, "dev", NODE.nodeVeth]);
        await nodeRun("ip", ["link", "set", NODE.nodeVeth, "up"]);

        /** A daemon of the node: in its namespaces and its cgroup, its output in logs/<name>.log, dying with this process. */
        const daemon = (name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}) => {
            const out = fs.openSync(path.join(p.logs, `${name}.log`), "a");
            const child = spawn(
                "sh",
                [
                    "-c",
                    'echo $$ > "$1" && shift && exec "$@"',
                    "sh",
                    systemProcs,
                    "nsenter",
                    ...inNode("setpriv", ["--pdeathsig", "KILL", "--", cmd, ...args]),
                ],
                {
                    stdio: ["ignore", out, out],
                    env: { ...process.env, ...env },
                },
            );
            fs.closeSync(out);
            procs.push(child);
            child.on("exit", (code, signal) => {
                if (!stopping) log(`the node's ${name} ended (${signal ?? `exit ${code}`}); its log: ${path.join(p.logs, `${name}.log`)}`);
            });
            return child;
        };
        const alive = (name: string, child: ChildProcess) => {
            if (child.exitCode !== null || child.signalCode !== null)
                throw new Error(
                    `the node's ${name} ended (${child.signalCode ?? `exit ${child.exitCode}`}); its log: ${path.join(p.logs, `${name}.log`)}`,
                );
        };

        // the registry, then the images it lacks
        const registry = `${NODE.nodeIp}:${NODE.registryPort}`;
        fs.mkdirSync(registryStorage(), { recursive: true });
        fs.writeFileSync(path.join(p.config, "registry.yml"), registryConfig());
        const reg = daemon("registry", "docker-registry", ["serve", path.join(p.config, "registry.yml")]);
        await pollUntil(
            async () => {
                alive("registry", reg);
                return (
                    (await fetch(`http://${registry}/v2/`)
                        .then((r) => r.ok)
                        .catch(() => false)) || undefined
                );
            },
            {
                timeoutMs: 30_000,
                intervalMs: 200,
                describe: () => `the node's registry did not answer at http://${registry}/v2/ within 30 s`,
            },
        );
        for (const r of recipes) await pushImage(nodeBinPath("crane"), registry, r, log);
        log(`registry up with the ${recipes.length} images after ${since()}`);

        // the control plane
        log(`starting Kubernetes ${REAL_PLANE.kubernetes}: etcd, kube-apiserver, kube-controller-manager, kube-scheduler ...`);
        fs.writeFileSync(path.join(p.config, "kubeadm.yaml"), kubeadmConfig(p));
        const kubeadm = (args: string[]) => run(binPath("kubeadm"), args, { timeoutMs: 120_000 });
        await kubeadm(["init", "phase", "certs", "all", "--config", path.join(p.config, "kubeadm.yaml")]);
        await kubeadm([
            "init",
            "phase",
            "kubeconfig",
            "all",
            "--config",
            path.join(p.config, "kubeadm.yaml"),
            "--kubeconfig-dir",
            p.kubeconfigs,
        ]);
        const proxyConf = (
            await kubeadm(["kubeconfig", "user", "--config", path.join(p.config, "kubeadm.yaml"), "--client-name", "system:kube-proxy"])
        ).stdout;
        fs.writeFileSync(path.join(p.kubeconfigs, "kube-proxy.conf"), proxyConf, { mode: 0o600 });
        const pki = (f: string) => path.join(p.pki, f);
        const etcd = daemon("etcd", binPath("etcd"), [
            "--name",
            NODE.name,
            "--data-dir",
            path.join(p.dir, "etcd"),
            "--listen-client-urls",
            "http://127.0.0.1:2379",
            "--advertise-client-urls",
            "http://127.0.0.1:2379",
            "--listen-peer-urls",
            "http://127.0.0.1:2380",
            "--initial-advertise-peer-urls",
            "http://127.0.0.1:2380",
            "--initial-cluster",
            `${NODE.name}=http://127.0.0.1:2380`,
            "--listen-metrics-urls",
            "http://127.0.0.1:2381",
            "--log-level",
            "warn",
        ]);
        const apiserver = daemon("kube-apiserver", binPath("kube-apiserver"), [
            `--advertise-address=${NODE.nodeIp}`,
            "--bind-address=0.0.0.0",
            `--secure-port=${NODE.apiPort}`,
            "--etcd-servers=http://127.0.0.1:2379",
            `--service-cluster-ip-range=${NODE.serviceCidr}`,
            `--client-ca-file=${pki("ca.crt")}`,
            `--tls-cert-file=${pki("apiserver.crt")}`,
            `--tls-private-key-file=${pki("apiserver.key")}`,
            `--kubelet-client-certificate=${pki("apiserver-kubelet-client.crt")}`,
            `--kubelet-client-key=${pki("apiserver-kubelet-client.key")}`,
            "--kubelet-preferred-address-types=InternalIP",
            `--service-account-issuer=https://kubernetes.default.svc.${NODE.clusterDomain}`,
            `--service-account-key-file=${pki("sa.pub")}`,
            `--service-account-signing-key-file=${pki("sa.key")}`,
            `--proxy-client-cert-file=${pki("front-proxy-client.crt")}`,
            `--proxy-client-key-file=${pki("front-proxy-client.key")}`,
            `--requestheader-client-ca-file=${pki("front-proxy-ca.crt")}`,
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-username-headers=X-Remote-User",
            "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction",
            "--allow-privileged=true",
            "--profiling=false",
            ...(IMAGE_VOLUME_GATE ? ["--feature-gates=ImageVolume=true"] : []),
        ]);
        const kubeconfigFile = path.join(root, "kubeconfig");
        fs.copyFileSync(path.join(p.kubeconfigs, "super-admin.conf"), kubeconfigFile);
        fs.chmodSync(kubeconfigFile, 0o600);
        const kubectl = (args: string[], timeoutMs = 60_000) => run("kubectl", ["--kubeconfig", kubeconfigFile, ...args], { timeoutMs });
        await pollUntil(
            async () => {
                alive("etcd", etcd);
                alive("kube-apiserver", apiserver);
                return (
                    (await kubectl(["get", "--raw", "/readyz"], 10_000)
                        .then(() => true)
                        .catch(() => false)) || undefined
                );
            },
            {
                timeoutMs: 120_000,
                intervalMs: 500,
                describe: () => `the node's API server was not ready within 120 s; its log: ${path.join(p.logs, "kube-apiserver.log")}`,
            },
        );
        const kc = (f: string) => path.join(p.kubeconfigs, f);
        daemon("kube-controller-manager", binPath("kube-controller-manager"), [
            `--kubeconfig=${kc("controller-manager.conf")}`,
            `--authentication-kubeconfig=${kc("controller-manager.conf")}`,
            `--authorization-kubeconfig=${kc("controller-manager.conf")}`,
            "--bind-address=127.0.0.1",
            `--cluster-signing-cert-file=${pki("ca.crt")}`,
            `--cluster-signing-key-file=${pki("ca.key")}`,
            `--root-ca-file=${pki("ca.crt")}`,
            `--service-account-private-key-file=${pki("sa.key")}`,
            "--use-service-account-credentials=true",
            "--controllers=*,bootstrapsigner,tokencleaner",
            "--allocate-node-cidrs=true",
            `--cluster-cidr=${NODE.clusterCidr}`,
            "--node-cidr-mask-size=24",
            `--service-cluster-ip-range=${NODE.serviceCidr}`,
            "--leader-elect=false",
            "--profiling=false",
        ]);
        daemon("kube-scheduler", binPath("kube-scheduler"), [
            `--kubeconfig=${kc("scheduler.conf")}`,
            `--authentication-kubeconfig=${kc("scheduler.conf")}`,
            `--authorization-kubeconfig=${kc("scheduler.conf")}`,
            "--bind-address=127.0.0.1",
            "--leader-elect=false",
            "--profiling=false",
        ]);
        log(`Kubernetes API up after ${since()}; starting containerd ${REAL_NODE.containerd}, the kubelet and kube-proxy ...`);

        // the runtime and the node's agents
        fs.writeFileSync(path.join(p.config, "containerd.toml"), containerdConfig(p));
        for (const [registryName, upstream] of Object.entries(MIRRORED)) {
            fs.mkdirSync(path.join(p.config, "certs.d", registryName), { recursive: true });
            fs.writeFileSync(path.join(p.config, "certs.d", registryName, "hosts.toml"), hostsToml(registryName, upstream));
        }
        fs.mkdirSync(path.join(p.config, "certs.d", LAB_REGISTRY), { recursive: true });
        fs.writeFileSync(path.join(p.config, "certs.d", LAB_REGISTRY, "hosts.toml"), labRegistryToml());
        fs.writeFileSync(path.join(p.dir, "cni", "net.d", "10-gitops-lab.conflist"), cniConfig());
        // the Pods' upstream resolver: none (the node has no route out); the kubelet adds the cluster DNS
        fs.writeFileSync(path.join(p.config, "resolv.conf"), "# the real node of gitops-lab: no upstream resolver\n");
        const nodePath = [
            path.dirname(nodeBinPath("containerd")),
            "/usr/local/sbin",
            "/usr/local/bin",
            "/usr/sbin",
            "/usr/bin",
            "/sbin",
            "/bin",
        ].join(":");
        const containerd = daemon("containerd", nodeBinPath("containerd"), ["--config", path.join(p.config, "containerd.toml")], {
            PATH: nodePath,
        });
        const socket = `/proc/${holderPid}/root/run/containerd/containerd.sock`;
        await pollUntil(
            async () => {
                alive("containerd", containerd);
                return fs.existsSync(socket) || undefined;
            },
            {
                timeoutMs: 30_000,
                intervalMs: 200,
                describe: () => `containerd did not open its socket within 30 s; its log: ${path.join(p.logs, "containerd.log")}`,
            },
        );
        // the kernel settings the kubelet will change, recorded first
        ledger = { ...ledger, sysctls: Object.fromEntries(KUBELET_SYSCTLS.map((k) => [k, fs.readFileSync(sysctlFile(k), "utf8").trim()])) };
        writeLedger(ledger);
        fs.writeFileSync(path.join(p.config, "kubelet.yaml"), kubeletConfig(p));
        const kubelet = daemon(
            "kubelet",
            binPath("kubelet"),
            [
                `--config=${path.join(p.config, "kubelet.yaml")}`,
                `--kubeconfig=${kc("kubelet.conf")}`,
                `--root-dir=${path.join(p.dir, "kubelet")}`,
                `--cert-dir=${path.join(p.dir, "kubelet", "pki")}`,
                `--node-ip=${NODE.nodeIp}`,
                `--hostname-override=${NODE.name}`,
            ],
            { PATH: nodePath },
        );
        fs.writeFileSync(path.join(p.config, "kube-proxy.yaml"), kubeProxyConfig(p));
        const proxy = daemon("kube-proxy", binPath("kube-proxy"), [`--config=${path.join(p.config, "kube-proxy.yaml")}`], {
            PATH: nodePath,
        });
        await pollUntil(
            async () => {
                alive("kubelet", kubelet);
                alive("containerd", containerd);
                const node = await kubectl(["get", "node", NODE.name, "-o", "json"], 10_000)
                    .then((r) => JSON.parse(r.stdout))
                    .catch(() => undefined);
                return node?.status?.conditions?.some((c: any) => c.type === "Ready" && c.status === "True") || undefined;
            },
            {
                timeoutMs: 120_000,
                intervalMs: 500,
                describe: () => `the node did not become Ready within 120 s; the kubelet's log: ${path.join(p.logs, "kubelet.log")}`,
            },
        );
        log(`node ${NODE.name} Ready after ${since()}; deploying CoreDNS ...`);
        await kubectl(["apply", "--server-side", "-f", path.join(MANIFESTS, "coredns.yaml")]);
        await pollUntil(
            async () => {
                alive("kube-proxy", proxy);
                const dep = await kubectl(["get", "deployment", "coredns", "-n", "kube-system", "-o", "json"], 10_000)
                    .then((r) => JSON.parse(r.stdout))
                    .catch(() => undefined);
                return (dep?.status?.readyReplicas ?? 0) >= 1 || undefined;
            },
            {
                timeoutMs: 180_000,
                intervalMs: 500,
                describe: () => "CoreDNS was not Ready within 180 s (kubectl -n kube-system describe pods -l k8s-app=kube-dns)",
            },
        );
        // the cluster DNS through the Service address: kube-proxy's rules, CoreDNS, the API
        await pollUntil(
            async () => {
                const got = await nodeRun(
                    process.execPath,
                    [
                        "-e",
                        `const r=new (require("dns").promises.Resolver)();r.setServers(["${NODE.dnsIp}"]);r.resolve4("kube-dns.kube-system.svc.${NODE.clusterDomain}").then(a=>console.log(a.join(",")),e=>{console.error(e.code);process.exit(1)})`,
                    ],
                    10_000,
                ).catch(() => undefined);
                return got?.stdout.trim() === NODE.dnsIp || undefined;
            },
            {
                timeoutMs: 60_000,
                intervalMs: 500,
                describe: () =>
                    `the cluster DNS at ${NODE.dnsIp} did not answer for kube-dns.kube-system within 60 s (kube-proxy's log: ${path.join(p.logs, "kube-proxy.log")})`,
            },
        );
        log(`real node up after ${since()}: the cluster DNS answers at ${NODE.dnsIp}`);
        return { root, kubeconfigFile, kubeconfig: fs.readFileSync(kubeconfigFile, "utf8"), registry, holderPid, dir: p.dir, stop };
    } catch (e) {
        await stop().catch((err) => log(`stopping after the failure: ${err.message}`));
        throw e;
    }
}
