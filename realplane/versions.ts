/**
 * The real control plane of the second test tier, pinned in one place: Kubernetes itself (the minor
 * the default k3s runs), etcd, KWOK (fake nodes), kustomize at the version Argo CD v3.5.1 bundles,
 * and Argo CD v3.5.1. Everything is built from Go modules through the ordinary `go` client.
 */
export const REAL_PLANE = {
    /** k3s v1.33.5+k3s1 runs Kubernetes v1.33.5; its staging modules are published as v0.33.5. */
    kubernetes: "v1.33.5",
    kubernetesStaging: "v0.33.5",
    etcd: "v3.5.21",
    kwok: "v0.8.0",
    /** hack/tool-versions.sh of Argo CD v3.5.1. */
    kustomize: "v5.8.1",
    argocd: "v3.5.1",
    argocdCommit: "109ca7ca71139e514114499d294a492e7910a965",
    /**
     * Argo CD's go.mod replaces its in-tree gitops-engine with `./gitops-engine`, which a module
     * download does not contain, and the Go module proxy does not serve the engine at the v3.5.1
     * commit. This is the engine's nearest version it serves: at the commit after v3.5.1 on the 3.5
     * line, identical to v3.5.1's tree except pkg/utils/kube/resource_ops.go (a recover() around
     * AuthReconcile, upstream issue #28607). Said so wherever the real plane is reported on.
     */
    gitopsEngine: "v0.0.0-20260827090335-e258ee23c3e5",
} as const;
