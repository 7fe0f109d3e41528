/**
 * The real tier's control plane and node programs, pinned in one place: Kubernetes itself (the minor
 * the default k3s runs), etcd, and each Argo CD release the real tier runs with the kustomize its
 * image bundles. Everything is built from Go modules through the ordinary `go` client.
 */
export const REAL_PLANE = {
    /**
     * The newest Kubernetes 1.36 patch the Go module proxy serves (k3s v1.36.4+k3s1, the default, runs
     * v1.36.4, which the proxy does not serve); its staging modules are published as v0.36.3.
     */
    kubernetes: "v1.36.3",
    kubernetesStaging: "v0.36.3",
    /** The etcd k3s v1.36.4+k3s1 embeds. */
    etcd: "v3.6.14",
} as const;

/**
 * The Go toolchain Argo CD 3.6's go.mod asks for (`go 1.27.0`); the Go module proxy serves it, and
 * `GOTOOLCHAIN` makes the local go fetch and run it for that module alone.
 */
export const GO_TOOLCHAIN_ARGOCD_3_6 = "go1.27.3";

/**
 * The Argo CD releases the real tier builds and runs, each into a cache of its own
 * (realplane/build.ts argoCdBuildDir): the argocd binary and the kustomize of
 * `quay.io/argoproj/argocd:<version>` (realnode/images.yaml). Each go.mod replaces its in-tree
 * gitops-engine with `./gitops-engine`, which a module download does not contain: `gitopsEngine` is the
 * module that stands in.
 */
export const REAL_ARGOCD = {
    "v3.6.2": {
        /**
         * v3.6.2's hack/tool-versions.sh says kustomize 5.8.3, whose module needs a k8s.io/kube-openapi
         * version the Go module proxy refuses (403): its image here bundles 5.8.1, as v3.5.x's does.
         */
        kustomize: "v5.8.1",
        /** The proxy serves the engine as the tagged module of the same release: the engine v3.6.2 is built with. */
        gitopsEngine: { module: "github.com/argoproj/argo-cd/gitops-engine/v3", version: "v3.6.2" },
        goToolchain: GO_TOOLCHAIN_ARGOCD_3_6,
    },
    "v3.5.1": {
        /** hack/tool-versions.sh of Argo CD v3.5.1. */
        kustomize: "v5.8.1",
        commit: "109ca7ca71139e514114499d294a492e7910a965",
        /**
         * The proxy does not serve the engine at the v3.5.1 commit (nor at v3.5.8's: 403). This is the
         * engine's nearest version it serves: at the commit after v3.5.1 on the 3.5 line, identical to
         * v3.5.1's tree except pkg/utils/kube/resource_ops.go (a recover() around AuthReconcile, upstream
         * issue #28607). Said so wherever the real tier is reported on; it is why the real tier's 3.5 is
         * v3.5.1, not v3.5.8.
         */
        gitopsEngine: { module: "github.com/argoproj/argo-cd/gitops-engine", version: "v0.0.0-20260827090335-e258ee23c3e5" },
    },
} as const;
export type RealArgoCd = keyof typeof REAL_ARGOCD;
export const REAL_ARGOCD_VERSIONS = Object.keys(REAL_ARGOCD) as RealArgoCd[];

/** The Argo CD the real tier runs unless a test names another: the stack's default (test/pins.test.ts). */
export const REAL_ARGOCD_DEFAULT: RealArgoCd = "v3.6.2";

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
 * from Debian packages. k3s v1.36.4+k3s1 ships containerd v2.3.4 (its k3s build), CoreDNS 1.14.6 and
 * pause 3.10.2 (Kubernetes 1.36's own); these are those.
 */
export const REAL_NODE = {
    /** containerd 2.1 was the first with the CRI's image volumes (Kubernetes' ImageVolume, GA in 1.36). */
    containerd: "v2.3.4",
    coredns: "v1.14.6",
    /** go-containerregistry's crane: assembles the images from their layers and pushes them to the node's registry. */
    crane: "v0.22.1",
    /** The sandbox image Kubernetes 1.36 names (registry.k8s.io/pause), built from the Kubernetes module's own pause.c. */
    pause: "3.10.2",
    /** The Debian suite the images are made from (mmdebstrap), and the one that has busybox 1.37.0. */
    debian: "bookworm",
    debianBusybox: "trixie",
} as const;
