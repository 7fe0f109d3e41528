/**
 * gitrepo/ holds the labs' repositories as real files a lab author reads, edits and builds: the shop
 * lab's base and overlays, the tenants lab's tenant files and releases (the setup hook a file). Every
 * kustomization there builds, and the code reads the labs' first commits from there.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { kustomizeBuild } from "../lab/ports/kustomize";
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

    // the code twice: a wave -1 PreSync hook for the setup Job, an ordinary copy for the site
    it("each release renders its code twice, the setup hook Job and the site, pinned; only 1.2.0 ships the settings template", async () => {
        for (const r of Object.values(RELEASES)) {
            const objs = await kustomizeBuild(path.join(PLATFORM_REPO_DIR, "releases", r));
            const code = objs.find((o) => o.kind === "ConfigMap" && o.metadata.name.startsWith("site-code"));
            assert.strictEqual(code.metadata.annotations["argocd.argoproj.io/hook"], "PreSync");
            assert.strictEqual(code.metadata.annotations["argocd.argoproj.io/sync-wave"], "-1");
            assert.strictEqual(code.data.VERSION, `${r}\n`);
            assert.strictEqual(
                "news.settings-template" in code.data,
                r === RELEASES.faulty,
                `${r}: the template only in the faulty release`,
            );
            const job = objs.find((o) => o.kind === "Job" && o.metadata.name === "site-setup");
            assert.strictEqual(job.spec.backoffLimit, 2);
            assert.strictEqual(job.metadata.annotations["argocd.argoproj.io/hook-delete-policy"], "BeforeHookCreation");
            const site = objs.find((o) => o.kind === "Deployment" && o.metadata.name === "site");
            // the site mounts its own copy of the code, an ordinary resource, not the hook's
            const own = objs.find((o) => o.kind === "ConfigMap" && o.metadata.name === "site-release");
            assert.strictEqual(own.metadata.annotations?.["argocd.argoproj.io/hook"], undefined);
            assert.deepStrictEqual(own.data, code.data);
            assert.strictEqual(site.spec.template.spec.volumes.find((v: any) => v.name === "code").configMap.name, own.metadata.name);
            assert.strictEqual(job.spec.template.spec.volumes.find((v: any) => v.name === "code").configMap.name, code.metadata.name);
            for (const c of [...job.spec.template.spec.containers, ...site.spec.template.spec.containers])
                assert.strictEqual(c.image, SITE_IMAGE);
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
