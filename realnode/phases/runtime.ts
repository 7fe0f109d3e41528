/** Phase: the runtime and the node's agents: containerd (its registry mirrors), the kubelet and kube-proxy, until the node is Ready. */
import * as fs from "fs";
import * as path from "path";
import { LAB_REGISTRY } from "../../lab/ports/images";
import { pollUntil } from "../../lab/ports/wait";
import { binPath } from "../../realplane/build";
import { nodeBinPath } from "../build";
import { cniConfig, containerdConfig, hostsToml, kubeletConfig, kubeProxyConfig, labRegistryToml, MIRRORED, NODE } from "../config";
import { KUBELET_SYSCTLS, sysctlFile } from "../ledger";
import { NodeContext } from "./context";

export async function runtime(ctx: NodeContext): Promise<void> {
    const p = ctx.p;
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
    const containerd = ctx.daemon("containerd", nodeBinPath("containerd"), ["--config", path.join(p.config, "containerd.toml")], {
        PATH: nodePath,
    });
    const socket = `/proc/${ctx.holderPid}/root/run/containerd/containerd.sock`;
    await pollUntil(
        async () => {
            ctx.alive("containerd", containerd);
            return fs.existsSync(socket) || undefined;
        },
        {
            timeoutMs: 30_000,
            intervalMs: 200,
            describe: () => `containerd did not open its socket within 30 s; its log: ${ctx.logOf("containerd")}`,
        },
    );
    // the kernel settings the kubelet will change, recorded first
    ctx.record({ sysctls: Object.fromEntries(KUBELET_SYSCTLS.map((k) => [k, fs.readFileSync(sysctlFile(k), "utf8").trim()])) });
    fs.writeFileSync(path.join(p.config, "kubelet.yaml"), kubeletConfig(p));
    const kc = (f: string) => path.join(p.kubeconfigs, f);
    const kubelet = ctx.daemon(
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
    ctx.daemon("kube-proxy", binPath("kube-proxy"), [`--config=${path.join(p.config, "kube-proxy.yaml")}`], { PATH: nodePath });
    await pollUntil(
        async () => {
            ctx.alive("kubelet", kubelet);
            ctx.alive("containerd", containerd);
            const node = await ctx
                .kubectl(["get", "node", NODE.name, "-o", "json"], 10_000)
                .then((r) => JSON.parse(r.stdout) as { status?: { conditions?: { type: string; status?: string }[] } })
                .catch(() => undefined);
            return node?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") || undefined;
        },
        {
            timeoutMs: 120_000,
            intervalMs: 500,
            describe: () => `the node did not become Ready within 120 s; the kubelet's log: ${ctx.logOf("kubelet")}`,
        },
    );
    ctx.log(`node ${NODE.name} Ready after ${ctx.since()}; deploying CoreDNS ...`);
}
