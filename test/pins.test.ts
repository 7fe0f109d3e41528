/**
 * The pinned versions agree with each other (docs/upgrading.md): what the stack offers
 * (lab/platform/argocd.ts, defaults.ts), what the real tier builds (realplane/versions.ts) and the
 * images the node makes (realnode/images.yaml, realnode/manifests/). A version moved in one place and
 * not in another fails here, offline, before the real tier's builds would.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { argoCdInstallDir, ARGOCD_RELEASES, ARGOCD_VERSIONS, DEFAULT_ARGOCD_VERSION } from "../lab/platform/argocd";
import { DEFAULTS } from "../lab/platform/defaults";
import { REAL_NODE, REAL_PLANE } from "../realplane/versions";
import { imageRecipes } from "../realnode/images";

/** Every container image an install names (its `image:` lines: parsing the whole 2 MB file costs seconds). */
const installImages = (version: (typeof ARGOCD_VERSIONS)[number]) =>
    new Set(
        [...fs.readFileSync(path.join(argoCdInstallDir(version), "install.yaml"), "utf8").matchAll(/^\s+image: (\S+)$/gm)].map((m) => m[1]),
    );

describe("pinned versions agree", () => {
    const recipes = imageRecipes().map((r) => r.name);

    it("the real tier's Argo CD is one the stack offers, at the same commit", () => {
        assert.ok(ARGOCD_VERSIONS.includes(REAL_PLANE.argocd as any), REAL_PLANE.argocd);
        assert.strictEqual((ARGOCD_RELEASES as any)[REAL_PLANE.argocd].commit, REAL_PLANE.argocdCommit);
    });

    it("the node makes every image the real tier's install names", () => {
        const missing = [...installImages(REAL_PLANE.argocd as any)].filter((i) => !recipes.includes(i));
        assert.deepStrictEqual(missing, []);
    });

    it("the default install is the one the real tier proves", () => {
        assert.strictEqual(DEFAULT_ARGOCD_VERSION, REAL_PLANE.argocd);
        assert.strictEqual(DEFAULTS.argocdVersion, DEFAULT_ARGOCD_VERSION);
    });

    it("the default k3s runs the Kubernetes the real node runs", () => {
        assert.strictEqual(/^(v\d+\.\d+\.\d+)\+k3s\d+$/.exec(DEFAULTS.k3sVersion)?.[1], REAL_PLANE.kubernetes);
        assert.strictEqual(REAL_PLANE.kubernetesStaging, REAL_PLANE.kubernetes.replace(/^v1\./, "v0."));
    });

    it("the node's sandbox and DNS images carry the pinned versions", () => {
        assert.ok(recipes.includes(`registry.k8s.io/pause:${REAL_NODE.pause}`), "pause");
        assert.ok(recipes.includes(`registry.k8s.io/coredns/coredns:${REAL_NODE.coredns}`), "coredns recipe");
        const dns = fs.readFileSync(path.join(__dirname, "..", "realnode", "manifests", "coredns.yaml"), "utf8");
        assert.match(dns, new RegExp(`image: registry\\.k8s\\.io/coredns/coredns:${REAL_NODE.coredns.replace(/\./g, "\\.")}\\n`));
    });
});
