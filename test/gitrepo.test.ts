/**
 * gitrepo/ holds the labs' repositories as real files a lab author reads, edits and builds: the shop
 * lab's base and overlays, the tenants lab's tenant files and releases (the setup hook a file). Every
 * kustomization there builds, and the code reads the labs' first commits from there.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { kustomizeBuild } from "../lab/ports/kustomize";
import { siteImage, siteImages } from "../lab/tenants/siteImages";
import { layerFiles } from "./helpers/tar";
import { readRepoFiles, REPO_FILES, SHOP_REPO_DIR } from "../lab/shop/repoFiles";
import { RELEASES, TENANTS } from "../lab/tenants/layout";
import {
    HOOK_ERROR,
    PLATFORM_REPO_DIR,
    platformRepoFiles,
    readSetupScript,
    SITE_IMAGE,
    tenantFile,
    tenantPath,
} from "../lab/tenants/repoFiles";

const GITREPO = path.resolve(__dirname, "..", "gitrepo");

/** Every directory under gitrepo/ with a kustomization.yaml. */
function kustomizations(dir = GITREPO): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const p = path.join(dir, e.name);
        if (!e.isDirectory()) return [];
        return [...(fs.existsSync(path.join(p, "kustomization.yaml")) ? [p] : []), ...kustomizations(p)];
    });
}

describe("gitrepo/: the labs' repositories as files", function () {
    this.timeout(120_000);

    it("every kustomization under gitrepo/ builds with kustomize (the shop lab's base and overlays, the tenants lab's releases)", async () => {
        const dirs = kustomizations()
            .map((d) => path.relative(GITREPO, d))
            .sort();
        assert.deepStrictEqual(dirs, [
            "shop/base",
            "shop/envs/dev",
            "shop/envs/prod",
            ...Object.values(RELEASES)
                .sort()
                .map((r) => `tenants/releases/${r}`),
        ]);
        for (const d of dirs) {
            const objs = await kustomizeBuild(path.join(GITREPO, d));
            assert.ok(objs.length > 0, `${d} renders objects`);
        }
    });

    it("the shop lab's first commit is gitrepo/shop's files", () => {
        assert.deepStrictEqual(Object.keys(readRepoFiles()).sort(), [...REPO_FILES].sort());
        for (const f of REPO_FILES) assert.strictEqual(readRepoFiles()[f], fs.readFileSync(path.join(SHOP_REPO_DIR, f), "utf8"));
    });

    it("the tenants lab's first commit is gitrepo/tenants's files: every tenant at the first release, the three releases", () => {
        const files = platformRepoFiles();
        for (const t of TENANTS) assert.strictEqual(files[tenantPath(t)], tenantFile(t, RELEASES.first));
        for (const r of Object.values(RELEASES)) assert.ok(files[`releases/${r}/kustomization.yaml`], r);
        assert.strictEqual(
            Object.keys(files).length,
            fs.readdirSync(PLATFORM_REPO_DIR, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length,
        );
    });

    it("each release mounts its own image read-only in the hook Job and the site; only 1.2.0's has the template", async () => {
        const images = await siteImages();
        for (const r of Object.values(RELEASES)) {
            const objs: any[] = await kustomizeBuild(path.join(PLATFORM_REPO_DIR, "releases", r));
            assert.deepStrictEqual(objs.map((o) => o.kind).sort(), ["Deployment", "Job"], `${r}: no ConfigMap of the code any more`);
            const job = objs.find((o) => o.kind === "Job" && o.metadata.name === "site-setup");
            assert.strictEqual(job.spec.backoffLimit, 2);
            assert.strictEqual(job.metadata.annotations["argocd.argoproj.io/hook-delete-policy"], "BeforeHookCreation");
            const site = objs.find((o) => o.kind === "Deployment" && o.metadata.name === "site");
            for (const spec of [job.spec.template.spec, site.spec.template.spec]) {
                const code = spec.volumes.find((v: any) => v.name === "code");
                assert.deepStrictEqual(code, { name: "code", image: { reference: siteImage(r), pullPolicy: "IfNotPresent" } });
                assert.deepStrictEqual(
                    spec.containers[0].volumeMounts.find((m: any) => m.name === "code"),
                    { name: "code", mountPath: "/app", readOnly: true },
                );
                assert.strictEqual(spec.containers[0].image, SITE_IMAGE);
            }
            const image = images.find((i) => i.reference === siteImage(r))!;
            const files = await layerFiles(image.layer.bytes);
            assert.strictEqual(files.VERSION, `${r}\n`);
            assert.strictEqual("news.settings-template" in files, r === RELEASES.faulty, `${r}: the template only in the faulty release`);
        }
    });

    it("the setup hook is one script, a file in each release, that prints the product's error block", () => {
        const scripts = Object.values(RELEASES).map((r) => readSetupScript(r));
        assert.ok(
            scripts.every((s) => s === scripts[0]),
            "every release ships the same setup.sh",
        );
        assert.match(scripts[0], /^#!\/bin\/sh\n/);
        assert.ok(scripts[0].includes("In ConfigurationManager.php line 387:") && scripts[0].includes(HOOK_ERROR));
    });
});
