/**
 * The real tier's control plane and node programs, pinned in one place: Kubernetes itself (the minor
 * the default k3s runs), etcd, kustomize at the version Argo CD v3.5.1 bundles, and Argo CD v3.5.1.
 * Everything is built from Go modules through the ordinary `go` client.
 */
export const REAL_PLANE = {
    /** k3s v1.33.5+k3s1 runs Kubernetes v1.33.5; its staging modules are published as v0.33.5. */
    kubernetes: "v1.33.5",
    kubernetesStaging: "v0.33.5",
    etcd: "v3.5.21",
    /** hack/tool-versions.sh of Argo CD v3.5.1. */
    kustomize: "v5.8.1",
    argocd: "v3.5.1",
    argocdCommit: "109ca7ca71139e514114499d294a492e7910a965",
    /**
     * Argo CD's go.mod replaces its in-tree gitops-engine with `./gitops-engine`, which a module
     * download does not contain, and the Go module proxy does not serve the engine at the v3.5.1
     * commit. This is the engine's nearest version it serves: at the commit after v3.5.1 on the 3.5
     * line, identical to v3.5.1's tree except pkg/utils/kube/resource_ops.go (a recover() around
     * AuthReconcile, upstream issue #28607). Said so wherever the real tier is reported on.
     */
    gitopsEngine: "v0.0.0-20260827090335-e258ee23c3e5",
} as const;

/**
 * The Go toolchain Argo CD 3.6's go.mod asks for (`go 1.27.0`); the Go module proxy serves it, and
 * `GOTOOLCHAIN` makes the local go fetch and run it for that module alone.
 */
export const GO_TOOLCHAIN_ARGOCD_3_6 = "go1.27.3";

/**
 * The Pulumi engine the Pulumi tier runs, built from Go modules like the plane (realplane/pulumiBuild.ts).
 * `kubernetes` is the provider `@pulumi/kubernetes` (package.json) asks for: the same version, so a lab
 * host downloads the provider the tests built and the engine prints no version warning.
 */
export const PULUMI = {
    /** The CLI: `github.com/pulumi/pulumi/pkg/v3` (and `sdk/v3`) at the version `@pulumi/pulumi` pins. */
    cli: "v3.248.0",
    /** pulumi-kubernetes' tag v4.25.0; the proxy serves its provider module only as this pseudo-version. */
    kubernetes: "4.25.0",
    kubernetesModule: "v4.0.0-20260115033456-f47bc2d6f199",
    /** The provider's go.mod points `sdk/v4` at `../sdk`, absent from a module download: this published one stands in. */
    kubernetesSdk: "v4.24.0",
} as const;

/**
 * Prometheus's `promtool`, which proves the doctor's alert rules (`promtool test rules`) in the real
 * tier. The Go module's v0.316.0 is Prometheus 3.16.0 (its VERSION file).
 */
export const PROMETHEUS = {
    module: "v0.316.0",
    version: "3.16.0",
} as const;

/**
 * The real node (realnode/): a kubelet and kube-proxy from the plane's Kubernetes build, on a
 * container runtime and a cluster DNS built from Go modules like the plane, with images made here
 * from Debian packages. k3s v1.33.5+k3s1 runs containerd v2.1.4 and CoreDNS 1.12.3; these are those.
 */
export const REAL_NODE = {
    /** containerd 2.1 is the first with the CRI's image volumes (Kubernetes' ImageVolume, beta in 1.33). */
    containerd: "v2.1.4",
    coredns: "v1.12.3",
    /** go-containerregistry's crane: assembles the images from their layers and pushes them to the node's registry. */
    crane: "v0.22.1",
    /** The sandbox image Kubernetes 1.33 names (registry.k8s.io/pause), built from the Kubernetes module's own pause.c. */
    pause: "3.10",
    /** The Debian suite the images are made from (mmdebstrap), and the one that has busybox 1.37.0. */
    debian: "bookworm",
    debianBusybox: "trixie",
} as const;
