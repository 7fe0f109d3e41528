/**
 * The Argo CD simulation's own behaviour, one unit at a time, so the scenario tests stand on a
 * double that behaves like v3.5.1 (LAB-SPEC.md's facts).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REFRESH_ANNOTATION } from "../lab/argo/application";
import { KubeCluster } from "../lab/ports/cluster";
import { run } from "../lab/ports/exec";
import { shopApplicationSet } from "../lab/shop/appset";
import { applyShopAppSet } from "../lab/shop/appset";
import { addMissingResource } from "../lab/shop/scenario";
import { pollUntil, sleep } from "../lab/ports/wait";
import { labAt, LabAt } from "./helpers/labAt";
import { generateApplications, renderTemplate } from "../sim/appsetController";
import { jsonPatch, mergePatch } from "../sim/fakeApi";

const git = async (args: string[], cwd?: string) => (await run("git", args, { cwd })).stdout.trim();

/** Polls the fake API until `check` holds (deadline 10 s). */
function eventually<T>(at: LabAt, what: string, look: () => T | undefined): Promise<T> {
    let last: unknown;
    return pollUntil(async () => (last = look()) ?? undefined, { timeoutMs: 10_000, intervalMs: 25, describe: () => `${what}; last seen ${JSON.stringify(last)}` }) as Promise<T>;
}

async function pushCommit(at: LabAt, file: string, content: string, message: string): Promise<string> {
    const clone = at.lab.layout.clone;
    fs.writeFileSync(path.join(clone, file), content);
    await git(["add", file], clone);
    await git(["commit", "--quiet", "-m", message], clone);
    await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], clone);
    return git(["rev-parse", "HEAD"], clone);
}

const app = (at: LabAt, name = "shop-dev") => at.lab.kube.get("Application", "argocd", name);

describe("Argo CD simulation: ApplicationSet controller", () => {
    it("renders {{key}} from the element and leaves an unknown key literally", () => {
        assert.deepStrictEqual(renderTemplate({ a: "shop-{{env}}", b: ["{{revision}}", "{{nope}}"] }, { env: "dev", revision: "main" }), { a: "shop-dev", b: ["main", "{{nope}}"] });
    });

    it("generates one Application per list element, owned by the ApplicationSet", () => {
        const a = { ...shopApplicationSet(), metadata: { name: "shop", namespace: "argocd", uid: "u1" } };
        const apps = generateApplications(a);
        assert.deepStrictEqual(apps.map((x) => x.metadata.name), ["shop-dev", "shop-prod"]);
        assert.strictEqual(apps[1].spec.destination.namespace, "shop-prod");
        assert.strictEqual(apps[1].metadata.ownerReferences[0].uid, "u1");
    });

    it("rejects list element values that are not strings", () => {
        const a = shopApplicationSet();
        a.spec.generators[0].list.elements[0].revision = 1 as any;
        assert.throws(() => generateApplications(a), /must be a string/);
    });

    describe("on a cluster", function () {
        this.timeout(60_000);
        let at: LabAt;
        before(async () => {
            at = await labAt(1);
            await applyShopAppSet(new KubeCluster(at.lab.kubeconfig), at.lab.layout, shopApplicationSet());
        });
        after(async () => at.stop());

        it("overwrites a hand edit of a generated Application from the template, and keeps its refresh annotation", async () => {
            await eventually(at, "shop-prod exists", () => app(at, "shop-prod"));
            const cluster = new KubeCluster(at.lab.kubeconfig);
            at.lab.kube.put({ ...app(at, "shop-prod"), spec: { ...app(at, "shop-prod").spec, source: { ...app(at, "shop-prod").spec.source, targetRevision: "release/prod" } } }, "client");
            await eventually(at, "targetRevision back to main", () => (app(at, "shop-prod").spec.source.targetRevision === "main" ? true : undefined));
            await cluster.annotateApplication("shop-prod", { [REFRESH_ANNOTATION]: "normal" });
            assert.strictEqual(app(at, "shop-prod").spec.source.targetRevision, "main");
        });
    });
});

describe("Argo CD simulation: fake Kubernetes API patches", () => {
    it("merge patch deletes with null and merges objects", () => {
        assert.deepStrictEqual(mergePatch({ a: 1, b: { c: 2, d: 3 } }, { b: { c: null, e: 4 } }), { a: 1, b: { d: 3, e: 4 } });
    });
    it("JSON patch with a failing test changes nothing", () => {
        const doc = { l: [{ env: "dev" }] };
        assert.throws(() => jsonPatch(doc, [{ op: "test", path: "/l/0/env", value: "prod" }, { op: "replace", path: "/l/0/env", value: "x" }]), /test failed/);
        assert.deepStrictEqual(doc, { l: [{ env: "dev" }] });
    });
});

describe("Argo CD simulation: application controller", function () {
    this.timeout(60_000);
    let at: LabAt;
    before(async () => (at = await labAt(2)));
    after(async () => at.stop());

    it("does not see a new commit without a refresh (Git is polled every few minutes), and sees it after one; the annotation is removed", async () => {
        const before = app(at).status.sync.revision;
        const sha = await pushCommit(at, "README.md", "docs\n", "docs only");
        // observe for 10 refresh delays: nothing looks at Git in that window
        await sleep(500);
        assert.strictEqual(app(at).status.sync.revision, before);
        await new KubeCluster(at.lab.kubeconfig).annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "normal" });
        await eventually(at, "shop-dev at the new commit", () => (app(at).status.sync.revision === sha ? true : undefined));
        await eventually(at, "refresh annotation removed", () => (app(at).metadata.annotations?.[REFRESH_ANNOTATION] ? undefined : true));
        assert.strictEqual(app(at).status.operationState.syncResult.revision, before, "identical manifests: Synced at the new commit without a new operation");
    });

    it("reports a render failure as ComparisonError with v3.5.1's message, sync Unknown and the literal revision", async () => {
        const text = fs.readFileSync(path.join(at.lab.layout.clone, "envs/dev/kustomization.yaml"), "utf8");
        await pushCommit(at, "envs/dev/kustomization.yaml", addMissingResource(text), "break dev");
        const cluster = new KubeCluster(at.lab.kubeconfig);
        await cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "normal" });
        const cond = await eventually(at, "ComparisonError", () => app(at).status.conditions?.find((c: any) => c.type === "ComparisonError"));
        assert.match(
            cond.message,
            /^Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = `kustomize build \S+\/envs\/dev` failed exit status 1: Error: accumulating resources: accumulation err='accumulating resources from 'missing\.yaml': evalsymlink failure on '\S+\/envs\/dev\/missing\.yaml' : lstat .*no such file or directory'/,
        );
        assert.strictEqual(app(at).status.sync.status, "Unknown");
        assert.strictEqual(app(at).status.sync.revision, "main");
    });

    it("caches the render error after 3 failures unless the refresh is hard", async () => {
        const cluster = new KubeCluster(at.lab.kubeconfig);
        for (let i = 0; i < 3; i++) {
            const seen = app(at).status.reconciledAt;
            await cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "normal" });
            await eventually(at, "a new reconcile", () => (app(at).status.reconciledAt !== seen && !app(at).metadata.annotations?.[REFRESH_ANNOTATION] ? true : undefined));
        }
        assert.match(app(at).status.conditions[0].message, /Manifest generation error \(cached\)/);
        await cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "hard" });
        await eventually(at, "a fresh (uncached) error", () => (!/cached/.test(app(at).status.conditions?.[0]?.message ?? "cached") ? true : undefined));
        await git(["revert", "--no-edit", "HEAD"], at.lab.layout.clone);
        await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], at.lab.layout.clone);
        await cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "hard" });
        await eventually(at, "shop-dev Synced again", () => (app(at).status.sync.status === "Synced" && !app(at).status.conditions ? true : undefined));
    });

    it("selfHeal repairs a drifted object in place after its delay (uid kept), and backs off on repeats", async () => {
        const cluster = new KubeCluster(at.lab.kubeconfig);
        const uid = at.lab.kube.get("ConfigMap", "shop-prod", "shop-config").metadata.uid;
        const level = () => at.lab.kube.get("ConfigMap", "shop-prod", "shop-config").data.LOG_LEVEL;
        const measure = async () => {
            await cluster.patchConfigMapData("shop-prod", "shop-config", { LOG_LEVEL: "debug" });
            const t0 = Date.now();
            await eventually(at, "warn back", () => (level() === "warn" ? true : undefined));
            return Date.now() - t0;
        };
        const first = await measure();
        const second = await measure();
        assert.ok(first >= 250, `first repair after the selfHeal delay (300 ms), took ${first} ms`);
        assert.ok(second >= 380 && second > first, `the repeat backs off (400 ms), took ${second} ms after ${first} ms`);
        assert.strictEqual(at.lab.kube.get("ConfigMap", "shop-prod", "shop-config").metadata.uid, uid);
    });

    it("does nothing on its own for an Application whose automated sync is disabled (as RollingSync sets it)", async () => {
        const a = app(at, "shop-prod");
        at.lab.kube.put({ ...a, spec: { ...a.spec, syncPolicy: { ...a.spec.syncPolicy, automated: { ...a.spec.syncPolicy.automated, enabled: false } } } }, "rollout-test");
        await new KubeCluster(at.lab.kubeconfig).patchConfigMapData("shop-prod", "shop-config", { LOG_LEVEL: "debug" });
        await sleep(800); // observe for longer than any selfHeal delay: no repair comes
        assert.strictEqual(at.lab.kube.get("ConfigMap", "shop-prod", "shop-config").data.LOG_LEVEL, "debug");
    });
});
