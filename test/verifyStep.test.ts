/**
 * verify --step N: one step graded alone, in one line, with a hint; and the Killercoda scenario in
 * docs/killercoda/shop, whose step checks call it (its verify.sh scripts run here as Killercoda runs them).
 */
import * as assert from "assert";
import { execFile, execFileSync, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { eqFields, runChecks, type Check, type CheckResult } from "../lab/grader/grader";
import { readSteps, stepVerdict } from "../lab/grader/steps";
import { shopLayout } from "../lab/shop/layout";
import { SHOP_STEPS_FILE, shopSteps } from "../lab/shop/steps";
import { verify as verifyShop } from "../lab/shop/checks";
import { verifyTenants } from "../lab/tenants/checks";
import { skippedTenants } from "../lab/tenants/liveChecks";
import { RELEASES, Tenant, TENANTS as TENANTS_ALL, tenantsLayout } from "../lab/tenants/layout";
import { HOOK_ERROR, tenantFile, tenantPath, tenantSettings } from "../lab/tenants/repoFiles";
import { TENANTS_STEPS_FILE } from "../lab/tenants/steps";
import { BIN, runMain } from "./helpers/cli";
import { kubeconfigFor, freePort } from "./helpers/kubeconfig";
import { run } from "../lab/ports/exec";
import { FakeKube } from "../sim/fakeApi";
import { BareRepo } from "../lab/grader/bareRepo";
import { servedClusterName } from "../sim/servedFiles";
import { expect, holds } from "./helpers/expect";
import { kubeconfigAt, labAt, rootAt } from "./helpers/labAt";
import { app, appset, git, tenantsAt, tenantsRootAt } from "./helpers/tenantsAt";
import { APPSET_REFRESH_ANNOTATION, REFRESH_ANNOTATION } from "../lab/argo/application";
import { addMissingResource, switchFeatureOn } from "../lab/shop/edits";
import { shopApplicationSet } from "../lab/shop/appset";
import { policyProblems } from "../lab/shop/appsetPolicy";
import { parse, stringify } from "yaml";
import { lockFile, SERVING } from "../lab/ports/lock";
import { SYNCED_HEALTHY_MESSAGE } from "../lab/argo/rollingSync";
import { procStat } from "../lab/ports/proc";

/** Given a shop (or tenants) lab root at step N, removed after `then` whatever it ends with. */
const givenRoot =
    (at: (n: number) => Promise<string>) =>
    async (n: number, then: (root: string) => Promise<void>): Promise<void> => {
        const root = await at(n);
        try {
            await then(root);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    };
const atShop = givenRoot(rootAt);

/** A lab at step 5: its clone fetched, release/prod's commit in the repository and the incident's (a promotion's from and to). */
async function promotionEnds(root: string) {
    const layout = shopLayout(root);
    const { clone } = layout;
    await git(["fetch", "--quiet"], clone);
    const from = await git(["rev-parse", "origin/release/prod"], clone);
    const to: string = JSON.parse(fs.readFileSync(layout.resultFile("incident"), "utf8")).commit;
    return { layout, clone, from, to };
}

/** A learner's identity for commits made by hand. */
const LEARNER = ["-c", "user.name=l", "-c", "user.email=l@x"];

/** Step 7's bad commit made by hand on `branch` as the repository has it (missing.yaml in envs/dev), pushed unless told not: its SHA. */
async function badCommitByHand(clone: string, opts: { branch?: string; push?: boolean } = {}): Promise<string> {
    const branch = opts.branch ?? "main";
    await git(["fetch", "--quiet"], clone);
    await git(["checkout", "--quiet", "-B", branch, `origin/${branch}`], clone);
    const kustomization = path.join(clone, "envs", "dev", "kustomization.yaml");
    fs.writeFileSync(kustomization, addMissingResource(fs.readFileSync(kustomization, "utf8")));
    await git([...LEARNER, "commit", "--quiet", "-am", "dev: add missing.yaml"], clone);
    if (opts.push !== false) await git(["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`], clone);
    return git(["rev-parse", "HEAD"], clone);
}
const atTenants = givenRoot(tenantsRootAt);

/** verify --step 2 --offline of a shop lab at step 2 whose appset.yaml holds the lab's ApplicationSet as `edit` leaves it. */
async function step2With(edit: (set: any) => void): Promise<Awaited<ReturnType<typeof runMain>>> {
    let r: Awaited<ReturnType<typeof runMain>> | undefined;
    await atShop(2, async (root) => {
        const set = shopApplicationSet();
        edit(set);
        fs.writeFileSync(shopLayout(root).appsetFile, stringify(set));
        r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
    });
    return r!;
}

/**
 * The served tenants lab's ApplicationSet refreshed, its rollout of `rolledOut` waited for to complete, then recovery.json
 * written from its status with `commit` as recovery.commit.
 */
async function recoveryAfter(at: Awaited<ReturnType<typeof tenantsAt>>, rolledOut: string, commit: string) {
    await at.cluster.annotateApplicationSet("tenants", { [APPSET_REFRESH_ANNOTATION]: "true" }, "argocd");
    await expect(
        holds(
            "the merge's rollout complete",
            () =>
                conditionOf(appset(at), "RolloutProgressing")?.message === "ApplicationSet Rollout has completed" &&
                (appset(at)!.status?.applicationStatus ?? []).every((e) => (e.targetRevisions ?? []).includes(rolledOut)),
            () => appset(at)!.status,
        ),
        { timeoutMs: 180_000 },
    );
    const order = (appset(at)!.status!.applicationStatus ?? []).map((e) => ({
        application: e.application,
        step: Number(e.step),
        healthy_at: e.lastTransitionTime,
    }));
    const running = Object.fromEntries(TENANTS_ALL.map((t) => [t, RELEASES.fixed]));
    fs.writeFileSync(at.layout.resultFile("recovery"), JSON.stringify({ commit, release: RELEASES.fixed, order, running, seconds: 1 }));
}

/** Merges `edit` into a result file, as a learner's edit of it. */
/** verify --lab tenants --step N of a tenants lab at its live cluster, through the kubeconfig a served lab writes. */
async function verifyServed(at: { layout: { root: string }; lab: { kubeconfig: string } }, step: number) {
    const kubeconfig = path.join(at.layout.root, "kubeconfig");
    fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
    return runMain("verify", ["--lab", "tenants", "--root", at.layout.root, "--kubeconfig", kubeconfig, "--step", String(step)]);
}

/** appset.yaml written with these list elements, then `verify --step N --offline` on the root. */
async function withElements(root: string, step: number, elements: object[]) {
    const set: any = shopApplicationSet();
    set.spec.generators[0].list.elements = elements;
    fs.writeFileSync(shopLayout(root).appsetFile, stringify(set));
    return runMain("verify", ["--root", root, "--step", String(step), "--offline"]);
}

const editResult = (file: string, edit: object) =>
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), ...edit }));
const conditionOf = (o: any, type: string) => (o?.status?.conditions ?? []).find((c: any) => c.type === type);
const KILLERCODA = path.join(__dirname, "..", "docs", "killercoda", "shop");

describe("verify --step: one step at a time, with a hint", function () {
    this.timeout(120_000);

    it("given a shop lab at step 3, then --step 1 to 3 say done and exit 0, and --step 4 names what is missing with a hint, in one line, exit 1", async () => {
        const root = await rootAt(3);
        for (const n of [1, 2, 3]) {
            const r = await runMain("verify", ["--root", root, "--step", String(n), "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
            const next = shopSteps(shopLayout(root))[n];
            assert.strictEqual(r.stdout.split("\n").length, 2, r.stdout);
            assert.ok(r.stdout.startsWith(`step ${n} ${shopSteps(shopLayout(root))[n - 1].name}: done (`), r.stdout);
            // the lab's own step names the next ask; a step it is past says where it is, not a step already done
            // offline, a step the cluster shows too says the cluster was not read
            const pass = n >= 2 ? " checks of the files and repository pass; the cluster was not read (--offline))" : " checks pass)";
            if (n === 3) assert.ok(r.stdout.endsWith(`${pass}; next, step ${n + 1} ${next.name}: ${next.ask}\n`), r.stdout);
            else assert.ok(r.stdout.endsWith(`${pass}; the lab is at step 3: verify --step 3 grades where you are\n`), r.stdout);
        }
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /^step 4 pin: not done: [^\n]+; hint: change the ApplicationSet, not the Application[^\n]*\n$/);
        const json = await runMain("verify", ["--root", root, "--step", "4", "--offline", "--json"]);
        const j = JSON.parse(json.stdout);
        assert.strictEqual(j.done, false);
        assert.deepStrictEqual(Object.keys(j.missing).sort(), ["check", "step"], "the hint, not the answer: no expected or found value");
    });

    it("given a wrong value in a step's file, then that step is not done and names the check; the steps before stay done", async () => {
        const root = await rootAt(3);
        editResult(shopLayout(root).resultFile("incident"), { prod_value: "off" });
        const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /^step 3 incident: not done: [^\n]*prod_value[^\n]*; hint: /);
        assert.strictEqual((await runMain("verify", ["--root", root, "--step", "2", "--offline"])).code, 0);
    });

    // a learner's file with the value written wrong: the hint names what it holds and the fix, not the step's generic hint
    for (const [what, edit, hint] of [
        [
            "a short SHA",
            (o: any) => ({ ...o, commit: o.commit.slice(0, 7) }),
            /hint: it holds 7 characters: write the full SHA \(git rev-parse [0-9a-f]{7} prints it\)$/,
        ],
        [
            "an upper-case SHA",
            (o: any) => ({ ...o, commit: o.commit.toUpperCase() }),
            /hint: it holds upper-case letters: write the SHA in lower case, as git prints it$/,
        ],
        ["a number for the SHA", (o: any) => ({ ...o, commit: 42 }), /hint: it holds 42, which is not a full 40-hex SHA$/],
    ] as [string, (o: any) => any, RegExp][])
        it(`given ${what} in incident.json, then the hint says what it holds`, async () => {
            const root = await rootAt(3);
            const file = shopLayout(root).resultFile("incident");
            fs.writeFileSync(file, JSON.stringify(edit(JSON.parse(fs.readFileSync(file, "utf8")))));
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout.trim(), hint);
        });

    it("given the last step done, then --step says it was the last and plain verify grades the whole lab", async () => {
        const root = await rootAt(8);
        const r = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(
            r.stdout,
            /^step 8 report: done \(\d+ checks of the files and repository pass; the cluster was not read \(--offline\)\); that was the last step: plain verify grades the whole lab\n$/,
        );
    });

    it("given a shop lab that has moved on to step 3, then --step 2 is graded as the lab stands and is done, live", async () => {
        const at = await labAt(3);
        try {
            const kubeconfig = kubeconfigAt(at);
            const args = ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig];
            // step 2's own state (the flag off in both environments) is gone: --through 2 grades it as the lab stands too
            const through = await runMain("verify", [...args, "--through", "2"]);
            assert.strictEqual(through.code, 0, through.out);
            assert.match(
                through.stdout,
                /^verify: the shop lab under \S+ through step 2 as the lab stands \(at step 3\), files, repository and cluster$/m,
            );
            const r = await runMain("verify", [...args, "--step", "2"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(
                r.stdout,
                /^step 2 appset: done \(\d+ checks pass as the lab stands\); the lab is at step 3: verify --step 3 grades where you are\n$/,
            );
        } finally {
            await at.stop();
        }
    });

    // given a shop lab at step 5 (appset.yaml's prod on release/prod), then --step 3 is done as the lab stands, not
    // held by step 2's prod=main
    it("--step 3 at step 5 is graded as the lab stands", async () => {
        const root = await rootAt(5);
        const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(
            r.stdout,
            /^step 3 incident: done \(\d+ checks of the files and repository pass as the lab stands; the cluster was not read \(--offline\)\); the lab is at step 5: verify --step 5 grades where you are\n$/,
        );
    });

    it("a drift.json with no drift behind it: not done, the repair is asked for", async () => {
        const at = await labAt(4);
        try {
            const kubeconfig = kubeconfigAt(at);
            const uid = (await at.cluster.getConfigMap("shop-prod", "shop-config"))?.metadata?.uid;
            fs.writeFileSync(at.lab.layout.resultFile("drift"), JSON.stringify({ uid, edited: "debug", restored: "warn", seconds: 3 }));
            const step5 = () => runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "5"]);
            const r = await step5();
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 5 drift: not done: live shop-prod's latest sync is selfHeal's repair of its ConfigMap \(while the lab is at step 5\); hint: shop-prod has synced no repair since the pin/,
            );
            const patchProd = (data: string) =>
                run("kubectl", ["--kubeconfig", kubeconfig, "-n", "shop-prod", "patch", "configmap", "shop-config", "-p", data]);
            // patched into log_level (another case): a key Git does not have, which Argo CD leaves; the hint names it
            await patchProd('{"data":{"log_level":"debug"}}');
            assert.match(
                (await step5()).stdout,
                /hint: shop-prod's shop-config holds log_level beside LOG_LEVEL: keys are case-sensitive, and a key Git does not have is no drift to Argo CD/,
            );
            // the drift done: a patch, repaired by selfHeal (a sync of the ConfigMap alone, which adds no history)
            const history = (await at.cluster.getApplication("shop-prod"))?.status?.history?.length;
            await patchProd('{"data":{"LOG_LEVEL":"debug"}}');
            await expect(
                holds(
                    "selfHeal repaired the ConfigMap",
                    async () => (await at.cluster.getConfigMap("shop-prod", "shop-config"))?.data?.LOG_LEVEL === "warn",
                ),
                { timeoutMs: 60_000 },
            );
            const done = await step5();
            assert.strictEqual(done.code, 0, done.out);
            assert.strictEqual((await at.cluster.getApplication("shop-prod"))?.status?.history?.length, history);
        } finally {
            await at.stop();
        }
    });

    it("a drift made by deleting the ConfigMap: the hint says to patch it", async () => {
        const at = await labAt(4);
        try {
            const kubeconfig = kubeconfigAt(at);
            const kubectl = (...args: string[]) => run("kubectl", ["--kubeconfig", kubeconfig, "-n", "shop-prod", ...args]);
            const configMap = () => at.cluster.getConfigMap("shop-prod", "shop-config");
            const lastSyncSaid = async (message: RegExp) =>
                (await at.cluster.getApplication("shop-prod"))?.status?.operationState?.syncResult?.resources?.some(
                    (r: any) => r.kind === "ConfigMap" && message.test(r.message),
                ) === true;
            const step5 = () => runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "5"]);
            const before = (await configMap())?.metadata?.uid;
            await kubectl("delete", "configmap", "shop-config");
            await expect(
                holds("shop-prod's sync made the ConfigMap again", () => lastSyncSaid(/ created$/)),
                { timeoutMs: 60_000 },
            );
            const uid = (await configMap())?.metadata?.uid;
            assert.notStrictEqual(uid, before);
            fs.writeFileSync(at.lab.layout.resultFile("drift"), JSON.stringify({ uid, edited: "debug", restored: "warn", seconds: 1 }));
            const r = await step5();
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /^step 5 drift: not done: live shop-prod ConfigMap uid is drift\.uid, LOG_LEVEL warn/);
            assert.match(
                r.stdout,
                /hint: the drift test edits the ConfigMap and times selfHeal's repair of the same object; a deleted one is made again, not repaired: kubectl patch configmap shop-config -n shop-prod/,
            );
            // the drift done again as asked: a patch selfHeal repairs in place
            await kubectl("patch", "configmap", "shop-config", "-p", '{"data":{"LOG_LEVEL":"debug"}}');
            await expect(
                holds("shop-prod's sync configured the ConfigMap", () => lastSyncSaid(/ configured$/)),
                { timeoutMs: 60_000 },
            );
            const done = await step5();
            assert.strictEqual(done.code, 0, done.out);
        } finally {
            await at.stop();
        }
    });

    it("a drift repaired by a full sync at a revision prod had not synced: done", async () => {
        const at = await labAt(2);
        try {
            const { root, clone, appsetFile } = at.lab.layout;
            const kubeconfig = path.join(root, "kubeconfig");
            fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
            const kubectl = (...args: string[]) => run("kubectl", ["--kubeconfig", kubeconfig, ...args]);
            const inClone = (...args: string[]) => git(args, clone);
            const prod = () => at.cluster.getApplication("shop-prod");
            // a learner's refresh after each push (Argo CD polls Git every 3 minutes)
            const syncedTo = (sha: string) => async () => {
                for (const a of ["shop-dev", "shop-prod"]) await at.cluster.annotateApplication(a, { [REFRESH_ANNOTATION]: "normal" });
                return (await prod())?.status?.sync?.revision === sha;
            };
            const first = await inClone("rev-parse", "HEAD");
            // a commit before the incident that renders as the first one (a README), then the incident on main
            fs.writeFileSync(path.join(clone, "README.md"), "The shop's environments.\n");
            await inClone("add", "README.md");
            await inClone("commit", "--quiet", "-m", "README");
            const readme = await inClone("rev-parse", "HEAD");
            const configmap = path.join(clone, "base", "configmap.yaml");
            fs.writeFileSync(
                configmap,
                fs.readFileSync(configmap, "utf8").replace(/FEATURE_CHECKOUT_V2: "off"/, 'FEATURE_CHECKOUT_V2: "on"'),
            );
            await inClone("commit", "--quiet", "-am", "checkout v2 on");
            const incident = await inClone("rev-parse", "HEAD");
            await inClone("push", "--quiet", "origin", "main");
            await expect(holds("shop-prod synced the incident", syncedTo(incident)), { timeoutMs: 60_000 });
            fs.writeFileSync(at.lab.layout.resultFile("incident"), JSON.stringify({ commit: incident, dev_value: "on", prod_value: "on" }));
            // pinned first at the first commit (a sync), then release/prod fast-forwarded to the incident's parent, which
            // renders the same: Argo CD moves shop-prod's revision and runs no sync
            await inClone("push", "--quiet", "origin", `${first}:refs/heads/release/prod`);
            const set = parse(fs.readFileSync(appsetFile, "utf8"));
            set.spec.generators[0].list.elements = [
                { env: "dev", revision: "main" },
                { env: "prod", revision: "release/prod" },
            ];
            fs.writeFileSync(appsetFile, stringify(set));
            await kubectl("apply", "-f", appsetFile);
            await expect(holds("shop-prod synced the first commit", syncedTo(first)), { timeoutMs: 60_000 });
            await inClone("push", "--quiet", "origin", `${readme}:refs/heads/release/prod`);
            await expect(holds("shop-prod is at the README commit", syncedTo(readme)), { timeoutMs: 60_000 });
            assert.strictEqual((await prod())?.status?.operationState?.operation?.sync?.revision, first);
            fs.writeFileSync(
                at.lab.layout.resultFile("pin"),
                JSON.stringify({ release_prod_initial: readme, prod_value_after_pin: "off" }),
            );
            const uid = (await at.cluster.getConfigMap("shop-prod", "shop-config"))?.metadata?.uid;
            const drift = at.lab.layout.resultFile("drift");
            fs.writeFileSync(drift, JSON.stringify({ uid, edited: "debug", restored: "warn", seconds: 1 }));
            const step5 = () => runMain("verify", ["--root", root, "--kubeconfig", kubeconfig, "--step", "5"]);
            const early = await step5();
            assert.strictEqual(early.code, 1, early.out);
            assert.match(early.stdout, /hint: shop-prod has synced no repair since the pin/);
            // the drift: Argo CD has not synced this revision yet, so its repair is a sync of the whole Application
            await kubectl("-n", "shop-prod", "patch", "configmap", "shop-config", "-p", '{"data":{"LOG_LEVEL":"debug"}}');
            await expect(
                holds(
                    "the repair synced the README commit",
                    async () =>
                        (await prod())?.status?.operationState?.phase === "Succeeded" &&
                        (await prod())?.status?.operationState?.operation?.sync?.revision === readme,
                ),
                { timeoutMs: 60_000 },
            );
            assert.deepStrictEqual((await prod())?.status?.operationState?.operation?.sync?.resources ?? [], []);
            assert.strictEqual((await at.cluster.getConfigMap("shop-prod", "shop-config"))?.metadata?.uid, uid);
            const r = await step5();
            assert.strictEqual(r.code, 0, r.out);
        } finally {
            await at.stop();
        }
    });

    it("appset.yaml right but not applied: the hint says to apply it", async () => {
        const at = await labAt(4);
        try {
            const kubeconfig = kubeconfigAt(at);
            // the cluster's ApplicationSet back at prod=main (as before the pin was applied); appset.yaml still says release/prod
            const set = await at.cluster.getApplicationSet("shop");
            const i = (set?.spec?.generators?.[0]?.list?.elements ?? []).findIndex((e) => e.env === "prod");
            await at.cluster.jsonPatchApplicationSet("shop", [
                { op: "replace", path: `/spec/generators/0/list/elements/${i}/revision`, value: "main" },
            ]);
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "4"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /live ApplicationSet shop: dev=main, prod=release\/prod \(step 2's check\); /);
            assert.match(
                r.stdout,
                /hint: \S+appset\.yaml is right, but the cluster's ApplicationSet is not what it says: it has prod on "main"; kubectl apply -f \S+appset\.yaml\n/,
            );
        } finally {
            await at.stop();
        }
    });

    it("the pin applied by a merge patch of the elements: the hint says dev's element and shop-dev went with it", async () => {
        const at = await labAt(3);
        try {
            const { root, clone, appsetFile } = at.lab.layout;
            const kubeconfig = path.join(root, "kubeconfig");
            fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
            await git(["push", "--quiet", "origin", "HEAD~1:refs/heads/release/prod"], clone);
            const set = parse(fs.readFileSync(appsetFile, "utf8"));
            set.spec.generators[0].list.elements = [
                { env: "dev", revision: "main" },
                { env: "prod", revision: "release/prod" },
            ];
            fs.writeFileSync(appsetFile, stringify(set));
            await run("kubectl", [
                "--kubeconfig",
                kubeconfig,
                ...["-n", "argocd", "patch", "applicationset", "shop", "--type", "merge"],
                ...["-p", JSON.stringify({ spec: { generators: [{ list: { elements: [{ env: "prod", revision: "release/prod" }] } }] } })],
            ]);
            await expect(
                holds("shop-dev deleted", async () => !(await at.cluster.getApplication("shop-dev"))),
                { timeoutMs: 60_000 },
            );
            const r = await runMain("verify", ["--root", root, "--kubeconfig", kubeconfig, "--step", "4"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /is not what it says: it has no dev element \(a kubectl patch --type merge of the elements replaces the whole list\), and the ApplicationSet deleted shop-dev with it; kubectl apply -f /,
            );
        } finally {
            await at.stop();
        }
    });

    it("an ApplicationSet whose template names its Applications otherwise: the names it makes, and the lab's", async () => {
        const r = await step2With((set) => (set.spec.template.metadata.name = "{{env}}-shop"));
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: name holds "\{\{env\}\}-shop": the ApplicationSet names each Application from it, so it makes dev-shop and prod-shop; the lab's are shop-dev and shop-prod/,
        );
    });

    it("an appset.yaml whose prod element merges dev's (<<: *dev), with prune: yes: read as kubectl reads it, done", async () => {
        await atShop(2, async (root) => {
            const file = shopLayout(root).appsetFile;
            const merged = stringify(shopApplicationSet()).replace(
                "          - env: dev\n            revision: main\n          - env: prod\n            revision: main\n",
                "          - &dev\n            env: dev\n            revision: main\n          - <<: *dev\n            env: prod\n",
            );
            assert.match(merged, /<<: \*dev/);
            // and prune/selfHeal as YAML 1.1's yes, which kubectl applies as true
            assert.match(merged, /prune: true\n\s+selfHeal: true/);
            fs.writeFileSync(file, merged.replace(/prune: true(\n\s+)selfHeal: true/, "prune: yes$1selfHeal: yes"));
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
        });
    });

    it("generators written as a mapping (list: not under -): the list is asked for", async () => {
        const r = await step2With((set) => (set.spec.generators = set.spec.generators[0]));
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: spec\.generators in appset\.yaml is a mapping, but the ApplicationSet takes a list of generators: write - list:/,
        );
    });

    it("prod's element on master: no branch of the repository, said so", async () => {
        const r = await step2With((set) => (set.spec.generators[0].list.elements[1].revision = "master"));
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /hint: an element tracks master, which is no branch of the repository \(its branch is main/);
    });

    it("release/prod pushed at the incident commit itself: said before pin.json is asked for", async () => {
        await atShop(3, async (root) => {
            const { clone, resultFile } = shopLayout(root);
            const incident = JSON.parse(fs.readFileSync(resultFile("incident"), "utf8")).commit;
            await git(["push", "-q", "origin", `${incident}:refs/heads/release/prod`], clone);
            const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: release\/prod is at incident\.commit itself \(pushed from main's tip\?\), so prod pinned to it would still run the incident: the pin starts at the commit before it; [^\n]*git push origin --delete release\/prod\) and push it again at [0-9a-f]{12}/,
            );
        });
    });

    it("the git daemon's address with http://: the scheme is named", async () => {
        const r = await step2With(
            (set) => (set.spec.template.spec.source.repoURL = "http://gitd.gitsrv.svc.cluster.local:9418/shop-envs.git"),
        );
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: repoURL holds "http:\/\/gitd[^"]*": it names the git daemon's Service with http:\/\/, and the git daemon speaks git:\/\/ alone: write git:\/\/gitd\.gitsrv\.svc\.cluster\.local:9418\/shop-envs\.git/,
        );
    });

    it("one namespace written for both environments: said what it does", async () => {
        const r = await step2With((set) => (set.spec.template.spec.destination.namespace = "shop-dev"));
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: namespace holds "shop-dev": every environment's Application then deploys into shop-dev, one namespace for both, and their ConfigMaps are one object: write namespace: 'shop-\{\{env\}\}', then kubectl apply -f /,
        );
    });

    it("an element per list generator (two generators): said so, not that prod has none", async () => {
        const r = await step2With((set) => {
            const [dev, prod] = set.spec.generators[0].list.elements;
            set.spec.generators = [{ list: { elements: [dev] } }, { list: { elements: [prod] } }];
        });
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: appset\.yaml's ApplicationSet has 2 generators: the lab's has one, a list generator whose elements are dev=main and prod=main; put every element into spec\.generators\[0\]\.list\.elements, take the other generators out/,
        );
    });

    it("sources: (a list) for source:: said so", async () => {
        const r = await step2With((set) => {
            set.spec.template.spec.sources = [set.spec.template.spec.source];
            delete set.spec.template.spec.source;
        });
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: the template has sources: \(a list, for an Application of several sources\), and the lab's Applications have one source/,
        );
    });

    it("syncOptions written as a string, not a list: said so", async () => {
        const r = await step2With((set) => (set.spec.template.spec.syncPolicy.syncOptions = "CreateNamespace=true"));
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /hint: syncOptions holds "CreateNamespace=true": it is a string, not a list: write it as a list item/);
    });

    it("an absolute path (/envs/{{env}}): said as one Argo CD refuses", async () => {
        const r = await step2With((set) => (set.spec.template.spec.source.path = "/envs/{{env}}"));
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: path holds "\/envs\/\{\{env\}\}": Argo CD refuses an absolute path \(app path is absolute\): write envs\/\{\{env\}\}, relative to the repository's root/,
        );
    });

    it("syncOptions misspelt (syncOption): the key is named", async () => {
        const r = await step2With((set) => {
            set.spec.template.spec.syncPolicy.syncOption = set.spec.template.spec.syncPolicy.syncOptions;
            delete set.spec.template.spec.syncPolicy.syncOptions;
        });
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: syncOptions holds nothing: the template's syncPolicy has syncOption, which is no field of it \(the API server refuses an unknown field, so kubectl apply changed nothing in the cluster\): write syncOptions:/,
        );
    });

    it("an ApplicationSet whose template leaves project out: the hint says it is needed", async () => {
        const r = await step2With((set) => delete set.spec.template.spec.project);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: project holds nothing: the template has no project: an Application needs one \(the API server refuses/,
        );
        assert.doesNotMatch(r.stdout, /a project Argo CD does not have/);
    });

    it("an ApplicationSet applied with its template's name changed: the Applications it makes are named", async () => {
        const at = await labAt(1);
        try {
            const kubeconfig = kubeconfigAt(at);
            const renamed = shopApplicationSet();
            renamed.spec!.template!.metadata!.name = "{{env}}-shop";
            fs.writeFileSync(at.lab.layout.appsetFile, stringify(renamed));
            await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "-f", at.lab.layout.appsetFile]);
            await expect(holds("dev-shop made", async () => !!(await at.cluster.getApplication("dev-shop"))));
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--through", "2", "--json"]);
            assert.strictEqual(r.code, 1, r.out);
            const live = JSON.parse(r.stdout).checks.find(
                (c: { check: string }) => c.check === "live Application shop-dev tracks main and is Synced",
            );
            assert.match(live.found, /^no Application shop-dev; the ApplicationSet shop makes (dev-shop, prod-shop|prod-shop, dev-shop)$/);
            assert.match(
                live.hint,
                /the ApplicationSet shop makes (dev-shop and prod-shop|prod-shop and dev-shop), not shop-dev: its template's name is to be 'shop-\{\{env\}\}'/,
            );
        } finally {
            await at.stop();
        }
    });

    it("an ApplicationSet of a project that does not exist: step 2's hint names it", async () => {
        const at = await labAt(1);
        try {
            const kubeconfig = kubeconfigAt(at);
            const wrong = shopApplicationSet();
            wrong.spec!.template!.spec!.project = "shop";
            fs.writeFileSync(at.lab.layout.appsetFile, stringify(wrong));
            await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "-f", at.lab.layout.appsetFile]);
            await expect(
                holds(
                    "the ApplicationSet's ErrorOccurred",
                    async () =>
                        !!(await at.cluster.getApplicationSet("shop"))?.status?.conditions?.some(
                            (c) => c.type === "ErrorOccurred" && c.status === "True",
                        ),
                ),
            );
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "2"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: project holds "shop": an Application of a project Argo CD does not have is not generated/);
            // the file put right, the cluster's left as it was: what differs is named, and the ApplicationSet's own error
            fs.writeFileSync(at.lab.layout.appsetFile, stringify(shopApplicationSet()));
            const live = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "2"]);
            assert.strictEqual(live.code, 1, live.out);
            assert.match(
                live.stdout,
                /hint: the cluster's ApplicationSet differs from \S+appset\.yaml in its template: spec\.project is "shop" there and "default" in the file; apply the file/,
            );
            const table = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--through", "2"]);
            assert.match(
                table.stdout,
                /FAIL {2}live ApplicationSet shop: dev=main, prod=main\n\s+expected: the template of \S+appset\.yaml\n\s+found: +spec\.project "shop" \(the file: "default"\)/,
            );
        } finally {
            await at.stop();
        }
    });

    it("an earlier ApplicationSet under another name owns the Applications: step 2 names it", async () => {
        const at = await labAt(1);
        try {
            const kubeconfig = kubeconfigAt(at);
            const earlier = shopApplicationSet();
            earlier.metadata.name = "shop-appset";
            at.lab.kube.put(earlier, "client");
            await expect(holds("shop-appset's shop-dev", async () => !!(await at.cluster.getApplication("shop-dev"))));
            fs.writeFileSync(at.lab.layout.appsetFile, stringify(shopApplicationSet()));
            await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "-f", at.lab.layout.appsetFile]);
            await expect(
                holds("shop's ErrorOccurred", async () =>
                    ((await at.cluster.getApplicationSet("shop"))?.status?.conditions ?? []).some(
                        (c) => c.type === "ErrorOccurred" && c.status === "True",
                    ),
                ),
            );
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "2"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: the Applications belong to ApplicationSet shop-appset \(applied before, under another name\?\), and shop leaves another's Applications as they are: kubectl -n argocd delete applicationset shop-appset/,
            );
        } finally {
            await at.stop();
        }
    });

    it("an ApplicationSet applied with selfHeal off while appset.yaml says on: the hint names the field", async () => {
        const at = await labAt(1);
        try {
            const kubeconfig = kubeconfigAt(at);
            const applied = shopApplicationSet();
            applied.spec!.template!.spec!.syncPolicy!.automated = { prune: true, selfHeal: false };
            const other = path.join(at.lab.layout.root, "applied.yaml");
            fs.writeFileSync(other, stringify(applied));
            await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "-f", other]);
            fs.writeFileSync(at.lab.layout.appsetFile, stringify(shopApplicationSet()));
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "2"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: the cluster's ApplicationSet differs from \S+appset\.yaml in its template: spec\.syncPolicy\.automated is \{"prune":true,"selfHeal":false\} there and \{"prune":true,"selfHeal":true\} in the file; apply the file \(kubectl apply -f \S+appset\.yaml\)/,
            );
        } finally {
            await at.stop();
        }
    });

    it("CreateNamespace=True mended after shop-dev's sync failed: the hint says to start a sync, not to compare the file", async () => {
        const at = await labAt(1);
        try {
            const kubeconfig = kubeconfigAt(at);
            const wrong = shopApplicationSet();
            wrong.spec!.template!.spec!.syncPolicy!.syncOptions = ["CreateNamespace=True"];
            fs.writeFileSync(at.lab.layout.appsetFile, stringify(wrong));
            await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "-f", at.lab.layout.appsetFile]);
            await expect(
                holds("shop-dev's sync given up (Failed, its retries spent)", async () => {
                    const app = await at.cluster.getApplication("shop-dev");
                    return app?.status?.operationState?.phase === "Failed";
                }),
                { timeoutMs: 240_000 },
            );
            fs.writeFileSync(at.lab.layout.appsetFile, stringify(shopApplicationSet()));
            await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "-f", at.lab.layout.appsetFile]);
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "2"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: shop-dev's last sync ended Failed \([^\n]*shop-dev[^\n]*\)[^\n]*; once the cause is mended \(the template applied right\), start a sync: kubectl -n argocd patch application shop-dev --type merge -p '\{"operation":\{"initiatedBy":\{"username":"learner"\},"sync":\{\}\}\}'/,
            );
            // the sync the hint starts, for each Application, makes step 2 done
            for (const app of ["shop-dev", "shop-prod"])
                await run("kubectl", [
                    ...["--kubeconfig", kubeconfig, "-n", "argocd", "patch", "application", app, "--type", "merge"],
                    ...["-p", '{"operation":{"initiatedBy":{"username":"learner"},"sync":{}}}'],
                ]);
            await expect(
                holds("step 2 done after the syncs", async () => {
                    const again = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "2"]);
                    return again.code === 0;
                }),
                { timeoutMs: 120_000 },
            );
        } finally {
            await at.stop();
        }
    });

    it("the served lab's git daemon gone: the hint says the repository does not answer, not an earlier commit's error", async () => {
        const at = await labAt(4);
        try {
            const kubeconfig = kubeconfigAt(at);
            await at.lab.daemon.stop();
            const k = ["--kubeconfig", kubeconfig, "-n", "argocd"];
            await run("kubectl", [...k, "annotate", "application", "shop-prod", "argocd.argoproj.io/refresh=hard", "--overwrite"]);
            await expect(
                holds("shop-prod cannot compare (the repository does not answer)", async () =>
                    ((await at.cluster.getApplication("shop-prod"))?.status?.conditions ?? []).some((c) => c.type === "ComparisonError"),
                ),
                { timeoutMs: 120_000 },
            );
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "4"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: Argo CD cannot reach the repository \S+ \(ComparisonError: [^\n]*\): the git daemon that serves it does not answer/,
            );
            assert.doesNotMatch(r.stdout, /an earlier commit's/);
        } finally {
            await at.stop();
        }
    });

    it("the incident pushed together with a later commit (prod synced that one): step 3 done, and not taken for an Application made anew", async () => {
        const at = await labAt(2);
        try {
            const { clone } = at.lab.layout;
            const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
            const cm = path.join(clone, "base", "configmap.yaml");
            fs.writeFileSync(cm, fs.readFileSync(cm, "utf8").replace(/FEATURE_CHECKOUT_V2: "off"/, 'FEATURE_CHECKOUT_V2: "on"'));
            await git([...id, "commit", "-qam", "checkout v2 on"], clone);
            const incident = await git(["rev-parse", "HEAD"], clone);
            fs.writeFileSync(path.join(clone, "README.md"), "# shop\n");
            await git(["add", "README.md"], clone);
            await git([...id, "commit", "-qm", "readme"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const readme = await git(["rev-parse", "HEAD"], clone);
            const kubeconfig = kubeconfigAt(at);
            await run("kubectl", [
                "--kubeconfig",
                kubeconfig,
                "-n",
                "argocd",
                "annotate",
                "applications",
                "--all",
                "argocd.argoproj.io/refresh=normal",
                "--overwrite",
            ]);
            await expect(
                holds("shop-prod synced the later commit (its history has it)", async () =>
                    ((await at.cluster.getApplication("shop-prod"))?.status?.history ?? []).some((h) => h?.revision === readme),
                ),
                { timeoutMs: 60_000 },
            );
            fs.writeFileSync(at.lab.layout.resultFile("incident"), JSON.stringify({ commit: incident, dev_value: "on", prod_value: "on" }));
            const checks = await verifyShop({ layout: at.lab.layout, through: 4, cluster: at.cluster });
            const of = (name: string) => checks.find((c) => c.check.startsWith(name));
            assert.strictEqual(
                of("live shop-prod synced incident.commit")?.ok,
                true,
                JSON.stringify(of("live shop-prod synced incident.commit")),
            );
            assert.strictEqual(of("live shop-dev and shop-prod are the Applications step 3 synced")?.ok, true);
        } finally {
            await at.stop();
        }
    });

    it("an ApplicationSet applied again that cannot make its Applications (destination name and server): its error is named", async () => {
        const at = await labAt(2);
        try {
            const set = at.lab.kube.get("ApplicationSet", "argocd", "shop")!;
            const spec = JSON.parse(JSON.stringify(set.spec));
            spec.template.spec.destination.name = "in-cluster";
            at.lab.kube.put({ ...set, spec }, "client");
            await expect(
                holds("the ApplicationSet's ErrorOccurred", async () =>
                    ((await at.cluster.getApplicationSet("shop"))?.status?.conditions ?? []).some(
                        (x) => x.type === "ErrorOccurred" && x.status === "True",
                    ),
                ),
                { timeoutMs: 60_000 },
            );
            const r = (await verifyShop({ layout: at.lab.layout, through: 2, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live ApplicationSet shop"),
            );
            assert.strictEqual(r?.ok, false, JSON.stringify(r));
            assert.match(
                String(r?.hint),
                /^the ApplicationSet shop says it cannot make or update its Applications \("[^"]*name and server/,
            );
        } finally {
            await at.stop();
        }
    });

    it("the pin made by deleting the ApplicationSet and applying it again: both Applications made anew, said", async () => {
        const at = await labAt(4);
        try {
            const set = at.lab.kube.get("ApplicationSet", "argocd", "shop")!;
            at.lab.kube.remove("ApplicationSet", "argocd", "shop", "client");
            await expect(
                holds("the ApplicationSet and its Applications gone", async () => !(await at.cluster.getApplication("shop-prod"))),
                { timeoutMs: 60_000 },
            );
            at.lab.kube.put(
                { apiVersion: set.apiVersion, kind: set.kind, metadata: { name: "shop", namespace: "argocd" }, spec: set.spec },
                "client",
            );
            await expect(
                holds(
                    "shop-prod made again and synced",
                    async () => (await at.cluster.getApplication("shop-prod"))?.status?.sync?.status === "Synced",
                ),
                { timeoutMs: 60_000 },
            );
            const r = (await verifyShop({ layout: at.lab.layout, through: 4, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live shop-dev and shop-prod are the Applications step 3 synced"),
            );
            assert.strictEqual(r?.ok, false, JSON.stringify(r));
            assert.match(
                String(r?.hint),
                /^shop-dev \(its history begins at [0-9a-f]{12}, after step 3\) and shop-prod \([^)]*\) were made anew after step 3: deleting the ApplicationSet/,
            );
        } finally {
            await at.stop();
        }
    });

    it("shop-prod's history without the incident (Synced at it with no sync of its own): not taken for made anew", async () => {
        const at = await labAt(4);
        try {
            // as Argo CD leaves it when the incident renders for prod as a commit it synced before: no entry of its own
            const incident = JSON.parse(fs.readFileSync(at.lab.layout.resultFile("incident"), "utf8")).commit;
            const prod = at.lab.kube.get("Application", "argocd", "shop-prod")!;
            const history = (prod.status?.history ?? []).filter((h) => h.revision !== incident);
            assert.ok(history.length < (prod.status?.history ?? []).length, "the incident's entry is there to take out");
            at.lab.kube.put({ ...prod, status: { ...prod.status, history } }, "test");
            const r = (await verifyShop({ layout: at.lab.layout, through: 4, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live shop-dev and shop-prod are the Applications step 3 synced"),
            );
            assert.strictEqual(r?.ok, true, JSON.stringify(r));
        } finally {
            await at.stop();
        }
    });

    it("a destination namespace that is no DNS label (shop_{{env}}): the sync fails on its namespace, as Argo CD's does", async () => {
        const at = await labAt(2);
        try {
            at.lab.argo.appsets.stop(); // the template edited in the Applications alone: the ApplicationSet would put it back
            const dev = at.lab.kube.get("Application", "argocd", "shop-dev")!;
            at.lab.kube.put(
                {
                    ...dev,
                    spec: { ...dev.spec!, destination: { ...dev.spec!.destination, namespace: "shop_dev" } },
                    operation: { sync: {}, initiatedBy: { username: "learner" } },
                },
                "client",
            );
            await expect(
                holds(
                    "shop-dev's sync failed on its namespace",
                    async () =>
                        /Namespace "shop_dev" is invalid: metadata\.name: Invalid value: "shop_dev": a lowercase RFC 1123 label/.test(
                            (await at.cluster.getApplication("shop-dev"))?.status?.operationState?.message ?? "",
                        ),
                    async () => (await at.cluster.getApplication("shop-dev"))?.status?.operationState,
                ),
                { timeoutMs: 60_000 },
            );
            assert.strictEqual(at.lab.kube.get("Namespace", undefined, "shop_dev"), undefined);
        } finally {
            await at.stop();
        }
    });

    it("an immutable shop-config: the incident's sync is refused, and the hint says how to make it anew", async () => {
        const at = await labAt(2);
        try {
            const { clone } = at.lab.layout;
            const base = path.join(clone, "base", "configmap.yaml");
            const commit = async (edit: (text: string) => string, message: string) => {
                fs.writeFileSync(base, edit(fs.readFileSync(base, "utf8")));
                await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", message], clone);
                await git(["push", "-q", "origin", "HEAD:main"], clone);
                await at.cluster.annotateApplication("shop-dev", { "argocd.argoproj.io/refresh": "normal" });
            };
            await commit((t) => t.replace(/^data:/m, "immutable: true\ndata:"), "immutable");
            await expect(
                holds(
                    "shop-dev's shop-config immutable",
                    async () =>
                        (at.lab.kube.get("ConfigMap", "shop-dev", "shop-config") as { immutable?: boolean } | undefined)?.immutable ===
                        true,
                ),
                { timeoutMs: 60_000 },
            );
            await commit((t) => t.replace('FEATURE_CHECKOUT_V2: "off"', 'FEATURE_CHECKOUT_V2: "on"'), "Enable checkout v2");
            await expect(
                // its retries spent (Failed): while a retry attempt runs, the operation's message is that attempt's
                holds("shop-dev's sync refused, its retries spent", async () => {
                    const op = (await at.cluster.getApplication("shop-dev"))?.status?.operationState;
                    return op?.phase === "Failed" && /field is immutable/.test(op.message ?? "");
                }),
                { timeoutMs: 60_000 },
            );
            assert.strictEqual((await at.cluster.getConfigMap("shop-dev", "shop-config"))?.data?.FEATURE_CHECKOUT_V2, "off");
            const r = (await verifyShop({ layout: at.lab.layout, through: 3, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live shop-dev FEATURE_CHECKOUT_V2 is on"),
            );
            assert.strictEqual(r?.ok, false, JSON.stringify(r));
            assert.match(
                String(r?.hint),
                /^shop-dev's sync is refused by the API server: shop-config was made with immutable: true, .* then delete the live one \(kubectl -n shop-dev delete configmap shop-config\) and sync shop-dev/,
            );
        } finally {
            await at.stop();
        }
    });

    it("the incident reverted on main after the pin: dev's value is said to be main's own, not a refresh away", async () => {
        const at = await labAt(4);
        try {
            const { clone } = at.lab.layout;
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "revert", "--no-edit", "HEAD"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            await at.cluster.annotateApplication("shop-dev", { "argocd.argoproj.io/refresh": "normal" });
            await expect(
                holds(
                    "shop-dev off again",
                    async () => (await at.cluster.getConfigMap("shop-dev", "shop-config"))?.data?.FEATURE_CHECKOUT_V2 === "off",
                ),
                { timeoutMs: 60_000 },
            );
            const r = (await verifyShop({ layout: at.lab.layout, through: 4, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live shop-dev FEATURE_CHECKOUT_V2 is on"),
            );
            assert.strictEqual(r?.ok, false, JSON.stringify(r));
            assert.match(
                String(r?.hint),
                /^main's tip [0-9a-f]{12} renders dev's FEATURE_CHECKOUT_V2 off \(the incident undone on main, a revert\?\): shop-dev follows main, so no refresh turns it on/,
            );
        } finally {
            await at.stop();
        }
    });

    it("Applications keeping one sync of history (revisionHistoryLimit: 1): not taken for ones made anew", async () => {
        const at = await labAt(4);
        try {
            at.lab.argo.appsets.stop(); // else the ApplicationSet controller would put the template's spec back
            for (const name of ["shop-dev", "shop-prod"]) {
                const a = at.lab.kube.get("Application", "argocd", name)!;
                // as Argo CD keeps it: the latest sync alone (History.Trunc)
                const history = (a.status?.history ?? []).slice(-1);
                at.lab.kube.put({ ...a, spec: { ...a.spec, revisionHistoryLimit: 1 }, status: { ...a.status, history } }, "test");
            }
            const r = (await verifyShop({ layout: at.lab.layout, through: 4, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live shop-dev and shop-prod are the Applications step 3 synced"),
            );
            assert.notStrictEqual(r?.ok, false, JSON.stringify(r));
        } finally {
            await at.stop();
        }
    });

    it("elements in another order, a template's tags with spaces: the same ApplicationSet, done", async () => {
        await atShop(4, async (root) => {
            const { appsetFile } = shopLayout(root);
            const set: any = parse(fs.readFileSync(appsetFile, "utf8"));
            set.spec.generators[0].list.elements.reverse();
            const t = set.spec.template;
            t.metadata.name = "shop-{{ env }}";
            t.spec.source.targetRevision = "{{ revision }}";
            t.spec.source.path = "envs/{{ env}}";
            t.spec.destination.namespace = "shop-{{env }}";
            fs.writeFileSync(appsetFile, stringify(set));
            const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
        });
    });

    it("a path with a trailing slash, a repoURL without git's default port or by a shorter name: the same, done", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            const set: any = shopApplicationSet();
            set.spec.template.spec.source.path = "envs/{{env}}/";
            set.spec.template.spec.source.repoURL = set.spec.template.spec.source.repoURL.replace(":9418/", "/");
            fs.writeFileSync(appsetFile, stringify(set));
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
            // a leading ./ names the same folder too (Argo CD joins and cleans the path)
            set.spec.template.spec.source.path = "./envs/{{env}}";
            fs.writeFileSync(appsetFile, stringify(set));
            const dotted = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(dotted.code, 0, dotted.out);
            // the Service by a shorter name, which the repo-server Pod's DNS search list completes
            set.spec.template.spec.source.repoURL = "git://gitd.gitsrv.svc:9418/shop-envs.git";
            fs.writeFileSync(appsetFile, stringify(set));
            const short = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(short.code, 0, short.out);
        });
    });

    it("syncPolicy a level out, the template's targetRevision a branch, an element's key misspelt: each named", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            const step2 = async (set: unknown) => {
                fs.writeFileSync(appsetFile, stringify(set));
                return (await runMain("verify", ["--root", root, "--step", "2", "--offline"])).stdout;
            };
            const out: any = shopApplicationSet();
            out.spec.syncPolicy = out.spec.template.spec.syncPolicy;
            delete out.spec.template.spec.syncPolicy;
            assert.match(await step2(out), /automated holds nothing: it is under the ApplicationSet's own spec\.syncPolicy, one level out/);
            const branch: any = shopApplicationSet();
            branch.spec.template.spec.source.targetRevision = "release/prod";
            assert.match(
                await step2(branch),
                /targetRevision holds "release\/prod": every environment then tracks release\/prod: the template takes each element's \{\{revision\}\}/,
            );
            const key: any = shopApplicationSet();
            key.spec.generators[0].list.elements[0] = { envr: "dev", revision: "main" };
            assert.match(await step2(key), /hint: an element has the key "envr": an element's keys are env and revision/);
        });
    });

    it("automated without prune, selfHeal false, or none: what each lacks is named", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            const step2 = async (automated: unknown) => {
                const set: any = shopApplicationSet();
                if (automated === undefined) delete set.spec.template.spec.syncPolicy.automated;
                else set.spec.template.spec.syncPolicy.automated = automated;
                fs.writeFileSync(appsetFile, stringify(set));
                const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
                assert.strictEqual(r.code, 1, r.out);
                return r.stdout;
            };
            assert.match(
                await step2({ selfHeal: true }),
                /hint: automated holds \{"selfHeal":true\}: automated has no prune \(without it Argo CD never deletes what Git no longer has\); set prune: true under spec\.template\.spec\.syncPolicy\.automated$/m,
            );
            assert.match(
                await step2({ prune: true, selfHeal: false }),
                /automated has selfHeal: false \(without it a change made in the cluster stays until the next commit \(step 5's drift is never put back\)\); set selfHeal: true under/,
            );
            assert.match(
                await step2(undefined),
                /the template has no automated sync: Argo CD then syncs only when asked; add automated: \{prune: true, selfHeal: true\} under spec\.template\.spec\.syncPolicy$/m,
            );
        });
    });

    it("applicationsSync create-only, or ignoreDifferences over shop-config: step 2 names what each stops", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            const set: any = shopApplicationSet();
            set.spec.syncPolicy = { applicationsSync: "create-only" };
            set.spec.template.spec.ignoreDifferences = [{ kind: "ConfigMap", name: "shop-config", jsonPointers: ["/data/LOG_LEVEL"] }];
            fs.writeFileSync(appsetFile, stringify(set));
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /not done: appset\.yaml lets Argo CD update the Applications and compare shop-config whole [^\n]*hint: spec\.syncPolicy\.applicationsSync: create-only lets the ApplicationSet create its Applications but never update them: step 4's pin [^\n]*; the template's ignoreDifferences covers shop-config's LOG_LEVEL: Argo CD leaves it out when it compares the cluster with Git, so step 5's drift is never seen and selfHeal never puts it back/,
            );
        });
    });

    it("ignoreDifferences: only what covers shop-config's data is refused, and odd shapes are read without a crash", () => {
        const withIgnore = (ignoreDifferences: unknown) => {
            const set: any = shopApplicationSet();
            set.spec.template.spec.ignoreDifferences = ignoreDifferences;
            return policyProblems(set);
        };
        assert.deepStrictEqual(withIgnore([{ kind: "ConfigMap", name: "shop-config", jsonPointers: ["/metadata/annotations/x"] }]), []);
        assert.deepStrictEqual(withIgnore([{ kind: "ConfigMap", managedFieldsManagers: ["kube-controller-manager"] }]), []);
        assert.deepStrictEqual(withIgnore({ kind: "ConfigMap" }), []);
        // pointers that are no list (the API server refuses them): read as none, no TypeError
        assert.ok(Array.isArray(withIgnore([{ kind: "ConfigMap", jsonPointers: 5 }, null, "x"])));
        assert.match(
            withIgnore([{ kind: "*", jsonPointers: ["/data"] }]).join(),
            /covers shop-config's LOG_LEVEL and FEATURE_CHECKOUT_V2: [^;]*the flag's changes \(steps 3 and 6\) are never synced/,
        );
        assert.match(
            withIgnore([{ kind: "ConfigMap", jqPathExpressions: [".data.FEATURE_CHECKOUT_V2"] }]).join(),
            /covers shop-config's FEATURE_CHECKOUT_V2: /,
        );
    });

    it("templatePatch, ignoreApplicationDifferences, a source's directory or kustomize options: each named", () => {
        const set: any = shopApplicationSet();
        assert.deepStrictEqual(policyProblems(set), [], "the lab's own has none");
        set.spec.templatePatch = "spec: {}";
        set.spec.ignoreApplicationDifferences = [{ jsonPointers: ["/spec/source/targetRevision"] }];
        set.spec.template.spec.source.directory = { recurse: true };
        set.spec.template.spec.source.kustomize = { namePrefix: "{{env}}-" };
        const said = policyProblems(set).join("\n");
        assert.match(said, /^spec\.templatePatch rewrites each Application beyond the template .*the pin goes in prod's element/m);
        assert.match(said, /^spec\.ignoreApplicationDifferences keeps fields of the Applications/m);
        assert.match(said, /^the template's source\.directory makes Argo CD read envs\/\{\{env\}\} as a folder of plain YAML/m);
        assert.match(said, /^the template's source\.kustomize hands kustomize options of its own \(a namePrefix renames shop-config/m);
    });

    it("the pin applied with applicationsSync create-only: the simulated ApplicationSet updates no Application, as Argo CD", async () => {
        const at = await labAt(3);
        try {
            const { clone } = at.lab.layout;
            await git(["push", "--quiet", "origin", "HEAD~1:refs/heads/release/prod"], clone);
            const set = await at.cluster.getApplicationSet("shop");
            await at.cluster.jsonPatchApplicationSet("shop", [
                { op: "add", path: "/spec/syncPolicy", value: { applicationsSync: "create-only" } },
                {
                    op: "replace",
                    path: `/spec/generators/0/list/elements/${(set?.spec?.generators?.[0]?.list?.elements ?? []).findIndex((e) => e.env === "prod")}/revision`,
                    value: "release/prod",
                },
            ]);
            // an element added in the same patch: its Application made is the pass that would have updated shop-prod
            await at.cluster.jsonPatchApplicationSet("shop", [
                { op: "add", path: "/spec/generators/0/list/elements/-", value: { env: "qa", revision: "main" } },
            ]);
            await expect(
                holds("the ApplicationSet made shop-qa", async () => !!(await at.cluster.getApplication("shop-qa"))),
                {
                    timeoutMs: 60_000,
                },
            );
            assert.strictEqual((await at.cluster.getApplication("shop-prod"))?.spec?.source?.targetRevision, "main");
        } finally {
            await at.stop();
        }
    });

    it("the in-cluster server written with :443: the hint says Argo CD matches the URL exactly", async () => {
        await atShop(2, async (root) => {
            const set: any = shopApplicationSet();
            set.spec.template.spec.destination.server = "https://kubernetes.default.svc:443";
            fs.writeFileSync(shopLayout(root).appsetFile, stringify(set));
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /server holds "https:\/\/kubernetes\.default\.svc:443": Argo CD finds a cluster by its URL exactly, and knows the one it runs in as https:\/\/kubernetes\.default\.svc: write it without the port/,
            );
        });
    });

    it("elements with a key the template never reads: the same Applications, done", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            const set: any = shopApplicationSet();
            set.spec.generators[0].list.elements = set.spec.generators[0].list.elements.map((e: object) => ({
                ...e,
                cluster: "in-cluster",
            }));
            fs.writeFileSync(appsetFile, stringify(set));
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
            // a key beside a missing one (envr for env) is still named
            set.spec.generators[0].list.elements[0] = { envr: "dev", revision: "main", cluster: "in-cluster" };
            fs.writeFileSync(appsetFile, stringify(set));
            const typo = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(typo.code, 1, typo.out);
            assert.match(typo.stdout, /hint: an element has the key "envr", "cluster": an element's keys are env and revision/);
        });
    });

    it("drift.seconds longer than from the last sync to the repair: said so", async () => {
        const at = await labAt(5);
        try {
            const { root, resultFile } = at.lab.layout;
            const kubeconfig = path.join(root, "kubeconfig");
            fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
            const step5 = () => runMain("verify", ["--root", root, "--kubeconfig", kubeconfig, "--step", "5"]);
            const solved = await step5();
            assert.strictEqual(solved.code, 0, solved.out);
            // the lab's own history, as the simulation wrote it: the repair after the pin's sync
            const app = await at.cluster.getApplication("shop-prod");
            const most =
                Math.ceil(
                    (Date.parse(app!.status!.operationState!.finishedAt!) - Date.parse(app!.status!.history!.at(-1)!.deployedAt!)) / 1000,
                ) + 2;
            // (within the lab's age, which its own check holds it to: the lab here is seconds old)
            editResult(resultFile("drift"), { seconds: most + 1 });
            const r = await step5();
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: drift\\.seconds holds ${most + 1}, but the drift cannot have lasted longer than ${most} s: your patch came after shop-prod's last sync \\(\\S+\\) and selfHeal repaired it at \\S+\\n`,
                ),
            );
        } finally {
            await at.stop();
        }
    });

    it("the drift patched as DEBUG: the hint says the lab's value is lower case, and to patch again", async () => {
        await atShop(5, async (root) => {
            const file = shopLayout(root).resultFile("drift");
            editResult(file, { edited: "DEBUG" });
            const r = await runMain("verify", ["--root", root, "--step", "5", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: edited holds "DEBUG": the lab's drift patches LOG_LEVEL to debug, in lower case as Git writes its values; kubectl patch configmap shop-config -n shop-prod -p '\{"data":\{"LOG_LEVEL":"debug"\}\}', time how long until it is warn again, and write drift\.json again, with edited: "debug"/,
            );
        });
    });

    it("prod_revision_during read from shop-dev (the bad commit): the hint says whose it is", async () => {
        await atShop(7, async (root) => {
            const file = shopLayout(root).resultFile("revert");
            editResult(file, { prod_revision_during: JSON.parse(fs.readFileSync(file, "utf8")).bad_commit });
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /prod_revision_during is promote\.to; [^\n]*hint: prod_revision_during is bad_commit, the commit shop-dev tries to sync: prod tracks release\/prod/,
            );
        });
    });

    it("the drift done before any pin: step 4 is said not done, not undone", async () => {
        await atShop(3, async (root) => {
            const layout = shopLayout(root);
            fs.writeFileSync(
                layout.resultFile("drift"),
                JSON.stringify({ uid: "0f0e0d0c-0000-4000-8000-000000000000", edited: "debug", restored: "warn", seconds: 2 }),
            );
            const r = await runMain("verify", ["--root", root, "--step", "5", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /^step 5 drift: not done \(step 4 pin comes first\): /);
            assert.doesNotMatch(r.stdout, /undoes step 4's pin/);
            assert.match(r.stdout, /then write \S+pin\.json \(there is none yet\)/);
        });
    });

    it("the incident made by a patch in base/kustomization.yaml: the base turns the flag on, done", async () => {
        await atShop(2, async (root) => {
            const { clone, resultFile } = shopLayout(root);
            fs.appendFileSync(
                path.join(clone, "base", "kustomization.yaml"),
                'patches:\n  - target: {kind: ConfigMap, name: shop-config}\n    patch: |-\n      - op: replace\n        path: /data/FEATURE_CHECKOUT_V2\n        value: "on"\n',
            );
            await git(["commit", "--quiet", "-am", "checkout v2 on"], clone);
            await git(["push", "--quiet", "origin", "main"], clone);
            const commit = await git(["rev-parse", "HEAD"], clone);
            fs.writeFileSync(resultFile("incident"), JSON.stringify({ commit, dev_value: "on", prod_value: "on" }));
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(r.stdout, /^step 3 incident: done /);
        });
    });

    it("the promotion done before the drift: steps 4 and 5 are graded as they stand, the drift still to do", async () => {
        const at = await labAt(4);
        try {
            const { root, clone, resultFile } = at.lab.layout;
            const kubeconfig = path.join(root, "kubeconfig");
            fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
            const incident = JSON.parse(fs.readFileSync(resultFile("incident"), "utf8")).commit;
            await git(["push", "--quiet", "origin", `${incident}:refs/heads/release/prod`], clone);
            await expect(
                holds("shop-prod synced the promotion", async () => {
                    await at.cluster.annotateApplication("shop-prod", { [REFRESH_ANNOTATION]: "normal" });
                    return (await at.cluster.getApplication("shop-prod"))?.status?.sync?.revision === incident;
                }),
                { timeoutMs: 60_000 },
            );
            const step = (n: number) => runMain("verify", ["--root", root, "--kubeconfig", kubeconfig, "--step", String(n)]);
            const pin = await step(4);
            assert.strictEqual(pin.code, 0, pin.out);
            const drift = await step(5);
            assert.strictEqual(drift.code, 1, drift.out);
            assert.match(drift.stdout, /^step 5 drift: not done: drift\.json exists and is JSON; hint: [^\n]*there is none yet/);
            assert.doesNotMatch(drift.stdout, /delete the branch/);
        } finally {
            await at.stop();
        }
    });

    it("a value ending with a non-breaking space: the hint names the character", async () => {
        await atShop(8, async (root) => {
            editResult(shopLayout(root).resultFile("report"), { prod_tracks: "release/prod\u00a0" });
            const r = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: prod_tracks holds "release\/prod\\u00a0" \(with a non-breaking space \(U\+00A0\) in it, invisible on screen: type it again as plain text\)/,
            );
            assert.doesNotMatch(r.stdout, /\u00a0/);
        });
    });

    it("drift.json changed after the report copied it: the hint names both values", async () => {
        await atShop(8, async (root) => {
            const layout = shopLayout(root);
            const report = JSON.parse(fs.readFileSync(layout.resultFile("report"), "utf8"));
            editResult(layout.resultFile("drift"), { seconds: report.drift_seconds + 1 });
            const r = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: report\\.drift_seconds holds ${report.drift_seconds} and drift\\.json's seconds ${report.drift_seconds + 1}: the report copies drift\\.json; make the two agree`,
                ),
            );
        });
    });

    it("the pin written into prod's env (env: release/prod): the hint says env names the environment", async () => {
        await atShop(4, async (root) => {
            const r = await withElements(root, 4, [
                { env: "dev", revision: "main" },
                { env: "release/prod", revision: "main" },
            ]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: an element's env is "release\/prod", a branch: env names the environment \(dev, prod\) and revision the branch it tracks/,
            );
        });
    });

    it("appset.yaml of another apiVersion: the hint says kubectl apply refuses it", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            fs.writeFileSync(appsetFile, stringify({ ...shopApplicationSet(), apiVersion: "argoproj.io/v1beta1" }));
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: appset\.yaml's apiVersion is "argoproj\.io\/v1beta1": Argo CD serves ApplicationSets as argoproj\.io\/v1alpha1 alone, and kubectl apply refuses any other/,
            );
        });
    });

    it("an element added for prod beside main's: step 4's hint says two make one name", async () => {
        await atShop(4, async (root) => {
            const r = await withElements(root, 4, [
                { env: "dev", revision: "main" },
                { env: "prod", revision: "main" },
                { env: "prod", revision: "release/prod" },
            ]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: prod has 2 elements \("main", "release\/prod"\), and each makes an Application shop-prod: the ApplicationSet refuses the duplicate name/,
            );
        });
    });

    it("one ApplicationSet per environment in appset.yaml: the hint says the lab's is one, shop", async () => {
        await atShop(2, async (root) => {
            const one = (env: string, revision: string) => {
                const set: any = shopApplicationSet();
                set.metadata.name = `shop-${env}`;
                set.spec.generators[0].list.elements = [{ env, revision }];
                return stringify(set);
            };
            fs.writeFileSync(shopLayout(root).appsetFile, `${one("dev", "main")}---\n${one("prod", "main")}`);
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: appset\.yaml holds 2 ApplicationSets \(shop-dev, shop-prod\), none named shop: the lab's is one ApplicationSet shop [^\n]*kubectl -n argocd delete applicationset shop-dev shop-prod/,
            );
        });
    });

    it("prod's element taken out (shop-prod to be made by hand): the hint says the ApplicationSet makes it", async () => {
        await atShop(4, async (root) => {
            const r = await withElements(root, 4, [{ env: "dev", revision: "main" }]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: appset\.yaml has no element for prod: the ApplicationSet makes shop-prod from its element[^;]*made by hand is not the ApplicationSet's[^;]*; put the element back, \{env: prod, revision: release\/prod\}/,
            );
            // prod's element copied into a second dev one: the duplicate is named first
            const copied = await withElements(root, 4, [
                { env: "dev", revision: "main" },
                { env: "dev", revision: "release/prod" },
            ]);
            assert.match(copied.stdout, /hint: dev has 2 elements \("main", "release\/prod"\)/, copied.out);
        });
    });

    it("a third environment's element (staging) beside the pin: step 4's hint names it", async () => {
        await atShop(4, async (root) => {
            const r = await withElements(root, 4, [
                { env: "dev", revision: "main" },
                { env: "prod", revision: "release/prod" },
                { env: "staging", revision: "main" },
            ]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: the elements name "staging" beside dev and prod: the lab has two environments \(envs\/dev and envs\/prod\), and shop-staging would render envs\/staging, which the repository lacks; take that element out/,
            );
            // prod spelt otherwise (Prod) is not a third environment: the case named
            const renamed = await withElements(root, 4, [
                { env: "dev", revision: "main" },
                { env: "Prod", revision: "release/prod" },
            ]);
            assert.strictEqual(renamed.code, 1, renamed.out);
            assert.doesNotMatch(renamed.stdout, /beside dev and prod/);
            assert.match(
                renamed.stdout,
                /hint: an element's env is "Prod": an Application's name is lower case \(RFC 1123\), so shop-Prod is refused[^\n]*write env: prod/,
            );
        });
    });

    it("an ApplicationSet applied outside argocd: step 2's hint says where it is", async () => {
        const at = await labAt(1);
        try {
            const kubeconfig = kubeconfigAt(at);
            const elsewhere = shopApplicationSet();
            delete elsewhere.metadata.namespace;
            fs.writeFileSync(at.lab.layout.appsetFile, stringify(elsewhere));
            await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "-n", "default", "-f", at.lab.layout.appsetFile]);
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "2"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: appset\.yaml's ApplicationSet names no namespace \(kubectl apply then puts it in the current one, default, unless given -n argocd\); Argo CD reads ApplicationSets in its own namespace, argocd, only/,
            );
            // applied right with -n argocd, the file without its namespace: the file's namespace is what is said
            await run("kubectl", ["--kubeconfig", kubeconfig, "delete", "-n", "default", "applicationset", "shop"]);
            await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "-n", "argocd", "-f", at.lab.layout.appsetFile]);
            const applied = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "2"]);
            assert.strictEqual(applied.code, 1, applied.out);
            assert.match(applied.stdout, /hint: appset\.yaml's ApplicationSet names no namespace/);
            assert.doesNotMatch(applied.stdout, /does not say so/);
            await run("kubectl", ["--kubeconfig", kubeconfig, "delete", "-n", "argocd", "applicationset", "shop"]);
            await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "-n", "default", "-f", at.lab.layout.appsetFile]);
            // the file put right, not applied: the cluster's is said to be where Argo CD does not look
            fs.writeFileSync(at.lab.layout.appsetFile, stringify(shopApplicationSet()));
            const live = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "2"]);
            assert.strictEqual(live.code, 1, live.out);
            assert.match(
                live.stdout,
                /hint: the ApplicationSet shop is in namespace default, where Argo CD does not look \(it reads argocd only\)/,
            );
        } finally {
            await at.stop();
        }
    });

    it("the Application deleted after step 8: step 5 says the ConfigMap was made again", async () => {
        const at = await labAt(8);
        try {
            const kubeconfig = kubeconfigAt(at);
            const before = (await at.cluster.getConfigMap("shop-prod", "shop-config"))?.metadata?.uid;
            await run("kubectl", ["--kubeconfig", kubeconfig, "-n", "argocd", "delete", "application", "shop-prod", "--wait=false"]);
            await expect(
                holds("the ApplicationSet's shop-prod synced a new ConfigMap", async () => {
                    const cm = await at.cluster.getConfigMap("shop-prod", "shop-config");
                    const op = (await at.cluster.getApplication("shop-prod"))?.status?.operationState;
                    return !!cm && cm.metadata?.uid !== before && op?.phase === "Succeeded";
                }),
                { timeoutMs: 60_000 },
            );
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--kubeconfig", kubeconfig, "--step", "5"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: shop-prod's latest sync \(\S+\) made the ConfigMap again \(it, or the Application shop-prod, was deleted\): drift\.uid names the one before/,
            );
        } finally {
            await at.stop();
        }
    });

    it("given a shop lab at step 8, then --through 3 grades it as it stands and passes", async () => {
        const root = await rootAt(8);
        const r = await runMain("verify", ["--root", root, "--through", "3", "--offline"]);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.stdout, /^verify: the shop lab under \S+ through step 3 as the lab stands \(at step 8\), files and repository only/);
        assert.doesNotMatch(r.stdout, /^\s*[4-8]\s/m, "no check of a step after 3");
    });

    it("given release/prod never pushed at step 4, then the hint says to push it", async () => {
        await atShop(4, async (root) => {
            const { clone, bareRepo } = shopLayout(root);
            // as if the learner had written pin.json and applied the pin but forgotten the push
            await git(["update-ref", "-d", "refs/heads/release/prod"], bareRepo);
            await git(["update-ref", "-d", "refs/remotes/origin/release/prod"], clone);
            const pin = JSON.parse(fs.readFileSync(shopLayout(root).resultFile("pin"), "utf8"));
            const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `: release/prod exists; hint: release/prod is not in the repository, and your clone has no origin/release/prod: never pushed .*git push origin ${pin.release_prod_initial}:refs/heads/release/prod`,
                ),
            );
            assert.doesNotMatch(r.stdout, /a push deleted it/);
        });
    });

    it("given release/prod deleted by a push, then the hint says to push it again", async () => {
        await atShop(8, async (root) => {
            await git(["push", "--quiet", "origin", ":refs/heads/release/prod"], shopLayout(root).clone);
            const r = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /: release\/prod exists; hint: release\/prod is gone from the repository \(a push deleted it\); push it again/,
            );
            assert.doesNotMatch(r.stdout, /change the ApplicationSet/);
        });
    });

    it("a release/prod ref damaged by hand: the hint mends it", async () => {
        const root = await rootAt(8);
        const { bareRepo, clone } = shopLayout(root);
        const ref = path.join(bareRepo, "refs", "heads", "release", "prod");
        try {
            fs.writeFileSync(ref, "garbage\n");
            const r = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /: release\/prod exists; hint: refs\/heads\/release\/prod in \S+ was damaged by hand: [^\n]*remove that file \(rm \S+\)/,
            );
            assert.doesNotMatch(r.stdout, /a push deleted it/);
            const full = await runMain("verify", ["--root", root, "--offline"]);
            assert.match(full.stdout, /found: +a broken ref \(it holds "garbage", no commit\)/);
            // the way the hint says: the file removed, the branch pushed again
            fs.rmSync(ref);
            await git(["push", "--quiet", "origin", "origin/release/prod:refs/heads/release/prod"], clone);
            assert.strictEqual((await runMain("verify", ["--root", root, "--step", "8", "--offline"])).code, 0);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a lab past the step, an earlier step's file wrong: it comes first", async () => {
        await atShop(8, async (root) => {
            const file = shopLayout(root).resultFile("promote");
            const p = JSON.parse(fs.readFileSync(file, "utf8"));
            editResult(file, { from: p.to, to: p.from });
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /^step 7 revert: not done \(as the lab stands, at step 8; step 6 promote comes first\): promote\./);
        });
    });

    for (const [how, name, entry] of [
        ["./missing.yaml", "kustomization.yaml", "./missing.yaml"],
        ["a dev overlay's kustomization.yml", "kustomization.yml", "missing.yaml"],
    ] as const)
        it(`step 7 done right with ${how}: done`, async () => {
            await atShop(6, async (root) => {
                const layout = shopLayout(root);
                const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
                const push = async (message: string) => {
                    await git([...id, "commit", "--quiet", "-am", message], layout.clone);
                    await git(["push", "--quiet", "origin", "HEAD:main"], layout.clone);
                    return git(["rev-parse", "HEAD"], layout.clone);
                };
                await git(["pull", "--quiet", "origin", "main"], layout.clone);
                const dev = path.join(layout.clone, "envs", "dev");
                if (name !== "kustomization.yaml") {
                    await git(["mv", path.join(dev, "kustomization.yaml"), path.join(dev, name)], layout.clone);
                    await push("dev: the overlay's file as kustomization.yml");
                }
                const file = path.join(dev, name);
                fs.writeFileSync(file, addMissingResource(fs.readFileSync(file, "utf8")).replace("- missing.yaml", `- ${entry}`));
                const bad = await push("dev: add missing.yaml");
                await git([...id, "revert", "--no-edit", "HEAD"], layout.clone);
                await git(["push", "--quiet", "origin", "HEAD:main"], layout.clone);
                const revertCommit = await git(["rev-parse", "HEAD"], layout.clone);
                const promote = JSON.parse(fs.readFileSync(layout.resultFile("promote"), "utf8"));
                fs.writeFileSync(
                    layout.resultFile("revert"),
                    JSON.stringify({
                        bad_commit: bad,
                        revert_commit: revertCommit,
                        dev_error: "missing.yaml: no such file",
                        prod_revision_during: promote.to,
                    }),
                );
                const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
                assert.strictEqual(r.code, 0, r.out);
            });
        });

    it("the branch written release-prod: the hint names the slip; the repoURL without .git is the same repository", async () => {
        await atShop(4, async (root) => {
            const { appsetFile } = shopLayout(root);
            fs.writeFileSync(appsetFile, fs.readFileSync(appsetFile, "utf8").replace("revision: release/prod", "revision: release-prod"));
            const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: prod tracks "release-prod"; the lab's branch is release\/prod \(with a slash\)/);
        });
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            fs.writeFileSync(appsetFile, fs.readFileSync(appsetFile, "utf8").replace("shop-envs.git", "shop-envs"));
            // the same repository without its .git: the git daemon and Argo CD read it so
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
        });
    });

    /** Step 1 done by hand on a lab at step 0: the lab's files, `edit`ed in the clone, pushed as main's first commit; verify --step 1's output. */
    async function firstCommitByHand(root: string, edit: (work: string) => void, later?: (work: string) => void): Promise<string> {
        const { bareRepo } = shopLayout(root);
        await git(["init", "--quiet", "--bare", "--shared=0644", "--initial-branch=main", bareRepo]);
        const work = fs.mkdtempSync(path.join(os.tmpdir(), "first-"));
        try {
            await git(["clone", "--quiet", bareRepo, work]);
            fs.cpSync(path.join(__dirname, "..", "gitrepo", "shop"), work, { recursive: true });
            edit(work);
            await git(["add", "-A"], work);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-m", "first"], work);
            await git(["push", "--quiet", "origin", "main"], work);
            if (later) {
                // put right in a second commit
                later(work);
                await git(["add", "-A"], work);
                await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-m", "second"], work);
                await git(["push", "--quiet", "origin", "main"], work);
            }
            const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            return r.stdout;
        } finally {
            fs.rmSync(work, { recursive: true, force: true });
        }
    }
    /** An edit of the clone's envs/prod/kustomization.yaml. */
    const prodKustomization = (edit: (t: string) => string) => (work: string) => {
        const k = path.join(work, "envs", "prod", "kustomization.yaml");
        fs.writeFileSync(k, edit(fs.readFileSync(k, "utf8")));
    };

    for (const [what, edit, hint] of [
        [
            "prod's LOG_LEVEL changed",
            (t: string) => t.replace(/\bwarn\b/, "warning"),
            /envs\/prod renders LOG_LEVEL "warning", not "warn": the lab's files have it right/,
        ],
        [
            "prod's patch path in another case (an add of /data/log_level)",
            (t: string) => t.replace("op: replace", "op: add").replace("/data/LOG_LEVEL", "/data/log_level"),
            /envs\/prod renders LOG_LEVEL "info", not "warn" \(base's value: its patch sets log_level beside it, and keys are case-sensitive: the path is \/data\/LOG_LEVEL\)/,
        ],
        [
            "prod's ConfigMap renamed by a namePrefix",
            (t: string) => t.replace("resources:", "namePrefix: prod-\nresources:"),
            /hint: the first commit's envs\/prod renders the ConfigMap as prod-shop-config \(a namePrefix or nameSuffix\): the lab's ConfigMap is shop-config/,
        ],
        [
            "prod's patch left out",
            () => "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../base\n",
            /envs\/prod renders LOG_LEVEL "info", not "warn" \(base's value: its kustomization\.yaml has no patch, and the overlay sets LOG_LEVEL by one\)/,
        ],
        [
            "prod's patch target misspelt",
            (t: string) => t.replace("kind: ConfigMap", "kind: Configmap"),
            /envs\/prod renders LOG_LEVEL "info", not "warn" \(base's value: its patch changes nothing, so its target names no object of base/,
        ],
    ] as const)
        it(`a first commit with ${what}: the hint names it`, async () => {
            await atShop(0, async (root) => assert.match(await firstCommitByHand(root, prodKustomization(edit)), hint));
        });

    it("a first commit with a key of base's ConfigMap in another case: named", async () => {
        await atShop(0, async (root) => {
            const lower = (work: string) => {
                const file = path.join(work, "base", "configmap.yaml");
                fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("FEATURE_CHECKOUT_V2", "FEATURE_CHECKOUT_v2"));
            };
            assert.match(
                await firstCommitByHand(root, lower),
                /hint: the first commit's base\/configmap\.yaml has FEATURE_CHECKOUT_v2 and no FEATURE_CHECKOUT_V2: keys are case-sensitive[^\n]*make the bare repository again/,
            );
        });
    });

    it("a first commit whose overlays replace /data whole (the flag dropped): step 1 names it", async () => {
        await atShop(0, async (root) => {
            const replaceData = (work: string) => {
                for (const [env, level] of [
                    ["dev", "debug"],
                    ["prod", "warn"],
                ]) {
                    const file = path.join(work, "envs", env, "kustomization.yaml");
                    const k = parse(fs.readFileSync(file, "utf8"));
                    k.patches = [
                        {
                            target: { kind: "ConfigMap", name: "shop-config" },
                            patch: stringify([{ op: "replace", path: "/data", value: { LOG_LEVEL: level } }]),
                        },
                    ];
                    fs.writeFileSync(file, stringify(k));
                }
            };
            assert.match(
                await firstCommitByHand(root, replaceData),
                /hint: the first commit's envs\/dev and envs\/prod render shop-config without FEATURE_CHECKOUT_V2: their patches replace \/data whole \(or remove the key\)[^\n]*make the bare repository again/,
            );
        });
    });

    it("a first commit with the lab's files in a folder of their own (cp -r shop .): the hint names the folder", async () => {
        await atShop(0, async (root) => {
            const nest = (work: string) => {
                fs.mkdirSync(path.join(work, "shop"));
                for (const d of ["base", "envs"]) fs.renameSync(path.join(work, d), path.join(work, "shop", d));
            };
            assert.match(
                await firstCommitByHand(root, nest),
                /hint: the first commit holds shop\/base\/configmap\.yaml: the lab's files go at the repository's top \(base\/, envs\/\), not in a folder shop\/ [^\n]*make the bare repository again/,
            );
        });
    });

    it("a first commit with prod's LOG_LEVEL changed: the way back is the repository made again", async () => {
        await atShop(0, async (root) => {
            assert.match(
                await firstCommitByHand(
                    root,
                    prodKustomization((t) => t.replace(/\bwarn\b/, "warning")),
                ),
                /hint: the first commit's envs\/prod renders LOG_LEVEL "warning", not "warn": the lab's files have it right \(gitrepo\/shop\/envs\/prod\/kustomization\.yaml's patch sets warn\)[^\n]*while it is main's only commit, make it again: fix the files in the lab's clone and amend that commit there/,
            );
        });
    });

    it("the lab's repository made with git init (a working tree), not --bare: named, here and by --through", async () => {
        await atShop(0, async (root) => {
            const { bareRepo } = shopLayout(root);
            await git(["init", "--quiet", "--initial-branch=main", bareRepo]);
            fs.cpSync(path.join(__dirname, "..", "gitrepo", "shop"), bareRepo, { recursive: true });
            await git(["add", "-A"], bareRepo);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-m", "first"], bareRepo);
            const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: \S+shop-envs\.git was made with git init, not git init --bare: the git daemon serves \(and Argo CD reads\) a bare repository/,
            );
            const through = await runMain("verify", ["--root", root, "--through", "1", "--offline"]);
            assert.match(through.out, /shop-envs\.git holds no bare repository: verify --step 1 says what is there/);
        });
    });

    it("a first commit made in the lab's clone without base/kustomization.yaml (never added): named", async () => {
        await atShop(0, async (root) => {
            const { bareRepo, clone } = shopLayout(root);
            await git(["init", "--quiet", "--bare", "--shared=0644", "--initial-branch=main", bareRepo]);
            await git(["clone", "--quiet", bareRepo, clone]);
            fs.cpSync(path.join(__dirname, "..", "gitrepo", "shop"), clone, { recursive: true });
            await git(["add", "envs", "base/configmap.yaml"], clone);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-m", "shop"], clone);
            await git(["push", "--quiet", "origin", "main"], clone);
            const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: the first commit lacks base\/kustomization\.yaml, which is in your clone but was never committed \(git status shows what git add left out\), so its overlays do not render; while it is main's only commit, make it again: fix the files in the lab's clone and amend that commit there/,
            );
        });
    });

    const lab = path.join(__dirname, "..", "gitrepo", "shop");
    const envsRenamed = (work: string) => {
        fs.renameSync(path.join(work, "envs", "dev"), path.join(work, "envs", "development"));
        fs.renameSync(path.join(work, "envs", "prod"), path.join(work, "envs", "production"));
    };
    for (const [what, edit, later, hint] of [
        [
            "a namespace in base's kustomization.yaml",
            (work: string) => fs.appendFileSync(path.join(work, "base", "kustomization.yaml"), "namespace: shop\n"),
            undefined,
            /hint: the first commit renders shop-config into namespace shop \(namespace: in base\/kustomization\.yaml\): each environment's Application puts it in its own namespace/,
        ],
        [
            "a namespace written twice in base's kustomization.yaml (kustomize takes the last)",
            (work: string) => fs.appendFileSync(path.join(work, "base", "kustomization.yaml"), 'namespace: ""\nnamespace: shop\n'),
            undefined,
            /hint: the first commit renders shop-config into namespace shop \(namespace: in base\/kustomization\.yaml\): each environment's Application puts it in its own namespace/,
        ],
        [
            "the overlays in envs/development and envs/production",
            envsRenamed,
            undefined,
            /hint: the first commit has no envs\/dev or envs\/prod \(its envs\/: development, production\): the lab's overlays are envs\/dev and envs\/prod, the paths its Applications read; while it is main's only commit, make it again: fix the files in the lab's clone and amend that commit there/,
        ],
        [
            "base/kustomization.yaml left out",
            (work: string) => fs.rmSync(path.join(work, "base", "kustomization.yaml")),
            undefined,
            /hint: the first commit's overlays do not render \(envs\/dev at [0-9a-f]{7} does not render: [^\n]*\): kubectl kustomize envs\/dev and envs\/prod in the clone show why/,
        ],
        [
            "a namespace in base/configmap.yaml, taken out in a second commit",
            (work: string) => {
                const cm = path.join(work, "base", "configmap.yaml");
                fs.writeFileSync(cm, fs.readFileSync(cm, "utf8").replace("name: shop-config", "name: shop-config\n  namespace: default"));
            },
            (work: string) => fs.copyFileSync(path.join(lab, "base", "configmap.yaml"), path.join(work, "base", "configmap.yaml")),
            /hint: main's latest commit has base\/configmap\.yaml right, its first \([0-9a-f]{12}\) does not \(namespace holds "default"[^\n]*step 1 grades the first commit[^\n]*do step 1 over on the lab begun again/,
        ],
        [
            "base/kustomization.yaml left out, added in a second commit",
            (work: string) => fs.rmSync(path.join(work, "base", "kustomization.yaml")),
            (work: string) => fs.copyFileSync(path.join(lab, "base", "kustomization.yaml"), path.join(work, "base", "kustomization.yaml")),
            /hint: main's latest commit renders right, its first \([0-9a-f]{12}\) does not \(envs\/dev at [0-9a-f]{7} does not render[^\n]*do step 1 over on the lab begun again/,
        ],
        [
            "a README alone, the lab's files in a second commit",
            (work: string) => {
                for (const d of ["base", "envs"]) fs.rmSync(path.join(work, d), { recursive: true });
                fs.writeFileSync(path.join(work, "README.md"), "# shop\n");
            },
            (work: string) => fs.cpSync(lab, work, { recursive: true }),
            /hint: step 1 grades main's first commit, and it holds no base\/configmap\.yaml: the first commit is to hold the lab's files[^\n]*do step 1 over on the lab begun again/,
        ],
    ] as const)
        it(`a first commit with ${what}: the hint names it`, async () => {
            await atShop(0, async (root) => assert.match(await firstCommitByHand(root, edit, later), hint));
        });

    it("a wrong first commit made again as its hint says: step 1 done", async () => {
        await atShop(0, async (root) => {
            const { bareRepo } = shopLayout(root);
            await git(["init", "--quiet", "--bare", "--shared=0644", "--initial-branch=main", bareRepo]);
            const work = fs.mkdtempSync(path.join(os.tmpdir(), "first-"));
            const who = ["-c", "user.name=l", "-c", "user.email=l@x"];
            try {
                await git(["clone", "--quiet", bareRepo, work]);
                fs.cpSync(lab, work, { recursive: true });
                fs.renameSync(path.join(work, "envs"), path.join(work, "overlays"));
                await git(["add", "-A"], work);
                await git([...who, "commit", "--quiet", "-m", "first"], work);
                await git(["push", "--quiet", "origin", "main"], work);
                const wrong = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
                assert.match(wrong.stdout, /git add -A && git commit --amend --no-edit: a new commit on top would leave this one first/);
                // as the hint says: the files fixed, the commit amended, the bare repository made again, pushed
                fs.renameSync(path.join(work, "overlays"), path.join(work, "envs"));
                await git(["add", "-A"], work);
                await git([...who, "commit", "--quiet", "--amend", "--no-edit"], work);
                fs.rmSync(bareRepo, { recursive: true });
                await git(["init", "--quiet", "--bare", "--shared=0644", "--initial-branch=main", bareRepo]);
                await git(["push", "--quiet", "origin", "main"], work);
                const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
                assert.strictEqual(r.code, 0, r.out);
            } finally {
                fs.rmSync(work, { recursive: true, force: true });
            }
        });
    });

    it("a first commit whose overlays name their own destination's namespace (shop-dev, shop-prod): step 1 done", async () => {
        await atShop(0, async (root) => {
            const { bareRepo } = shopLayout(root);
            await git(["init", "--quiet", "--bare", "--shared=0644", "--initial-branch=main", bareRepo]);
            const work = fs.mkdtempSync(path.join(os.tmpdir(), "first-"));
            try {
                await git(["clone", "--quiet", bareRepo, work]);
                fs.cpSync(lab, work, { recursive: true });
                for (const e of ["dev", "prod"])
                    fs.appendFileSync(path.join(work, "envs", e, "kustomization.yaml"), `namespace: shop-${e}\n`);
                await git(["add", "-A"], work);
                await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-m", "first"], work);
                await git(["push", "--quiet", "origin", "main"], work);
                const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
                assert.strictEqual(r.code, 0, r.out);
            } finally {
                fs.rmSync(work, { recursive: true, force: true });
            }
        });
    });

    it("the base ConfigMap's file named configmap.yml: the hint names the file", async () => {
        await atShop(0, async (root) => {
            const out = await firstCommitByHand(root, (work) => {
                fs.renameSync(path.join(work, "base", "configmap.yaml"), path.join(work, "base", "configmap.yml"));
                const k = path.join(work, "base", "kustomization.yaml");
                fs.writeFileSync(k, fs.readFileSync(k, "utf8").replace("configmap.yaml", "configmap.yml"));
            });
            assert.match(out, /hint: the first commit has base\/configmap\.yml, not base\/configmap\.yaml, the file the lab names/);
        });
    });

    it("appset.yaml saved as appset.yml: the file is named, with the move", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            const yml = appsetFile.replace(/\.yaml$/, ".yml");
            fs.renameSync(appsetFile, yml);
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.ok(
                r.stdout.includes(
                    `hint: ${appsetFile} is not there, ${yml} is: the lab keeps the ApplicationSet you applied as appset.yaml (mv ${yml} ${appsetFile})`,
                ),
                r.stdout,
            );
        });
    });

    it("appset.yaml as a kind: List of the ApplicationSet passes; a misspelt kind is named", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            // what kubectl get applicationsets -o yaml (plural) writes: kubectl apply applies its item
            fs.writeFileSync(appsetFile, stringify({ apiVersion: "v1", kind: "List", items: [shopApplicationSet()], metadata: {} }));
            const list = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(list.code, 0, list.out);
            fs.writeFileSync(appsetFile, stringify({ ...shopApplicationSet(), kind: "Applicationset" }));
            const typo = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(typo.code, 1, typo.out);
            assert.match(
                typo.stdout,
                /hint: appset\.yaml's kind is "Applicationset", which kubectl apply does not know \(kinds are case-sensitive: no matches for kind\): the lab's file holds the ApplicationSet itself: write kind: ApplicationSet/,
            );
        });
    });

    it("{{revision}} unquoted in appset.yaml: the line and the quotes to write, no runtime warning", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            fs.writeFileSync(appsetFile, stringify(shopApplicationSet()).replace(/targetRevision: .*$/m, "targetRevision: {{revision}}"));
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /is not valid YAML \(line \d+: targetRevision: \{\{revision\}\} is not quoted, and YAML reads a value starting with \{ as a mapping \(kubectl apply: "yaml: invalid map key"\); quote it: targetRevision: '\{\{revision\}\}'\)/,
            );
            assert.doesNotMatch(r.stderr, /Warning/);
        });
    });

    it("goTemplate: true with {{env}} tags (no dot): named, with the form Go reads", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            fs.writeFileSync(appsetFile, stringify({ ...shopApplicationSet(), spec: { goTemplate: true, ...shopApplicationSet().spec } }));
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: the ApplicationSet sets goTemplate: true, but its template writes \{\{env\}\}: a Go template reads an element's key as \{\{\.env\}\}/,
            );
        });
    });

    it("a sync option beside CreateNamespace, or an element key the template reads: each named once", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            const set: any = shopApplicationSet();
            set.spec.template.spec.syncPolicy.syncOptions = ["CreateNamespace=true", "ServerSideApply=true"];
            fs.writeFileSync(appsetFile, stringify(set));
            const extra = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(extra.code, 1, extra.out);
            assert.match(
                extra.stdout,
                /hint: syncOptions holds \["CreateNamespace=true","ServerSideApply=true"\]: ServerSideApply=true beside CreateNamespace=true, which the lab's template has alone/,
            );
            const url: any = shopApplicationSet();
            for (const e of url.spec.generators[0].list.elements) e.url = "https://kubernetes.default.svc";
            url.spec.template.spec.destination.server = "{{url}}";
            fs.writeFileSync(appsetFile, stringify(url));
            const read = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(read.code, 1, read.out);
            assert.match(
                read.stdout,
                /hint: the elements carry "url", which the template reads \(\{\{url\}\}\): the lab's elements are env and revision alone/,
            );
        });
    });

    it("automated.enabled: true and allowEmpty: false are automated; a destination server Argo CD does not know is named", async () => {
        await atShop(2, async (root) => {
            const { appsetFile } = shopLayout(root);
            const set: any = shopApplicationSet();
            set.spec.template.spec.syncPolicy.automated = { enabled: true, ...set.spec.template.spec.syncPolicy.automated };
            fs.writeFileSync(appsetFile, stringify(set));
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
            // allowEmpty: false is Argo CD's default too (GetAllowEmpty); true is not the lab's
            set.spec.template.spec.syncPolicy.automated.allowEmpty = false;
            fs.writeFileSync(appsetFile, stringify(set));
            const empty = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(empty.code, 0, empty.out);
            set.spec.template.spec.syncPolicy.automated.allowEmpty = true;
            fs.writeFileSync(appsetFile, stringify(set));
            const allowed = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(allowed.code, 1, allowed.out);
            assert.match(allowed.stdout, /automated holds allowEmpty beside prune and selfHeal/);
            delete set.spec.template.spec.syncPolicy.automated.allowEmpty;
            set.spec.template.spec.destination.server = "https://kubernetes.default.svc/";
            fs.writeFileSync(appsetFile, stringify(set));
            const slash = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(slash.code, 0, `the in-cluster URL with a trailing slash is the same cluster: ${slash.out}`);
            set.spec.template.spec.destination.server = "https://127.0.0.1:6443";
            fs.writeFileSync(appsetFile, stringify(set));
            const wrong = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(wrong.code, 1, wrong.out);
            assert.match(wrong.stdout, /hint: server holds "https:\/\/127\.0\.0\.1:6443": the cluster Argo CD itself runs in/);
        });
    });

    it("an undo made by hand, or an empty 'revert': the hint says git revert's way", async () => {
        const root = await rootAt(6);
        const layout = shopLayout(root);
        try {
            const kustomization = path.join(layout.clone, "envs/dev/kustomization.yaml");
            const before = fs.readFileSync(kustomization, "utf8");
            const commit = async (message: string, allowEmpty = false) => {
                await git(["commit", "--quiet", ...(allowEmpty ? ["--allow-empty"] : ["-a"]), "-m", message], layout.clone);
                await git(["push", "--quiet", "origin", "HEAD:main"], layout.clone);
                return git(["rev-parse", "HEAD"], layout.clone);
            };
            await git(["pull", "--quiet", "origin", "main"], layout.clone);
            fs.writeFileSync(kustomization, addMissingResource(before));
            const bad = await commit("dev: add missing.yaml");
            fs.writeFileSync(kustomization, before);
            const undo = await commit("undo by hand");
            const promote = JSON.parse(fs.readFileSync(layout.resultFile("promote"), "utf8"));
            const revert = (revert_commit: string) =>
                fs.writeFileSync(
                    layout.resultFile("revert"),
                    JSON.stringify({
                        bad_commit: bad,
                        revert_commit,
                        dev_error: "missing.yaml: no such file",
                        prod_revision_during: promote.to,
                    }),
                );
            revert(undo);
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: revert_commit takes bad_commit's change out, but its message lacks the line git revert writes [^\n]*git revert it, then git revert [0-9a-f]{12}/,
            );
            revert(await commit(`Revert "dev: add missing.yaml"\n\nThis reverts commit ${bad}.`, true));
            const empty = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(empty.code, 1, empty.out);
            assert.match(empty.stdout, /hint: revert_commit changes nothing in envs\/dev\/kustomization\.yaml/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("the revert reverted: step 7 names the missing file", async () => {
        const root = await rootAt(8);
        const { clone } = shopLayout(root);
        try {
            await git(["pull", "--quiet", "origin", "main"], clone);
            await git(["revert", "--no-edit", "HEAD"], clone);
            await git(["push", "--quiet", "origin", "HEAD:main"], clone);
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 7 revert: not done \(as the lab stands, at step 8\): [^\n]*; hint: main's envs\/dev does not render again: [^\n]*revert that commit too/,
            );
            const full = await runMain("verify", ["--root", root, "--through", "7", "--offline"]);
            assert.match(
                full.stdout,
                /found: +envs\/dev at [0-9a-f]{7} does not render: its kustomization\.yaml lists missing\.yaml in resources, and the commit has no such file\n/,
            );
            assert.doesNotMatch(full.stdout, /evalsymlink|run\.go/, "kustomize's log line, not said to a learner");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("an incident commit whose prod overlay sets the flag off, or that does not render: the hint names the commit, not a refresh", async () => {
        await atShop(2, async (root) => {
            const layout = shopLayout(root);
            const commit = async (edit: () => void, message: string) => {
                edit();
                await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", message], layout.clone);
                await git(["push", "-q", "origin", "HEAD:main"], layout.clone);
                return git(["rev-parse", "HEAD"], layout.clone);
            };
            const file = (p: string) => path.join(layout.clone, p);
            const set = (p: string, from: string, to: string) =>
                fs.writeFileSync(file(p), fs.readFileSync(file(p), "utf8").replace(from, to));
            const overridden = await commit(() => {
                set("base/configmap.yaml", 'FEATURE_CHECKOUT_V2: "off"', 'FEATURE_CHECKOUT_V2: "on"');
                fs.appendFileSync(
                    file("envs/prod/kustomization.yaml"),
                    '  - target:\n      kind: ConfigMap\n      name: shop-config\n    patch: |-\n      - op: replace\n        path: /data/FEATURE_CHECKOUT_V2\n        value: "off"\n',
                );
            }, "on, but not in prod");
            fs.writeFileSync(layout.resultFile("incident"), JSON.stringify({ commit: overridden, dev_value: "on", prod_value: "off" }));
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: [0-9a-f]{12} renders FEATURE_CHECKOUT_V2 "off" in envs\/prod \(its overlay sets it over base\?\), so shop-prod shows no "on" to read/,
            );
            // the override taken out in a commit of its own: that one is not the incident, nor the one before it
            const prodFile = file("envs/prod/kustomization.yaml");
            const prodBefore = execFileSync("git", ["show", `${overridden}^:envs/prod/kustomization.yaml`], { cwd: layout.clone });
            const mended = await commit(() => fs.writeFileSync(prodFile, prodBefore), "prod on too");
            fs.writeFileSync(layout.resultFile("incident"), JSON.stringify({ commit: mended, dev_value: "on", prod_value: "on" }));
            const m = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.match(
                m.stdout,
                new RegExp(
                    `the commit that turned it on \\(${overridden.slice(0, 12)}\\) does not render it on in both environments .*turn the flag off in base/configmap\\.yaml in one commit`,
                ),
            );
            // incident.json written with the commit before the incident (its base off): no overlay is blamed, nothing reverted
            const before = await git(["rev-parse", `${overridden}^`], layout.clone);
            fs.writeFileSync(layout.resultFile("incident"), JSON.stringify({ commit: before, dev_value: "off", prod_value: "off" }));
            const early = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(early.code, 1, early.out);
            assert.doesNotMatch(early.stdout, /its overlay sets it over base|git revert/);
            const broken = await commit(
                () => fs.appendFileSync(file("base/kustomization.yaml"), "  - missing.yaml\n"),
                "a file that is not there",
            );
            fs.writeFileSync(layout.resultFile("incident"), JSON.stringify({ commit: broken, dev_value: "off", prod_value: "off" }));
            const b = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.match(b.stdout, /hint: [0-9a-f]{12} does not render envs\/dev \([^\n]*\): Argo CD cannot render it/);
            assert.doesNotMatch(b.stdout, /refresh the Applications/);
        });
    });

    it("an incident commit made in the daemon's clone: the hint says that clone cannot push", async () => {
        await atShop(3, async (root) => {
            const layout = shopLayout(root);
            const daemonClone = path.join(root, "clones", "shop-envs");
            await git(["clone", "--quiet", layout.bareRepo, daemonClone]);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "--allow-empty", "-m", "made here"], daemonClone);
            const sha = await git(["rev-parse", "HEAD"], daemonClone);
            editResult(layout.resultFile("incident"), { commit: sha });
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: ${sha.slice(0, 12)} is a commit of ${daemonClone}, a clone of the git daemon, which is read-only \\(its push is refused\\): make the change in the lab's clone \\(${layout.clone}\\) and push from there`,
                ),
            );
        });
    });

    it("promote.to read from the clone's own release/prod, which the push did not move: the hint says so", async () => {
        await atShop(6, async (root) => {
            const layout = shopLayout(root);
            const promote = JSON.parse(fs.readFileSync(layout.resultFile("promote"), "utf8"));
            editResult(layout.resultFile("promote"), { to: promote.from });
            const r = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: release\/prod in the repository is at incident\.commit already \(the promotion was pushed\), but promote\.to holds [0-9a-f]{12}, where it stood before \(promote\.from\): read from your clone's own release\/prod/,
            );
            assert.doesNotMatch(r.stdout, /can still fast-forward/);
        });
    });

    it("a promotion pushed from the daemon's clone: the hint names the lab's clone", async () => {
        await atShop(5, async (root) => {
            const layout = shopLayout(root);
            const daemonClone = path.join(root, "clones", "shop-envs");
            await git(["clone", "--quiet", layout.bareRepo, daemonClone]);
            // its push of main onto release/prod is refused (the daemon reads only): release/prod stays where it was
            const from = await git(["rev-parse", "origin/release/prod"], daemonClone);
            const to = await git(["rev-parse", "origin/main"], daemonClone);
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to }));
            const r = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.ok(
                r.stdout.includes(
                    `fast-forward release/prod itself (git push origin <commit>:release/prod from the lab's clone (${layout.clone}): ${daemonClone} is a clone of the git daemon, which is read-only (its push is refused))`,
                ),
                r.stdout,
            );
        });
    });

    it("an incident commit never pushed: the hint says push it", async () => {
        const root = await rootAt(3);
        const layout = shopLayout(root);
        try {
            await git(["commit", "--quiet", "--allow-empty", "-m", "not pushed"], layout.clone);
            const sha = await git(["rev-parse", "HEAD"], layout.clone);
            editResult(layout.resultFile("incident"), { commit: sha });
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `incident\\.commit is a commit of the repository; hint: ${sha.slice(0, 12)} is a commit of your clone that was never pushed: git push origin`,
                ),
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("prod read before the pin synced: the hint says to wait for it", async () => {
        await atShop(4, async (root) => {
            editResult(shopLayout(root).resultFile("pin"), { prod_value_after_pin: "on" });
            const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /pin\.prod_value_after_pin is off; hint: on is the incident's value, read before shop-prod was synced to the pin: wait until/,
            );
        });
    });

    it("a cherry-picked promotion, then a merge: neither is a fast-forward", async () => {
        const root = await rootAt(5);
        const layout = shopLayout(root);
        const { clone } = layout;
        const incident = JSON.parse(fs.readFileSync(layout.resultFile("incident"), "utf8")).commit;
        const from = JSON.parse(fs.readFileSync(layout.resultFile("pin"), "utf8")).release_prod_initial;
        const promoted = async () => {
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/release/prod"], clone);
            return runMain("verify", ["--root", root, "--step", "6", "--offline"]);
        };
        try {
            await git(["checkout", "--quiet", "-B", "promote", "origin/release/prod"], clone);
            await git(["cherry-pick", incident], clone);
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to: await git(["rev-parse", "HEAD"], clone) }));
            const copy = await promoted();
            assert.strictEqual(copy.code, 1, copy.out);
            assert.match(
                copy.stdout,
                /promote\.to is incident\.commit; hint: promote\.to is a copy of incident\.commit \(a cherry-pick.*: start the lab over to promote again \(gitops-lab simulate --reset --root (\S+) \(it takes down every lab under the root\), then gitops-lab simulate --root \1 --through 5 --serve/,
            );
            assert.ok(
                copy.stdout.includes(`simulate --reset --root ${root} (`),
                "the reset names this lab's root: --reset takes only --root",
            );
            // promote.json right, release/prod at the copy: the check of release/prod says it is a cherry-pick
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to: incident }));
            const tipCopy = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(tipCopy.code, 1, tipCopy.out);
            assert.match(
                tipCopy.stdout,
                /hint: release\/prod holds a cherry-pick of promote\.to \(its change, another commit\), not promote\.to itself/,
            );
            // a merge of the incident commit on top brings it in from the side: still no fast-forward (git merge --no-ff is the same)
            await git(["merge", "--no-edit", incident], clone);
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to: incident }));
            const merged = await promoted();
            assert.strictEqual(merged.code, 1, merged.out);
            assert.match(
                merged.stdout,
                /release\/prod is at promote\.to \(its history never rewritten\); hint: release\/prod reached promote\.to by a merge, not a fast-forward/,
            );
            // promote.json naming the merge commit itself: it is a merge, not a promotion gone too far
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to: await git(["rev-parse", "HEAD"], clone) }));
            const mergeNamed = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.match(
                mergeNamed.stdout,
                /promote\.to is incident\.commit; [^\n]*hint: promote\.to is a merge commit \(git merge --no-ff/,
                mergeNamed.out,
            );
            assert.doesNotMatch(mergeNamed.stdout, /went too far/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a promotion by squash merge: named as such, with or without git's message", async () => {
        await atShop(5, async (root) => {
            const layout = shopLayout(root);
            const { clone } = layout;
            const incident = JSON.parse(fs.readFileSync(layout.resultFile("incident"), "utf8")).commit;
            const from = JSON.parse(fs.readFileSync(layout.resultFile("pin"), "utf8")).release_prod_initial;
            await git(["checkout", "--quiet", "-B", "promote", "origin/release/prod"], clone);
            await git(["merge", "--quiet", "--squash", incident], clone);
            await git(["commit", "--quiet", "--no-edit"], clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/release/prod"], clone);
            const squash = await git(["rev-parse", "HEAD"], clone);
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to: squash }));
            const named = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(named.code, 1, named.out);
            assert.match(
                named.stdout,
                /promote\.to is incident\.commit; hint: promote\.to is a copy of incident\.commit \(a squash merge: its change, another commit\)[^\n]*start the lab over to promote again/,
            );
            // promote.json naming the incident commit, release/prod at the squash: the check of release/prod says so
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to: incident }));
            const tip = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.match(tip.stdout, /hint: release\/prod holds a squash merge of promote\.to \(its change, another commit\)/, tip.out);
            // committed with a message of one's own: the same files on the same parent are still a copy
            await git(["commit", "--quiet", "--amend", "-m", "promote the checkout flag"], clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/promote"], clone);
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to: await git(["rev-parse", "HEAD"], clone) }));
            const ownMessage = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.match(
                ownMessage.stdout,
                /promote\.to is a copy of incident\.commit \(a squash merge \(or a cherry-pick\)/,
                ownMessage.out,
            );
        });
    });

    it("promoted and graded before Argo CD saw the push: the hint says shop-prod is behind release/prod, and to refresh", async () => {
        const at = await labAt(5);
        try {
            const { clone, resultFile } = at.lab.layout;
            // shop-prod and its ConfigMap as they stand before the push, kept so: Argo CD has not polled since
            const before = await at.cluster.getApplication("shop-prod");
            const cm = await at.cluster.getConfigMap("shop-prod", "shop-config");
            const unseen = Object.assign(Object.create(at.cluster), {
                getApplication: async (name: string, ns?: string) => (name === "shop-prod" ? before : at.cluster.getApplication(name, ns)),
                getConfigMap: async (ns: string, name: string) => (ns === "shop-prod" ? cm : at.cluster.getConfigMap(ns, name)),
            }) as typeof at.cluster;
            const incident = JSON.parse(fs.readFileSync(resultFile("incident"), "utf8")).commit;
            const from = await git(["rev-parse", "origin/release/prod"], clone);
            await git(["push", "-q", "origin", `${incident}:refs/heads/release/prod`], clone);
            fs.writeFileSync(resultFile("promote"), JSON.stringify({ from, to: incident }));
            const r = (await verifyShop({ layout: at.lab.layout, through: 6, cluster: unseen })).find((c) =>
                c.check.startsWith("live shop-prod FEATURE_CHECKOUT_V2"),
            )!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^shop-prod is still at [0-9a-f]{12}, while release\/prod is at [0-9a-f]{12}, which renders it on: Argo CD has not seen the push yet \(it polls every 3 minutes\); refresh it: kubectl -n argocd annotate application shop-prod argocd\.argoproj\.io\/refresh=normal --overwrite/,
            );
        } finally {
            await at.stop();
        }
    });

    it("promoted past the incident commit: the hint says it went too far", async () => {
        await atShop(8, async (root) => {
            const layout = shopLayout(root);
            const main = await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]);
            await git(["--git-dir", layout.bareRepo, "update-ref", "refs/heads/release/prod", main]);
            const file = layout.resultFile("promote");
            fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), to: main }));
            const r = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: promote\.to comes after incident\.commit: the promotion went too far/);
        });
    });

    it("promote.to a commit before incident.commit: the hint says to fast-forward on to it", async () => {
        // release/prod not moved yet (the lab at step 5), promote.json written with the commit before the incident
        await atShop(5, async (root) => {
            const layout = shopLayout(root);
            const { commit } = JSON.parse(fs.readFileSync(layout.resultFile("incident"), "utf8"));
            const before = await git(["--git-dir", layout.bareRepo, "rev-parse", `${commit}^`]);
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from: before, to: before }));
            const r = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: promote\\.to comes before incident\\.commit: the step promotes incident\\.commit itself; release/prod can still fast-forward on to it: git push origin ${commit.slice(0, 12)}:refs/heads/release/prod`,
                ),
            );
        });
    });

    it("promote.from and promote.to swapped: the hint says so", async () => {
        await atShop(6, async (root) => {
            const file = shopLayout(root).resultFile("promote");
            const { from, to } = JSON.parse(fs.readFileSync(file, "utf8"));
            fs.writeFileSync(file, JSON.stringify({ from: to, to: from }));
            const r = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: promote\.from and promote\.to are swapped: from is where release\/prod was before the promotion/);
        });
    });

    it("step 7's bad commit pushed to release/prod: the hint says where it went and how back", async () => {
        await atShop(6, async (root) => {
            const { clone } = shopLayout(root);
            const bad = (await badCommitByHand(clone, { branch: "release/prod" })).slice(0, 12);
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: ${bad} on release/prod adds missing\\.yaml to envs/dev: step 7's bad commit went to release/prod, not main .*git revert ${bad}, pushed to release/prod`,
                ),
            );
        });
    });

    it("step 7 done before step 6: prod_revision_during written as promote.to is not taken", async () => {
        await atShop(5, async (root) => {
            const layout = shopLayout(root);
            const { clone } = layout;
            // step 7 first: the bad commit and its revert, both on main
            const bad = await badCommitByHand(clone);
            await git([...LEARNER, "revert", "--no-edit", "HEAD"], clone);
            await git(["push", "--quiet", "origin", "main"], clone);
            const revert = await git(["rev-parse", "HEAD"], clone);
            // then step 6, a minute later by the bare repository's reflog (the push's own date)
            const from = await git(["rev-parse", "origin/release/prod"], clone);
            const to = JSON.parse(fs.readFileSync(layout.resultFile("incident"), "utf8")).commit;
            await git(["push", "--quiet", "origin", `${to}:refs/heads/release/prod`], clone, {
                GIT_COMMITTER_DATE: `@${Math.floor(Date.now() / 1000) + 60} +0000`,
            });
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to }));
            fs.writeFileSync(
                layout.resultFile("revert"),
                JSON.stringify({
                    bad_commit: bad,
                    revert_commit: revert,
                    dev_error: "accumulating resources from 'missing.yaml': open envs/dev/missing.yaml: no such file or directory",
                    prod_revision_during: to,
                }),
            );
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 7 revert: not done: prod_revision_during is promote\.to; hint: release\/prod reached promote\.to only after revert_commit was on main \(the revert at \S+Z, the promotion at \S+Z\): step 7 was done before step 6/,
            );
        });
    });

    it("incident.commit a feature branch's commit that a merge brought onto main: the merge is named", async () => {
        await atShop(2, async (root) => {
            const layout = shopLayout(root);
            const { clone } = layout;
            const as = ["-c", "user.name=l", "-c", "user.email=l@x"];
            await git(["fetch", "--quiet"], clone);
            await git(["checkout", "--quiet", "-B", "feature", "origin/main"], clone);
            const base = path.join(clone, "base", "configmap.yaml");
            fs.writeFileSync(base, switchFeatureOn(fs.readFileSync(base, "utf8")));
            await git([...as, "commit", "--quiet", "-am", "checkout v2 on"], clone);
            const feature = await git(["rev-parse", "HEAD"], clone);
            await git(["checkout", "--quiet", "-B", "main", "origin/main"], clone);
            await git([...as, "merge", "--quiet", "--no-ff", "--no-edit", "feature"], clone);
            await git(["push", "--quiet", "origin", "main"], clone);
            const merge = await git(["rev-parse", "HEAD"], clone);
            const write = (commit: string) =>
                fs.writeFileSync(layout.resultFile("incident"), JSON.stringify({ commit, dev_value: "on", prod_value: "on" }));
            write(feature);
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `^step 3 incident: not done: incident\\.commit is on main; hint: incident\\.commit ${feature.slice(0, 12)} is a commit of a side branch that main took in by the merge ${merge.slice(0, 12)}; main never stood at it, so Argo CD synced the merge, not it: write ${merge} as incident\\.commit`,
                ),
            );
            // the merge itself: main stood at it, Argo CD synced it
            write(merge);
            const m = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(m.code, 0, m.out);
        });
    });

    it("release/prod deleted and pushed anew at promote.to: not a promotion, said so", async () => {
        await atShop(5, async (root) => {
            const { layout, clone, from, to } = await promotionEnds(root);
            await git(["push", "--quiet", "origin", "--delete", "release/prod"], clone);
            await git(["push", "--quiet", "origin", `${to}:refs/heads/release/prod`], clone);
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to }));
            const r = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 6 promote: not done: release\/prod was moved to promote\.to, not deleted and made again; hint: release\/prod was deleted and pushed anew at [0-9a-f]{12} \(its log in the repository begins there\), not moved from promote\.from/,
            );
        });
    });

    it("the promotion made in the clone and never pushed: the hint says to push it", async () => {
        await atShop(5, async (root) => {
            const { layout, clone, from, to } = await promotionEnds(root);
            await git(["checkout", "--quiet", "-B", "release/prod", "origin/release/prod"], clone);
            await git(["reset", "--quiet", "--hard", to], clone);
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to }));
            const r = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: your clone's release\/prod is at promote\.to, but it was never pushed: .*git push origin release\/prod/,
            );
        });
    });

    it("the revert pushed, shop-dev not compared again: the hint says to refresh it", async () => {
        const at = await labAt(6);
        try {
            const { root, clone } = at.lab.layout;
            const kubeconfig = path.join(root, "kubeconfig");
            fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
            const bad = await badCommitByHand(clone);
            const error = async () =>
                ((await at.cluster.getApplication("shop-dev"))?.status?.conditions ?? []).find((c) => c.type === "ComparisonError");
            await expect(
                holds("shop-dev shows the ComparisonError", async () => {
                    await at.cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "hard" });
                    return !!(await error());
                }),
                { timeoutMs: 60_000 },
            );
            // Argo CD stopped before the revert: it compares nothing again (its poll would, in its own time)
            const dev = String((await error())!.message);
            await at.lab.argo.stop();
            await git([...LEARNER, "revert", "--no-edit", "HEAD"], clone);
            await git(["push", "--quiet", "origin", "main"], clone);
            const promoted = JSON.parse(fs.readFileSync(at.lab.layout.resultFile("promote"), "utf8")).to;
            fs.writeFileSync(
                at.lab.layout.resultFile("revert"),
                JSON.stringify({
                    bad_commit: bad,
                    dev_error: dev,
                    prod_revision_during: promoted,
                    revert_commit: await git(["rev-parse", "HEAD"], clone),
                }),
            );
            const r = await runMain("verify", ["--root", root, "--kubeconfig", kubeconfig, "--step", "7"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /renders envs\/dev now: the error is an earlier commit's, which Argo CD has not compared again yet; refresh it: kubectl -n argocd annotate application shop-dev argocd\.argoproj\.io\/refresh=hard --overwrite/,
            );
        } finally {
            await at.stop();
        }
    });

    it("step 7's bad commit pushed together with its revert: main never stood at it, said", async () => {
        await atShop(6, async (root) => {
            const layout = shopLayout(root);
            const { clone } = layout;
            const bad = await badCommitByHand(clone, { push: false });
            await git([...LEARNER, "revert", "--no-edit", "HEAD"], clone);
            const revert = await git(["rev-parse", "HEAD"], clone);
            await git(["push", "--quiet", "origin", "main"], clone);
            const promoted = JSON.parse(fs.readFileSync(layout.resultFile("promote"), "utf8")).to;
            const dev = "error: accumulating resources: accumulation err='accumulating resources from 'missing.yaml'";
            fs.writeFileSync(
                layout.resultFile("revert"),
                JSON.stringify({ bad_commit: bad, dev_error: dev, prod_revision_during: promoted, revert_commit: revert }),
            );
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: bad_commit ${bad.slice(0, 12)} was pushed together with the commits after it \\(its revert\\), so main never stood at it`,
                ),
            );
        });
    });

    it("a tag named release/prod beside the branch: the hint says git reads the tag", async () => {
        await atShop(8, async (root) => {
            const { clone } = shopLayout(root);
            const pin = JSON.parse(fs.readFileSync(shopLayout(root).resultFile("pin"), "utf8")).release_prod_initial;
            await git(["tag", "release/prod", pin], clone);
            await git(["push", "--quiet", "origin", "refs/tags/release/prod"], clone);
            const r = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: a tag named release\/prod stands beside the branch: git reads the tag for the short name/);
            await git(["push", "--quiet", "origin", ":refs/tags/release/prod"], clone);
            assert.strictEqual((await runMain("verify", ["--root", root, "--offline"])).code, 0);
        });
    });

    it("release/prod promoted again to main after the revert: the hint says it now holds bad_commit", async () => {
        await atShop(8, async (root) => {
            const { clone } = shopLayout(root);
            await git(["fetch", "--quiet"], clone);
            await git(["push", "--quiet", "origin", "origin/main:refs/heads/release/prod"], clone);
            const r = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: release\/prod was moved on after step 7 \(to [0-9a-f]{12}, main's tip\) and now holds bad_commit in its history/,
            );
        });
    });

    it("bad_commit and revert_commit swapped: the hint says so", async () => {
        await atShop(7, async (root) => {
            const file = shopLayout(root).resultFile("revert");
            const r0 = JSON.parse(fs.readFileSync(file, "utf8"));
            fs.writeFileSync(file, JSON.stringify({ ...r0, bad_commit: r0.revert_commit, revert_commit: r0.bad_commit }));
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: bad_commit and revert_commit are swapped: bad_commit is the commit that added missing\.yaml/);
        });
    });

    it("a root whose simulate was killed half-way: the line says the same command resumes it", async () => {
        await atShop(3, async (root) => {
            const gone = spawnSync("true").pid!; // a PID that has ended
            fs.writeFileSync(lockFile(root), `${gone}\n`);
            const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `\\(a gitops-lab simulate on \\S+ stopped half-way: its PID ${gone} is gone; the same simulate command resumes it\\)\\n$`,
                ),
            );
        });
    });

    it("promote.from read after the push (from = to): release/prod is at promote.to, and the from check says what is wrong", async () => {
        await atShop(6, async (root) => {
            const file = shopLayout(root).resultFile("promote");
            const { to } = JSON.parse(fs.readFileSync(file, "utf8"));
            editResult(file, { from: to });
            const r = await runMain("verify", ["--root", root, "--through", "6", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /PASS {2}release\/prod is at promote\.to/);
            assert.match(r.stdout, /FAIL {2}promote\.from is pin\.release_prod_initial/);
            const step = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.match(
                step.stdout,
                /hint: found [0-9a-f]{12} is the value of [^;]*; promote\.from is promote\.to, release\/prod read after the push: from is where release\/prod stood before the promotion, pin\.release_prod_initial/,
            );
            assert.doesNotMatch(step.stdout, /fast-forward works only/);
        });
    });

    it("a SHA no clone has: the hint says so, and the table names it for the checks that needed it", async () => {
        await atShop(7, async (root) => {
            const typo = "1234567890abcdef1234567890abcdef12345678";
            editResult(shopLayout(root).resultFile("revert"), { bad_commit: typo });
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: revert\.bad_commit holds 1234567890ab, which neither the repository nor your clone has/);
            const table = await runMain("verify", ["--root", root, "--offline"]);
            assert.match(
                table.stdout,
                /found: +1234567890abcdef1234567890abcdef12345678 is no commit of the repository \(fix the value that holds it first\)/,
            );
            assert.doesNotMatch(table.stdout, /fatal:|exit 128/);
        });
    });

    it("a commit of another key or another branch: the hint says whose it is", async () => {
        await atShop(8, async (root) => {
            const layout = shopLayout(root);
            const { from } = JSON.parse(fs.readFileSync(layout.resultFile("promote"), "utf8"));
            editResult(layout.resultFile("report"), { promoted_commit: from });
            const r = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            const short = from.slice(0, 12);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: found ${short} is the value of pin\\.release_prod_initial and promote\\.from; report\\.promoted_commit is to be promote\\.json's to `,
                ),
            );
            const table = await runMain("verify", ["--root", root, "--through", "8", "--offline"]);
            assert.match(table.stdout, new RegExp(`found: +${from} \\(the value of pin\\.release_prod_initial and promote\\.from\\)`));

            // commits pushed to a branch of their own: its tip, and one before it
            await git(["commit", "--quiet", "--allow-empty", "-m", "elsewhere"], layout.clone);
            const before = await git(["rev-parse", "HEAD"], layout.clone);
            await git(["commit", "--quiet", "--allow-empty", "-m", "elsewhere again"], layout.clone);
            const tip = await git(["rev-parse", "HEAD"], layout.clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/side"], layout.clone);
            editResult(layout.resultFile("report"), { promoted_commit: tip });
            const atTip = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            assert.match(atTip.stdout, new RegExp(`hint: found ${tip.slice(0, 12)} is the tip of side; `));
            editResult(layout.resultFile("report"), { promoted_commit: before });
            const onSide = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            assert.match(onSide.stdout, new RegExp(`hint: found ${before.slice(0, 12)} is on side only, a branch the lab does not read; `));
        });
    });

    it("a bare repository under another name, a lab's repository removed or never made: each said as it is", async () => {
        await atShop(0, async (root) => {
            // another lab's repository beside it (the tenants lab's platform.git) is never offered for the shop's
            const layout = shopLayout(root);
            await git(["init", "--quiet", "--bare", "--initial-branch=main", path.join(layout.bareDir, "platform.git")]);
            const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.doesNotMatch(r.stdout, /platform\.git/);
        });
        await atShop(0, async (root) => {
            const layout = shopLayout(root);
            const other = layout.bareRepo.replace(/\.git$/, "");
            await git(["init", "--quiet", "--bare", "--initial-branch=main", other]);
            const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: the bare repository is at ${other}, and the lab's .* is ${layout.bareRepo}: mv ${other} ${layout.bareRepo}, then`,
                ),
            );
            assert.doesNotMatch(r.stdout, /not begun/, "its own hint says what is there");
        });
        await atShop(4, async (root) => {
            const layout = shopLayout(root);
            fs.rmSync(layout.bareRepo, { recursive: true, force: true });
            const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `\\(the shop lab under ${root} is at step 4, but its repository ${layout.bareRepo} is gone: put it back, or start over`,
                ),
            );
            assert.doesNotMatch(r.stdout, /not begun/);
        });
        // the ApplicationSet applied (appset.yaml written) before step 1's repository was ever made: step 1 first, not "gone"
        await atShop(0, async (root) => {
            const layout = shopLayout(root);
            fs.mkdirSync(layout.workDir, { recursive: true });
            fs.writeFileSync(layout.appsetFile, stringify(shopApplicationSet()));
            const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `\\(step 1 comes first: the repository ${layout.bareRepo} is not there, never made\\?, and an ApplicationSet applied before it syncs once main is pushed: make it, push main, then verify --step 1\\)`,
                ),
            );
            assert.doesNotMatch(r.stdout, /is gone|--reset/);
        });
    });

    it("a report with a wrong key: the hint names the key", async () => {
        await atShop(8, async (root) => {
            const file = shopLayout(root).resultFile("report");
            const report = JSON.parse(fs.readFileSync(file, "utf8"));
            const step8 = async (edit: object) => {
                fs.writeFileSync(file, JSON.stringify({ ...report, ...edit }));
                return runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            };
            const tracks = await step8({ prod_tracks: "main" });
            assert.strictEqual(tracks.code, 1, tracks.out);
            assert.match(
                tracks.stdout,
                /hint: prod_tracks holds "main": shop-prod's spec\.source\.targetRevision \(kubectl get application shop-prod -n argocd/,
            );
            const reached = await step8({ bad_commit_reached_prod: true });
            assert.strictEqual(reached.code, 1, reached.out);
            assert.match(
                reached.stdout,
                /hint: bad_commit_reached_prod holds true; git answers it: git fetch, then git merge-base --is-ancestor [0-9a-f]{40} origin\/release\/prod; echo \$\? \(0: true, 1: false\)/,
            );
        });
    });

    it("release/prod pushed as a tag: the hint says push the branch", async () => {
        const root = await rootAt(4);
        const { clone } = shopLayout(root);
        try {
            // the pin pushed to refs/tags/release/prod instead of the branch
            await git(["push", "--quiet", "origin", "origin/release/prod:refs/tags/release/prod", ":refs/heads/release/prod"], clone);
            const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /release\/prod exists; hint: release\/prod is a tag, not a branch: git push origin [0-9a-f]{12}:refs\/heads\/release\/prod, then git push origin :refs\/tags\/release\/prod/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given release/prod fast-forwarded too far, then the hint is a new commit, and a revert puts it right", async () => {
        const root = await rootAt(6);
        const { clone } = shopLayout(root);
        try {
            // one commit too many on release/prod, then pushed: the repository will not let it be rewound
            await git(["checkout", "--quiet", "-B", "too-far", "origin/release/prod"], clone);
            fs.writeFileSync(path.join(clone, "envs", "prod", "extra.txt"), "not promoted\n");
            await git(["add", "-A"], clone);
            await git(["commit", "--quiet", "-m", "one too many"], clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/release/prod"], clone);
            const past = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(past.code, 1, past.out);
            assert.match(
                past.stdout,
                /^step 6 promote: not done: release\/prod is at promote\.to .*hint: release\/prod went past promote\.to; the repository refuses to rewind it, as it should: put its files back with new commits \(git revert/,
            );
            await git(["revert", "--no-edit", "HEAD"], clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/release/prod"], clone);
            const back = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(back.code, 0, back.out);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given a check of step 4 that counts for step 5 when graded there, and fails, then step 4 is not done as the lab stands either", () => {
        const steps = shopSteps(shopLayout("/"));
        const flag = (step: number, ok: boolean): CheckResult => ({ step, check: "live shop-prod FEATURE_CHECKOUT_V2 is off", ok });
        const own: CheckResult = { step: 4, check: "pin.json exists and is JSON", ok: true };
        const now = [own, flag(4, false)];
        const failing = stepVerdict([], now, steps, 4, { at: 5, results: [own, flag(5, false)] });
        assert.strictEqual(failing.done, false, failing.line);
        const passing = stepVerdict([], now, steps, 4, { at: 5, results: [own, flag(5, true)] });
        assert.strictEqual(passing.done, true, passing.line);
    });

    it("an earlier step's check that only this step's work fails: named as that step's, with its hint", () => {
        const steps = shopSteps(shopLayout("/"));
        const flag: CheckResult = { step: 3, check: "live shop-prod FEATURE_CHECKOUT_V2 is off", ok: false };
        const own: CheckResult = { step: 4, check: "pin.json exists and is JSON", ok: true };
        // failing through step 4 only (through step 3 it passed): step 4's work, told as step 3's check
        const v = stepVerdict([{ ...flag, ok: true }], [flag, own], steps, 4);
        assert.strictEqual(v.done, false, v.line);
        assert.match(
            v.line,
            /^step 4 pin: not done: live shop-prod FEATURE_CHECKOUT_V2 is off \(step 3's check, which this step's work decides\); hint: /,
        );
        assert.ok(v.line.endsWith(`hint: ${steps[2]!.hint}`), v.line);
    });

    it("an earlier step's live failure comes first, unless a later step may cause it", async () => {
        const steps = shopSteps(shopLayout("/"));
        const graded = async (yields: boolean) => {
            const checks: Check<null>[] = [
                { step: 2, name: "live shop-dev is Synced", live: true, yieldsToLaterSteps: yields, run: async () => false },
                { step: 7, name: "revert_commit is a revert of bad_commit", run: async () => false },
            ];
            return stepVerdict([], await runChecks(checks, null, 7), steps, 7).missing?.check;
        };
        assert.strictEqual(await graded(false), "live shop-dev is Synced", "an ApplicationSet not applied: step 2 first");
        assert.strictEqual(await graded(true), "revert_commit is a revert of bad_commit", "a wrong revert: step 7's own check");
    });

    it("step 1 pushed to master: the hint names the branch and how to make it main", async () => {
        const root = await rootAt(1);
        await git(["--git-dir", shopLayout(root).bareRepo, "branch", "-m", "main", "master"]);
        const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: the lab's branch is main, the push made master: in the clone, git branch -m master main, then git push origin main\n$/,
        );
    });

    it("step 1's first commit broken, fixed by a second: the first is the one graded", async () => {
        const root = await rootAt(1);
        const { bareRepo } = shopLayout(root);
        const work = fs.mkdtempSync(path.join(os.tmpdir(), "first-commit-"));
        try {
            // main rebuilt as two commits: the first with prod's LOG_LEVEL wrong, the second as the lab's first was
            await git(["clone", "--quiet", bareRepo, work]);
            await git(["checkout", "--quiet", "--orphan", "again"], work);
            const prod = path.join(work, "envs/prod/kustomization.yaml");
            const right = fs.readFileSync(prod, "utf8");
            fs.writeFileSync(prod, right.replace('value: "warn"', 'value: "error"'));
            await git(["commit", "--quiet", "-am", "the overlays"], work);
            fs.writeFileSync(prod, right);
            await git(["commit", "--quiet", "-am", "prod's LOG_LEVEL fixed"], work);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/again"], work);
            await git(["--git-dir", bareRepo, "update-ref", "refs/heads/main", "refs/heads/again"]);
            await git(["--git-dir", bareRepo, "update-ref", "-d", "refs/heads/again"]);
            const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: main's latest commit renders right, its first \([0-9a-f]{12}\) does not: step 1 asks for a first commit that renders both overlays/,
            );
        } finally {
            fs.rmSync(work, { recursive: true, force: true });
        }
    });

    it("a template repoURL of this machine's address: the hint names the field", async () => {
        const root = await rootAt(2);
        const file = shopLayout(root).appsetFile;
        fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/repoURL: .*/, "repoURL: git://127.0.0.1:9418/shop-envs.git"));
        const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: repoURL holds "git:\/\/127\.0\.0\.1:9418\/shop-envs\.git": the repository as Argo CD's repo-server reaches it inside the cluster/,
        );
    });

    it("pin.release_prod_initial the incident commit itself: the hint says release/prod starts before it", async () => {
        const root = await rootAt(4);
        const layout = shopLayout(root);
        const incident = JSON.parse(fs.readFileSync(layout.resultFile("incident"), "utf8")).commit;
        const pin = JSON.parse(fs.readFileSync(layout.resultFile("pin"), "utf8"));
        fs.writeFileSync(layout.resultFile("pin"), JSON.stringify({ ...pin, release_prod_initial: incident }));
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /hint: pin\.release_prod_initial is incident\.commit itself: release\/prod starts at the commit before it/);
    });

    it("prod pinned to a commit in appset.yaml: the hint says a promotion moves the branch", async () => {
        const root = await rootAt(6);
        const file = shopLayout(root).appsetFile;
        const sha = await git(["--git-dir", shopLayout(root).bareRepo, "rev-parse", "release/prod"]);
        fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("revision: release/prod", `revision: ${sha}`));
        const r = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: the prod element names a commit \([0-9a-f]{12}\); prod tracks the branch release\/prod, and a promotion moves the branch/,
        );
    });

    it("a result file that is a folder is said to be one", async () => {
        const root = await rootAt(4);
        const file = shopLayout(root).resultFile("pin");
        fs.rmSync(file);
        fs.mkdirSync(file);
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /hint: it is not JSON \(it is a folder, not a file\): write \S+pin\.json: /);
    });

    it("given step 5's file not JSON, or step 4's missing, then --step names the file and what to write in it", async () => {
        const root = await rootAt(5);
        const layout = shopLayout(root);
        fs.writeFileSync(layout.resultFile("drift"), '{"uid": ');
        const drift = await runMain("verify", ["--root", root, "--step", "5", "--offline"]);
        assert.strictEqual(drift.code, 1, drift.out);
        assert.match(
            drift.stdout,
            /^step 5 drift: not done: drift\.json exists and is JSON; hint: it is not JSON \([^\n]+\): write \S+drift\.json: a JSON object with the keys [a-z_, ]+\n$/,
        );
        fs.rmSync(layout.resultFile("drift"));
        fs.rmSync(layout.resultFile("pin"));
        const pin = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(pin.code, 1, pin.out);
        assert.strictEqual(pin.stdout.split("\n").length, 2, pin.stdout);
        assert.match(
            pin.stdout,
            new RegExp(
                `^step 4 pin: not done: pin\\.json exists and is JSON; hint: change the ApplicationSet[^\\n]*; then write ${layout.resultFile("pin")} \\(there is none yet\\): a JSON object with the keys `,
            ),
        );
    });

    it("given a kubeconfig whose server does not answer, then --step says nothing answers there and what to do, not the step's hint", async () => {
        const root = await rootAt(3);
        const port = await freePort();
        // a kubeconfig of its own folder (the root's own is a served lab's: the test after this one)
        const kubeconfig = kubeconfigFor(fs.mkdtempSync(path.join(root, "elsewhere-")), `https://127.0.0.1:${port}`);
        const nothingAnswers = `the cluster answers; hint: [^\\n]*nothing answers at https://127\\.0\\.0\\.1:${port} \\(connection refused\\)[^\\n]*; or --offline to grade the files and repository only\\n$`;
        const r = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", kubeconfig]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, new RegExp(`^step 3 incident: not done: ${nothingAnswers}`));
        // a lab past the step (at 5, appset.yaml's prod on release/prod) says the same, not that step 2 comes first
        const past = await rootAt(5);
        const p = await runMain("verify", ["--root", past, "--step", "3", "--kubeconfig", kubeconfig]);
        assert.strictEqual(p.code, 1, p.out);
        assert.match(p.stdout, new RegExp(`^step 3 incident: not done \\(as the lab stands, at step 5\\): ${nothingAnswers}`));
    });

    it("the root's served kubeconfig while nothing serves it: the hint says to serve it again", async () => {
        await atShop(3, async (root) => {
            const kubeconfig = kubeconfigFor(root, `https://127.0.0.1:${await freePort()}`);
            const r = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", kubeconfig]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /the cluster answers; hint: \S+\/kubeconfig is the served lab's under \S+, and nothing serves it now \(its simulate --serve has stopped\); serve it again: gitops-lab simulate --root \S+ --serve, or --offline/,
            );
            // the same lab through a symlink to its folder: its own kubeconfig, not another lab's
            const link = `${root}-link`;
            fs.symlinkSync(root, link);
            try {
                const via = await runMain("verify", ["--root", link, "--step", "3", "--kubeconfig", kubeconfig]);
                assert.match(via.stdout, /nothing serves it now/);
                assert.doesNotMatch(via.stdout, /not of this one/);
            } finally {
                fs.rmSync(link, { force: true });
            }
        });
    });

    // given a copy of the served kubeconfig made in an earlier run (its port gone) while the lab writes another: named
    it("a stopped served tenants lab: serving it again is said with --lab tenants", async () => {
        await atTenants(1, async (root) => {
            const name = servedClusterName(root);
            const file = path.join(root, "kubeconfig");
            fs.writeFileSync(
                file,
                `apiVersion: v1\nkind: Config\nclusters: [{name: ${name}, cluster: {server: "http://127.0.0.1:${await freePort()}"}}]\nusers: [{name: ${name}, user: {token: x}}]\ncontexts: [{name: ${name}, context: {cluster: ${name}, user: ${name}}}]\ncurrent-context: ${name}\n`,
            );
            const r = await runMain("doctor", ["--kubeconfig", file]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.out, new RegExp(`serve it again: gitops-lab simulate --root ${root} --lab tenants --serve`));
        });
    });

    it("a copy of an earlier run's served kubeconfig: the lab's own is named", async () => {
        await atShop(3, async (root) => {
            const served = (file: string, port: number) => {
                const name = servedClusterName(root);
                fs.writeFileSync(
                    file,
                    `apiVersion: v1\nkind: Config\nclusters: [{name: ${name}, cluster: {server: "http://127.0.0.1:${port}"}}]\nusers: [{name: ${name}, user: {token: x}}]\ncontexts: [{name: ${name}, context: {cluster: ${name}, user: ${name}}}]\ncurrent-context: ${name}\n`,
                );
                return file;
            };
            served(path.join(root, "kubeconfig"), await freePort());
            const copy = served(path.join(fs.mkdtempSync(path.join(root, "mine-")), "kc-copy"), (await freePort()) + 1);
            // the lab stopped: its own kubeconfig does not answer either, so serving it again is said
            const stopped = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", copy]);
            assert.strictEqual(stopped.code, 1, stopped.out);
            assert.match(stopped.stdout, /nothing serves it now \(its simulate --serve has stopped\); serve it again/);
            // served: the copy's server is the earlier run's, and the lab's own is named
            const holder = spawn("sleep", ["120"], { stdio: "ignore" });
            try {
                fs.writeFileSync(lockFile(root), `${holder.pid}\n${SERVING}\n${procStat(holder.pid!)!.startTime}\n`);
                const r = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", copy]);
                assert.strictEqual(r.code, 1, r.out);
                assert.ok(
                    r.stdout.includes(
                        `the cluster answers; hint: ${copy} is a copy of this lab's served kubeconfig from an earlier run (its server http://127.0.0.1:`,
                    ) &&
                        r.stdout.includes(
                            `give --kubeconfig ${path.join(root, "kubeconfig")}, the one it writes, or copy it again, or --offline`,
                        ),
                    r.stdout,
                );
            } finally {
                holder.kill("SIGKILL");
                fs.rmSync(lockFile(root), { force: true });
            }
        });
    });

    it("the served kubeconfig switched to another cluster's context: said, with the way back", async () => {
        await atShop(3, async (root) => {
            const name = servedClusterName(root);
            const file = path.join(root, "kubeconfig");
            fs.writeFileSync(
                file,
                `apiVersion: v1\nkind: Config\nclusters: [{name: ${name}, cluster: {server: "http://127.0.0.1:${await freePort()}"}}, {name: kind-dev, cluster: {server: "https://127.0.0.1:38443"}}]\nusers: [{name: ${name}, user: {token: x}}]\ncontexts: [{name: ${name}, context: {cluster: ${name}, user: ${name}}}, {name: kind-dev, context: {cluster: kind-dev, user: ${name}}}]\ncurrent-context: kind-dev\n`,
            );
            const r = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", file]);
            assert.strictEqual(r.code, 1, r.out);
            assert.ok(
                r.stdout.includes(
                    `${file}'s current context is kind-dev, not the served lab's ${name}: kubectl --kubeconfig ${file} config use-context ${name}, or --offline`,
                ),
                r.stdout,
            );
        });
    });

    it("the lab's saved cluster given as the kubeconfig: said, with how to serve it", async () => {
        await atShop(3, async (root) => {
            const saved = path.join(root, "simulated-cluster.json");
            assert.ok(fs.existsSync(saved), "the lab keeps its cluster there");
            const r = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", saved]);
            assert.strictEqual(r.code, 1, r.out);
            assert.ok(
                r.stdout.includes(
                    `${saved} is a simulated lab's saved cluster (simulate keeps its state there), not a kubeconfig: the lab answers while served (gitops-lab simulate --root ${root} --serve), at ${path.join(root, "kubeconfig")}`,
                ),
                r.stdout,
            );
        });
        // a tenants lab's: served with its --lab
        await atTenants(2, async (root) => {
            const saved = path.join(root, "simulated-cluster.json");
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--kubeconfig", saved]);
            assert.strictEqual(r.code, 1, r.out);
            assert.ok(r.stdout.includes(`(gitops-lab simulate --root ${root} --lab tenants --serve)`), r.stdout);
        });
    });

    it("a served lab whose kubeconfig was removed: said, with the restart that writes it", async () => {
        await atShop(3, async (root) => {
            const holder = spawn("sleep", ["120"], { stdio: "ignore" });
            try {
                fs.writeFileSync(lockFile(root), `${holder.pid}\n${SERVING}\n${procStat(holder.pid!)!.startTime}\n`);
                const file = path.join(root, "kubeconfig");
                assert.ok(!fs.existsSync(file));
                const r = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", file]);
                assert.strictEqual(r.code, 1, r.out);
                assert.ok(
                    r.stdout.includes(
                        `the cluster answers; hint: the lab under ${root} is served (PID ${holder.pid}), but its kubeconfig ${file} is gone (removed?): its run writes it as it starts, so stop it (Ctrl-C, or kill ${holder.pid}) and serve it again`,
                    ),
                    r.stdout,
                );
            } finally {
                holder.kill("SIGKILL");
                fs.rmSync(lockFile(root), { force: true });
            }
        });
    });

    it("a served lab suspended, or a simulate still at work: said", async () => {
        await atShop(3, async (root) => {
            const kubeconfig = kubeconfigFor(root, `https://127.0.0.1:${await freePort()}`);
            const holder = spawn("sleep", ["120"], { stdio: "ignore" });
            try {
                const lock = (what: string) =>
                    fs.writeFileSync(lockFile(root), `${holder.pid}\n${what}\n${procStat(holder.pid!)!.startTime}\n`);
                lock(SERVING);
                holder.kill("SIGSTOP");
                await expect(holds("the served lab suspended", () => procStat(holder.pid!)?.state === "T"));
                const r = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", kubeconfig]);
                assert.strictEqual(r.code, 1, r.out);
                assert.match(
                    r.stdout,
                    new RegExp(
                        `the cluster answers; hint: the served lab under \\S+ is suspended \\(PID ${holder.pid}, Ctrl-Z\\?\\), so its cluster does not answer: fg it in its terminal \\(or kill -CONT ${holder.pid}\\), then verify again, or --offline`,
                    ),
                );
                // the doctor live on the same kubeconfig: said at once too, not after its request's timeout
                const doctor = await runMain("doctor", ["--kubeconfig", kubeconfig]);
                assert.strictEqual(doctor.code, 1, doctor.out);
                assert.match(
                    doctor.stderr,
                    new RegExp(
                        `^gitops-lab doctor: the served lab under \\S+ is suspended \\(PID ${holder.pid}, Ctrl-Z\\?\\), so its cluster does not answer: fg it in its terminal \\(or kill -CONT ${holder.pid}\\), then the doctor again`,
                    ),
                );
                // a simulate at work on the root (its lock not yet serving): what it has not done yet is said to fail for that
                holder.kill("SIGCONT");
                await expect(holds("the run goes on", () => procStat(holder.pid!)?.state !== "T"));
                lock("");
                const step4 = () => runMain("verify", ["--root", root, "--step", "4", "--offline"]);
                const atWork = await step4();
                assert.strictEqual(atWork.code, 1, atWork.out);
                assert.match(
                    atWork.stdout,
                    new RegExp(
                        `\\(a gitops-lab simulate, PID ${holder.pid}, is still at work on \\S+: what it has not done yet fails here; verify again when it has ended, or serves the lab\\)\\n$`,
                    ),
                );
                const table = await runMain("verify", ["--root", root, "--through", "4", "--offline"]);
                assert.match(table.stdout, /^a gitops-lab simulate, PID \d+, is still at work on /m);
                // serving: the lab as the learner has it, nothing said
                lock(SERVING);
                assert.doesNotMatch((await step4()).stdout, /still at work/);
            } finally {
                holder.kill("SIGKILL");
            }
        });
    });

    it("a --kubeconfig that is missing or no kubeconfig: the line says which", async () => {
        await atShop(3, async (root) => {
            const missing = path.join(root, "nonexist.yaml");
            const r = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", missing]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(`the cluster answers; hint: no kubeconfig found \\(looked at ${missing}\\): give --kubeconfig FILE`),
            );
            const notOne = shopLayout(root).appsetFile;
            const n = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", notOne]);
            assert.match(n.stdout, new RegExp(`the cluster answers; hint: ${notOne} is not a kubeconfig [^:]*: give --kubeconfig FILE`));
        });
    });

    it("KUBECONFIG still naming another simulated lab's kubeconfig: the hint says whose it is", async () => {
        await atShop(3, async (root) => {
            const other = await rootAt(2);
            const before = process.env.KUBECONFIG;
            try {
                process.env.KUBECONFIG = kubeconfigFor(other, `https://127.0.0.1:${await freePort()}`);
                const r = await runMain("verify", ["--root", root, "--step", "3"]);
                assert.strictEqual(r.code, 1, r.out);
                assert.match(
                    r.stdout,
                    new RegExp(
                        `the cluster answers; hint: ${other}/kubeconfig is the kubeconfig of the simulated lab under ${other}, not of this one \\(KUBECONFIG still names it\\): give --kubeconfig FILE`,
                    ),
                );
            } finally {
                if (before === undefined) delete process.env.KUBECONFIG;
                else process.env.KUBECONFIG = before;
                fs.rmSync(other, { recursive: true, force: true });
            }
        });
    });

    it("no --root, a served lab's kubeconfig given: its root is named", async () => {
        const root = await rootAt(2);
        try {
            const kubeconfig = kubeconfigFor(root, `https://127.0.0.1:${await freePort()}`);
            const r = await runMain("verify", ["--kubeconfig", kubeconfig, "--step", "2"]);
            assert.strictEqual(r.code, 2, r.out);
            assert.match(
                r.stderr,
                new RegExp(
                    `^gitops-lab verify: no --root given, so verify reads a lab host's paths under /, and --kubeconfig is the served lab's under ${fs.realpathSync(root)}: give its root, gitops-lab verify --root ${fs.realpathSync(root)} --step 2`,
                ),
            );
            const through = await runMain("verify", ["--kubeconfig", kubeconfig, "--through", "2", "--json"]);
            assert.strictEqual(through.code, 2, through.out);
            assert.ok(
                through.stderr.includes(`: give its root, gitops-lab verify --root ${fs.realpathSync(root)} --through 2 --json`),
                through.stderr,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a kubeconfig of a cluster with no Argo CD: the hint names that cluster", async () => {
        const root = await rootAt(3);
        const other = new FakeKube();
        try {
            const kubeconfig = path.join(root, "other-kubeconfig");
            fs.writeFileSync(kubeconfig, other.kubeconfig(await other.start()));
            const r = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", kubeconfig]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /the cluster answers; hint: context \S+ \(https?:\/\/127\.0\.0\.1:\d+\) answers but has no Argo CD \(no CRD applicationsets\.argoproj\.io\): a kubeconfig of another cluster\?/,
            );
        } finally {
            await other.stop();
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given a step whose earlier step is not done, then it says which step comes first", async () => {
        const root = await rootAt(3);
        fs.rmSync(shopLayout(root).appsetFile);
        const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /^step 3 incident: not done \(step 2 appset comes first\): [^\n]+; hint: [^\n]+\n$/);
    });

    // given a broken ApplicationSet file at step 4 (a check whose name says the prod branch of the step graded), then
    // step 2 comes first, not step 4
    it("a broken appset.yaml at step 4: step 2 first", async () => {
        const root = await rootAt(4);
        const file = shopLayout(root).appsetFile;
        fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("revision: main", "revision: develop"));
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /^step 4 \S+: not done \(step 2 appset comes first\): appset\.yaml: ApplicationSet argocd\/shop, dev=main, prod=release\/prod; hint: /,
        );
    });

    it("prod pinned before the incident: step 2 says it is step 4's", async () => {
        const root = await rootAt(2);
        const file = shopLayout(root).appsetFile;
        const text = fs.readFileSync(file, "utf8");
        const pinned = text.replace(/(- env: prod\n\s+revision:) main/, "$1 release/prod");
        assert.notStrictEqual(pinned, text);
        fs.writeFileSync(file, pinned);
        const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /^step 2 appset: not done: [^\n]*; hint: prod already tracks release\/prod, step 4's pin made early: /);
    });

    it("incident.commit a later commit: the hint says its parent has the flag on", async () => {
        const root = await rootAt(3);
        const { clone } = shopLayout(root);
        try {
            await git(["pull", "--quiet", "origin", "main"], clone);
            fs.writeFileSync(path.join(clone, "README.md"), "later\n");
            await git(["add", "README.md"], clone);
            await git(["commit", "--quiet", "-m", "a later commit"], clone);
            await git(["push", "--quiet", "origin", "HEAD:main"], clone);
            editResult(shopLayout(root).resultFile("incident"), { commit: await git(["rev-parse", "HEAD"], clone) });
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: [0-9a-f]{12}'s parent has FEATURE_CHECKOUT_V2 on in base already: incident\.commit is the commit that turned it on/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("the incident made in dev's overlay: the hint says it goes in base", async () => {
        const root = await rootAt(2);
        const { clone } = shopLayout(root);
        try {
            const file = path.join(clone, "envs/dev/kustomization.yaml");
            fs.writeFileSync(file, `${fs.readFileSync(file, "utf8")}# checkout v2 for dev\n`);
            await git(["commit", "--quiet", "-am", "checkout v2 in dev"], clone);
            await git(["push", "--quiet", "origin", "HEAD:main"], clone);
            const commit = await git(["rev-parse", "HEAD"], clone);
            fs.writeFileSync(shopLayout(root).resultFile("incident"), JSON.stringify({ commit, dev_value: "on", prod_value: "off" }));
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: incident\.commit does not change base\/configmap\.yaml \(it changes envs\/dev\/kustomization\.yaml\): the incident is a change to the shared base/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("prod's element as a full ref: the hint says the short name", async () => {
        const root = await rootAt(4);
        const file = shopLayout(root).appsetFile;
        fs.writeFileSync(
            file,
            fs.readFileSync(file, "utf8").replace(/(- env: prod\n\s+revision:) release\/prod/, "$1 refs/heads/release/prod"),
        );
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /hint: an element names a branch by its full ref \(refs\/heads\/release\/prod\); Argo CD resolves that too/);
    });

    it("both elements pinned: the hint says dev stays on main", async () => {
        const root = await rootAt(4);
        const file = shopLayout(root).appsetFile;
        fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/(- env: dev\n\s+revision:) main/, "$1 release/prod"));
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /hint: the dev element tracks "release\/prod": dev follows main at every step/);
    });

    it("result values of the wrong key or moment: each hint names it", async () => {
        await atShop(8, async (root) => {
            const layout = shopLayout(root);
            const hintOf = async (step: number) => (await runMain("verify", ["--root", root, "--step", String(step), "--offline"])).stdout;
            const pin = JSON.parse(fs.readFileSync(layout.resultFile("pin"), "utf8"));
            editResult(layout.resultFile("drift"), { restored: "info" });
            assert.match(
                await hintOf(5),
                /hint: restored holds "info": the LOG_LEVEL selfHeal puts back in shop-prod: prod's own from Git/,
            );
            // read before selfHeal repaired it: the value patched in
            editResult(layout.resultFile("drift"), { restored: "debug" });
            assert.match(
                await hintOf(5),
                /hint: restored holds "debug": it is the value you patched in \(edited\): it was read before selfHeal put Git's back/,
            );
            editResult(layout.resultFile("drift"), { restored: "warn" });
            editResult(layout.resultFile("report"), { rollback: "reset" });
            assert.match(
                await hintOf(8),
                /hint: rollback holds "reset": how step 7 rolled main back: main still holds bad_commit, and revert_commit undoes it/,
            );
            editResult(layout.resultFile("report"), { rollback: "revert" });
            editResult(layout.resultFile("pin"), { prod_value_after_pin: "warn" });
            assert.match(await hintOf(4), /hint: "warn" is a LOG_LEVEL: prod_value_after_pin is FEATURE_CHECKOUT_V2/);
            editResult(layout.resultFile("pin"), { prod_value_after_pin: "off" });
            editResult(layout.resultFile("revert"), { prod_revision_during: pin.release_prod_initial });
            assert.match(await hintOf(7), /hint: prod_revision_during is pin\.release_prod_initial, release\/prod before the promotion/);
            editResult(layout.resultFile("revert"), { dev_error: "" });
            assert.match(await hintOf(7), /hint: dev_error is empty: copy the message of shop-dev's ComparisonError/);
        });
    });

    it("prod unpinned to main after step 4: the hint says a promotion moves the branch", async () => {
        await atShop(6, async (root) => {
            const file = shopLayout(root).appsetFile;
            fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/(- env: prod\n\s+revision:) release\/prod/, "$1 main"));
            const r = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: prod's element is back on main, which undoes step 4's pin: .*a promotion moves that branch/);
        });
    });

    it("the revert pushed to a branch of its own: the hint says to push it to main", async () => {
        await atShop(8, async (root) => {
            const { bareRepo } = shopLayout(root);
            const revert = JSON.parse(fs.readFileSync(shopLayout(root).resultFile("revert"), "utf8"));
            // main back at the bad commit, the revert on revert-missing (as git push origin HEAD:revert-missing leaves it)
            await git(["update-ref", "refs/heads/revert-missing", revert.revert_commit], bareRepo);
            await git(["update-ref", "refs/heads/main", revert.bad_commit], bareRepo);
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /revert_commit is on revert-missing, not on main: .*git push origin \w{12}:refs\/heads\/main/);
        });
    });

    it("dev pinned instead of prod: the hint says to swap them", async () => {
        const root = await rootAt(4);
        const file = shopLayout(root).appsetFile;
        fs.writeFileSync(
            file,
            fs
                .readFileSync(file, "utf8")
                .replace(/(- env: dev\n\s+revision:) main/, "$1 release/prod")
                .replace(/(- env: prod\n\s+revision:) release\/prod/, "$1 main"),
        );
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: the pin is on the dev element \(revision release\/prod\) and prod still tracks main: .*swap the two revisions/,
        );
    });

    it("a drift time longer than the lab has existed: refused", async () => {
        await atShop(5, async (root) => {
            editResult(shopLayout(root).resultFile("drift"), { seconds: 99999 });
            const r = await runMain("verify", ["--root", root, "--step", "5", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /drift\.seconds is from 1 to the lab's age; hint: drift\.seconds holds 99999, longer than the lab has existed/,
            );
        });
    });

    it("the clone made with git clone's default name (shop-envs) beside repo: the move is said", async () => {
        await atShop(1, async (root) => {
            const { clone, workDir } = shopLayout(root);
            fs.renameSync(clone, path.join(workDir, "shop-envs"));
            const r = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 1 repo: not done: the lab's clone is where the step puts it; hint: your clone of the repository is \S+\/shop-envs, and the steps' commands \(and the served lab's\) run in \S+\/repo: move it there \(mv \S+ \S+\)/,
            );
            fs.renameSync(path.join(workDir, "shop-envs"), clone);
            const back = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
            assert.strictEqual(back.code, 0, back.out);
        });
    });

    it("a drift made on FEATURE_CHECKOUT_V2 (on, off) for LOG_LEVEL: the key is named", async () => {
        await atShop(5, async (root) => {
            editResult(shopLayout(root).resultFile("drift"), { edited: "on", restored: "off" });
            const r = await runMain("verify", ["--root", root, "--step", "5", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /drift: edited debug, restored warn; hint: edited and restored hold FEATURE_CHECKOUT_V2's values \(on, off\): the drift is made on LOG_LEVEL: kubectl patch configmap shop-config -n shop-prod/,
            );
        });
    });

    it("a drift time below 0 (the times subtracted the other way round): said so", async () => {
        await atShop(5, async (root) => {
            editResult(shopLayout(root).resultFile("drift"), { seconds: -7 });
            const r = await runMain("verify", ["--root", root, "--step", "5", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /drift\.seconds is from 1 to the lab's age; hint: drift\.seconds holds -7, below 0: the seconds are the repair's time minus your patch's \(subtracted the other way round\?\): 7$/m,
            );
        });
    });

    it("a detection time longer than stall.commit has existed: refused", async () => {
        await atTenants(2, async (root) => {
            editResult(tenantsLayout(root).resultFile("stall"), { detected_after_seconds: 86400 });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: detected_after_seconds holds 86400, longer than stall\.commit has (existed|been on main)/);
        });
    });

    it("stall.hook_error without its last character, or blank: each hint says what to copy", async () => {
        await atTenants(2, async (root) => {
            editResult(tenantsLayout(root).resultFile("stall"), { hook_error: HOOK_ERROR.slice(0, -1) });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: hook_error is not the line the hook's log prints [^\n]*copy it exactly as printed, punctuation included/,
            );
            // the log's last line taken with tail -n1, which is empty: said, with the line that has text
            editResult(tenantsLayout(root).resultFile("stall"), { hook_error: "\n" });
            const blank = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.match(
                blank.stdout,
                /hint: hook_error is blank: the hook's log ends with an empty line, so its last line \(tail -n1\) is nothing; [^\n]*grep \. \| tail -n1/,
            );
        });
    });

    it("a later step's file on a lab at step 2: the first step not done comes first", async () => {
        const root = await rootAt(2);
        fs.writeFileSync(shopLayout(root).resultFile("drift"), JSON.stringify({ edited: "debug", restored: "warn", seconds: 1 }));
        const r = await runMain("verify", ["--root", root, "--step", "5", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /^step 5 drift: not done \(step 3 incident comes first\): /);
        assert.strictEqual((await runMain("verify", ["--root", root, "--step", "2", "--offline"])).code, 0, "step 2 is done");
    });

    it("the template in goTemplate's {{.env}} form grades as {{env}}", async () => {
        const root = await rootAt(2);
        const file = shopLayout(root).appsetFile;
        const text = fs.readFileSync(file, "utf8");
        const go = text
            .replace(/\{\{(env|revision)\}\}/g, "{{.$1}}")
            .replace("spec:\n", "spec:\n  goTemplate: true\n  goTemplateOptions: [missingkey=error]\n");
        assert.match(go, /goTemplate: true[^]*shop-\{\{\.env\}\}/);
        fs.writeFileSync(file, go);
        const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
        assert.strictEqual(r.code, 0, r.out);
    });

    it("a template deploying to another namespace: the check names the namespace", async () => {
        const root = await rootAt(2);
        const file = shopLayout(root).appsetFile;
        fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("namespace: shop-{{env}}", "namespace: shop"));
        const r = await runMain("verify", ["--root", root, "--step", "2", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /: not done: appset\.yaml template: [^;]*into namespace shop-\{\{env\}\}[^;]*; /);
    });

    it("the flag turned on in prod's overlay before the incident: step 3 says so", async () => {
        const root = await rootAt(2);
        const { clone } = shopLayout(root);
        const commit = async (file: string, edit: (text: string) => string, message: string) => {
            fs.writeFileSync(path.join(clone, file), edit(fs.readFileSync(path.join(clone, file), "utf8")));
            await git(["-c", "user.name=learner", "-c", "user.email=learner@example.org", "commit", "-qam", message], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            return git(["rev-parse", "HEAD"], clone);
        };
        await commit(
            "envs/prod/kustomization.yaml",
            (t) =>
                `${t}\n  - target:\n      kind: ConfigMap\n      name: shop-config\n    patch: |-\n      - op: replace\n        path: /data/FEATURE_CHECKOUT_V2\n        value: "on"\n`,
            "prod: checkout v2",
        );
        const incident = await commit(
            "base/configmap.yaml",
            (t) => t.replace('FEATURE_CHECKOUT_V2: "off"', 'FEATURE_CHECKOUT_V2: "on"'),
            "checkout v2 everywhere",
        );
        fs.writeFileSync(shopLayout(root).resultFile("incident"), JSON.stringify({ commit: incident, dev_value: "on", prod_value: "on" }));
        const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /^step 3 incident: not done: incident\.commit renders FEATURE_CHECKOUT_V2 on in envs\/dev and envs\/prod, its parent off in envs\/prod; /,
        );
        assert.match(r.stdout, /hint: [^\n]*an overlay that sets FEATURE_CHECKOUT_V2 decides it over base/);
    });

    it("the incident on a branch of its own, or its value in another case: each named", async () => {
        const root = await rootAt(2);
        const { clone } = shopLayout(root);
        try {
            await git(["checkout", "-q", "-b", "feature"], clone);
            const file = path.join(clone, "base/configmap.yaml");
            fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace('FEATURE_CHECKOUT_V2: "off"', 'FEATURE_CHECKOUT_V2: "on"'));
            await git(["-c", "user.name=learner", "-c", "user.email=learner@example.org", "commit", "-qam", "checkout v2"], clone);
            await git(["push", "-q", "origin", "feature"], clone);
            const incident = await git(["rev-parse", "HEAD"], clone);
            fs.writeFileSync(
                shopLayout(root).resultFile("incident"),
                JSON.stringify({ commit: incident, dev_value: "on", prod_value: "on" }),
            );
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `^step 3 incident: not done: incident\\.commit is on main; [^\n]*hint: incident\\.commit ${incident.slice(0, 12)} is not on main \\(it is on feature\\), and Argo CD renders main`,
                    "m",
                ),
            );
            fs.writeFileSync(
                shopLayout(root).resultFile("incident"),
                JSON.stringify({ commit: incident, dev_value: "On", prod_value: "on" }),
            );
            const cased = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.match(
                cased.stdout,
                /hint: dev_value holds "On": values are compared exactly, as the ConfigMap holds them: write "on"/,
                cased.out,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    /** At step 6, a learner's bad commit adding `name` to `overlay`'s resources, reverted, in revert.json: verify --step 7's output. */
    /** revert.json for bad_commit `bad` and the clone's HEAD as its revert, as a learner writes it after step 7 by hand. */
    async function writeRevert(layout: ReturnType<typeof shopLayout>, bad: string, devError = MISSING_YAML_ERROR): Promise<void> {
        fs.writeFileSync(
            layout.resultFile("revert"),
            JSON.stringify({
                bad_commit: bad,
                revert_commit: await git(["rev-parse", "HEAD"], layout.clone),
                dev_error: devError,
                prod_revision_during: await git(["rev-parse", "origin/release/prod"], layout.clone),
            }),
        );
    }
    const MISSING_YAML_ERROR =
        "accumulating resources: accumulation err='accumulating resources from 'missing.yaml': open missing.yaml: no such file or directory'";

    async function badCommitGraded(
        overlay: string,
        name: string,
        atEnd: boolean | "unindented" | "components" | "resources again" = false,
        fileToo = false,
        code = 1,
    ): Promise<string> {
        const root = await rootAt(6);
        const layout = shopLayout(root);
        const { clone } = layout;
        try {
            const file = path.join(clone, overlay, "kustomization.yaml");
            const last = overlay === "base" ? "  - configmap.yaml" : "  - ../../base";
            // at the file's end, as echo "  - missing.yaml" >> it does: in the list above, patches:
            if (atEnd)
                fs.appendFileSync(
                    file,
                    atEnd === "unindented"
                        ? `- ${name}\n`
                        : atEnd === "components" || atEnd === "resources again"
                          ? `${atEnd === "components" ? "components" : "resources"}:\n  - ${name}\n`
                          : `  - ${name}\n`,
                );
            else fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(last, `${last}\n  - ${name}`));
            // the file it names made in the same commit: the overlay renders
            if (fileToo) fs.writeFileSync(path.join(clone, overlay, name), "");
            const id = ["-c", "user.name=learner", "-c", "user.email=learner@example.org"];
            await git(["add", "-A"], clone);
            await git([...id, "commit", "-qm", `${overlay}: ${name}`], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const bad = await git(["rev-parse", "HEAD"], clone);
            await git([...id, "revert", "--no-edit", "HEAD"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            await writeRevert(layout, bad, `accumulating resources: ${name}: no such file`);
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, code, r.out);
            return r.stdout;
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    }

    it("a bad commit adding missing.yaml to an overlay written with bases: (resources' deprecated alias): done", async () => {
        const root = await rootAt(6);
        const layout = shopLayout(root);
        const { clone } = layout;
        try {
            const file = path.join(clone, "envs", "dev", "kustomization.yaml");
            const id = ["-c", "user.name=learner", "-c", "user.email=learner@example.org"];
            fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/^resources:/m, "bases:"));
            await git([...id, "commit", "-qam", "dev: bases"], clone);
            fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("  - ../../base", "  - ../../base\n  - missing.yaml"));
            await git([...id, "commit", "-qam", "dev: missing.yaml"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const bad = await git(["rev-parse", "HEAD"], clone);
            await git([...id, "revert", "--no-edit", "HEAD"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            await writeRevert(layout, bad);
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(r.stdout, /^step 7 revert: done/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a revert made with git revert --reference (its message names bad_commit abbreviated, with its subject): done", async () => {
        const root = await rootAt(6);
        const layout = shopLayout(root);
        const { clone } = layout;
        try {
            const file = path.join(clone, "envs", "dev", "kustomization.yaml");
            const id = ["-c", "user.name=learner", "-c", "user.email=learner@example.org"];
            fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("  - ../../base", "  - ../../base\n  - missing.yaml"));
            await git([...id, "commit", "-qam", "dev: add missing.yaml"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const bad = await git(["rev-parse", "HEAD"], clone);
            // as git revert --reference writes it (git 2.39 and later)
            await git(["revert", "--no-commit", "HEAD"], clone);
            await git(
                [
                    ...id,
                    "commit",
                    "-qm",
                    `Revert missing.yaml\n\nThis reverts commit ${bad.slice(0, 7)} (dev: add missing.yaml, 2026-12-07).`,
                ],
                clone,
            );
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            await writeRevert(layout, bad);
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a bad commit that makes missing.yaml too (envs/dev renders): not done, named", async () => {
        const out = await badCommitGraded("envs/dev", "missing.yaml", false, true);
        assert.match(out, /^step 7 revert: not done: bad_commit adds missing\.yaml to envs\/dev\/kustomization\.yaml resources; /m);
        assert.match(
            out,
            /hint: bad_commit's envs\/dev renders: envs\/dev\/missing\.yaml is there too, so shop-dev never showed the ComparisonError/,
        );
    });

    it("a bad commit that makes missing.yaml too, before revert.json: named at once, and not once the file is gone", async () => {
        await atShop(6, async (root) => {
            const { clone } = shopLayout(root);
            const file = path.join(clone, "envs/dev/kustomization.yaml");
            fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("  - ../../base", "  - ../../base\n  - missing.yaml"));
            fs.writeFileSync(path.join(clone, "envs/dev/missing.yaml"), "");
            const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
            await git(["add", "-A"], clone);
            await git([...id, "commit", "-qm", "dev: missing.yaml"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /main's bad commit \(before revert\.json\) breaks envs\/dev[^\n]*; hint: ([0-9a-f]{12}) adds missing\.yaml to envs\/dev's resources, but main has envs\/dev\/missing\.yaml too, so envs\/dev renders and shop-dev shows no ComparisonError[^\n]*git revert \1 and push, then add missing\.yaml to envs\/dev's resources alone/,
            );
            // the file taken out in a commit of its own: envs/dev no longer renders, the error shows: the step is under way
            await git(["rm", "-q", "envs/dev/missing.yaml"], clone);
            await git([...id, "commit", "-qm", "dev: no missing.yaml"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const gone = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.doesNotMatch(gone.stdout, /main's bad commit \(before revert\.json\)/, gone.out);
        });
    });

    it("a bad commit putting missing.yaml under components:: named by that key", async () => {
        assert.match(
            await badCommitGraded("envs/dev", "missing.yaml", "components"),
            /hint: bad_commit puts missing\.yaml under components: in envs\/dev\/kustomization\.yaml, not under resources:/,
        );
    });

    it("a bad commit adding missing.yml: named", async () => {
        assert.match(
            await badCommitGraded("envs/dev", "missing.yml"),
            /hint: bad_commit adds missing\.yml; the step's bad commit adds missing\.yaml \(so the error names it\)/,
        );
    });

    it("a bad commit breaking prod's overlay: named", async () => {
        assert.match(
            await badCommitGraded("envs/prod", "missing.yaml"),
            /hint: bad_commit adds missing\.yaml to envs\/prod\/kustomization\.yaml, not envs\/dev's: the step breaks dev/,
        );
    });

    it("step 3 done with kubectl, incident.commit step 1's: the hint says the incident is a commit", async () => {
        await atShop(2, async (root) => {
            const layout = shopLayout(root);
            const first = await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]);
            fs.writeFileSync(layout.resultFile("incident"), JSON.stringify({ commit: first, dev_value: "on", prod_value: "on" }));
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: [0-9a-f]{12} \(step 1's first commit\) has FEATURE_CHECKOUT_V2 off in base: the incident is a commit that turns it on in base\/configmap\.yaml, pushed to main \(a kubectl patch of the ConfigMaps is drift, which selfHeal puts back\)/,
            );
        });
    });

    it("a bad commit appending missing.yaml under patches: named", async () => {
        assert.match(
            await badCommitGraded("envs/dev", "missing.yaml", true),
            /hint: bad_commit names missing\.yaml in envs\/dev\/kustomization\.yaml, but not under resources: \(appended at the file's end, it lands in the list above it, patches:\)/,
        );
    });

    it("the prod element on origin/release/prod, or a --step --root inside the lab: each named", async () => {
        await atShop(4, async (root) => {
            const { appsetFile, workDir } = shopLayout(root);
            fs.writeFileSync(
                appsetFile,
                fs.readFileSync(appsetFile, "utf8").replace("revision: release/prod", "revision: origin/release/prod"),
            );
            const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: prod tracks "origin\/release\/prod", your clone's name for the branch/);
            const inside = await runMain("verify", ["--root", workDir, "--step", "4", "--offline"]);
            assert.strictEqual(inside.code, 2, `a wrong --root is a usage error: ${inside.out}`);
            assert.match(inside.stderr, /is inside the shop lab under \S+: give its root, gitops-lab verify --root \S+ --step 4\n$/);
        });
    });

    it("the incident made again (off, then on, pushed together): prod's earlier sync of it counts", async () => {
        const at = await labAt(3);
        try {
            const { clone, resultFile } = at.lab.layout;
            const cm = path.join(clone, "base", "configmap.yaml");
            const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
            await git(["pull", "-q", "origin", "main"], clone);
            fs.writeFileSync(cm, fs.readFileSync(cm, "utf8").replace('"on"', '"off"'));
            await git([...id, "commit", "-qam", "off"], clone);
            fs.writeFileSync(cm, fs.readFileSync(cm, "utf8").replace('"off"', '"on"'));
            await git([...id, "commit", "-qam", "on again"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            editResult(resultFile("incident"), { commit: await git(["rev-parse", "HEAD"], clone) });
            // prod's syncs an hour old (Argo CD syncs nothing new: main renders as prod runs)
            const hourOld = Object.assign(Object.create(at.cluster), {
                getApplication: async (name: string, ns?: string) => {
                    const a = (await at.cluster.getApplication(name, ns))!;
                    const history = (a.status?.history ?? []).map((h) => ({
                        ...h,
                        deployedAt: new Date(Date.now() - 3_600_000).toISOString(),
                    }));
                    return { ...a, status: { ...a.status, history } };
                },
            }) as typeof at.cluster;
            const r = (await verifyShop({ layout: at.lab.layout, through: 3, cluster: hourOld })).find((c) =>
                c.check.startsWith("live shop-prod synced incident.commit"),
            );
            assert.ok(!r || r.ok, JSON.stringify(r));
        } finally {
            await at.stop();
        }
    });

    it('incident.dev_value written "true": the hint says the value is "on"', async () => {
        await atShop(3, async (root) => {
            editResult(shopLayout(root).resultFile("incident"), { dev_value: "true" });
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: dev_value holds "true": values are compared exactly, as the ConfigMap holds them: write "on"/);
        });
    });

    it("the incident pushed as a second FEATURE_CHECKOUT_V2 line (no YAML): named before and after incident.json", async () => {
        await atShop(2, async (root) => {
            const { clone, resultFile } = shopLayout(root);
            fs.appendFileSync(path.join(clone, "base", "configmap.yaml"), '  FEATURE_CHECKOUT_V2: "on"\n');
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", "on"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const commit = await git(["rev-parse", "HEAD"], clone);
            const before = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(before.code, 1, before.out);
            assert.match(
                before.stdout,
                /^step 3 incident: not done: main's base\/configmap\.yaml is YAML [^\n]*; hint: main \([0-9a-f]{12}\) has a base\/configmap\.yaml that is no YAML \(Map keys must be unique[^)]*\): Argo CD cannot render it/m,
            );
            for (const value of ["on", "off"]) {
                // off: what the cluster still shows, read after the push
                fs.writeFileSync(resultFile("incident"), JSON.stringify({ commit, dev_value: value, prod_value: value }));
                const after = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
                assert.strictEqual(after.code, 1, after.out);
                assert.match(
                    after.stdout,
                    /hint: [0-9a-f]{12}'s base\/configmap\.yaml is no YAML \(Map keys must be unique[^)]*\): Argo CD cannot render it [^\n]*: git revert [0-9a-f]{12} and push, then make the incident again/,
                    value,
                );
            }
        });
    });

    it('the incident committed as "true", not "on": the commit\'s value is named, whatever incident.json holds', async () => {
        await atShop(2, async (root) => {
            const { clone, resultFile } = shopLayout(root);
            const cm = path.join(clone, "base", "configmap.yaml");
            fs.writeFileSync(cm, fs.readFileSync(cm, "utf8").replace('"off"', '"true"'));
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", "v2"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const commit = await git(["rev-parse", "HEAD"], clone);
            const want =
                /hint: [0-9a-f]{12} sets FEATURE_CHECKOUT_V2 to "true" in base, and the ConfigMaps hold what it set: the lab's value is "on" \(compared exactly\); git revert [0-9a-f]{12} and push, then make the incident again/;
            for (const value of ["true", "on"]) {
                fs.writeFileSync(resultFile("incident"), JSON.stringify({ commit, dev_value: value, prod_value: value }));
                const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
                assert.strictEqual(r.code, 1, r.out);
                assert.match(r.stdout, want, `values ${value}`);
            }
        });
    });

    it("incident.dev_value the ConfigMap's whole data ({.data}): named; drift's edited and restored swapped: named", async () => {
        await atShop(5, async (root) => {
            const layout = shopLayout(root);
            const incident = fs.readFileSync(layout.resultFile("incident"), "utf8");
            editResult(layout.resultFile("incident"), { dev_value: JSON.stringify({ FEATURE_CHECKOUT_V2: "on", LOG_LEVEL: "debug" }) });
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: dev_value holds more than the flag's value \(the ConfigMap's data, as jsonpath=\{\.data\} prints it\)/,
            );
            fs.writeFileSync(layout.resultFile("incident"), incident);
            editResult(layout.resultFile("drift"), { edited: "warn", restored: "debug" });
            const d = await runMain("verify", ["--root", root, "--step", "5", "--offline"]);
            assert.strictEqual(d.code, 1, d.out);
            assert.match(d.stdout, /hint: edited and restored are swapped: edited is the LOG_LEVEL you patched in \(debug\)/);
        });
    });

    it("incident values read with jq without -r (quote marks of their own): named", async () => {
        await atShop(3, async (root) => {
            editResult(shopLayout(root).resultFile("incident"), { dev_value: '"on"', prod_value: '"on"' });
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: dev_value holds "\\"on\\"", prod_value holds "\\"on\\"" \(quote marks of its own, as jq prints a string without -r\): values are compared exactly/,
            );
        });
    });

    it("an incident value read as nothing (kubectl get without -n): the hint says empty, and where to read it", async () => {
        await atShop(3, async (root) => {
            editResult(shopLayout(root).resultFile("incident"), { prod_value: "" });
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: prod_value is empty: the command read nothing \(without -n, kubectl looks in the namespace default[^\n]*kubectl -n shop-prod get configmap shop-config/,
            );
        });
    });

    it("the incident's value with a space at its end: the hint names the space", async () => {
        await atShop(2, async (root) => {
            const { clone, resultFile } = shopLayout(root);
            const cm = path.join(clone, "base", "configmap.yaml");
            fs.writeFileSync(cm, fs.readFileSync(cm, "utf8").replace('"off"', '"on "'));
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", "on"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const commit = await git(["rev-parse", "HEAD"], clone);
            fs.writeFileSync(resultFile("incident"), JSON.stringify({ commit, dev_value: "on", prod_value: "on" }));
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: [0-9a-f]{12} sets FEATURE_CHECKOUT_V2 to "on " in base, with a space a reader cannot see/);
        });
    });

    it("a bad commit that leaves the overlay no YAML: named", async () => {
        assert.match(
            await badCommitGraded("envs/dev", "missing.yaml", "unindented"),
            /hint: bad_commit leaves envs\/dev\/kustomization\.yaml no YAML \(missing\.yaml appended without the indentation/,
        );
    });

    it("a bad commit appending a second resources: key: read as kustomize reads it, the last", async () => {
        // kustomize takes the second resources: (missing.yaml alone) and fails on missing.yaml, as the step's bad commit does
        const out = await badCommitGraded("envs/dev", "missing.yaml", "resources again", false, 0);
        assert.match(out, /^step 7 revert: done/);
        assert.doesNotMatch(out, /no YAML/);
    });

    it("a bad commit breaking base: named", async () => {
        const out = await badCommitGraded("base", "missing.yaml");
        assert.match(
            out,
            /hint: bad_commit adds missing\.yaml to base\/kustomization\.yaml, not envs\/dev's: base is every environment's, and the step breaks dev alone/,
        );
    });

    it("a bad commit adding missing.yaml to envs/dev and envs/prod: named, dev alone is broken", async () => {
        const root = await rootAt(6);
        const layout = shopLayout(root);
        try {
            const id = ["-c", "user.name=learner", "-c", "user.email=learner@example.org"];
            for (const env of ["dev", "prod"]) {
                const file = path.join(layout.clone, "envs", env, "kustomization.yaml");
                fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("  - ../../base", "  - ../../base\n  - missing.yaml"));
            }
            await git([...id, "commit", "-qam", "both: missing.yaml"], layout.clone);
            await git(["push", "-q", "origin", "HEAD:main"], layout.clone);
            const bad = await git(["rev-parse", "HEAD"], layout.clone);
            await git([...id, "revert", "--no-edit", "HEAD"], layout.clone);
            await git(["push", "-q", "origin", "HEAD:main"], layout.clone);
            await writeRevert(layout, bad, "accumulating resources: missing.yaml: no such file");
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: bad_commit adds missing\.yaml to envs\/prod\/kustomization\.yaml too: the step breaks dev alone \(shop-dev tracks main\)/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("dev_error typed by hand, naming missing.yaml in words of its own: not Argo CD's message, named", async () => {
        await atShop(7, async (root) => {
            const file = shopLayout(root).resultFile("revert");
            const revert = JSON.parse(fs.readFileSync(file, "utf8"));
            for (const typed of ["missing.yaml", "error: missing.yaml not found"]) {
                fs.writeFileSync(file, JSON.stringify({ ...revert, dev_error: typed }));
                const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
                assert.strictEqual(r.code, 1, r.out);
                assert.ok(
                    r.stdout.includes(
                        `hint: dev_error holds ${JSON.stringify(typed)}, which names missing.yaml in words of its own, not Argo CD's`,
                    ),
                    r.stdout,
                );
                assert.ok(r.stdout.includes(`worktree add /tmp/bad ${revert.bad_commit.slice(0, 12)}`), r.stdout);
            }
            // a part of Argo CD's own message is its message still
            fs.writeFileSync(file, JSON.stringify({ ...revert, dev_error: "accumulating resources from 'missing.yaml'" }));
            const part = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(part.code, 0, part.out);
        });
    });

    it("dev_error as the condition's type: named", async () => {
        await atShop(7, async (root) => {
            const file = shopLayout(root).resultFile("revert");
            fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), dev_error: "ComparisonError" }));
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 7 revert: not done: dev_error is the ComparisonError's message \(it mentions missing\.yaml\); [^\n]*hint: dev_error holds the condition's type; copy its message/m,
            );
        });
    });

    it("report.promoted_commit set to revert_commit: the hint says to copy promote.json's to", async () => {
        await atShop(8, async (root) => {
            const { resultFile } = shopLayout(root);
            const revert = JSON.parse(fs.readFileSync(resultFile("revert"), "utf8"));
            const to = JSON.parse(fs.readFileSync(resultFile("promote"), "utf8")).to;
            editResult(resultFile("report"), { promoted_commit: revert.revert_commit });
            const r = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: found [0-9a-f]{12} is the value of revert\\.revert_commit and the tip of main; report\\.promoted_commit is to be promote\\.json's to \\(the commit step 6 moved release/prod to\\), "?${to}"?: copy it from promote\\.json`,
                ),
            );
            assert.doesNotMatch(r.stdout, /merge-base/);
        });
    });

    it("dev_error as the last sync operation's message: the condition's is asked for", async () => {
        await atShop(7, async (root) => {
            const file = shopLayout(root).resultFile("revert");
            editResult(file, { dev_error: "successfully synced (all tasks run)" });
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: dev_error holds "successfully synced \(all tasks run\)", the last sync operation's message \(status\.operationState\.message\), not the error: the error is the ComparisonError condition's message/,
            );
        });
    });

    it("dev_error as the conditions' JSON: the message alone is asked for", async () => {
        await atShop(7, async (root) => {
            const file = shopLayout(root).resultFile("revert");
            const revert = JSON.parse(fs.readFileSync(file, "utf8"));
            // kubectl ... -o jsonpath='{.status.conditions}' while shop-dev showed the error
            const conditions = JSON.stringify([
                { lastTransitionTime: "2026-12-07T02:50:00Z", message: revert.dev_error, type: "ComparisonError" },
            ]);
            fs.writeFileSync(file, JSON.stringify({ ...revert, dev_error: conditions }));
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 7 revert: not done: dev_error is the ComparisonError's message \(it mentions missing\.yaml\); [^\n]*hint: dev_error holds the conditions as JSON \(their type and lastTransitionTime with the message\)[^\n]*write the ComparisonError's message alone/m,
            );
        });
    });

    it("dev_error copied from kubectl describe (its Message: label): the message alone is asked for", async () => {
        await atShop(7, async (root) => {
            const file = shopLayout(root).resultFile("revert");
            const revert = JSON.parse(fs.readFileSync(file, "utf8"));
            fs.writeFileSync(file, JSON.stringify({ ...revert, dev_error: `    Message:               ${revert.dev_error}` }));
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: dev_error holds kubectl describe's "Message:" label and its padding before the message: write the message alone/,
            );
        });
    });

    it("the pin applied to the cluster, appset.yaml left at main: the file is named", async () => {
        const at = await labAt(4);
        try {
            const kubeconfig = kubeconfigAt(at);
            const file = at.lab.layout.appsetFile;
            fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("revision: release/prod", "revision: main"));
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--step", "4", "--kubeconfig", kubeconfig]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: the cluster's ApplicationSet has dev=main, prod=release\/prod, but \S+appset\.yaml does not say so: write what you applied into it/,
            );
        } finally {
            await at.stop();
        }
    });

    it("release/prod left at the incident while pin.json names its parent: the way to move it back", async () => {
        const at = await labAt(4);
        try {
            const { layout } = at.lab;
            const kubeconfig = path.join(layout.root, "kubeconfig");
            fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
            const incident = JSON.parse(fs.readFileSync(layout.resultFile("incident"), "utf8")).commit;
            // release/prod pushed at the incident commit in the first place (made again there: its reflog never shows the
            // parent, as a promotion's would): prod gets the incident
            await git(["push", "-q", "origin", ":refs/heads/release/prod"], layout.clone);
            await git(["push", "-q", "origin", `${incident}:refs/heads/release/prod`], layout.clone);
            await at.cluster.annotateApplication("shop-prod", { [REFRESH_ANNOTATION]: "normal" });
            await expect(
                holds(
                    "shop-prod renders the incident",
                    async () => (await at.cluster.getConfigMap("shop-prod", "shop-config"))?.data?.FEATURE_CHECKOUT_V2 === "on",
                ),
                { timeoutMs: 60_000 },
            );
            const r = await runMain("verify", ["--root", layout.root, "--step", "4", "--kubeconfig", kubeconfig]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: release/prod is at ${incident.slice(0, 12)}, not at pin\\.release_prod_initial [0-9a-f]{12}, and prod renders what release/prod holds; the repository refuses a force push: delete the branch \\(git push origin :refs/heads/release/prod\\)`,
                ),
            );
        } finally {
            await at.stop();
        }
    });

    it("release/prod at the incident in a repository with no reflog (made by hand), drift not done: still the way back", async () => {
        await atShop(4, async (root) => {
            const { bareRepo, clone, resultFile } = shopLayout(root);
            // as git init --bare leaves it: no reflog to show where release/prod stood
            await git(["--git-dir", bareRepo, "config", "core.logAllRefUpdates", "false"]);
            fs.rmSync(path.join(bareRepo, "logs"), { recursive: true, force: true });
            const incident = JSON.parse(fs.readFileSync(resultFile("incident"), "utf8")).commit;
            await git(["push", "-q", "origin", `${incident}:refs/heads/release/prod`], clone);
            const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: release\/prod is at [0-9a-f]{12}, not at pin\.release_prod_initial [0-9a-f]{12}[^\n]*delete the branch/,
            );
        });
    });

    it("prod pinned to release/prod in appset.yaml, the branch never pushed: the push is named before pin.json", async () => {
        const root = await rootAt(3);
        const { appsetFile, clone } = shopLayout(root);
        fs.writeFileSync(appsetFile, fs.readFileSync(appsetFile, "utf8").replace(/(env: prod\s+revision: )main/, "$1release/prod"));
        assert.match(fs.readFileSync(appsetFile, "utf8"), /revision: release\/prod/, "the test's edit took");
        const incident = JSON.parse(fs.readFileSync(shopLayout(root).resultFile("incident"), "utf8")).commit;
        const parent = await git(["rev-parse", `${incident}^`], clone);
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.ok(
            r.stdout.includes(
                `release/prod exists; hint: appset.yaml's prod tracks release/prod, which the repository does not have (Argo CD answers "unable to resolve"): push it first at the incident commit's parent, where prod is to stay (git push origin ${parent}:refs/heads/release/prod), then write pin.json`,
            ),
            r.stdout,
        );
    });

    it("the incident made by amending the first commit (its push refused): said so", async () => {
        const root = await rootAt(2);
        const layout = shopLayout(root);
        const { clone } = layout;
        const file = path.join(clone, "base", "configmap.yaml");
        fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/FEATURE_CHECKOUT_V2: "off"/, 'FEATURE_CHECKOUT_V2: "on"'));
        await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-q", "--amend", "-am", "on"], clone);
        const amended = await git(["rev-parse", "HEAD"], clone);
        // refused (the repository takes fast-forwards only), yet its objects may reach the repository
        await git(["push", "-q", "--force", "origin", "main"], clone).catch(() => undefined);
        await git(["push", "-q", "origin", `${amended}:refs/heads/amended`], clone);
        fs.writeFileSync(layout.resultFile("incident"), JSON.stringify({ commit: amended, dev_value: "on", prod_value: "on" }));
        const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /hint: [0-9a-f]{12} has no parent and is not on main: an amended first commit \(git commit --amend\)/);
    });

    it("revert.revert_commit written as bad_commit (a git revert that failed): said so", async () => {
        const root = await rootAt(7);
        const file = shopLayout(root).resultFile("revert");
        const { bad_commit } = JSON.parse(fs.readFileSync(file, "utf8"));
        editResult(file, { revert_commit: bad_commit });
        const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /hint: revert_commit is bad_commit itself: no revert was made \(did git revert fail\?\)/);
    });

    it("step 7 done on release/prod (checked out in the clone): the branch is named, not a rewrite", async () => {
        const root = await rootAt(6);
        const layout = shopLayout(root);
        const { clone } = layout;
        const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
        await git(["checkout", "-q", "-b", "release/prod", "origin/release/prod"], clone);
        const k = path.join(clone, "envs", "dev", "kustomization.yaml");
        fs.writeFileSync(k, fs.readFileSync(k, "utf8").replace("resources:\n", "resources:\n  - missing.yaml\n"));
        await git([...id, "commit", "-q", "-am", "break dev"], clone);
        const bad = await git(["rev-parse", "HEAD"], clone);
        await git([...id, "revert", "--no-edit", "HEAD"], clone);
        await git(["push", "-q", "origin", "release/prod"], clone);
        const revert = await git(["rev-parse", "HEAD"], clone);
        const promote = JSON.parse(fs.readFileSync(layout.resultFile("promote"), "utf8"));
        fs.writeFileSync(
            layout.resultFile("revert"),
            JSON.stringify({
                bad_commit: bad,
                revert_commit: revert,
                dev_error: "missing.yaml: no such file",
                prod_revision_during: promote.to,
            }),
        );
        const r = await runMain("verify", ["--root", root, "--through", "7", "--offline"]);
        assert.match(r.stdout, new RegExp(`found: +on release/prod, not on main`));
        assert.doesNotMatch(r.stdout, /history was rewritten/);
    });

    it("step 7's missing.yaml added to envs/prod before revert.json: the overlay is named", async () => {
        const root = await rootAt(6);
        const { clone } = shopLayout(root);
        await git(["checkout", "-q", "main"], clone);
        await git(["pull", "-q", "--ff-only", "origin", "main"], clone);
        const k = path.join(clone, "envs", "prod", "kustomization.yaml");
        fs.writeFileSync(k, fs.readFileSync(k, "utf8").replace("resources:\n", "resources:\n  - missing.yaml\n"));
        await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-q", "-am", "break it"], clone);
        await git(["push", "-q", "origin", "main"], clone);
        const bad = await git(["rev-parse", "HEAD"], clone);
        const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.ok(
            r.stdout.includes(
                `hint: ${bad.slice(0, 12)} adds missing.yaml to envs/prod/kustomization.yaml, not envs/dev's: prod reads release/prod, not main, so nothing shows the error`,
            ),
            r.stdout,
        );
    });

    it("pin.release_prod_initial another commit than the incident's parent: where release/prod starts, and the way there", async () => {
        const root = await rootAt(4);
        const layout = shopLayout(root);
        const { clone } = layout;
        const first = await git(["rev-list", "--max-parents=0", "origin/main"], clone);
        await git(["checkout", "-q", "-b", "side", first], clone);
        fs.writeFileSync(path.join(clone, "README.md"), "# shop\n");
        await git(["add", "README.md"], clone);
        await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-q", "-m", "readme"], clone);
        const side = await git(["rev-parse", "HEAD"], clone);
        await git(["push", "-q", "origin", "side"], clone);
        editResult(layout.resultFile("pin"), { release_prod_initial: side });
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.ok(
            r.stdout.includes(
                `hint: pin.release_prod_initial is ${side.slice(0, 12)}, not the incident commit's parent ${first.slice(0, 12)}, where release/prod starts`,
            ),
            r.stdout,
        );
    });

    for (const [what, step, name, where] of [
        ["named in another case", 8, "report", (l: ReturnType<typeof shopLayout>) => path.join(l.workDir, "report.JSON")],
        ["written into the clone", 6, "promote", (l: ReturnType<typeof shopLayout>) => path.join(l.clone, "promote.json")],
        ["written at the lab's --root", 5, "drift", (l: ReturnType<typeof shopLayout>) => path.join(l.root, "drift.json")],
        ["saved with an editor's .txt", 7, "revert", (l: ReturnType<typeof shopLayout>) => path.join(l.workDir, "revert.json.txt")],
        ["saved under a name a letter off", 6, "promote", (l: ReturnType<typeof shopLayout>) => path.join(l.workDir, "promte.json")],
    ] as const)
        it(`a result file ${what}: where it is, and where the lab reads it`, async () => {
            const root = await rootAt(step);
            const layout = shopLayout(root);
            const elsewhere = where(layout);
            fs.renameSync(layout.resultFile(name), elsewhere);
            const r = await runMain("verify", ["--root", root, "--step", String(step), "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.ok(
                r.stdout.includes(
                    `hint: ${name}.json is at ${elsewhere}, not where the lab reads it: move it there (mv ${elsewhere} ${layout.resultFile(name)})`,
                ),
                r.stdout,
            );
        });

    it("a result file missing beside another of the lab's a letter or two off: not taken for it", async () => {
        const root = await rootAt(8);
        // revert and report: two letters apart, both the lab's
        fs.rmSync(shopLayout(root).resultFile("revert"));
        const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /write \S+revert\.json \(there is none yet\)/);
        assert.doesNotMatch(r.stdout, /revert\.json is at/);
        // nor report's file in another case (Report.json), which is report's to be named
        fs.renameSync(shopLayout(root).resultFile("report"), path.join(shopLayout(root).workDir, "Report.json"));
        const cased = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
        assert.doesNotMatch(cased.stdout, /revert\.json is at/, cased.out);
    });

    it("a result file left empty (jq . F > F): said empty, not the parser's words", async () => {
        await atShop(7, async (root) => {
            const file = shopLayout(root).resultFile("revert");
            fs.writeFileSync(file, "");
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: it is empty \(0 bytes\): the command that was to write it wrote nothing \(a > empties the file/);
            assert.doesNotMatch(r.stdout, /Unexpected end of JSON input/);
            // kept aside as .bak by the learner: not taken for the file saved with an editor's extension
            fs.renameSync(file, `${file}.bak`);
            const aside = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.doesNotMatch(aside.stdout, /revert\.json\.bak, not where the lab reads it/, aside.out);
        });
    });

    it("a result file written as YAML: said so, with the form JSON takes", async () => {
        const root = await rootAt(8);
        const file = shopLayout(root).resultFile("report");
        const report = JSON.parse(fs.readFileSync(file, "utf8"));
        fs.writeFileSync(
            file,
            Object.entries(report)
                .map(([k, v]) => `${k}: ${v}\n`)
                .join(""),
        );
        const r = await runMain("verify", ["--root", root, "--step", "8", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: it is YAML \(key: value lines\), not JSON: write \S+report\.json: a JSON object with the keys [^\n]*, as \{"key": value, \.\.\.\}/,
        );
    });

    it("a result file with a key twice: the key and its line", async () => {
        const root = await rootAt(3);
        const file = shopLayout(root).resultFile("incident");
        fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/\n\}\s*$/, ',\n  "dev_value": "off"\n}\n'));
        const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: it names "dev_value" twice \(line \d+\): JSON keeps the last and hides the other; write each key once/,
        );
    });

    it("release/prod pushed at another commit than pin.json names: step 4 is not done, offline too", async () => {
        const root = await rootAt(4);
        const { clone } = shopLayout(root);
        const first = await git(["rev-list", "--max-parents=0", "origin/main"], clone);
        // deleted and pushed again at a commit of its own on main's first (a README), whose flag is off too: prod shows what the pin shows
        await git(["checkout", "-q", "-b", "side", first], clone);
        fs.writeFileSync(path.join(clone, "README.md"), "# shop\n");
        await git(["add", "README.md"], clone);
        await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-q", "-m", "readme"], clone);
        const side = await git(["rev-parse", "HEAD"], clone);
        await git(["push", "-q", "origin", ":refs/heads/release/prod"], clone);
        await git(["push", "-q", "origin", `${side}:refs/heads/release/prod`], clone);
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            new RegExp(
                `release/prod starts at pin\\.release_prod_initial \\(until the promotion moves it on\\); hint: release/prod is at ${side.slice(0, 12)}, not at pin\\.release_prod_initial ${first.slice(0, 12)}`,
            ),
        );
    });

    it("an ApplicationSet applied with a misspelt repoURL: the field and the file are named", async () => {
        const at = await labAt(2);
        try {
            const { layout } = at.lab;
            const kubeconfig = path.join(layout.root, "kubeconfig");
            fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
            const set = at.lab.kube.get("ApplicationSet", "argocd", "shop")!;
            const source = set.spec!.template!.spec!.source!;
            at.lab.kube.put(
                {
                    ...set,
                    spec: {
                        ...set.spec,
                        template: {
                            ...set.spec!.template,
                            spec: {
                                ...set.spec!.template!.spec,
                                source: { ...source, repoURL: source.repoURL!.replace("shop-envs.git", "shop-env.git") },
                            },
                        },
                    },
                } as typeof set,
                "client",
            );
            await expect(
                holds("shop-dev cannot be compared", async () =>
                    ((await at.cluster.getApplication("shop-dev"))?.status?.conditions ?? []).some((c) => c.type === "ComparisonError"),
                ),
                { timeoutMs: 60_000 },
            );
            const r = await runMain("verify", ["--root", layout.root, "--step", "2", "--kubeconfig", kubeconfig]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: the cluster's ApplicationSet differs from \S+appset\.yaml in its template: spec\.source\.repoURL is "\S+shop-env\.git" there and "\S+shop-envs\.git" in the file; apply the file/,
            );
        } finally {
            await at.stop();
        }
    });

    it("Argo CD's namespace deleted: the line says the lab is set up again", async () => {
        const at = await labAt(6);
        try {
            const kubeconfig = kubeconfigAt(at);
            const kubectl = (...args: string[]) =>
                run("kubectl", ["--kubeconfig", kubeconfig, ...args]).then(
                    (r) => ({ code: 0, out: r.stdout }),
                    (e) => ({ code: 1, out: String(e.stderr ?? e) }),
                );
            assert.strictEqual((await kubectl("delete", "namespace", "argocd", "--wait=false")).code, 0);
            // a real API server takes nothing new into a namespace that is gone or going
            const applied = await kubectl("apply", "-f", at.lab.layout.appsetFile);
            assert.strictEqual(applied.code, 1, applied.out);
            assert.match(
                applied.out,
                /namespaces "argocd" not found|unable to create new content in namespace argocd because it is being terminated/,
            );
            const r = await runMain("verify", ["--root", at.lab.layout.root, "--step", "7", "--kubeconfig", kubeconfig]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /the cluster answers; hint: the namespace argocd is (gone|being deleted) \(kubectl delete namespace argocd\?\): [^\n]*set the lab up again/,
            );
        } finally {
            await at.stop();
        }
    });

    it("the wrong commit reverted: step 7 says so, and the way back grades done", async function () {
        this.timeout(600_000);
        const at = await labAt(6);
        try {
            const { layout } = at.lab;
            const kubeconfig = path.join(layout.root, "kubeconfig");
            fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
            const id = ["-c", "user.name=learner", "-c", "user.email=learner@example.org"];
            const push = async (...args: string[]) => {
                await git([...id, ...args], layout.clone);
                await git(["push", "-q", "origin", "HEAD:main"], layout.clone);
                for (const a of ["shop-dev", "shop-prod"]) await at.cluster.annotateApplication(a, { [REFRESH_ANNOTATION]: "normal" });
                return git(["rev-parse", "HEAD"], layout.clone);
            };
            const kustomization = path.join(layout.clone, "envs/dev/kustomization.yaml");
            fs.writeFileSync(kustomization, addMissingResource(fs.readFileSync(kustomization, "utf8")));
            const bad = await push("commit", "-qam", "dev: add missing.yaml");
            const devError = async () =>
                ((await at.cluster.getApplication("shop-dev"))?.status?.conditions ?? []).some((c) => c.type === "ComparisonError");
            await expect(holds("shop-dev shows the ComparisonError", devError), { timeoutMs: 120_000 });
            const incident = JSON.parse(fs.readFileSync(layout.resultFile("incident"), "utf8")).commit;
            const wrong = await push("revert", "--no-edit", incident);
            const revertJson = (revert_commit: string) =>
                fs.writeFileSync(
                    layout.resultFile("revert"),
                    JSON.stringify({
                        bad_commit: bad,
                        revert_commit,
                        dev_error: "accumulating resources: missing.yaml",
                        prod_revision_during: JSON.parse(fs.readFileSync(layout.resultFile("promote"), "utf8")).to,
                    }),
                );
            revertJson(wrong);
            const step7 = () => runMain("verify", ["--root", layout.root, "--kubeconfig", kubeconfig, "--step", "7"]);
            const r = await step7();
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 7 revert: not done: revert_commit is a revert of bad_commit \(made after it, its message, its content\); /,
            );
            assert.match(
                r.stdout,
                new RegExp(`hint: revert_commit reverts ${incident.slice(0, 12)}, not bad_commit: git revert ${bad.slice(0, 12)} `),
            );
            // the way back the hint gives: new commits only
            const right = await push("revert", "--no-edit", bad);
            await push("revert", "--no-edit", wrong);
            revertJson(right);
            // refreshed at every look: a refresh asked for while a comparison runs can be taken by it unseen
            const refreshed = async () => {
                for (const a of ["shop-dev", "shop-prod"]) await at.cluster.annotateApplication(a, { [REFRESH_ANNOTATION]: "normal" });
                return (await step7()).code === 0;
            };
            await expect(holds("step 7 done", refreshed), { timeoutMs: 120_000 });
        } finally {
            await at.stop();
        }
    });

    it("a wrong revert left on main beside the right one: step 7 is not done", async () => {
        const root = await rootAt(6);
        const layout = shopLayout(root);
        try {
            const id = ["-c", "user.name=learner", "-c", "user.email=learner@example.org"];
            const push = async (...args: string[]) => {
                await git([...id, ...args], layout.clone);
                await git(["push", "-q", "origin", "HEAD:main"], layout.clone);
                return git(["rev-parse", "HEAD"], layout.clone);
            };
            const kustomization = path.join(layout.clone, "envs/dev/kustomization.yaml");
            fs.writeFileSync(kustomization, addMissingResource(fs.readFileSync(kustomization, "utf8")));
            const bad = await push("commit", "-qam", "dev: add missing.yaml");
            await push("revert", "--no-edit", JSON.parse(fs.readFileSync(layout.resultFile("incident"), "utf8")).commit);
            const right = await push("revert", "--no-edit", bad);
            fs.writeFileSync(
                layout.resultFile("revert"),
                JSON.stringify({
                    bad_commit: bad,
                    revert_commit: right,
                    dev_error: "accumulating resources: missing.yaml",
                    prod_revision_during: JSON.parse(fs.readFileSync(layout.resultFile("promote"), "utf8")).to,
                }),
            );
            const r = await runMain("verify", ["--root", root, "--step", "7", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 7 revert: not done: main's envs\/dev renders FEATURE_CHECKOUT_V2 on \(no revert but bad_commit's left on main\); hint: a revert of another commit is still on main/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a promotion pushed to another branch: the hint names it", async () => {
        const root = await rootAt(5);
        const layout = shopLayout(root);
        const from = await git(["rev-parse", "release/prod"], layout.bareRepo);
        const to = await git(["rev-parse", "main"], layout.bareRepo);
        await git(["push", "--quiet", "origin", `${to}:refs/heads/release/production`], layout.clone);
        fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ from, to }));
        const r = await runMain("verify", ["--root", root, "--step", "6", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /hint: release\/prod has not moved from promote\.from; release\/production is at promote\.to: the push went to another branch: /,
        );
    });

    it("a --root inside the lab (its results folder) names the lab's root", async () => {
        const root = await rootAt(3);
        const r = await runMain("verify", ["--root", shopLayout(root).workDir, "--offline"]);
        assert.strictEqual(r.code, 2, r.out);
        assert.strictEqual(
            r.stderr,
            `gitops-lab verify: ${shopLayout(root).workDir} is inside the shop lab under ${root}: give its root, gitops-lab verify --root ${root}\n`,
        );
    });

    it("an appset.yaml that is not YAML: the hint names the line", async () => {
        const root = await rootAt(4);
        fs.appendFileSync(shopLayout(root).appsetFile, "  bad: [\n");
        const r = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /hint: \S+appset\.yaml is not valid YAML \(line \d+: [^)]+\): fix it there, then kubectl apply -f it\n$/);
    });

    it("appset.yaml with a trailing --- or a second document: read as kubectl does", async () => {
        const root = await rootAt(4);
        const file = shopLayout(root).appsetFile;
        fs.appendFileSync(file, "---\n");
        const trailing = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(trailing.code, 0, trailing.out);
        fs.appendFileSync(file, "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: shop\n  namespace: argocd\n");
        const two = await runMain("verify", ["--root", root, "--step", "4", "--offline"]);
        assert.strictEqual(two.code, 0, two.out);
    });

    it("a step's operator written in lower case: step 1 names it", async () => {
        const at = await tenantsAt(1);
        try {
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/strategy/rollingSync/steps/1/matchExpressions/0/operator", value: "in" },
            ]);
            const r = (await verifyTenants({ layout: at.layout, through: 1, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live ApplicationSet tenants"),
            )!;
            assert.strictEqual(r.ok, false);
            assert.match(r.hint ?? "", /^step 2's operator is not one RollingSync reads \(In or NotIn, as written: case matters\)/);
        } finally {
            await at.stop();
        }
    });

    it("a release patched into the live template, a step taken out: step 1 names each", async () => {
        const at = await tenantsAt(1);
        try {
            const hint = async () =>
                (await verifyTenants({ layout: at.layout, through: 1, cluster: at.cluster })).find((c) =>
                    c.check.startsWith("live ApplicationSet tenants"),
                )!.hint ?? "";
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/template/spec/source/path", value: `releases/${RELEASES.faulty}` },
            ]);
            assert.match(
                await hint(),
                /^the live ApplicationSet's template path is releases\/1\.2\.0, set in the cluster by hand: a release comes from each tenant's file in Git/,
            );
            // Go's form without goTemplate: Argo CD leaves it as written
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/template/spec/source/path", value: "releases/{{.release}}" },
            ]);
            const goForm = (await verifyTenants({ layout: at.layout, through: 1, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live ApplicationSet tenants"),
            )!;
            assert.strictEqual(goForm.ok, false);
            const original = (await at.cluster.getApplicationSet("tenants"))!.spec!.strategy!.rollingSync!.steps!;
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/template/spec/source/path", value: "releases/{{release}}" },
                { op: "remove", path: "/spec/strategy/rollingSync/steps/1" },
            ]);
            assert.match(
                await hint(),
                /^the live ApplicationSet has 3 steps \(.*\), not one for each of the four tenants: a step taken out does not unblock a rollout, it drops its tenant from it \(mandant-b in no step now\)/,
            );
            // mandant-c's step merged into mandant-b's: both in one step, none dropped
            const merged = JSON.parse(JSON.stringify(original));
            merged[1].matchExpressions[0].values = ["mandant-b", "mandant-c"];
            merged.splice(2, 1);
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/strategy/rollingSync/steps", value: merged },
            ]);
            assert.match(
                await hint(),
                /not one for each of the four tenants: steps merged into one do not unblock a rollout: mandant-b, mandant-c now share a step and sync together, each failing its own hook at the faulty release/,
            );
            await at.cluster.jsonPatchApplicationSet("tenants", [{ op: "remove", path: "/spec/strategy" }]);
            assert.match(
                await hint(),
                /^the live ApplicationSet has no RollingSync strategy \(taken out in the cluster\?\): without it nothing holds the tenants back/,
            );
        } finally {
            await at.stop();
        }
    });

    it("the template's label changed in the cluster: the hint names the label the steps select by", async () => {
        const at = await tenantsAt(3);
        try {
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/template/metadata/labels", value: { "example.org/Tenant": "{{tenant}}" } },
            ]);
            const check = async () =>
                (await verifyTenants({ layout: at.layout, through: 3, cluster: at.cluster })).find((c) =>
                    c.check.startsWith("live Applications track"),
                )!;
            await expect(
                holds("the Applications relabelled", async () => (await check()).ok === false),
                { timeoutMs: 60_000 },
            );
            assert.match(
                (await check()).hint ?? "",
                /^the Applications lack the label example\.org\/tenant the RollingSync steps select by \(mandant-a has [^)]*example\.org\/Tenant[^)]*\): the ApplicationSet's template labels were changed in the cluster; put it back as the lab wrote it: kubectl apply -f \S+appset\.yaml$/,
            );
            const r = await verifyServed(at, 3);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: the Applications lack the label example\.org\/tenant/);
        } finally {
            await at.stop();
        }
    });

    it("the generator pointed at another branch in the cluster: the hint says the lab's reads main", async () => {
        const at = await tenantsAt(1);
        try {
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/generators/0/git/revision", value: "fix/1.2.1" },
            ]);
            const r = (await verifyTenants({ layout: at.layout, through: 1, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live ApplicationSet tenants"),
            )!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^the live ApplicationSet's git generator reads tenants\/\*\.yaml at fix\/1\.2\.1, changed in the cluster: the lab's reads tenants\/\*\.yaml at main \(a fix goes to main, as a commit\); put it back as the lab wrote it/,
            );
        } finally {
            await at.stop();
        }
    });

    it("the last step written as NotIn the other three: the same rollout, passes", async () => {
        const at = await tenantsAt(1);
        try {
            await at.cluster.jsonPatchApplicationSet("tenants", [
                {
                    op: "replace",
                    path: "/spec/strategy/rollingSync/steps/3/matchExpressions/0",
                    value: { key: "example.org/tenant", operator: "NotIn", values: ["mandant-a", "mandant-b", "mandant-c"] },
                },
            ]);
            const check = async () =>
                (await verifyTenants({ layout: at.layout, through: 1, cluster: at.cluster })).find((c) =>
                    c.check.startsWith("live ApplicationSet tenants"),
                )!;
            assert.strictEqual((await check()).ok, true, JSON.stringify(await check()));
            // a NotIn that selects two: not the same rollout
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/strategy/rollingSync/steps/3/matchExpressions/0/values", value: ["mandant-a", "mandant-b"] },
            ]);
            assert.strictEqual((await check()).ok, false);
        } finally {
            await at.stop();
        }
    });

    it("a release patched into the live template at the stall: the hint warns of the tenants already synced at it", async () => {
        const at = await tenantsAt(2);
        try {
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/template/spec/source/path", value: `releases/${RELEASES.fixed}` },
            ]);
            const hint = async () =>
                (await verifyTenants({ layout: at.layout, through: 2, cluster: at.cluster })).find((c) =>
                    c.check.startsWith("live ApplicationSet tenants"),
                )?.hint ?? "";
            // (the tenants synced at it change as RollingSync goes on: the hint that said so is the one read)
            let said = "";
            await expect(
                holds("a tenant synced at the patched release", async () => /synced at it already/.test((said = await hint()))),
                { timeoutMs: 60_000 },
            );
            assert.match(
                said,
                /^the live ApplicationSet's template path is releases\/1\.2\.1, set in the cluster by hand: .*; (mandant-[a-d](, mandant-[a-d])*) synced at it already: once it is put back, RollingSync passes (it|them) over .*, and the lab is to be started again \(/,
            );
        } finally {
            await at.stop();
        }
    });

    it("the steps reordered, or the Applications' refresh key on the ApplicationSet: step 1 names each", async () => {
        const at = await tenantsAt(1);
        try {
            const check = async (prefix: string) =>
                (await verifyTenants({ layout: at.layout, through: 1, cluster: at.cluster })).find((c) => c.check.startsWith(prefix))!;
            const steps = (await at.cluster.getApplicationSet("tenants"))!.spec!.strategy!.rollingSync!.steps!;
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/strategy/rollingSync/steps", value: [steps[0], steps[2], steps[3], steps[1]] },
            ]);
            const reordered = await check("live ApplicationSet tenants");
            assert.strictEqual(reordered.ok, false);
            assert.match(
                reordered.hint ?? "",
                /^the live ApplicationSet's steps are in another order \(mandant-a, mandant-c, mandant-d, mandant-b\): the lab's rollout goes a, b, c, d/,
            );
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "replace", path: "/spec/strategy/rollingSync/steps", value: steps },
            ]);
            // the Applications' key written on the ApplicationSet
            await at.cluster.jsonPatchApplicationSet("tenants", [
                { op: "add", path: "/metadata/annotations", value: { "argocd.argoproj.io/refresh": "normal" } },
            ]);
            const tracks = await check("live Applications track");
            assert.ok(tracks.ok, "the annotation alone changes nothing the check reads");
            const tracked = async () =>
                (await verifyTenants({ layout: at.layout, through: 2, cluster: at.cluster })).find((c) =>
                    c.check.startsWith("live Applications track"),
                )!;
            const unpushed = await tracked();
            assert.strictEqual(unpushed.ok, false);
            assert.doesNotMatch(unpushed.hint ?? "", /refresh/, "main names no new release: the key is not why");
            // main moved on (mandant-a's release pushed), the ApplicationSet not told
            fs.writeFileSync(path.join(at.layout.clone, tenantPath("mandant-a")), tenantFile("mandant-a", RELEASES.faulty));
            await git(
                ["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-am", "mandant-a to the new release"],
                at.layout.clone,
            );
            await git(["push", "--quiet", "origin", "HEAD:main"], at.layout.clone);
            const stale = await tracked();
            assert.strictEqual(stale.ok, false);
            assert.match(
                stale.hint ?? "",
                /^the ApplicationSet carries argocd\.argoproj\.io\/refresh, the Applications' key, which the ApplicationSet controller does not read: its own is argocd\.argoproj\.io\/application-set-refresh=true/,
            );
        } finally {
            await at.stop();
        }
    });

    it("step 1 graded while main holds step 2's release already: the hint says step 2 is what to grade", async () => {
        const at = await tenantsAt(1);
        try {
            const { clone } = at.layout;
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.faulty));
            await git(
                ["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-am", `every tenant to ${RELEASES.faulty}`],
                clone,
            );
            await git(["push", "--quiet", "origin", "HEAD:main"], clone);
            await at.cluster.annotateApplicationSet("tenants", { [APPSET_REFRESH_ANNOTATION]: "true" }, "argocd");
            const rollout = async () =>
                (await verifyTenants({ layout: at.layout, through: 1, cluster: at.cluster })).find(
                    (c) => c.check === "live rollout complete",
                )!;
            await expect(
                holds("the rollout of it under way", async () => (await rollout()).ok === false),
                { timeoutMs: 60_000 },
            );
            assert.match(
                (await rollout()).hint ?? "",
                /^main holds release 1\.2\.0 for every tenant already \(step 2's push, [0-9a-f]{12}\), and its rollout is under way/,
            );
        } finally {
            await at.stop();
        }
    });

    it("step 2 graded while the push's rollout is still at step 1: wait for the stall, not healed", async function () {
        this.timeout(300_000);
        const at = await tenantsAt(2);
        try {
            // the moment right after the push: mandant-a's step under way, mandant-b's last sync the first release's
            await at.lab.argo.stop();
            const set = appset(at)!;
            const conditions = (set.status?.conditions ?? []).map((c) =>
                c.type === "RolloutProgressing" ? { ...c, message: "ApplicationSet is performing rollout of step 1" } : c,
            );
            at.lab.kube.put({ ...set, status: { ...set.status, conditions } }, "client");
            // its operation as a finished sync shows it (Succeeded), its spec already on the new release's path
            const b = app(at, "mandant-b")!;
            at.lab.kube.put(
                { ...b, status: { ...b.status, operationState: { ...b.status!.operationState!, phase: "Succeeded" } } },
                "client",
            );
            const r = await verifyServed(at, 2);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: the rollout of the push is at step 1 of 4, not at the stall yet: wait until RolloutProgressing says "ApplicationSet is performing rollout of step 2"/,
            );
            assert.doesNotMatch(r.stdout, /succeeded after all/);
        } finally {
            await at.stop();
        }
    });

    it("step 2's release committed in the git daemon's clone (its push refused): the hint says where to commit", async function () {
        this.timeout(300_000);
        const at = await tenantsAt(1);
        try {
            const served = path.join(at.layout.root, "clones", "platform");
            await git(["clone", "-q", "-b", "main", at.layout.bareRepo, served]);
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(served, tenantPath(t)), tenantFile(t, RELEASES.faulty));
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-q", "-am", "every tenant to the new release"], served);
            const r = await verifyServed(at, 2);
            assert.strictEqual(r.code, 1, r.out);
            assert.ok(
                r.stdout.includes(
                    `hint: your commit is in ${served}, a clone of the git daemon, which is read-only (its push was refused: "access denied or repository not exported"); main is where it was: make the change in the lab's clone (${at.layout.clone}) and push from there`,
                ),
                r.stdout,
            );
        } finally {
            await at.stop();
        }
    });

    it("a stall healed by hand: step 2's hint says the cluster shows no stall", async function () {
        this.timeout(300_000);
        const at = await tenantsAt(2);
        try {
            // once mandant-b's sync has given up, the learner gives its settings the keys the faulty release wants and syncs it again
            await at.givenUp();
            const settings = tenantSettings("mandant-b");
            settings.data["settings.ini"] += "news.items_per_page = 5\n";
            await at.cluster.putConfigMap(settings);
            const b = app(at, "mandant-b");
            at.lab.kube.put(
                { ...b!, operation: { sync: { revision: b!.status!.sync!.revision }, initiatedBy: { username: "learner" } } },
                "client",
            );
            await expect(
                holds(
                    "the rollout past step 2",
                    () => !/step 2$/.test(conditionOf(appset(at), "RolloutProgressing")?.message ?? "step 2"),
                    () => app(at, "mandant-b")!.status?.operationState,
                ),
                { timeoutMs: 120_000 },
            );
            const r = await verifyServed(at, 2);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: mandant-b's sync of 1\.2\.0 succeeded after all \(healed by hand\?\), so the rollout went on/);
        } finally {
            await at.stop();
        }
    });

    it("the fix pushed and the Applications refreshed, not the ApplicationSet: step 3 names the tenant skipped", async function () {
        this.timeout(300_000);
        const at = await tenantsAt(2);
        try {
            await at.givenUp();
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(at.layout.clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            await git(["commit", "--quiet", "-am", "every tenant to the fixed release"], at.layout.clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], at.layout.clone);
            // the shop lab's habit: every Application refreshed, which compares them at the new commit with their old paths
            for (const t of TENANTS_ALL) await at.cluster.annotateApplication(t, { [REFRESH_ANNOTATION]: "normal" });
            await expect(
                holds(
                    "a tenant skipped",
                    async () => (await skippedTenants(at.cluster)).length > 0,
                    () => appset(at)?.status?.applicationStatus,
                ),
                { timeoutMs: 120_000 },
            );
            // the skip as it stands (the ApplicationSet's next requeue would read Git again and move on)
            at.lab.argo.appsets.stop();
            const r = (await verifyTenants({ layout: at.layout, through: 3, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live: each site runs the release"),
            )!;
            assert.strictEqual(r.ok, false, JSON.stringify(r));
            assert.match(
                r.hint ?? "",
                /^mandant-\w \(step \d\)(, mandant-\w \(step \d\))* (was|were) skipped by RollingSync: .*the Applications refreshed after a push, not the ApplicationSet\); nothing syncs (it|them) but the next commit or a sync by hand: kubectl -n argocd patch application mandant-/,
            );
        } finally {
            await at.stop();
        }
    });

    it("step 2's push not read yet (step 1's sync mandant-b's last): no rollback is named", async function () {
        this.timeout(300_000);
        const at = await tenantsAt(1);
        try {
            at.lab.argo.appsets.stop(); // the push not read: the ApplicationSet's next look at Git is minutes away
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(at.layout.clone, tenantPath(t)), tenantFile(t, RELEASES.faulty));
            await git(["commit", "--quiet", "-am", "every tenant to the new release"], at.layout.clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], at.layout.clone);
            const r = (await verifyTenants({ layout: at.layout, through: 2, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live rollout at step 2"),
            )!;
            assert.strictEqual(r.ok, false, JSON.stringify(r));
            assert.doesNotMatch(r.hint ?? "", /rollback|healed by hand/);
        } finally {
            await at.stop();
        }
    });

    it("mandant-b rolled back at the stall: step 2's hint names the rollback", async function () {
        this.timeout(300_000);
        const at = await tenantsAt(2);
        try {
            // the learner's way out: mandant-b's tenant file back to the release it ran, pushed, the ApplicationSet refreshed
            await at.givenUp();
            fs.writeFileSync(path.join(at.layout.clone, tenantPath("mandant-b")), tenantFile("mandant-b", RELEASES.first));
            await git(["commit", "--quiet", "-am", "mandant-b back"], at.layout.clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], at.layout.clone);
            const set = appset(at)!;
            at.lab.kube.put(
                {
                    ...set,
                    metadata: {
                        ...set.metadata,
                        annotations: { ...set.metadata.annotations, "argocd.argoproj.io/application-set-refresh": "true" },
                    },
                },
                "client",
            );
            await expect(
                holds(
                    "the rollout past step 2, mandant-b's sync at the release rolled back to done",
                    () =>
                        !/step 2$/.test(conditionOf(appset(at), "RolloutProgressing")?.message ?? "step 2") &&
                        app(at, "mandant-b")!.status?.operationState?.phase === "Succeeded",
                    () => app(at, "mandant-b")!.status?.operationState,
                ),
                { timeoutMs: 120_000 },
            );
            const r = await verifyServed(at, 2);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: mandant-b was synced at release 1\.1\.0 after its sync of 1\.2\.0 failed \(a rollback of mandant-b\)/,
            );
            assert.doesNotMatch(r.stdout, /healed by hand/);
        } finally {
            await at.stop();
        }
    });

    it("verify without --lab on a tenants lab: the answer names it", async () => {
        await atTenants(1, async (root) => {
            const r = await runMain("verify", ["--root", root, "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            // led by the lab that is here: the tenants lab's bare folder is no shop lab "ready and not begun"
            assert.match(
                r.stderr,
                /^gitops-lab verify: no shop lab is begun under \S+, but the tenants lab is \(at step 1\): gitops-lab verify --lab tenants --root \S+; to start the shop lab here, its step 1 is yours to do/,
            );
            assert.doesNotMatch(r.stderr, /ready and not begun/);
            const step = await runMain("verify", ["--root", root, "--offline", "--step", "2"]);
            assert.strictEqual(step.code, 1, step.out);
            assert.match(step.stdout, /; the tenants lab is here \(at step 1\): gitops-lab verify --lab tenants --root \S+\n$/);
        });
    });

    it("a release rewritten by a search and replace over the whole repository: stall.commit and recovery.commit are refused", async () => {
        /** `from` replaced by `to` in every file of the clone (tenants/ and releases/ alike), committed and pushed. */
        const replaceAll = async (clone: string, from: string, to: string) => {
            const files = (await git(["ls-files"], clone)).split("\n").filter(Boolean);
            for (const f of files) {
                const p = path.join(clone, f);
                const text = fs.readFileSync(p, "utf8");
                if (text.includes(from)) fs.writeFileSync(p, text.split(from).join(to));
            }
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", `bump to ${to}`], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            return git(["rev-parse", "HEAD"], clone);
        };
        const refused = async (root: string, name: string, through: number) =>
            (await verifyTenants({ layout: tenantsLayout(root), through })).find((c) =>
                c.check.startsWith(`${name}.commit leaves the shipped releases`),
            );
        await atTenants(1, async (root) => {
            const layout = tenantsLayout(root);
            const commit = await replaceAll(layout.clone, RELEASES.first, RELEASES.faulty);
            fs.writeFileSync(layout.resultFile("stall"), JSON.stringify({ commit }));
            const c = await refused(root, "stall", 2);
            assert.strictEqual(c?.ok, false, JSON.stringify(c));
            assert.match(
                String(c?.hint),
                new RegExp(
                    `^stall\\.commit [0-9a-f]{12} changes releases/${RELEASES.first.replace(/\./g, "\\.")} too \\(a search and replace over the whole repository\\?\\): a release ships as it is`,
                ),
            );
        });
        await atTenants(2, async (root) => {
            const layout = tenantsLayout(root);
            // the solver's stall made by the tenants' files alone: this check passes it
            assert.strictEqual((await refused(root, "stall", 2))?.ok, true);
            const commit = await replaceAll(layout.clone, RELEASES.faulty, RELEASES.fixed);
            fs.writeFileSync(layout.resultFile("recovery"), JSON.stringify({ commit }));
            const c = await refused(root, "recovery", 3);
            assert.strictEqual(c?.ok, false, JSON.stringify(c));
            assert.match(String(c?.hint), /^recovery\.commit [0-9a-f]{12} changes releases\/1\.2\.0 too/);
        });
    });

    it("the fix made with the faulty release deleted: said at once, and that a later commit putting it back undoes nothing", async () => {
        await atTenants(2, async (root) => {
            const { clone, resultFile } = tenantsLayout(root);
            for (const t of TENANTS_ALL) {
                const f = path.join(clone, "tenants", `${t}.yaml`);
                fs.writeFileSync(f, fs.readFileSync(f, "utf8").replace(RELEASES.faulty, RELEASES.fixed));
            }
            await git(["rm", "-rq", `releases/${RELEASES.faulty}`], clone);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", "1.2.1; drop 1.2.0"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const commit = await git(["rev-parse", "HEAD"], clone);
            fs.writeFileSync(resultFile("recovery"), JSON.stringify({ commit }));
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: main has no releases\/1\.2\.0\/: recovery\.commit [0-9a-f]{12} took it out with the step's change; [^\n]*start the lab again \([^\n]*--through 2/,
            );
            const shipped = (await verifyTenants({ layout: tenantsLayout(root), through: 3 })).find((c) =>
                c.check.startsWith("recovery.commit leaves the shipped releases"),
            );
            assert.match(
                String(shipped?.hint),
                /^recovery\.commit [0-9a-f]{12} deletes releases\/1\.2\.0 \(a clean-up of a release\?\): a release ships as it is, and a later commit putting it back leaves this one as it is/,
            );
        });
    });

    // given the faulty release taken out by the commit stall.json names, and a fix that leaves releases/ alone, then
    // the hint names the stall's commit (the one whose change took it out), not the fix's
    it("the faulty release taken out by stall.json's commit: the hint names that step", async () => {
        await atTenants(2, async (root) => {
            const { clone, resultFile } = tenantsLayout(root);
            await git(["rm", "-rq", `releases/${RELEASES.faulty}`], clone);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qm", "drop 1.2.0"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const dropped = await git(["rev-parse", "HEAD"], clone);
            const stall = JSON.parse(fs.readFileSync(resultFile("stall"), "utf8"));
            fs.writeFileSync(resultFile("stall"), JSON.stringify({ ...stall, commit: dropped }));
            fs.writeFileSync(resultFile("recovery"), JSON.stringify({ commit: stall.commit }));
            const check = (await verifyTenants({ layout: tenantsLayout(root), through: 3 })).find((c) =>
                c.check.startsWith(`only release ${RELEASES.faulty} ships`),
            );
            assert.match(
                String(check?.hint),
                /^main has no releases\/1\.2\.0\/: stall\.commit [0-9a-f]{12} took it out with the step's change; [^\n]*--through 1/,
            );
        });
    });

    it("stall.auto_sync_disabled_by_rollingsync false: the hint says where to look", async () => {
        await atTenants(2, async (root) => {
            editResult(tenantsLayout(root).resultFile("stall"), { auto_sync_disabled_by_rollingsync: false });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: auto_sync_disabled_by_rollingsync holds false: whether RollingSync wrote automated\.enabled: false into the Applications: look, don't guess \(kubectl -n argocd get applications -o custom-columns=NAME:\.metadata\.name,ENABLED:\.spec\.syncPolicy\.automated\.enabled shows what each holds\)/,
            );
        });
    });

    it("the doctor's --json saved as stall.json: the hint says so", async () => {
        await atTenants(2, async (root) => {
            fs.writeFileSync(tenantsLayout(root).resultFile("stall"), JSON.stringify({ applicationSets: [] }));
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: stall\.json lacks [^\n]* and holds applicationSets, which it does not take \(the doctor's --json output\? [^\n]*\): write an object with exactly the keys /,
            );
        });
    });

    it("the ApplicationSet deleted and applied again at the stall: the hint says the rollout began again", async () => {
        const at = await tenantsAt(2);
        try {
            const set = at.lab.kube.get("ApplicationSet", "argocd", "tenants")!;
            at.lab.kube.remove("ApplicationSet", "argocd", "tenants", "client");
            await expect(
                holds(
                    "the ApplicationSet and its Applications gone",
                    async () => !at.lab.kube.get("ApplicationSet", "argocd", "tenants") && !(await at.cluster.getApplication("mandant-c")),
                ),
                { timeoutMs: 60_000 },
            );
            at.lab.kube.put(
                { apiVersion: set.apiVersion, kind: set.kind, metadata: { name: "tenants", namespace: "argocd" }, spec: set.spec },
                "client",
            );
            await expect(
                holds(
                    "mandant-c made again, its site gone",
                    async () =>
                        !!(await at.cluster.getApplication("mandant-c")) &&
                        !(await at.cluster.getWorkload("Deployment", "mandant-c", "site")),
                ),
                { timeoutMs: 60_000 },
            );
            const r = (await verifyTenants({ layout: at.layout, through: 2, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live: each site runs"),
            )!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^the ApplicationSet tenants was made again after stall\.commit \(at \S+: deleted, then applied\?\)/,
            );
        } finally {
            await at.stop();
        }
    });

    it("mandant-b's Application deleted at the stall: the hint says its site went with it", async () => {
        const at = await tenantsAt(2);
        try {
            at.lab.kube.remove("Application", "argocd", "mandant-b", "client");
            const site = () => at.cluster.getWorkload("Deployment", "mandant-b", "site");
            await expect(
                holds(
                    "mandant-b's site gone, its Application made again",
                    async () => !(await site()) && !!(await at.cluster.getApplication("mandant-b")),
                ),
                { timeoutMs: 60_000 },
            );
            await expect(
                holds(
                    "mandant-b's health Missing",
                    async () => (await at.cluster.getApplication("mandant-b"))?.status?.health?.status === "Missing",
                ),
                { timeoutMs: 60_000 },
            );
            const r = (await verifyTenants({ layout: at.layout, through: 2, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live: each site runs"),
            )!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^mandant-b runs nothing: its site is gone while its Application is there, health Missing \(its Deployment deleted by hand, or the Application deleted/,
            );
        } finally {
            await at.stop();
        }
    });

    it("stall.waiting with the blocked tenant, stall.json the doctor's text: each named", async () => {
        await atTenants(2, async (root) => {
            const file = tenantsLayout(root).resultFile("stall");
            const good = fs.readFileSync(file, "utf8");
            editResult(file, { waiting: ["mandant-b", "mandant-c", "mandant-d"] });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.match(
                r.stdout,
                /hint: waiting holds \["mandant-b","mandant-c","mandant-d"\]: mandant-b is the blocked one \(blocking\), not one that waits/,
            );
            fs.writeFileSync(file, "tenants: rollout stuck at step 2 of 4 for under a minute — mandant-b: PreSync hook Job failed\n");
            const t = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.match(t.stdout, /hint: it holds the rollout doctor's text \(its summary line\), not JSON: write /);
            fs.writeFileSync(file, good);
        });
    });

    it("stall.json's names in the doctor's shapes, stall.commit step 1's: each named", async () => {
        await atTenants(2, async (root) => {
            const file = tenantsLayout(root).resultFile("stall");
            const good = fs.readFileSync(file, "utf8");
            const step2 = async () => (await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"])).stdout;
            editResult(file, {
                waiting: [
                    { application: "mandant-c", step: 3 },
                    { application: "mandant-d", step: 4 },
                ],
            });
            assert.match(
                await step2(),
                /waiting\[0\] holds \{[^}]*\}, an object as the doctor's --json lists it: write the Application's name alone, as a string \("mandant-c"\)/,
            );
            editResult(file, { waiting: ["mandant-c (step 3)", "mandant-d (step 4)"] });
            assert.match(await step2(), /waiting holds [^:]*: write the Applications' names alone, as strings/);
            fs.writeFileSync(file, good);
            const first = await git(["rev-parse", "origin/main~1"], tenantsLayout(root).clone);
            editResult(file, { commit: first });
            assert.match(
                await step2(),
                /hint: stall\.commit [0-9a-f]{12} has every tenant at 1\.1\.0, a commit before the one that sets 1\.2\.0 \(an earlier commit, or one pushed with it\): write the SHA of the commit that sets 1\.2\.0/,
            );
        });
    });

    it("recovery's running as the site's image, order without mandant-a or with one twice: each named", async () => {
        await atTenants(3, async (root) => {
            const file = tenantsLayout(root).resultFile("recovery");
            const r0 = JSON.parse(fs.readFileSync(file, "utf8"));
            const step3 = async () => (await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"])).stdout;
            editResult(file, {
                running: Object.fromEntries(Object.keys(r0.running).map((t) => [t, "registry.lab.internal/tenants/site:1.2.1"])),
            });
            assert.match(
                await step3(),
                /"registry\.lab\.internal\/tenants\/site:1\.2\.1" is not how the lab writes a release: write "1\.2\.1"/,
            );
            editResult(file, { running: r0.running, order: r0.order.slice(1) });
            assert.match(await step3(), /hint: order leaves out mandant-a: it lists all four tenants by step/);
            // an entry listed twice (appended to the list): named
            editResult(file, { order: [...r0.order, r0.order[1]] });
            assert.match(await step3(), /hint: order lists mandant-b more than once \(5 entries\): it lists each of the four tenants once/);
            // one twice, another left out (still four entries): both named
            editResult(file, { order: [r0.order[0], r0.order[1], r0.order[1], r0.order[3]] });
            assert.match(
                await step3(),
                /hint: order lists mandant-b more than once \(4 entries\) and leaves out mandant-c: [^\n]*and add the one left out/,
            );
        });
    });

    it("the faulty release's folder taken out of main: the hint says to put it back, not to rebuild", async () => {
        await atTenants(2, async (root) => {
            const { clone } = tenantsLayout(root);
            await git(["rm", "-rq", `releases/${RELEASES.faulty}`], clone);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qm", "clean up"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "1", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: main has no releases\/1\.2\.0\/ \(taken out by a later commit\?\): the lab keeps every release, the faulty one too; put it back/,
            );
        });
    });

    it("stall.blocking as the doctor's --json objects, hook_job in argocd, as the Application, or bare: each named", async () => {
        await atTenants(2, async (root) => {
            const file = tenantsLayout(root).resultFile("stall");
            const step2 = async () => (await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"])).stdout;
            const stall = JSON.parse(fs.readFileSync(file, "utf8"));
            editResult(file, { blocking: [{ application: "mandant-b", reason: "SyncRetrying", message: "x", hook: null }] });
            assert.match(
                await step2(),
                /hint: it holds a list of one object as the doctor's --json lists them: write the Application's name alone, as a string \("mandant-b"\)/,
            );
            editResult(file, { blocking: stall.blocking, hook_job: "argocd/site-setup" });
            assert.match(
                await step2(),
                /hook_job holds "argocd\/site-setup": argocd\/site-setup names namespace argocd: a hook Job runs in its Application's destination namespace, the tenant's/,
            );
            editResult(file, { blocking: stall.blocking, hook_job: "argocd/mandant-b" });
            assert.match(
                await step2(),
                /hook_job holds "argocd\/mandant-b": argocd\/mandant-b names the Application, not its hook Job: write the Job/,
            );
            editResult(file, { blocking: stall.blocking, hook_job: "job.batch/site-setup" });
            assert.match(
                await step2(),
                /hook_job holds "job\.batch\/site-setup": job\.batch\/site-setup holds kubectl's type prefix \(job\.batch\/, as -o name prints it\), not a namespace/,
            );
            editResult(file, { blocking: stall.blocking, hook_job: "site-setup" });
            assert.match(await step2(), /hook_job holds "site-setup": site-setup has no namespace: write it as namespace\/name/);
        });
    });

    it("stall.json never written, the fix on main since: the hint says the stall is over", async () => {
        await atTenants(3, async (root) => {
            fs.rmSync(tenantsLayout(root).resultFile("stall"));
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: stall\.json was not written while the rollout stalled, and main's fix \(every tenant at 1\.2\.1\) has ended that stall/,
            );
            assert.doesNotMatch(r.stdout, /refresh the ApplicationSet after the push/);
        });
    });

    it("stall.detected_after_seconds 0: the hint says no rollout stalls at its push", async () => {
        await atTenants(2, async (root) => {
            editResult(tenantsLayout(root).resultFile("stall"), { detected_after_seconds: 0 });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: detected_after_seconds holds 0, which no rollout takes: the seconds from your push/);
        });
    });

    it("recovery.seconds 0, or shorter than from the fix's push to the last healthy_at: named", async () => {
        await atTenants(3, async (root) => {
            const file = tenantsLayout(root).resultFile("recovery");
            editResult(file, { seconds: 0 });
            const zero = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(zero.code, 1, zero.out);
            assert.match(zero.stdout, /hint: seconds holds 0, which no rollout takes: the whole seconds from your push of the fix/);
            // the last tenant Healthy 200 s after the push (within the 5 minutes allowed a cluster's clock): 1 s is too short
            const r = JSON.parse(fs.readFileSync(file, "utf8"));
            const later = new Date(Date.now() + 200_000).toISOString();
            editResult(file, {
                seconds: 1,
                order: r.order.map((o: object, i: number) => (i === r.order.length - 1 ? { ...o, healthy_at: later } : o)),
            });
            const short = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(short.code, 1, short.out);
            assert.match(
                short.stdout,
                /hint: seconds holds 1, shorter than the rollout took: recovery\.commit was pushed \(by the repository's reflog\) \d+ s before the last tenant turned Healthy/,
            );
        });
    });

    it("a second file for one tenant (a duplicate name): the Applications' check names it", async () => {
        const at = await tenantsAt(2);
        try {
            const duplicate = Object.assign(Object.create(at.cluster), {
                getApplicationSet: async (name: string, ns?: string) => {
                    const s = (await at.cluster.getApplicationSet(name, ns))!;
                    const conditions = [
                        ...(s.status?.conditions ?? []),
                        {
                            type: "ErrorOccurred",
                            status: "True",
                            reason: "ApplicationValidationError",
                            message: "ApplicationSet tenants contains applications with duplicate name: mandant-a",
                        },
                    ];
                    return { ...s, status: { ...s.status, conditions } };
                },
            }) as typeof at.cluster;
            const r = (await verifyTenants({ layout: at.layout, through: 3, cluster: duplicate })).find((c) =>
                c.check.startsWith("live Applications track"),
            )!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^the ApplicationSet makes two Applications named mandant-a \("contains applications with duplicate name"\)/,
            );
        } finally {
            await at.stop();
        }
    });

    it("a fifth tenant onboarded after the lab, no step for it: the rollout check names the lab's tenants, and passes", async () => {
        const at = await tenantsAt(3);
        try {
            const { clone } = at.layout;
            fs.writeFileSync(path.join(clone, "tenants", "mandant-e.yaml"), 'tenant: mandant-e\nrelease: "1.2.1"\n');
            await git(["add", "-A"], clone);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qm", "onboard mandant-e"], clone);
            await git(["push", "-q", "origin", "main"], clone);
            const set = appset(at)!;
            at.lab.kube.put(
                {
                    ...set,
                    metadata: { ...set.metadata, annotations: { ...set.metadata.annotations, [APPSET_REFRESH_ANNOTATION]: "true" } },
                },
                "client",
            );
            const waiting = () => appset(at)?.status?.applicationStatus?.find((e) => e.application === "mandant-e");
            await expect(
                holds("mandant-e's entry, which no step selects", () => waiting()?.step === "-1"),
                { timeoutMs: 60_000 },
            );
            const r = (await verifyTenants({ layout: at.layout, through: 3, cluster: at.cluster })).find((c) =>
                c.check.startsWith("live rollout complete"),
            )!;
            assert.strictEqual(r.check, "live rollout complete: the lab's 4 tenants Healthy in status.applicationStatus");
            assert.strictEqual(r.ok, true, JSON.stringify(r));
            // and a tenant of the lab's whose entry is not Healthy fails it, named, whatever the condition says
            const notHealthy = Object.assign(Object.create(at.cluster), {
                getApplicationSet: async (name: string, ns?: string) => {
                    const s = (await at.cluster.getApplicationSet(name, ns))!;
                    const entries = (s.status?.applicationStatus ?? []).map((e) =>
                        e.application === "mandant-c" ? { ...e, status: "Waiting" } : e,
                    );
                    return { ...s, status: { ...s.status, applicationStatus: entries } };
                },
            }) as typeof at.cluster;
            const failed = (await verifyTenants({ layout: at.layout, through: 3, cluster: notHealthy })).find((c) =>
                c.check.startsWith("live rollout complete"),
            )!;
            assert.strictEqual(failed.ok, false);
            assert.match(failed.found ?? "", /"unhealthy":\["mandant-c"\]/);
        } finally {
            await at.stop();
        }
    });

    it("step 3 graded while the fix's rollout is under way: the hint says to wait for it", async () => {
        const at = await tenantsAt(3);
        try {
            // the ApplicationSet as it stands mid-rollout: its RolloutProgressing at step 3
            const midway = Object.assign(Object.create(at.cluster), {
                getApplicationSet: async (name: string, ns?: string) => {
                    const s = (await at.cluster.getApplicationSet(name, ns))!;
                    const conditions = (s.status?.conditions ?? []).map((c) =>
                        c.type === "RolloutProgressing" ? { ...c, message: "ApplicationSet is performing rollout of step 3" } : c,
                    );
                    return { ...s, status: { ...s.status, conditions } };
                },
            }) as typeof at.cluster;
            const r = (await verifyTenants({ layout: at.layout, through: 3, cluster: midway })).find((c) =>
                c.check.startsWith("live rollout complete"),
            )!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^the rollout is still under way \(step 3 of 4\): wait until RolloutProgressing says .*; if it does not move on, gitops-lab doctor says what step 3 waits for$/,
            );
        } finally {
            await at.stop();
        }
    });

    it("recovery.order's times written by hand: the check reads the ApplicationSet's own", async () => {
        const at = await tenantsAt(3);
        try {
            const file = at.layout.resultFile("recovery");
            const r0 = JSON.parse(fs.readFileSync(file, "utf8"));
            const check = async () =>
                (await verifyTenants({ layout: at.layout, through: 3, cluster: at.cluster })).find((c) =>
                    c.check.startsWith("live: recovery.order's healthy_at"),
                )!;
            assert.ok((await check()).ok, "the solver's own times are the ApplicationSet's");
            const made = new Date(Date.parse(r0.order[0].healthy_at) - 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
            editResult(file, { order: r0.order.map((o: object) => ({ ...o, healthy_at: made })) });
            const r = await check();
            assert.strictEqual(r.ok, false);
            assert.match(r.hint ?? "", /^healthy_at is when the ApplicationSet marked the tenant Healthy, its entry's lastTransitionTime/);
            // a later commit's rollout (a README pushed after the lab): its entries are not the fix's, and nothing is compared
            const later = Object.assign(Object.create(at.cluster), {
                getApplicationSet: async (name: string, ns?: string) => {
                    const s = (await at.cluster.getApplicationSet(name, ns))!;
                    const entries = (s.status?.applicationStatus ?? []).map((e) => ({
                        ...e,
                        targetRevisions: ["f".repeat(40)],
                        lastTransitionTime: new Date(Date.now() + 3_600_000).toISOString(),
                    }));
                    return { ...s, status: { ...s.status, applicationStatus: entries } };
                },
            }) as typeof at.cluster;
            editResult(file, { order: r0.order });
            const after = (await verifyTenants({ layout: at.layout, through: 3, cluster: later })).find((c) =>
                c.check.startsWith("live: recovery.order's healthy_at"),
            );
            assert.ok(!after || after.ok, JSON.stringify(after));
        } finally {
            await at.stop();
        }
    });

    it("recovery.order's times read before the fix's rollout: said; the strategy put back: the files' times stand", async () => {
        const at = await tenantsAt(3);
        try {
            const file = at.layout.resultFile("recovery");
            const r0 = JSON.parse(fs.readFileSync(file, "utf8"));
            const check = async () =>
                (await verifyTenants({ layout: at.layout, through: 3, cluster: at.cluster })).find((c) =>
                    c.check.startsWith("live: recovery.order's healthy_at"),
                );
            // the stall's rollout's times, a minute before the fix was made (within the offline check's skew)
            const made = Date.parse(
                execFileSync("git", ["show", "-s", "--format=%cI", r0.commit], { cwd: at.layout.clone, encoding: "utf8" }).trim(),
            );
            const earlier = new Date(made - 90_000).toISOString();
            editResult(file, { order: r0.order.map((o: object) => ({ ...o, healthy_at: earlier })) });
            const read = await check();
            assert.strictEqual(read?.ok, false);
            assert.match(
                read?.hint ?? "",
                /^these healthy_at are before recovery\.commit was made \(\S+\): read before the fix's rollout ran, they are an earlier rollout's; read each entry's lastTransitionTime again once the rollout of recovery\.commit is complete/,
            );
            // the times a minute (or two) off the ApplicationSet's: not its entries' times; rounded to the second, they are
            for (const [by, ok] of [
                [120_000, false],
                [60_000, false],
                [0, true],
            ] as const) {
                const shifted = r0.order.map((o: { healthy_at: string }) => ({
                    ...o,
                    healthy_at: new Date(Date.parse(o.healthy_at) - by).toISOString().replace(/\.\d+Z$/, "Z"),
                }));
                editResult(file, { order: shifted });
                assert.strictEqual((await check())?.ok, ok, `${by} ms off`);
            }
            // the strategy taken out (AllAtOnce) and put back: the entries are made anew, their times the put-back's, and
            // the file's are graded offline alone
            const set = (await at.cluster.getApplicationSet("tenants"))!;
            await at.cluster.jsonPatchApplicationSet("tenants", [{ op: "replace", path: "/spec/strategy", value: { type: "AllAtOnce" } }]);
            await expect(
                holds(
                    "the entries cleared",
                    async () => !(await at.cluster.getApplicationSet("tenants"))?.status?.applicationStatus?.length,
                ),
                { timeoutMs: 60_000 },
            );
            await at.cluster.jsonPatchApplicationSet("tenants", [{ op: "replace", path: "/spec/strategy", value: set.spec!.strategy }]);
            await expect(
                holds("every entry made anew, Healthy", async () => {
                    const entries = (await at.cluster.getApplicationSet("tenants"))?.status?.applicationStatus ?? [];
                    return entries.length === 4 && entries.every((e) => e.status === "Healthy" && e.message === SYNCED_HEALTHY_MESSAGE);
                }),
                { timeoutMs: 60_000 },
            );
            const after = await check();
            assert.ok(!after || after.ok, JSON.stringify(after));
            const r = await verifyServed(at, 3);
            assert.strictEqual(r.code, 0, r.out);
        } finally {
            await at.stop();
        }
    });

    it("stall.running keyed namespace/name: the hint says the tenants' names alone", async () => {
        await atTenants(2, async (root) => {
            const file = tenantsLayout(root).resultFile("stall");
            const { running } = JSON.parse(fs.readFileSync(file, "utf8"));
            editResult(file, { running: Object.fromEntries(Object.entries(running).map(([k, v]) => [`argocd/${k}`, v])) });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: running's key argocd\/mandant-\w has a namespace: the keys are the tenants' names alone/);
        });
    });

    it("a tenant's file renamed in stall.commit: the hint names the file the generator does not read", async () => {
        await atTenants(2, async (root) => {
            const { clone, resultFile } = tenantsLayout(root);
            await git(["mv", "tenants/mandant-b.yaml", "tenants/mandant-b.yml"], clone);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qm", "rename"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            editResult(resultFile("stall"), { commit: await git(["rev-parse", "HEAD"], clone), step: 3, blocking: "mandant-c" });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: stall\.commit has no tenants\/mandant-b\.yaml \(renamed\?\): the git files generator reads tenants\/\*\.yaml alone/,
            );
        });
    });

    it("the stall rolled back before the fix: step 3's hint says the fix goes on the stall", async () => {
        await atTenants(2, async (root) => {
            const { clone, resultFile } = tenantsLayout(root);
            const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
            await git([...id, "revert", "--no-edit", "HEAD"], clone);
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            await git([...id, "commit", "-qam", "fix"], clone);
            await git(["push", "-q", "origin", "HEAD:main"], clone);
            const fix = await git(["rev-parse", "HEAD"], clone);
            fs.writeFileSync(resultFile("recovery"), JSON.stringify({ commit: fix, release: RELEASES.fixed, order: [], seconds: 1 }));
            const r = (await verifyTenants({ layout: tenantsLayout(root), through: 3 })).find((c) =>
                c.check.startsWith("recovery.commit sets every tenant"),
            )!;
            assert.strictEqual(r.ok, false, JSON.stringify(r));
            assert.match(r.hint ?? "", /the fix goes on top of the stalled release \(every tenant at 1\.2\.0\)/);
        });
    });

    it("stall.commit setting one tenant alone, waiting written empty: the commit is named first", async () => {
        await atTenants(2, async (root) => {
            const { clone, resultFile } = tenantsLayout(root);
            const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
            const stall = JSON.parse(fs.readFileSync(resultFile("stall"), "utf8")).commit;
            await git(["checkout", "-q", "-b", "one", `${stall}^`], clone);
            fs.writeFileSync(path.join(clone, tenantPath("mandant-b")), tenantFile("mandant-b", RELEASES.faulty));
            await git([...id, "commit", "-qam", "mandant-b alone"], clone);
            await git(["push", "-q", "origin", "one"], clone);
            editResult(resultFile("stall"), { commit: await git(["rev-parse", "HEAD"], clone), waiting: [] });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 2 stall: not done: stall\.commit sets every tenant to 1\.2\.0, on top of every tenant at 1\.1\.0/,
            );
        });
    });

    it("stall.hook_error as the log prints it, indented: taken", async () => {
        await atTenants(2, async (root) => {
            editResult(tenantsLayout(root).resultFile("stall"), { hook_error: `  ${HOOK_ERROR}` });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 0, r.out);
        });
    });

    it("stall.hook_error as the log's block: the hint says one line", async () => {
        await atTenants(2, async (root) => {
            editResult(tenantsLayout(root).resultFile("stall"), { hook_error: `In ConfigurationManager.php line 387:\n\n  ${HOOK_ERROR}` });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: hook_error holds 2 lines: write only the script's own error line/);
        });
    });

    it("recovery.order with mandant-c Healthy before mandant-b: the hint names both, with their times", async () => {
        await atTenants(3, async (root) => {
            const file = tenantsLayout(root).resultFile("recovery");
            const r = JSON.parse(fs.readFileSync(file, "utf8"));
            const b = r.order.find((o: { application: string }) => o.application === "mandant-b").healthy_at;
            const early = new Date(Date.parse(b) - 1000).toISOString();
            editResult(file, {
                order: r.order.map((o: { application: string }) => (o.application === "mandant-c" ? { ...o, healthy_at: early } : o)),
            });
            const out = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(out.code, 1, out.out);
            assert.ok(
                out.stdout.includes(
                    `hint: order has mandant-c (step 3) at ${early}, before mandant-b (step 2) at ${b}: from the blocked step on`,
                ),
                out.stdout,
            );
        });
    });

    it("stall.hook_error in quotes, or with a prefix: each hint says which", async () => {
        await atTenants(2, async (root) => {
            const file = tenantsLayout(root).resultFile("stall");
            editResult(file, { hook_error: `"${HOOK_ERROR}"` });
            const quoted = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(quoted.code, 1, quoted.out);
            assert.match(
                quoted.stdout,
                /hint: hook_error holds the error line inside quotes \(as the doctor's line quotes it\): write the line alone, without them/,
            );
            editResult(file, { hook_error: `Error: ${HOOK_ERROR}` });
            const prefixed = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.match(
                prefixed.stdout,
                /hint: hook_error holds the error line with more around it \(spaces, a prefix\): write the line alone, trimmed/,
            );
        });
    });

    it("stall.running copied from Git (every tenant at the release): running is named, not the right waiting", async () => {
        await atTenants(2, async (root) => {
            const file = tenantsLayout(root).resultFile("stall");
            const { running } = JSON.parse(fs.readFileSync(file, "utf8"));
            editResult(file, { running: Object.fromEntries(Object.keys(running).map((t) => [t, RELEASES.faulty])) });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: running\.mandant-b holds "1\.2\.0", but mandant-b runs 1\.1\.0 at the stall/);
            assert.doesNotMatch(r.stdout, /waiting holds/);
        });
    });

    it("recovery.order's healthy_at half an hour later than now: named", async () => {
        await atTenants(3, async (root) => {
            const file = tenantsLayout(root).resultFile("recovery");
            const { order } = JSON.parse(fs.readFileSync(file, "utf8"));
            const later = order.map((o: any) => ({
                ...o,
                healthy_at: new Date(Date.now() + 30 * 60_000).toISOString().replace(/\.\d+Z$/, "Z"),
            }));
            editResult(file, { order: later });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: mandant-a's \S+, mandant-b's \S+, mandant-c's \S+, mandant-d's \S+ are later than now: read each time from the ApplicationSet's status\.applicationStatus/,
            );
        });
    });

    it("the fix made on a branch and merged (--no-ff), recovery.commit the branch's: the merge is named", async function () {
        this.timeout(300_000);
        const at = await tenantsAt(2);
        try {
            await at.givenUp();
            const { clone } = at.layout;
            const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
            await git(["checkout", "-q", "-b", "fix"], clone);
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            await git([...id, "commit", "-qam", "fix"], clone);
            const fix = await git(["rev-parse", "HEAD"], clone);
            await git(["checkout", "-q", "main"], clone);
            await git([...id, "merge", "-q", "--no-ff", "fix", "-m", "merge the fix"], clone);
            await git(["push", "-q", "origin", "main"], clone);
            const merge = await git(["rev-parse", "HEAD"], clone);
            await recoveryAfter(at, merge, fix);
            const r = await verifyServed(at, 3);
            assert.strictEqual(r.code, 1, r.out);
            assert.ok(
                r.stdout.includes(
                    `recovery.commit ${fix.slice(0, 12)} is a side branch's commit that a merge brought into main; the rollout ran the merge, ${merge.slice(0, 12)}`,
                ),
                r.stdout,
            );
        } finally {
            await at.stop();
        }
    });

    // given the fix pushed and the ApplicationSet not refreshed, then step 3 says it has not read the push, with the refresh
    it("the fix pushed, the ApplicationSet not refreshed: the refresh is named", async function () {
        this.timeout(300_000);
        const at = await tenantsAt(2);
        try {
            await at.givenUp();
            const { clone } = at.layout;
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", "fix"], clone);
            await git(["push", "-q", "origin", "main"], clone);
            const r = await verifyServed(at, 3);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /main sets 1\.2\.1 for every tenant \([0-9a-f]{12}\), but no Application reads releases\/1\.2\.1 yet: the ApplicationSet has not read the push \(it reads Git again every 3 minutes\); refresh it: kubectl -n argocd annotate applicationset tenants argocd\.argoproj\.io\/application-set-refresh=true --overwrite/,
            );
        } finally {
            await at.stop();
        }
    });

    // given the stall's commit amended into the fix, its push refused, then git pull (a merge, the learner's commit its
    // first parent) pushed: main went from the stall to the fix in one fast-forward, and the step is done
    it("the fix brought onto main by git pull's merge: done", async function () {
        this.timeout(300_000);
        const at = await tenantsAt(2);
        try {
            await at.givenUp();
            const { clone } = at.layout;
            const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            await git([...id, "commit", "-q", "--amend", "-am", "fix"], clone);
            await git([...id, "-c", "pull.rebase=false", "pull", "-q", "origin", "main"], clone).catch(() => "conflicts, resolved below");
            await git(["checkout", "--ours", "--", "tenants"], clone);
            await git(["add", "tenants"], clone);
            await git([...id, "commit", "-q", "--no-edit"], clone);
            await git(["push", "-q", "origin", "main"], clone);
            const merge = await git(["rev-parse", "HEAD"], clone);
            assert.strictEqual((await git(["rev-list", "--parents", "-n", "1", merge], clone)).split(" ").length, 3, "a merge");
            await recoveryAfter(at, merge, merge);
            const r = await verifyServed(at, 3);
            assert.strictEqual(r.code, 0, r.out);
            // what the merge changed on main: against the parent main stood at (git lists no file for a merge alone)
            const repo = new BareRepo(at.layout.bareRepo);
            const stall = JSON.parse(fs.readFileSync(at.layout.resultFile("stall"), "utf8")).commit;
            assert.deepStrictEqual(await repo.changedFiles(merge), []);
            assert.deepStrictEqual((await repo.changedFiles(merge, stall)).sort(), TENANTS_ALL.map((t) => tenantPath(t)).sort());
        } finally {
            await at.stop();
        }
    });

    it("recovery.order in the order the tenants turned Healthy: the hint says it goes by step", async () => {
        await atTenants(3, async (root) => {
            const file = tenantsLayout(root).resultFile("recovery");
            const { order } = JSON.parse(fs.readFileSync(file, "utf8"));
            editResult(file, { order: [order[1], order[0], order[2], order[3]] });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: order holds the four entries in another order \(mandant-b, mandant-a, mandant-c, mandant-d\): list them by step, step 1 first/,
            );
        });
    });

    it("stall.hook_error the log's header, stall.hook_job a Pod: each hint says what it is", async () => {
        await atTenants(2, async (root) => {
            editResult(tenantsLayout(root).resultFile("stall"), { hook_error: "In ConfigurationManager.php line 387:" });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: hook_error holds another line the hook prints \("In ConfigurationManager\.php line 387:"\): write the error line itself/,
            );
            editResult(tenantsLayout(root).resultFile("stall"), { hook_error: HOOK_ERROR, hook_job: "mandant-b/site-setup-8833f" });
            const pod = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(pod.code, 1, pod.out);
            assert.match(
                pod.stdout,
                /hook_job holds "mandant-b\/site-setup-8833f": mandant-b\/site-setup-8833f is one of the hook Job's Pods: write the Job itself/,
            );
        });
    });

    it("stall.commit on a branch of its own, recovery.commit an amended stall.commit: each hint says what happened", async () => {
        await atTenants(2, async (root) => {
            const layout = tenantsLayout(root);
            const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
            await git(["checkout", "--quiet", "-B", "release-1.2.0", "origin/main~1"], layout.clone);
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(layout.clone, tenantPath(t)), tenantFile(t, RELEASES.faulty));
            await git([...id, "commit", "--quiet", "-am", `every tenant to ${RELEASES.faulty}`], layout.clone);
            await git(["push", "--quiet", "origin", "release-1.2.0"], layout.clone);
            const side = await git(["rev-parse", "HEAD"], layout.clone);
            editResult(layout.resultFile("stall"), { commit: side, detected_after_seconds: 1 }); // 1: no more than the new commit has existed
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: stall\\.commit ${side.slice(0, 12)} is on release-1\\.2\\.0, not on main, which the ApplicationSet reads`,
                ),
            );
        });
        await atTenants(2, async (root) => {
            const layout = tenantsLayout(root);
            const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
            const stall = JSON.parse(fs.readFileSync(layout.resultFile("stall"), "utf8"));
            await git(["checkout", "--quiet", "-B", "main", stall.commit], layout.clone);
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(layout.clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            await git([...id, "commit", "--quiet", "--amend", "-am", `every tenant to ${RELEASES.fixed}`], layout.clone);
            // refused by the repository (no rewrite of main), its objects received all the same
            await git(["push", "--quiet", "--force", "origin", "main"], layout.clone).catch(() => undefined);
            const amended = await git(["rev-parse", "HEAD"], layout.clone);
            fs.writeFileSync(
                layout.resultFile("recovery"),
                JSON.stringify({ commit: amended, release: RELEASES.fixed, order: [], running: {}, seconds: 5 }),
            );
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: recovery\\.commit ${amended.slice(0, 12)} is stall\\.commit amended \\(the same parent\\): main holds stall\\.commit`,
                ),
            );
        });
    });

    it("a release typo'd, then fixed in a second commit: the hint says so", async () => {
        const root = await tenantsRootAt(2);
        const layout = tenantsLayout(root);
        try {
            const push = async (release: string) => {
                for (const t of TENANTS_ALL) fs.writeFileSync(path.join(layout.clone, tenantPath(t)), tenantFile(t, release));
                await git(["commit", "--quiet", "-am", `every tenant to ${release}`], layout.clone);
                await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], layout.clone);
                return git(["rev-parse", "HEAD"], layout.clone);
            };
            await push("1.2");
            editResult(layout.resultFile("stall"), { commit: await push(RELEASES.faulty) });
            const r = (await verifyTenants({ layout, through: 2 })).find((c) => c.check.startsWith("stall.commit sets every tenant"))!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^stall\.commit's parent has mandant-a at "1\.2", [^:]*: an earlier push set them [^\n]*The repository rewinds nothing/,
            );
            // back to step 1 of this lab: the reset that takes only --root, then the run to the step before the stall
            assert.ok(
                (r.hint ?? "").includes(
                    `gitops-lab simulate --reset --root ${root} (it takes down every lab under the root), then gitops-lab simulate --root ${root} --lab tenants --through 1 --serve`,
                ),
                r.hint,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a fix of mandant-b alone, live: the line says the fix is one commit", async () => {
        const at = await tenantsAt(2);
        try {
            const { layout } = at;
            await git(["pull", "--quiet", "origin", "main"], layout.clone);
            fs.writeFileSync(path.join(layout.clone, tenantPath("mandant-b")), tenantFile("mandant-b", RELEASES.fixed));
            await git(["commit", "--quiet", "-am", "mandant-b to the fix"], layout.clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], layout.clone);
            const commit = await git(["rev-parse", "HEAD"], layout.clone);
            fs.writeFileSync(layout.resultFile("recovery"), JSON.stringify({ release: RELEASES.fixed, commit, order: [] }));
            const kubeconfig = path.join(layout.root, "kubeconfig");
            fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
            const r = await runMain("verify", ["--lab", "tenants", "--root", layout.root, "--step", "3", "--kubeconfig", kubeconfig]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /^step 3 recovery: not done: main sets every tenant to 1\.2\.1; hint: mandant-a, mandant-c, mandant-d are not at 1\.2\.1 on main: [^\n]*a second commit for the rest leaves the fix split/,
            );
        } finally {
            await at.stop();
        }
    });

    it("stall.blocking with its namespace: the hint names the key", async () => {
        await atTenants(2, async (root) => {
            editResult(tenantsLayout(root).resultFile("stall"), { blocking: "argocd/mandant-b" });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: blocking holds "argocd\/mandant-b": the blocked Application's name \(metadata\.name, no namespace\)\n$/,
            );
        });
    });

    it("recovery.commit not on main: the hint says how to get it there", async () => {
        const root = await tenantsRootAt(3);
        const layout = tenantsLayout(root);
        try {
            // a commit the repository has, on another branch: main never took it
            await git(["checkout", "--quiet", "-B", "side", "origin/main"], layout.clone);
            await git(["commit", "--quiet", "--allow-empty", "-m", "not on main"], layout.clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/side"], layout.clone);
            editResult(layout.resultFile("recovery"), { commit: await git(["rev-parse", "HEAD"], layout.clone) });
            const r = (await verifyTenants({ layout, through: 3 })).find((c) => c.check.startsWith("recovery.commit sets every tenant"))!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^main holds false: recovery\.commit is on main once pushed; the repository takes fast-forwards only/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("the fix split over two commits: step 3 says it asks for one", async () => {
        const root = await tenantsRootAt(2);
        const layout = tenantsLayout(root);
        try {
            const push = async (tenants: readonly Tenant[]) => {
                for (const t of tenants) fs.writeFileSync(path.join(layout.clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
                await git(["commit", "--quiet", "-am", `${tenants.join(", ")} to ${RELEASES.fixed}`], layout.clone);
                await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], layout.clone);
                return git(["rev-parse", "HEAD"], layout.clone);
            };
            await push(["mandant-b"]);
            const second = await push(["mandant-a", "mandant-c", "mandant-d"]);
            fs.writeFileSync(layout.resultFile("recovery"), JSON.stringify({ release: RELEASES.fixed, commit: second, order: [] }));
            const r = (await verifyTenants({ layout, through: 3 })).find((c) => c.check.startsWith("recovery.commit sets every tenant"))!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^early holds \["mandant-b"\]: the tenants already at 1\.2\.1 before recovery\.commit: the step sets all four in one commit/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("step 3 done as a rollback to 1.1.0: the hint says it is no fix, and that the step is done over on a new lab", async () => {
        await atTenants(2, async (root) => {
            const layout = tenantsLayout(root);
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(layout.clone, tenantPath(t)), tenantFile(t, RELEASES.first));
            await git(["commit", "--quiet", "-am", "roll back"], layout.clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], layout.clone);
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: main rolls every tenant back to 1\.1\.0, a rollback, not the step's fix \(the fixed release 1\.2\.1 on top of the stalled 1\.2\.0\); [^\n]*the step is done over on a new lab \(the lab's reset, then the lab again\)/,
            );
        });
    });

    it("step 3 with a tenant file no YAML, a key twice, or deleted: the hint names the file and what it does", async () => {
        await atTenants(2, async (root) => {
            const layout = tenantsLayout(root);
            const push = async (message: string) => {
                await git(["commit", "--quiet", "-am", message], layout.clone);
                await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], layout.clone);
            };
            for (const t of TENANTS_ALL) fs.writeFileSync(path.join(layout.clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            // a quote left open: Argo CD's git generator cannot read the file
            fs.writeFileSync(path.join(layout.clone, tenantPath("mandant-b")), `tenant: mandant-b\nrelease: "${RELEASES.fixed}\n`);
            await push("fix: 1.2.1");
            const open = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(open.code, 1, open.out);
            assert.match(
                open.stdout,
                /hint: main's tenants\/mandant-b\.yaml \(Missing closing "quote[^)]*\) is no YAML Argo CD reads: the ApplicationSet generates nothing from it \(its ErrorOccurred condition says so: [^)]*\), so the fix reaches no tenant; mend it in a new commit/,
            );
            // a key given twice is read as Argo CD reads it (sigs.k8s.io/yaml: the last holds): mandant-b is at 1.2.1
            fs.writeFileSync(
                path.join(layout.clone, tenantPath("mandant-b")),
                `${tenantFile("mandant-b", RELEASES.faulty)}release: "${RELEASES.fixed}"\n`,
            );
            await push("mend");
            const twice = await runMain("verify", ["--lab", "tenants", "--root", root, "--through", "3", "--offline"]);
            assert.match(twice.stdout, /PASS {2}main sets every tenant to 1\.2\.1\n/);
            fs.writeFileSync(path.join(layout.clone, tenantPath("mandant-b")), tenantFile("mandant-b", RELEASES.fixed));
            await git(["rm", "--quiet", tenantPath("mandant-d")], layout.clone);
            await push("mandant-d away");
            const gone = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(gone.code, 1, gone.out);
            assert.match(
                gone.stdout,
                /hint: tenants\/mandant-d\.yaml is gone from main \(a commit deleted it\): the ApplicationSet then deletes mandant-d's Application and its site; put it back at 1\.2\.1 in a new commit \(git checkout \$\(git log -1 --format=%H -- tenants\/mandant-d\.yaml\)~1 -- tenants\/mandant-d\.yaml: from before the commit that deleted it; then set the release\)/,
            );
        });
    });

    it("step 3 with one tenant moved, or the faulty release's hook changed: the hint says what main lacks", async () => {
        const root = await tenantsRootAt(2);
        const layout = tenantsLayout(root);
        try {
            fs.writeFileSync(path.join(layout.clone, tenantPath("mandant-b")), tenantFile("mandant-b", RELEASES.fixed));
            await git(["commit", "--quiet", "-am", "mandant-b to 1.2.1"], layout.clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], layout.clone);
            const one = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(one.code, 1, one.out);
            assert.match(
                one.stdout,
                /hint: mandant-a, mandant-c, mandant-d are not at 1\.2\.1 on main: the step sets every tenant's release \(tenants\/<tenant>\.yaml\) to 1\.2\.1 in one commit \(the others are there already: a second commit for the rest leaves the fix split[^\n]*\)\n$/,
            );
            fs.appendFileSync(path.join(layout.clone, "releases/1.2.0/code/setup.sh"), "exit 0\n");
            await git(["commit", "--quiet", "-am", "the hook passes"], layout.clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], layout.clone);
            const masked = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.match(
                masked.stdout,
                /; releases\/1\.2\.0 changed since stall\.commit: the faulty release is left as it is, the fix is the fixed release\n$/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("recovery times made up, or with a zone's offset: the hint says where they come from", async () => {
        await atTenants(3, async (root) => {
            const file = tenantsLayout(root).resultFile("recovery");
            const recovery = JSON.parse(fs.readFileSync(file, "utf8"));
            editResult(file, {
                order: recovery.order.map((o: any, i: number) => (i === 0 ? { ...o, healthy_at: "2020-01-01T00:00:00Z" } : o)),
            });
            const r = (await verifyTenants({ layout: tenantsLayout(root), through: 3 })).find((c) =>
                c.check.startsWith("recovery.order's healthy_at"),
            )!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^mandant-a turned Healthy at the fixed release after recovery\.commit was made \(\S+Z\), not at 2020-01-01T00:00:00Z: read each time from the ApplicationSet's status\.applicationStatus[^,]*$/,
            );
            // the right clock time with a zone's offset put on it (+01:00 after a UTC time): an hour earlier, said in UTC
            const right = recovery.order[0].healthy_at as string;
            const zoned = right.replace(/Z$/, "+01:00");
            editResult(file, { order: recovery.order.map((o: any, i: number) => (i === 0 ? { ...o, healthy_at: zoned } : o)) });
            const z = (await verifyTenants({ layout: tenantsLayout(root), through: 3 })).find((c) =>
                c.check.startsWith("recovery.order's healthy_at"),
            )!;
            assert.strictEqual(z.ok, false);
            assert.ok(
                (z.hint ?? "").includes(
                    `not at ${zoned} (${new Date(Date.parse(right) - 3_600_000).toISOString()} in UTC): read each time from the ApplicationSet's status.applicationStatus (lastTransitionTime of its Healthy entry) once the rollout is complete, and write it as written there (UTC, Z): a zone's offset put on a UTC time moves it by that much`,
                ),
                z.hint,
            );
        });
    });

    it("a tenants release pushed in several commits: the hint says so", async () => {
        const root = await tenantsRootAt(2);
        const layout = tenantsLayout(root);
        const { clone } = layout;
        try {
            const file = layout.resultFile("stall");
            const stall = JSON.parse(fs.readFileSync(file, "utf8"));
            // from the commit before the release (every tenant at 1.1.0): mandant-a first, the others in a second commit
            await git(["checkout", "--quiet", "-B", "several", `${stall.commit}~1`], clone);
            for (const group of [["mandant-a"], ["mandant-b", "mandant-c", "mandant-d"]] as Tenant[][]) {
                for (const t of group) {
                    const f = path.join(clone, tenantPath(t));
                    fs.writeFileSync(f, fs.readFileSync(f, "utf8").replace(RELEASES.first, RELEASES.faulty));
                }
                await git(["commit", "--quiet", "-am", `release ${RELEASES.faulty} for ${group.join(", ")}`], clone);
            }
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/several"], clone);
            fs.writeFileSync(file, JSON.stringify({ ...stall, commit: await git(["rev-parse", "HEAD"], clone) }));
            const r = (await verifyTenants({ layout, through: 2 })).find((c) => c.check.startsWith("stall.commit sets every tenant"))!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                /^the release went out in more than one commit \(mandant-a at 1\.2\.0 already in stall\.commit's parent\)/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("tenants result values slightly off: each hint names the slip", async () => {
        await atTenants(3, async (root) => {
            const layout = tenantsLayout(root);
            const hint = async (name: string) =>
                (await verifyTenants({ layout, through: 3 })).find((c) => c.check.startsWith(name) && !c.ok)?.hint ?? "";
            const stall = JSON.parse(fs.readFileSync(layout.resultFile("stall"), "utf8"));
            const recovery = JSON.parse(fs.readFileSync(layout.resultFile("recovery"), "utf8"));
            editResult(layout.resultFile("stall"), { running: { ...stall.running, "mandant-a": "1.1.0" } });
            assert.match(
                await hint("stall.running:"),
                /^running\.mandant-a holds "1\.1\.0", but mandant-a runs 1\.2\.0 at the stall: it passed the hook/,
            );
            editResult(layout.resultFile("stall"), { running: stall.running });
            editResult(layout.resultFile("recovery"), {
                order: recovery.order.map((o: any) => ({ ...o, application: `argocd/${o.application}` })),
            });
            assert.match(
                await hint("recovery.order: the four"),
                /^order\[\]\.application holds "argocd\/mandant-a": write the Application's name without its namespace/,
            );
            editResult(layout.resultFile("recovery"), { order: recovery.order.map((o: any) => ({ ...o, step: o.step - 1 })) });
            assert.match(await hint("recovery.order is"), /order\[0\]\.step holds 0: steps are numbered from 1/);
        });
    });

    it("recovery.seconds made up, or recovery.commit the stall's: each named", async () => {
        await atTenants(3, async (root) => {
            const layout = tenantsLayout(root);
            const recovery = JSON.parse(fs.readFileSync(layout.resultFile("recovery"), "utf8"));
            const stall = JSON.parse(fs.readFileSync(layout.resultFile("stall"), "utf8"));
            editResult(layout.resultFile("recovery"), { seconds: 999_999 });
            const seconds = (await verifyTenants({ layout, through: 3 })).find((c) => c.check.startsWith("recovery.seconds is from 1"))!;
            assert.strictEqual(seconds.ok, false);
            assert.match(
                seconds.hint ?? "",
                /^seconds holds 999999, longer than recovery\.commit has (existed|been on main \(since its push, by the repository's reflog\)) \(\d+ s\)/,
            );
            // counted from the stall's push: longer than the fix has existed, not than the stall has (its push by the
            // repository's reflog, as the check counts it; its commit's date where the reflog has none)
            const pushedAt =
                (await new BareRepo(layout.bareRepo).heldSince("main", stall.commit)) ??
                Date.parse(
                    execFileSync("git", ["show", "-s", "--format=%cI", stall.commit], { cwd: layout.clone, encoding: "utf8" }).trim(),
                );
            const stallAge = Math.floor((Date.now() - pushedAt) / 1000);
            editResult(layout.resultFile("recovery"), { seconds: stallAge });
            const fromStall = (await verifyTenants({ layout, through: 3 })).find((c) => c.check.startsWith("recovery.seconds is from 1"))!;
            assert.strictEqual(fromStall.ok, false);
            assert.match(
                fromStall.hint ?? "",
                /longer than recovery\.commit has (existed|been on main \(since its push, by the repository's reflog\)) \(\d+ s\) \(counted from the stall's push, stall\.commit\? the recovery counts from your push of the fix, recovery\.commit\)/,
            );
            assert.doesNotMatch(fromStall.hint ?? "", / ms is /);
            // longer than the rollout the file records: from the fix's commit to the last healthy_at, a minute allowed
            const within = async (seconds: number) => {
                editResult(layout.resultFile("recovery"), { seconds });
                return (await verifyTenants({ layout, through: 3 })).find((c) =>
                    c.check.startsWith("recovery.seconds is as long as the rollout took"),
                )!;
            };
            assert.strictEqual((await within(recovery.seconds)).ok, true);
            // (counted from the fix's push, as the repository's reflog has it, which the check reads; its date where none)
            const pushedLine = execFileSync(
                "git",
                ["--git-dir", layout.bareRepo, "reflog", "show", "--date=unix", "--format=%H %gd", "refs/heads/main"],
                {
                    encoding: "utf8",
                },
            )
                .split("\n")
                .find((l) => l.startsWith(recovery.commit));
            const madeAt = pushedLine
                ? Number(/@\{(\d+)\}/.exec(pushedLine)![1]) * 1000
                : Date.parse(
                      execFileSync("git", ["show", "-s", "--format=%cI", recovery.commit], { cwd: layout.clone, encoding: "utf8" }).trim(),
                  );
            const took = Math.ceil(
                (Math.max(...recovery.order.map((o: { healthy_at: string }) => Date.parse(o.healthy_at))) - madeAt) / 1000,
            );
            const longer = await within(took + 61);
            assert.strictEqual(longer.ok, false);
            assert.match(
                longer.hint ?? "",
                new RegExp(
                    `^seconds holds ${took + 61}, longer than the rollout took: recovery\\.commit was made ${took} s before the last tenant turned Healthy`,
                ),
            );
            editResult(layout.resultFile("recovery"), { seconds: recovery.seconds, commit: stall.commit });
            const commit = (await verifyTenants({ layout, through: 3 })).find((c) =>
                c.check.startsWith("recovery.commit sets every tenant"),
            )!;
            assert.strictEqual(commit.ok, false);
            assert.match(commit.hint ?? "", /^recovery\.commit is stall\.commit itself, while main has the fix: write the fix's SHA/);
            assert.doesNotMatch(commit.hint ?? "", /new lab/);
        });
    });

    it("recovery.running without mandant-a: the hint names who is left out", async () => {
        await atTenants(3, async (root) => {
            const layout = tenantsLayout(root);
            const recovery = JSON.parse(fs.readFileSync(layout.resultFile("recovery"), "utf8"));
            delete recovery.running["mandant-a"];
            fs.writeFileSync(layout.resultFile("recovery"), JSON.stringify(recovery));
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /hint: running lacks mandant-a: list all four tenants, each with the release its site runs/);
        });
    });

    it("recovery.commit a later commit than the fix: the hint names the fix's SHA, no new lab", async () => {
        await atTenants(3, async (root) => {
            const layout = tenantsLayout(root);
            const recovery = JSON.parse(fs.readFileSync(layout.resultFile("recovery"), "utf8"));
            await git(["fetch", "--quiet"], layout.clone);
            await git(["checkout", "--quiet", "-B", "main", "origin/main"], layout.clone);
            fs.writeFileSync(path.join(layout.clone, "NOTES.md"), "after the fix\n");
            await git(["add", "NOTES.md"], layout.clone);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-m", "notes"], layout.clone);
            await git(["push", "--quiet", "origin", "main"], layout.clone);
            const later = await git(["rev-parse", "HEAD"], layout.clone);
            editResult(layout.resultFile("recovery"), { commit: later });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                new RegExp(
                    `hint: recovery\\.commit ${later.slice(0, 12)} changes no tenant's release \\(every tenant was at 1\\.2\\.1 before it\\): the fix is its ancestor ${recovery.commit.slice(0, 12)}, the commit that set all four at once: write ${recovery.commit}`,
                ),
            );
            assert.doesNotMatch(r.stdout, /new lab|early holds/);
        });
    });

    it("recovery.commit an annotated tag's own SHA: the hint says to write the commit it tags", async () => {
        await atTenants(3, async (root) => {
            const layout = tenantsLayout(root);
            const recovery = JSON.parse(fs.readFileSync(layout.resultFile("recovery"), "utf8"));
            await git(
                ["-c", "user.name=l", "-c", "user.email=l@x", "tag", "-a", "v1.2.1-rollout", "-m", "rollout", recovery.commit],
                layout.clone,
            );
            await git(["push", "--quiet", "origin", "v1.2.1-rollout"], layout.clone);
            const tag = await git(["rev-parse", "v1.2.1-rollout"], layout.clone);
            editResult(layout.resultFile("recovery"), { commit: tag });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: recovery\.commit holds the annotated tag v1\.2\.1-rollout's SHA, not a commit's \(git rev-parse v1\.2\.1-rollout names the tag\): write the commit it tags, git rev-parse v1\.2\.1-rollout\^\{commit\}/,
            );
            assert.doesNotMatch(r.stdout, /NaN|Invalid time/);
        });
    });

    it("incident.commit a tree's SHA (git rev-parse HEAD^{tree}): the hint says it is a tree, not a commit", async () => {
        await atShop(3, async (root) => {
            const layout = shopLayout(root);
            const { commit } = JSON.parse(fs.readFileSync(layout.resultFile("incident"), "utf8"));
            const tree = await git(["--git-dir", layout.bareRepo, "rev-parse", `${commit}^{tree}`]);
            editResult(layout.resultFile("incident"), { commit: tree });
            const r = await runMain("verify", ["--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: incident\.commit holds a tree's SHA, not a commit's: write the commit's \(git rev-parse HEAD, or git log --oneline in the lab's clone\)/,
            );
        });
    });

    it("releases written with a v: the hint says how the lab writes them", async () => {
        await atTenants(3, async (root) => {
            const layout = tenantsLayout(root);
            const v = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, r]) => [k, `v${r}`]));
            const recovery = JSON.parse(fs.readFileSync(layout.resultFile("recovery"), "utf8"));
            editResult(layout.resultFile("recovery"), { release: `v${recovery.release}`, running: v(recovery.running) });
            const stall = JSON.parse(fs.readFileSync(layout.resultFile("stall"), "utf8"));
            editResult(layout.resultFile("stall"), { running: v(stall.running) });
            const results = await verifyTenants({ layout, through: 3 });
            const hint = (name: string) => results.find((c) => c.check.startsWith(name))?.hint ?? "";
            assert.match(
                hint("recovery: release"),
                /^"v1\.2\.1" is not how the lab writes a release: write "1\.2\.1", as the tenant files/,
            );
            assert.match(hint("stall.running:"), /^"v1\.2\.0" is not how the lab writes a release: write "1\.2\.0"/);
        });
    });

    it("a tenants release that forgets a tenant: the hint names it", async () => {
        const root = await tenantsRootAt(2);
        const layout = tenantsLayout(root);
        const { clone } = layout;
        try {
            const file = layout.resultFile("stall");
            const stall = JSON.parse(fs.readFileSync(file, "utf8"));
            await git(["checkout", "--quiet", "-B", "forgot", `${stall.commit}~1`], clone);
            for (const t of ["mandant-a", "mandant-b", "mandant-c"] as Tenant[]) {
                const f = path.join(clone, tenantPath(t));
                fs.writeFileSync(f, fs.readFileSync(f, "utf8").replace(RELEASES.first, RELEASES.faulty));
            }
            await git(["commit", "--quiet", "-am", `release ${RELEASES.faulty}`], clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/forgot"], clone);
            fs.writeFileSync(file, JSON.stringify({ ...stall, commit: await git(["rev-parse", "HEAD"], clone) }));
            const r = (await verifyTenants({ layout, through: 2 })).find((c) => c.check.startsWith("stall.commit sets every tenant"))!;
            assert.strictEqual(r.ok, false);
            assert.match(r.hint ?? "", /^stall\.commit leaves mandant-d at 1\.1\.0: the step sets every tenant to 1\.2\.0 in one commit/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a tenant that passed named as the blocked one, and a fix on a branch of its own: each named", async () => {
        const root = await tenantsRootAt(2);
        const layout = tenantsLayout(root);
        const { clone } = layout;
        try {
            const file = layout.resultFile("stall");
            const stall = JSON.parse(fs.readFileSync(file, "utf8"));
            fs.writeFileSync(file, JSON.stringify({ ...stall, blocking: "mandant-a" }));
            const blocked = (await verifyTenants({ layout, through: 2 })).find((c) => c.check.startsWith("stall: the ApplicationSet"))!;
            assert.match(
                blocked.hint ?? "",
                /^blocking holds "mandant-a": mandant-a passed its hook \(it is in passed\); the blocked one is the stuck step's Application whose PreSync hook failed/,
            );
            fs.writeFileSync(file, JSON.stringify(stall));
            // the fix made from before the stall, on a branch (main refused it)
            await git(["checkout", "--quiet", "-B", "fix", `${stall.commit}~1`], clone);
            for (const t of TENANTS_ALL) {
                const f = path.join(clone, tenantPath(t));
                fs.writeFileSync(f, fs.readFileSync(f, "utf8").replace(RELEASES.first, RELEASES.fixed));
            }
            await git(["commit", "--quiet", "-am", `release ${RELEASES.fixed}`], clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/fix"], clone);
            const fix = await git(["rev-parse", "HEAD"], clone);
            fs.writeFileSync(layout.resultFile("recovery"), JSON.stringify({ commit: fix, release: RELEASES.fixed }));
            const r = (await verifyTenants({ layout, through: 3 })).find((c) => c.check.startsWith("main sets every tenant"))!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                new RegExp(
                    `^recovery\\.commit ${fix.slice(0, 12)} sets every tenant to 1\\.2\\.1, but it is not on main \\(it is on fix\\) and does not come after stall\\.commit: make the commit on top of main`,
                ),
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given an empty folder, then --step 1 names the bare repository, and plain verify says in one line there is no lab there", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "no-lab-"));
        const step = await runMain("verify", ["--root", root, "--step", "1"]);
        assert.strictEqual(step.code, 1, step.out);
        assert.match(step.stdout, /^step 1 repo: not done: the bare repository exists with a main branch; hint: /);
        assert.ok(
            step.stdout.endsWith(`(nothing of the shop lab is under ${root} yet: is that the --root it is built under?)\n`),
            step.stdout,
        );
        const all = await runMain("verify", ["--root", root, "--offline"]);
        assert.strictEqual(all.code, 1, all.out);
        assert.strictEqual(
            all.stderr,
            `gitops-lab verify: there is no shop lab under ${root} (no ${root}/srv/bare/shop-envs.git); build it with gitops-lab simulate --root ${root} (or pulumi up), or give the --root it was built under\n`,
        );
        assert.strictEqual(all.stdout, "");
    });

    it("says a lab not begun is not begun", async () => {
        const root = await rootAt(0);
        const step = await runMain("verify", ["--root", root, "--step", "1", "--offline"]);
        assert.strictEqual(step.code, 1, step.out);
        assert.ok(step.stdout.endsWith(`(the shop lab under ${root} is ready and not begun: step 1 is yours to do)\n`), step.stdout);
        assert.doesNotMatch(step.stdout, /--root/);
        const all = await runMain("verify", ["--root", root, "--offline"]);
        assert.strictEqual(all.code, 1, all.out);
        assert.match(
            all.stderr,
            /^gitops-lab verify: the shop lab under \S+ is ready and not begun \(no \S+shop-envs\.git yet\): step 1 is yours to do; /,
        );
    });

    it("given no cluster, then a step that reads it says how to give one", async () => {
        const root = await rootAt(3);
        const r = await runMain("verify", ["--root", root, "--step", "3", "--kubeconfig", path.join(root, "no-such-kubeconfig")]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /: the cluster answers; hint: no kubeconfig found \(looked at [^)]*\): give --kubeconfig FILE \(or set KUBECONFIG\)/,
        );
        const env = process.env.KUBECONFIG;
        process.env.KUBECONFIG = path.join(root, "no-such-kubeconfig");
        const holder = spawn("sleep", ["120"], { stdio: "ignore" });
        try {
            // the simulated lab not served, none given: serving it is said
            const unserved = await runMain("verify", ["--root", root, "--step", "3"]);
            assert.ok(
                unserved.stdout.includes(
                    `: the cluster answers; hint: the lab under ${root} is simulated (its cluster is ${root}/simulated-cluster.json) and nothing serves it now: serve it (gitops-lab simulate --root ${root} --serve) and verify again with the kubeconfig it prints, or --offline`,
                ),
                unserved.stdout,
            );
            // a served lab's kubeconfig under the root, none given: it is named
            fs.writeFileSync(
                path.join(root, "kubeconfig"),
                "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:1\ncurrent-context: fake\n",
            );
            fs.writeFileSync(lockFile(root), `${holder.pid}\n${SERVING}\n${procStat(holder.pid!)!.startTime}\n`);
            const served = await runMain("verify", ["--root", root, "--step", "3"]);
            assert.match(
                served.stdout,
                new RegExp(
                    `: the cluster answers; hint: no kubeconfig found \\(looked at [^)]*\\): give --kubeconfig ${root}/kubeconfig \\(the served lab's\\), or --offline`,
                ),
            );
            // the table (--through) shows no hint: its line names the kubeconfig too
            const table = await runMain("verify", ["--root", root, "--through", "3"]);
            assert.ok(table.stdout.includes(`(this lab is served: --kubeconfig ${root}/kubeconfig)`), table.stdout);
        } finally {
            holder.kill();
            fs.rmSync(lockFile(root), { force: true });
            if (env === undefined) delete process.env.KUBECONFIG;
            else process.env.KUBECONFIG = env;
        }
        const t = await runMain("verify", [
            "--lab",
            "tenants",
            "--root",
            await tenantsRootAt(1),
            "--step",
            "1",
            "--kubeconfig",
            "/nonexistent",
        ]);
        assert.match(
            t.stdout,
            /^step 1 built: not done: the cluster answers; hint: no kubeconfig found \(looked at \/nonexistent\): give --kubeconfig/,
            "the tenants lab reads the cluster from step 1 on",
        );
    });

    it("given the tenants lab built (step 1), then --lab tenants --step 1 is done and --step 2 is not, with the stall's hint", async () => {
        const root = await tenantsRootAt(1);
        const one = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "1", "--offline"]);
        assert.strictEqual(one.code, 0, one.out);
        assert.match(one.stdout, /^step 1 built: done/);
        const two = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
        assert.strictEqual(two.code, 1, two.out);
        assert.match(two.stdout, /^step 2 stall: not done: [^\n]+; hint: refresh the ApplicationSet after the push/);
    });

    it("the tenants lab graded with the shop lab's kubeconfig: the hint names the mix-up", async () => {
        const root = await tenantsRootAt(1);
        const shop = await labAt(2);
        try {
            const kubeconfig = path.join(shop.lab.layout.root, "kubeconfig");
            fs.writeFileSync(kubeconfig, shop.lab.kubeconfig);
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--kubeconfig", kubeconfig, "--step", "1"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stdout,
                /hint: context \S+ \([^)]+\) has no ApplicationSet tenants but the shop lab's shop: the kubeconfig of the other lab\? give this lab's with --kubeconfig FILE/,
            );
        } finally {
            await shop.stop();
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("--step with --through, or a step the lab lacks, is a usage error (2)", async () => {
        assert.strictEqual((await runMain("verify", ["--step", "2", "--through", "2"])).code, 2);
        const r = await runMain("verify", ["--lab", "tenants", "--step", "4"]);
        assert.strictEqual(r.code, 2);
        assert.match(r.stderr, /--step takes a whole number from 1 to 3, got "4"/);
    });
});

describe("the steps files: what the served lab and verify --step say of each step", () => {
    it("number each lab's steps 1..n, each with a name, an ask and a hint", () => {
        assert.deepStrictEqual(
            readSteps(SHOP_STEPS_FILE).map((s) => `${s.step} ${s.name}`),
            ["1 repo", "2 appset", "3 incident", "4 pin", "5 drift", "6 promote", "7 revert", "8 report"],
        );
        assert.deepStrictEqual(
            readSteps(TENANTS_STEPS_FILE).map((s) => `${s.step} ${s.name}`),
            ["1 built", "2 stall", "3 recovery"],
        );
    });

    it("given a steps file out of order or missing a hint, then the error names the file and the entry", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "steps-"));
        const file = path.join(dir, "steps.yaml");
        fs.writeFileSync(file, "- {step: 2, name: a, ask: b, hint: c}\n");
        assert.throws(() => readSteps(file), new RegExp(`^Error: ${file}: entry 0 is step 2; the steps go 1, 2, 3`));
        fs.writeFileSync(file, "- {step: 1, name: a, ask: b}\n");
        assert.throws(() => readSteps(file), new RegExp(`^Error: ${file}: entry 0.hint: `));
    });
});

describe("the Killercoda scenario (docs/killercoda/shop): its step checks call verify --step", function () {
    this.timeout(120_000);
    const index = JSON.parse(fs.readFileSync(path.join(KILLERCODA, "index.json"), "utf8"));

    it("has a step per step of the lab, each with its text (the step's ask) and a verify script for that step", () => {
        const steps = shopSteps(shopLayout("/")); // a Killercoda host's paths
        assert.strictEqual(index.details.steps.length, steps.length);
        for (const [i, s] of steps.entries()) {
            const entry = index.details.steps[i];
            const text = fs.readFileSync(path.join(KILLERCODA, entry.text), "utf8");
            assert.ok(text.includes(s.ask.slice(1)), `${entry.text} holds the ask: ${s.ask}`);
            assert.match(fs.readFileSync(path.join(KILLERCODA, entry.verify), "utf8"), new RegExp(`verify --step ${s.step} `));
            assert.ok(fs.statSync(path.join(KILLERCODA, entry.verify)).mode & 0o100, `${entry.verify} is executable`);
        }
        for (const f of [index.details.intro.text, index.details.intro.background, index.details.finish.text])
            assert.ok(fs.existsSync(path.join(KILLERCODA, f)), f);
    });

    // given a learner at step 2 on the lab's (simulated) cluster, when they press Check at each step as they go, then a
    // step passes once done and the next one shows one line with a hint
    it("Check at each step as a learner goes", async () => {
        const at = await labAt(2);
        try {
            const kubeconfig = kubeconfigAt(at);
            const ready = path.join(at.lab.layout.root, "ready");
            const env = {
                ...process.env,
                GITOPS_LAB: BIN,
                GITOPS_LAB_ROOT: at.lab.layout.root,
                GITOPS_LAB_READY: ready,
                KUBECONFIG: kubeconfig,
            };
            // the script in a process of its own, this process free to answer as the simulated cluster
            const check = (n: number) =>
                new Promise<{ status: number | null; out: string; stdout: string }>((resolve) =>
                    execFile(path.join(KILLERCODA, `step${n}`, "verify.sh"), [], { env, timeout: 60_000 }, (e, stdout, stderr) =>
                        resolve({ status: e ? ((e as any).code ?? null) : 0, out: `${stdout}${stderr}`, stdout }),
                    ),
                );
            const early0 = await check(1); // setup.sh has not finished
            assert.strictEqual(early0.status, 1, early0.out);
            assert.strictEqual(early0.stdout, "the host is still being set up (setup.sh); press Check again in a minute\n");
            fs.writeFileSync(ready, "");
            for (const n of [1, 2]) {
                const r = await check(n);
                assert.strictEqual(r.status, 0, r.out);
            }
            const early = await check(3);
            assert.strictEqual(early.status, 1, early.out);
            assert.match(early.stdout, /^step 3 incident: not done: [^\n]+; hint: [^\n]+\n$/);
            await at.solve(3); // the learner does step 3
            const done = await check(3);
            assert.strictEqual(done.status, 0, done.out);
            assert.match(done.stdout, /^step 3 incident: done/);
            const next = await check(4);
            assert.strictEqual(next.status, 1, next.out);
            assert.match(next.stdout, /^step 4 pin: not done: [^\n]+; hint: [^\n]+\n$/);
        } finally {
            await at.stop();
        }
    });
});

describe("a result file's keys, named when wrong (eqFields)", () => {
    it("a list with the right entries in another order says so, without the answer", () => {
        const o = eqFields({ waiting: ["mandant-c", "mandant-d"] }, { waiting: ["mandant-d", "mandant-c"] }, { waiting: "in step order" });
        assert.strictEqual(o.ok, false);
        assert.strictEqual(o.hint, "waiting holds the right entries in another order: in step order");
    });
    it("a list short of an entry says one is missing, without naming it", () => {
        const o = eqFields({ waiting: ["mandant-c", "mandant-d"] }, { waiting: ["mandant-c"] }, { waiting: "in step order" });
        assert.strictEqual(o.hint, 'waiting holds ["mandant-c"], right as far as it goes, but one entry is missing: in step order');
    });
});

describe("what a check's name gives away", () => {
    it("stall.hook_error wrong: the line --step prints does not quote the answer", async () => {
        await atTenants(2, async (root) => {
            editResult(tenantsLayout(root).resultFile("stall"), { hook_error: "exit status 1" });
            const r = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "2", "--offline"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stdout, /: not done: stall\.hook_error /);
            assert.ok(!r.stdout.includes(HOOK_ERROR), r.stdout);
        });
    });
});
