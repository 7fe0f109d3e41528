/**
 * The real control plane's build recipe (realplane/), without Go: the scratch modules it writes.
 * (Building and running the plane is the real tier's business, not `npm test`'s.)
 */
import * as assert from "assert";
import { cacheDir, copiedReplaces, goModFile, replacesOf, stagingReplaces } from "../realplane/build";
import { REAL_ARGOCD, REAL_PLANE } from "../realplane/versions";

const KUBERNETES_GO_MOD = `module k8s.io/kubernetes

go 1.24.0

require (
	k8s.io/api v0.0.0
	k8s.io/client-go v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	github.com/example/other => github.com/example/other v1.2.3
)
`;

const ARGO_GO_MOD = `module github.com/argoproj/argo-cd/v3

go 1.26.3

replace (
	github.com/golang/protobuf => github.com/golang/protobuf v1.5.4

	// Avoid CVE-2022-3064
	gopkg.in/yaml.v2 => gopkg.in/yaml.v2 v2.4.0
	k8s.io/api => k8s.io/api v0.36.1
)

replace github.com/argoproj/argo-cd/gitops-engine => ./gitops-engine
`;

describe("the real control plane's build (realplane/)", () => {
    it("reads replace directives from a block and from single lines, comments aside", () => {
        assert.deepStrictEqual(replacesOf(ARGO_GO_MOD), [
            ["github.com/golang/protobuf", "github.com/golang/protobuf v1.5.4"],
            ["gopkg.in/yaml.v2", "gopkg.in/yaml.v2 v2.4.0"],
            ["k8s.io/api", "k8s.io/api v0.36.1"],
            ["github.com/argoproj/argo-cd/gitops-engine", "./gitops-engine"],
        ]);
    });

    it("replaces Kubernetes' staging modules by their published versions only", () => {
        assert.deepStrictEqual(stagingReplaces(KUBERNETES_GO_MOD, "v0.33.5"), [
            "k8s.io/api => k8s.io/api v0.33.5",
            "k8s.io/client-go => k8s.io/client-go v0.33.5",
        ]);
    });

    it("copies Argo CD's replace directives, pointing its in-tree gitops-engine at the pinned proxy version", () => {
        assert.deepStrictEqual(
            copiedReplaces(ARGO_GO_MOD, { "github.com/argoproj/argo-cd/gitops-engine": REAL_ARGOCD["v3.5.1"].gitopsEngine.version }),
            [
                "github.com/golang/protobuf => github.com/golang/protobuf v1.5.4",
                "gopkg.in/yaml.v2 => gopkg.in/yaml.v2 v2.4.0",
                "k8s.io/api => k8s.io/api v0.36.1",
                `github.com/argoproj/argo-cd/gitops-engine => github.com/argoproj/argo-cd/gitops-engine ${REAL_ARGOCD["v3.5.1"].gitopsEngine.version}`,
            ],
        );
        assert.deepStrictEqual(
            copiedReplaces(ARGO_GO_MOD, {}).filter((r) => r.includes("gitops-engine")),
            [],
            "a local replace with no version is dropped",
        );
    });

    it("writes a go.mod with only the blocks it needs", () => {
        assert.strictEqual(goModFile("m", "1.23.0", ["a v1"], []), "module m\n\ngo 1.23.0\n\nrequire (\n\ta v1\n)\n");
    });

    it("keeps the binaries outside the clone, in a cache named by the pins", () => {
        const dir = cacheDir();
        assert.match(dir, new RegExp(`gitops-lab/real-plane/kubernetes-${REAL_PLANE.kubernetes.replace(/\./g, "\\.")}-[0-9a-f]{12}$`));
        assert.notStrictEqual(cacheDir({ ...REAL_PLANE, etcd: "v3.5.99" }), dir, "another pin, another cache");
    });
});
