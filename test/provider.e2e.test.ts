/**
 * The whole lab through the dynamic providers as the engine runs them (serialized, revived in a
 * separate Node process) against the Argo CD simulation: step 1 (ShopRepo), step 2's
 * ApplicationSet (ShopAppSet), steps 2-8 (Scenario), then diff and delete.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { shopRepoProvider } from "../components/shopRepo";
import { shopAppSetProvider } from "../components/shopAppSet";
import { scenarioProvider } from "../components/scenario";
import { run } from "../lab/ports/exec";
import { SHOP_RESULT_FILES } from "../lab/shop/results";
import { shopApplicationSet } from "../lab/shop/appset";
import { readRepoFiles } from "../lab/shop/repoFiles";
import { ProviderCall, ProviderPlugin, serializeProvider, startProviderPlugin } from "./helpers/providerProcess";
import { SimulatedLab, SIM_TIMEOUTS, startSimulatedLab } from "../sim/simulatedLab";

const isSha = (s: unknown) => typeof s === "string" && /^[0-9a-f]{40}$/.test(s);

describe("the lab through the dynamic providers, run as the engine runs them (simulated cluster)", function () {
    this.timeout(240_000);
    let lab: SimulatedLab;
    let root: string;
    let texts: { repo: string; appset: string; scenario: string };
    let repoOuts: any;
    let scenarioIn: any;
    let scenarioOuts: any;

    const git = async (...args: string[]) => (await run("git", ["--git-dir", lab.layout.bareRepo, ...args])).stdout.trim();
    const isAncestor = async (a: string, b: string) =>
        run("git", ["--git-dir", lab.layout.bareRepo, "merge-base", "--is-ancestor", a, b]).then(
            () => true,
            () => false,
        );

    let calls: { repo: ProviderCall; appset: ProviderCall; scenario: ProviderCall };

    // the engine's order on a first pulumi up: step 1, the ApplicationSet, the scenario; each test asserts on one part
    let plugin: ProviderPlugin;
    before(async () => {
        plugin = startProviderPlugin();
        root = fs.mkdtempSync(path.join(os.tmpdir(), "lab-e2e-"));
        lab = await startSimulatedLab(root);
        texts = {
            repo: await serializeProvider(shopRepoProvider),
            appset: await serializeProvider(shopAppSetProvider),
            scenario: await serializeProvider(scenarioProvider),
        };
        scenarioIn = { kubeconfig: lab.kubeconfig, root, solveThrough: 8, timeouts: SIM_TIMEOUTS };
        const repo = await plugin.call(texts.repo, "create", [{ root, files: readRepoFiles() }]);
        const appset = await plugin.call(texts.appset, "create", [{ kubeconfig: lab.kubeconfig, root, manifest: shopApplicationSet() }]);
        const scenario = await plugin.call(texts.scenario, "create", [scenarioIn]);
        calls = { repo, appset, scenario };
        repoOuts = repo.result?.outs;
        scenarioOuts = scenario.result?.outs;
    });
    after(async () => {
        await plugin?.stop();
        await lab?.stop();
    });

    it("serializes every provider without capturing library code by value", () => {
        for (const [name, text] of Object.entries(texts)) {
            assert.ok(text.includes("exports.handler"), name);
            assert.ok(
                !text.includes("class CloneGit") && !text.includes("class KubeCluster"),
                `${name} requires the lab at run time instead of inlining it`,
            );
        }
    });

    it("step 1: ShopRepo.create builds the repository and returns the initial commit", async () => {
        const r = calls.repo;
        assert.ok(r.ok, r.error);
        assert.ok(isSha(repoOuts.initialCommit));
        assert.strictEqual(repoOuts.bareRepo, lab.layout.bareRepo);
        assert.strictEqual(await git("rev-list", "--max-parents=0", "main"), repoOuts.initialCommit, "the first commit of main");
        assert.match(r.output, /\[shop-repo\] pushed main at [0-9a-f]{40}/);
    });

    it("step 2: ShopAppSet.create applies the ApplicationSet and writes appset.yaml", async () => {
        const r = calls.appset;
        assert.ok(r.ok, r.error);
        assert.strictEqual(r.result.id, "argocd/shop");
        assert.deepStrictEqual(lab.kube.get("ApplicationSet", "argocd", "shop")!.spec!.template, shopApplicationSet().spec?.template);
        assert.deepStrictEqual(parse(fs.readFileSync(lab.layout.appsetFile, "utf8")).spec.template, shopApplicationSet().spec?.template);
    });

    it("steps 2-8: Scenario.create solves the lab and returns the six results as outputs", async () => {
        const r = calls.scenario;
        assert.ok(r.ok, `${r.error}\n${r.output}`);
        assert.strictEqual(scenarioOuts.completedThrough, 8);
        for (const step of ["sync", "incident", "pin", "drift", "promote", "revert", "report"]) {
            assert.match(r.output, new RegExp(`\\[step \\d ${step}\\] start`), `prints the start of ${step}`);
            assert.match(r.output, new RegExp(`\\[step \\d ${step}\\] done in \\d+\\.\\d s`), `prints the duration of ${step}`);
        }
        assert.match(r.output, /report: \{/);
    });

    it("the outputs carry the same values as the six files", () => {
        for (const name of SHOP_RESULT_FILES) {
            const file = JSON.parse(fs.readFileSync(lab.layout.resultFile(name), "utf8"));
            assert.deepStrictEqual(scenarioOuts[name], file, name);
        }
    });

    it("the values are the expected ones of a correct run", () => {
        const { incident, pin, drift, promote, revert, report } = scenarioOuts;
        assert.deepStrictEqual(Object.keys(incident).sort(), ["commit", "dev_value", "prod_value"]);
        assert.ok(isSha(incident.commit));
        assert.strictEqual(incident.dev_value, "on");
        assert.strictEqual(incident.prod_value, "on");
        assert.strictEqual(pin.prod_value_after_pin, "off");
        assert.strictEqual(drift.edited, "debug");
        assert.strictEqual(drift.restored, "warn");
        assert.ok(Number.isInteger(drift.seconds), `seconds ${drift.seconds} is whole`);
        assert.strictEqual(promote.from, pin.release_prod_initial);
        assert.strictEqual(promote.to, incident.commit);
        assert.ok(isSha(revert.bad_commit) && isSha(revert.revert_commit));
        assert.strictEqual(revert.prod_revision_during, promote.to);
        assert.match(revert.dev_error, /missing\.yaml/);
        assert.deepStrictEqual(report, {
            dev_tracks: "main",
            prod_tracks: "release/prod",
            promoted_commit: promote.to,
            drift_seconds: drift.seconds,
            bad_commit_reached_prod: false,
            rollback: "revert",
        });
    });

    it("the repository shows the same history: parents, the revert, release/prod", async () => {
        const { incident, pin, promote, revert } = scenarioOuts;
        assert.strictEqual(await git("rev-parse", `${incident.commit}^`), pin.release_prod_initial);
        assert.strictEqual(pin.release_prod_initial, repoOuts.initialCommit);
        assert.strictEqual(await git("rev-parse", "refs/heads/release/prod"), promote.to);
        assert.ok(await isAncestor(promote.from, promote.to));
        assert.strictEqual(await git("rev-parse", `${revert.revert_commit}^`), revert.bad_commit, "the revert's parent is the bad commit");
        assert.strictEqual(await git("rev-parse", `${revert.bad_commit}^`), incident.commit);
        assert.strictEqual(await git("rev-parse", "refs/heads/main"), revert.revert_commit);
        assert.match(await git("log", "-1", "--format=%B", revert.revert_commit), new RegExp(`This reverts commit ${revert.bad_commit}`));
        assert.strictEqual(await isAncestor(revert.bad_commit, "refs/heads/release/prod"), false);
        assert.ok((await git("show", `${revert.bad_commit}:envs/dev/kustomization.yaml`)).includes("missing.yaml"));
        assert.ok(!(await git("show", `${revert.revert_commit}:envs/dev/kustomization.yaml`)).includes("missing.yaml"));
    });

    it("the cluster ends as the lab says: prod pinned in the ApplicationSet and in appset.yaml, values in place", () => {
        const els = lab.kube.get("ApplicationSet", "argocd", "shop")!.spec!.generators![0].list!.elements;
        assert.deepStrictEqual(els, [
            { env: "dev", revision: "main" },
            { env: "prod", revision: "release/prod" },
        ]);
        assert.deepStrictEqual(parse(fs.readFileSync(lab.layout.appsetFile, "utf8")).spec.generators[0].list.elements, els);
        assert.strictEqual(lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.data!.FEATURE_CHECKOUT_V2, "on");
        assert.strictEqual(lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.metadata.uid, scenarioOuts.drift.uid);
        assert.strictEqual(lab.kube.get("Application", "argocd", "shop-dev")!.status!.sync!.revision, scenarioOuts.revert.revert_commit);
    });

    it("a second run with nothing changed runs nothing (diff reports no change)", async () => {
        const r = await plugin.call(texts.scenario, "diff", ["/x", scenarioOuts, scenarioIn]);
        assert.ok(r.ok, r.error);
        assert.strictEqual(r.result.changes, false);
        const repo = await plugin.call(texts.repo, "diff", ["/x", repoOuts, { root, files: readRepoFiles() }]);
        assert.strictEqual(repo.result.changes, false);
    });

    it("Scenario.update refuses a lower solveThrough (steps cannot be un-done) and says what to do", async () => {
        const r = await plugin.call(texts.scenario, "update", ["/x", scenarioOuts, { ...scenarioIn, solveThrough: 5 }]);
        assert.strictEqual(r.ok, false);
        assert.match(r.error!, /solveThrough went down from 8 to 5.*pulumi config set solveThrough 8.*pulumi destroy/s);
    });

    it("ShopAppSet.update (pulumi up after a pin) keeps prod on release/prod", async () => {
        const r = await plugin.call(texts.appset, "update", [
            "argocd/shop",
            {},
            { kubeconfig: lab.kubeconfig, root, manifest: shopApplicationSet() },
        ]);
        assert.ok(r.ok, r.error);
        assert.strictEqual(
            lab.kube.get("ApplicationSet", "argocd", "shop")!.spec!.generators![0].list!.elements![1].revision,
            "release/prod",
        );
        assert.match(fs.readFileSync(lab.layout.appsetFile, "utf8"), /revision: release\/prod/);
    });

    it("delete removes the result files, the ApplicationSet with its namespaces, and the repository", async () => {
        const s = await plugin.call(texts.scenario, "delete", ["/x", scenarioOuts]);
        assert.ok(s.ok, s.error);
        for (const name of SHOP_RESULT_FILES) assert.ok(!fs.existsSync(lab.layout.resultFile(name)), name);
        const a = await plugin.call(texts.appset, "delete", [
            "argocd/shop",
            { kubeconfig: lab.kubeconfig, root, name: "shop", namespace: "argocd" },
        ]);
        assert.ok(a.ok, a.error);
        assert.strictEqual(lab.kube.get("ApplicationSet", "argocd", "shop"), undefined);
        assert.strictEqual(lab.kube.get("Namespace", undefined, "shop-prod"), undefined);
        assert.ok(!fs.existsSync(lab.layout.appsetFile));
        const r = await plugin.call(texts.repo, "delete", [lab.layout.bareRepo, repoOuts]);
        assert.ok(r.ok, r.error);
        assert.ok(!fs.existsSync(lab.layout.bareRepo) && !fs.existsSync(lab.layout.clone));
    });
});
