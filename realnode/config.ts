/**
 * The real node's configuration: its names and addresses, its folders, and the files its daemons read
 * (kubeadm's, containerd's with the registry mirrors, the CNI's, the kubelet's, kube-proxy's, the
 * registry's), each rendered from the pins (realplane/versions.ts) by a pure function.
 */
import * as path from "path";
import { stringify } from "yaml";
import { REAL_NODE, REAL_PLANE } from "../realplane/versions";
import { nodeBinPath } from "./build";

/** Where Debian's containernetworking-plugins puts the CNI plugins. */
export const CNI_DIR = "/usr/lib/cni";

/** The node's names and addresses (k3s's pod and service ranges). */
export const NODE = {
    name: "gitops-lab-node",
    hostVeth: "glab0",
    nodeVeth: "eth0",
    hostIp: "10.234.0.1",
    nodeIp: "10.234.0.2",
    linkPrefix: 30,
    clusterCidr: "10.42.0.0/16",
    podCidr: "10.42.0.0/24",
    podGateway: "10.42.0.1",
    serviceCidr: "10.43.0.0/16",
    dnsIp: "10.43.0.10",
    clusterDomain: "cluster.local",
    apiPort: 6443,
    registryPort: 5000,
} as const;

export interface Paths {
    dir: string;
    logs: string;
    pki: string;
    kubeconfigs: string;
    config: string;
}

export function nodePaths(root: string): Paths {
    const dir = path.join(root, "node");
    return {
        dir,
        logs: path.join(dir, "logs"),
        pki: path.join(dir, "pki"),
        kubeconfigs: path.join(dir, "kubeconfigs"),
        config: path.join(dir, "config"),
    };
}

/** The marker of a node folder this program made: only such a folder is emptied at the next start. */
export const MARKER = ".gitops-lab-node";

/** The registry's storage: a cache, kept between nodes, like the images' layers. */
export const registryStorage = () => path.join(path.dirname(path.dirname(nodeBinPath("crane"))), "..", "registry");

export function kubeadmConfig(p: Paths): string {
    return [
        {
            apiVersion: "kubeadm.k8s.io/v1beta4",
            kind: "InitConfiguration",
            localAPIEndpoint: { advertiseAddress: NODE.nodeIp, bindPort: NODE.apiPort },
            nodeRegistration: { name: NODE.name, criSocket: "unix:///run/containerd/containerd.sock" },
        },
        {
            apiVersion: "kubeadm.k8s.io/v1beta4",
            kind: "ClusterConfiguration",
            kubernetesVersion: REAL_PLANE.kubernetes,
            clusterName: "gitops-lab",
            certificatesDir: p.pki,
            controlPlaneEndpoint: `${NODE.nodeIp}:${NODE.apiPort}`,
            networking: { serviceSubnet: NODE.serviceCidr, podSubnet: NODE.clusterCidr, dnsDomain: NODE.clusterDomain },
            apiServer: { certSANs: [NODE.nodeIp, "127.0.0.1", "localhost"] },
        },
    ]
        .map((d) => stringify(d))
        .join("---\n");
}

export function containerdConfig(p: Paths): string {
    const cni = path.join(p.dir, "cni");
    // TOML by hand: a handful of keys, every value a path of ours or a constant
    return `version = 3
root = "${path.join(p.dir, "containerd")}"
state = "/run/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins."io.containerd.cri.v1.runtime"]
  # root here lacks CAP_SYS_RESOURCE (a VM's or a container's root often does): the CRI's -998 for a
  # sandbox is refused by the kernel; with this, no container is set below containerd's own score
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["${CNI_DIR}"]
    conf_dir = "${path.join(cni, "net.d")}"
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = false

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "registry.k8s.io/pause:${REAL_NODE.pause}"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "${path.join(p.config, "certs.d")}"

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
`;
}

/** The upstream registries the images come from, each mirrored by the node's registry under a path of its name. */
export const MIRRORED = {
    "docker.io": "https://registry-1.docker.io",
    "quay.io": "https://quay.io",
    "registry.k8s.io": "https://registry.k8s.io",
    "public.ecr.aws": "https://public.ecr.aws",
    "ghcr.io": "https://ghcr.io",
} as const;

/** containerd's hosts.toml for one upstream registry: the node's registry first (the path of its name), then upstream. */
export function hostsToml(registry: string, upstream: string): string {
    return `server = "${MIRRORED[registry as keyof typeof MIRRORED] ?? upstream}"

[host."http://127.0.0.1:${NODE.registryPort}/v2/${registry}"]
  capabilities = ["pull", "resolve"]
  override_path = true
`;
}

/**
 * containerd's hosts.toml for the lab's own images (registry.lab.internal, which has no upstream): the
 * node's registry is that registry, at its root, where the lab pushes them (lab/platform/images.ts).
 */
export const labRegistryToml = () => `server = "http://127.0.0.1:${NODE.registryPort}"\n`;

export function cniConfig(): string {
    return JSON.stringify(
        {
            cniVersion: "1.0.0",
            name: "gitops-lab",
            plugins: [
                {
                    type: "bridge",
                    bridge: "cni0",
                    isGateway: true,
                    isDefaultGateway: false,
                    ipMasq: false,
                    hairpinMode: true,
                    ipam: {
                        type: "host-local",
                        ranges: [[{ subnet: NODE.podCidr, gateway: NODE.podGateway }]],
                        routes: [{ dst: NODE.serviceCidr }],
                        dataDir: "/var/lib/cni/networks",
                    },
                },
            ],
        },
        null,
        2,
    );
}

/**
 * ImageVolume is beta and off by default in Kubernetes 1.33, on by default from 1.35 and GA in 1.36:
 * the gate is set only where it is needed.
 */
export const IMAGE_VOLUME_GATE = Number(REAL_PLANE.kubernetes.split(".")[1]) < 35;

export function kubeletConfig(p: Paths): string {
    return stringify({
        apiVersion: "kubelet.config.k8s.io/v1beta1",
        kind: "KubeletConfiguration",
        cgroupDriver: "cgroupfs",
        failCgroupV1: false,
        cgroupRoot: `/${NODE.name}`,
        cgroupsPerQOS: true,
        containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
        authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: path.join(p.pki, "ca.crt") } },
        authorization: { mode: "AlwaysAllow" },
        clusterDNS: [NODE.dnsIp],
        clusterDomain: NODE.clusterDomain,
        resolvConf: path.join(p.config, "resolv.conf"),
        readOnlyPort: 0,
        healthzBindAddress: NODE.nodeIp,
        failSwapOn: false,
        oomScoreAdj: 0,
        protectKernelDefaults: false,
        serializeImagePulls: false,
        // a lab on a shared machine: not evicted for a disk another program filled
        evictionHard: { "memory.available": "100Mi", "nodefs.available": "2%", "imagefs.available": "2%", "nodefs.inodesFree": "2%" },
        imageGCHighThresholdPercent: 98,
        imageGCLowThresholdPercent: 95,
        ...(IMAGE_VOLUME_GATE ? { featureGates: { ImageVolume: true } } : {}),
        rotateCertificates: false,
        serverTLSBootstrap: false,
    });
}

export function kubeProxyConfig(p: Paths): string {
    return stringify({
        apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
        kind: "KubeProxyConfiguration",
        clientConnection: { kubeconfig: path.join(p.kubeconfigs, "kube-proxy.conf") },
        mode: "iptables",
        clusterCIDR: NODE.clusterCidr,
        hostnameOverride: NODE.name,
        bindAddress: NODE.nodeIp,
        healthzBindAddress: `${NODE.nodeIp}:10256`,
        metricsBindAddress: "127.0.0.1:10249",
        oomScoreAdj: 0,
        // the conntrack table is the host's (nf_conntrack_max is not a network namespace's): left as it is
        conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
    });
}

export function registryConfig(): string {
    return stringify({
        version: 0.1,
        log: { level: "warn", fields: { service: "registry" } },
        storage: { filesystem: { rootdirectory: registryStorage() }, delete: { enabled: true }, cache: { blobdescriptor: "inmemory" } },
        http: { addr: `0.0.0.0:${NODE.registryPort}`, headers: { "X-Content-Type-Options": ["nosniff"] } },
    });
}

/** Starts the node; `log` hears what it waits for and how long it took. */
