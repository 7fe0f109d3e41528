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
import { REAL_ARGOCD, REAL_ARGOCD_DEFAULT, REAL_ARGOCD_VERSIONS, REAL_NODE, REAL_PLANE } from "../realplane/versions";
import { imageRecipes, sourcePath } from "../realnode/images";
import { argoCdBuildDir } from "../realplane/build";

/** Every container image an install names (its `image:` lines: parsing the whole 2 MB file costs seconds). */
const installImages = (version: (typeof ARGOCD_VERSIONS)[number]) =>
    new Set(
        [...fs.readFileSync(path.join(argoCdInstallDir(version), "install.yaml"), "utf8").matchAll(/^\s+image: (\S+)$/gm)].map((m) => m[1]),
    );

describe("pinned versions agree", () => {
    const recipes = imageRecipes().map((r) => r.name);

    it("every Argo CD the real tier runs is one the stack offers, at the same commit", () => {
        for (const v of REAL_ARGOCD_VERSIONS) {
            assert.ok(ARGOCD_VERSIONS.includes(v), `${v} is offered`);
            assert.strictEqual((ARGOCD_RELEASES[v] as { commit?: string }).commit, (REAL_ARGOCD[v] as { commit?: string }).commit, v);
        }
    });

    it("the node makes every image the installs it runs name", () => {
        for (const v of REAL_ARGOCD_VERSIONS) {
            const missing = [...installImages(v)].filter((i) => !recipes.includes(i));
            assert.deepStrictEqual(missing, [], v);
        }
    });

    it("the default install is the one the real tier proves", () => {
        assert.strictEqual(DEFAULT_ARGOCD_VERSION, REAL_ARGOCD_DEFAULT);
        assert.strictEqual(DEFAULTS.argocdVersion, DEFAULT_ARGOCD_VERSION);
    });

    it("the real node runs the default k3s's Kubernetes minor, at most its patch", () => {
        // k3s v1.36.4+k3s1 runs Kubernetes v1.36.4; the Go module proxy serves v1.36.3 at the newest (realplane/versions.ts)
        const [k3sMinor, k3sPatch] = /^v1\.(\d+)\.(\d+)\+k3s\d+$/.exec(DEFAULTS.k3sVersion)!.slice(1).map(Number);
        const [minor, patch] = /^v1\.(\d+)\.(\d+)$/.exec(REAL_PLANE.kubernetes)!.slice(1).map(Number);
        assert.deepStrictEqual({ minor, atMostK3sPatch: patch <= k3sPatch }, { minor: k3sMinor, atMostK3sPatch: true });
        assert.strictEqual(REAL_PLANE.kubernetesStaging, REAL_PLANE.kubernetes.replace(/^v1\./, "v0."));
    });

    it("the node's sandbox and DNS images carry the pinned versions", () => {
        assert.ok(recipes.includes(`registry.k8s.io/pause:${REAL_NODE.pause}`), "pause");
        assert.ok(recipes.includes(`registry.k8s.io/coredns/coredns:${REAL_NODE.coredns}`), "coredns recipe");
        const dns = fs.readFileSync(path.join(__dirname, "..", "realnode", "manifests", "coredns.yaml"), "utf8");
        assert.match(dns, new RegExp(`image: registry\\.k8s\\.io/coredns/coredns:${REAL_NODE.coredns.replace(/\./g, "\\.")}\\n`));
    });

    it("an image takes an Argo CD release's build by its version, and no other", async () => {
        assert.strictEqual(await sourcePath("build@v3.6.2/argocd"), path.join(argoCdBuildDir("v3.6.2"), "bin", "argocd"));
        await assert.rejects(sourcePath("build@v3.4.0/argocd"), /Argo CD v3\.4\.0 is not one the real tier builds/);
    });
});
