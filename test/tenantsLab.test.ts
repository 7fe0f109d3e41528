/**
 * The tenants lab (Part 2) on the simulated cluster, through the product's own code: the stall the
 * rollout doctor names, the recovery, the grader, and the scenario's failure paths.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { diagnose } from "../lab/doctor/diagnose";
import { readLive } from "../lab/doctor/watch";
import { run } from "../lab/ports/exec";
import { verifyTenants } from "../lab/tenants/checks";
import { RELEASES, TENANTS } from "../lab/tenants/layout";
import { HOOK_ERROR, tenantSettings } from "../lab/tenants/repoFiles";
import { fit, LINE_MAX, STALL_MESSAGE } from "../lab/tenants/scenario";
import { expect, expectConsistently, holds, pending, succeeded } from "./helpers/expect";
import { tenantsAt, TenantsAt } from "./helpers/tenantsAt";

const git = async (args: string[], cwd?: string) => (await run("git", args, { cwd })).stdout.trim();
const app = (at: TenantsAt, name: string) => at.lab.kube.get("Application", "argocd", name);
const appset = (at: TenantsAt) => at.lab.kube.get("ApplicationSet", "argocd", "tenants");

/** The tenants lab's progress lines read like the shop lab's: one event a line, at most 120 characters, no artefacts of joined texts. */
function assertProgressLines(lines: string[], root: string): void {
    // measured as a lab host prints them: its paths start at / (the tests' roots are long temporary folders)
    const long = lines.map((l) => l.split(root).join("")).filter((l) => l.length > LINE_MAX);
    assert.deepStrictEqual(long, [], "lines over 120 characters");
    const artefacts = lines.filter((l) => /\.;|\?\/\?|for 0 min|Application moved to Pending status|Retrying attempt/.test(l));
    assert.deepStrictEqual(artefacts, [], "lines with artefacts");
}

describe("the tenants lab (simulated cluster)", function () {
    this.timeout(180_000);
    let at: TenantsAt;
    afterEach(async () => at?.stop());

    describe("given the lab at step 1 (the first rollout complete)", () => {
        beforeEach(async () => {
            at = await tenantsAt(1);
        });

        it("then every tenant runs 1.1.0, RollingSync has written automated.enabled: false, and the rollout is complete", async () => {
            for (const t of TENANTS) {
                assert.strictEqual(app(at, t).spec.syncPolicy.automated.enabled, false);
                assert.strictEqual(at.lab.kube.get("Deployment", t, "site").spec.template.metadata.labels["example.org/release"], RELEASES.first);
            }
            const cond = appset(at).status.conditions.find((c: any) => c.type === "RolloutProgressing");
            assert.strictEqual(cond.message, "ApplicationSet Rollout has completed");
            assert.deepStrictEqual(appset(at).status.applicationStatus.map((s: any) => `${s.step}:${s.application}:${s.status}`), ["1:mandant-a:Healthy", "2:mandant-b:Healthy", "3:mandant-c:Healthy", "4:mandant-d:Healthy"]);
        });

        it("when a managed object changes, then the comparison its watch event triggers (CompareWithRecent) shows it OutOfSync and leaves reconciledAt as it was (appcontroller.go writes it on full comparisons only)", async () => {
            // given an Application last compared long ago (a status write of its own triggers no comparison; the next poll is minutes away)
            const before = "2020-01-01T00:00:00Z";
            const c = app(at, "mandant-c");
            at.lab.kube.put({ ...c, status: { ...c.status, reconciledAt: before } }, "client");
            const d = at.lab.kube.get("Deployment", "mandant-c", "site");
            at.lab.kube.put({ ...d, spec: { ...d.spec, replicas: 3 } }, "client");
            await expect(holds("mandant-c compared OutOfSync", () => app(at, "mandant-c").status.sync.status === "OutOfSync", () => app(at, "mandant-c").status.sync), { timeoutMs: 30_000 });
            assert.strictEqual(app(at, "mandant-c").status.reconciledAt, before);
        });

        it("when the faulty release is pushed, then stall.json names step 2, mandant-b's hook and the script's own error, and verify passes", async () => {
            const r = await at.solve(2);
            // a later tenant whose comparison of the faulty commit came before mandant-b's may have been let through (v3.5.1's
            // RollingSync reads only the entries: docs/tenants-lab.md); it then runs 1.2.0 and is not waiting
            const raced = ["mandant-c", "mandant-d"].filter((t) => r.stall!.running[t] === RELEASES.faulty);
            assert.deepStrictEqual({ ...r.stall!, commit: "", detected_after_seconds: 0 }, {
                appset: "argocd/tenants",
                commit: "",
                release: "1.2.0",
                step: 2,
                steps: 4,
                blocking: "mandant-b",
                hook_job: "mandant-b/site-setup",
                hook_error: HOOK_ERROR,
                waiting: ["mandant-c", "mandant-d"].filter((t) => !raced.includes(t)),
                passed: ["mandant-a"],
                running: { "mandant-a": "1.2.0", "mandant-b": "1.1.0", "mandant-c": "1.1.0", "mandant-d": "1.1.0", ...Object.fromEntries(raced.map((t) => [t, "1.2.0"])) },
                auto_sync_disabled_by_rollingsync: true,
                detected_after_seconds: 0,
            });
            for (const t of raced) assert.strictEqual(at.lab.kube.get("Deployment", t, "site").spec.template.metadata.labels["example.org/release"], RELEASES.faulty, `${t} raced ahead: its site runs it`);
            assert.strictEqual(r.stall!.commit, await git(["rev-parse", "main"], at.layout.clone));
            assertProgressLines(at.lines, at.layout.root);
            assert.ok(at.lines.some((l) => /^\[tenants 2 stall\] stuck at step 2 of 4: mandant-b's hook failed: "config\/system\/settings\.php is not writable\."$/.test(l)), at.lines.join("\n"));
            const checks = await verifyTenants({ layout: at.layout, through: 2, cluster: at.cluster });
            assert.deepStrictEqual(checks.filter((c) => !c.ok), []);

            // given stall.json from a run where mandant-d raced ahead, then the stall's checks pass (offline); with it
            // still listed as waiting, or with mandant-b at 1.2.0, they fail
            const file = at.layout.resultFile("stall");
            const saved = r.stall!;
            const failedStallChecks = async (stall: object) => {
                fs.writeFileSync(file, JSON.stringify(stall));
                return (await verifyTenants({ layout: at.layout, through: 2 })).filter((c) => c.check.startsWith("stall") && !c.ok).map((c) => c.check);
            };
            const dAhead = { ...saved, running: { ...saved.running, "mandant-d": "1.2.0" }, waiting: saved.waiting.filter((t) => t !== "mandant-d") };
            assert.deepStrictEqual(await failedStallChecks(dAhead), []);
            if (!raced.includes("mandant-d")) {
                // live, the claim is held to mandant-d's history: no sync of releases/1.2.0 at the stall's commit
                const live = (await verifyTenants({ layout: at.layout, through: 2, cluster: at.cluster })).filter((c) => !c.ok).map((c) => c.check);
                assert.ok(live.some((c) => c.startsWith("live: the tenants after mandant-b that stall.json has racing ahead")), live.join("\n"));
            }
            assert.notDeepStrictEqual(await failedStallChecks({ ...dAhead, waiting: ["mandant-c", "mandant-d"] }), []);
            assert.notDeepStrictEqual(await failedStallChecks({ ...dAhead, running: { ...dAhead.running, "mandant-b": "1.2.0" } }), []);
        });

        const giveKeys = async (t: (typeof TENANTS)[number]) => {
            const settings = tenantSettings(t);
            settings.data["settings.ini"] += "news.items_per_page = 5\n";
            await at.cluster.putConfigMap(settings);
        };

        it("when the faulty release is pushed, then mandant-b's sync gives up after 6 attempts that ran its hook Job only 3 times: every other retry fails at once on the last attempt's stored result (gitops-engine, seen on the real plane)", async () => {
            const jobs: string[] = [];
            const attempts: string[] = [];
            const off = at.lab.kube.onChange((c) => {
                if (c.kind === "Job" && c.type === "ADDED" && c.obj.metadata.namespace === "mandant-b") jobs.push(c.obj.metadata.uid);
                const op = c.kind === "Application" && c.obj.metadata.name === "mandant-b" ? c.obj.status?.operationState : undefined;
                if (op?.phase && c.obj.spec.source.path === "releases/1.2.0") attempts.push(`${op.retryCount ?? 0} ${jobs.length} ${op.message}`);
            });
            try {
                await at.solve(2);
                await at.givenUp();
            } finally {
                off();
            }
            assert.match(app(at, "mandant-b").status.operationState.message, /\(retried 5 times\)\.$/);
            assert.strictEqual(jobs.length, 3, attempts.join("\n"));
            // the retries that fail at once delete the release's ConfigMap hook first, and create no Job
            assert.ok(attempts.some((a) => /^1 1 waiting for deletion of hook \/ConfigMap\/site-code-/.test(a)), attempts.join("\n"));
        });

        it("when mandant-b's settings already hold the extension's keys, then step 2 says at once that the rollout stalls elsewhere", async () => {
            await giveKeys("mandant-b");
            await assert.rejects(at.solve(2), /stuck, but not where the lab stalls it \(step 2, mandant-b\): tenants: rollout stuck at step 3 of 4/);
            assert.ok(!fs.existsSync(at.layout.resultFile("stall")), "no stall.json is written");
        });

        it("when every tenant's settings hold the extension's keys, then step 2 says at once that the stall never came", async () => {
            for (const t of TENANTS) await giveKeys(t);
            await assert.rejects(at.solve(2), (e: any) => (/the stall never came/.test(e.message) ? true : assert.fail(`${e.message}\n${at.lines.slice(-15).join("\n")}`)));
            assert.ok(!fs.existsSync(at.layout.resultFile("stall")), "no stall.json is written");
        });
    });

    describe("given a run killed after pushing the faulty release, before it noted the push", () => {
        beforeEach(async () => {
            at = await tenantsAt(1);
        });

        it("then the next run does not wait for the first rollout again: it resumes with that commit and writes stall.json", async () => {
            const clone = at.layout.clone;
            for (const t of TENANTS) fs.writeFileSync(path.join(clone, `tenants/${t}.yaml`), `tenant: ${t}\nrelease: "${RELEASES.faulty}"\n`);
            await git(["add", "-A"], clone);
            await git(["commit", "--quiet", "-m", STALL_MESSAGE], clone);
            const pushed = await git(["rev-parse", "HEAD"], clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], clone);
            const r = await at.solve(2);
            assert.strictEqual(r.stall!.commit, pushed, "the commit the killed run pushed, not a second one");
            assert.ok(!at.lines.some((l) => /waiting for the first rollout/.test(l)), at.lines.join("\n"));
            assert.ok(at.lines.some((l) => /was pushed by an earlier run; resuming/.test(l)));
            assert.strictEqual(await git(["rev-list", "--count", "main"], clone), "2");
        });
    });

    describe("given the lab at step 2 (stalled)", () => {
        beforeEach(async () => {
            at = await tenantsAt(2);
        });

        it("then nothing moves on its own: mandant-c and mandant-d stay where the stall left them (at 1.1.0, but one that raced ahead), untouched by any sync", async () => {
            // a tenant whose comparison of the faulty commit came before mandant-b's may have been synced before the stall (docs/tenants-lab.md)
            const stall = JSON.parse(fs.readFileSync(at.layout.resultFile("stall"), "utf8"));
            const release = (t: string) => at.lab.kube.get("Deployment", t, "site").spec.template.metadata.labels["example.org/release"];
            const started = (t: string) => app(at, t).status?.operationState?.startedAt ?? null;
            const left = Object.fromEntries(["mandant-c", "mandant-d"].map((t) => [t, { release: stall.running[t], started: started(t) }]));
            for (const t of ["mandant-c", "mandant-d"]) assert.strictEqual(stall.waiting.includes(t), stall.running[t] === RELEASES.first, JSON.stringify(stall));
            await expectConsistently(
                holds("c and d as the stall left them, with no operation", () => ["mandant-c", "mandant-d"].every((t) => !app(at, t).operation && release(t) === left[t].release && started(t) === left[t].started), () => left),
                { forMs: 1_500 },
            );
        });

        it("when mandant-b's sync gives up, then it shows no SyncError: its auto-sync is off under RollingSync, so autoSync has nothing to say (appcontroller.go) and the Failed operation is the only record", async () => {
            await at.givenUp();
            assert.match(app(at, "mandant-b").status.operationState.message, /\(retried 5 times\)\.$/);
            await expectConsistently(holds("no SyncError on mandant-b", () => !(app(at, "mandant-b").status.conditions ?? []).some((c: any) => c.type === "SyncError"), () => app(at, "mandant-b").status.conditions), { forMs: 1_000 });
        });

        it("when mandant-b's sync retries, then its hook Job is deleted first and the new one created only once the old is gone, the operation saying so meanwhile (gitops-engine BeforeHookCreation)", async () => {
            // a restored stall goes on retrying; a fresh stall is where the retries are (the snapshot may be of a stall that gave up)
            const events: string[] = [];
            const messages = new Set<string>();
            const off = at.lab.kube.onChange((c) => {
                if (c.kind === "Job" && c.obj.metadata.namespace === "mandant-b" && c.obj.metadata.name === "site-setup" && c.type !== "MODIFIED") events.push(`${c.type} ${c.obj.metadata.uid}`);
                if (c.kind === "Application" && c.obj.metadata.name === "mandant-b" && c.obj.status?.operationState?.message) messages.add(c.obj.status.operationState.message);
            });
            let learner = false;
            try {
                await expect(
                    holds("a hook Job replaced", () => {
                        const b = app(at, "mandant-b");
                        if (!learner && !events.some((e) => e.startsWith("ADDED")) && !b.operation && b.status.operationState?.phase !== "Running") {
                            // given up (already, or on a last retry that failed at once on the stored result): a learner's sync of it runs the hook again
                            learner = true;
                            at.lab.kube.put({ ...b, operation: { sync: { revision: b.status.sync.revision }, initiatedBy: { username: "learner" }, retry: { limit: 1 } } }, "client");
                        }
                        return events.some((e) => e.startsWith("ADDED"));
                    }, () => events),
                    { timeoutMs: 60_000 },
                );
            } finally {
                off();
            }
            // never two at once: each ADDED follows the DELETED of the one before it
            let live = at.lab.kube.list("Job", "mandant-b").length - (events.filter((e) => e.startsWith("ADDED")).length - events.filter((e) => e.startsWith("DELETED")).length);
            for (const e of events) {
                live += e.startsWith("ADDED") ? 1 : -1;
                assert.ok(live <= 1, `two hook Jobs at once: ${events.join(", ")}`);
            }
            assert.ok([...messages].some((m) => m === "waiting for deletion of hook batch/Job/site-setup"), [...messages].join(" | "));
        });

        it("then the doctor, live, names the hook's error from its Pod's log (the default terminationMessagePolicy writes none)", async () => {
            // the restored lab goes on retrying: while a retry's new hook Job runs there is no failed one to read, so look until there is
            let dump: Awaited<ReturnType<typeof readLive>> | undefined;
            await expect(async () => {
                dump = await readLive(at.cluster);
                const failedPods = dump.pods.filter((p) => p.metadata.namespace === "mandant-b" && p.status?.phase === "Failed");
                const [d] = diagnose(dump, { now: new Date(), stuckAfterSeconds: 600, appset: "tenants" });
                return failedPods.length > 0 && d.blocking[0]?.hook?.log !== undefined ? succeeded() : pending(`${failedPods.length} failed hook Pods; ${d.summary}`);
            });
            const pods = dump!.pods.filter((p) => p.metadata.namespace === "mandant-b" && p.status?.phase === "Failed");
            assert.ok(pods.every((p) => !p.status.containerStatuses[0].state.terminated.message), "no termination message");
            const [d] = diagnose(dump!, { now: new Date(), stuckAfterSeconds: 600, appset: "tenants" });
            assert.strictEqual(d.state, "stuck");
            assert.strictEqual(d.blocking[0].hook?.log, HOOK_ERROR);
            assert.match(d.summary, /rollout stuck at step 2 of 4/);
        });

        it("when the fixed release is pushed, then the rollout completes in step order from the blocked step on, recovery.json says so and verify passes (and grades the order from the blocked step on only)", async () => {
            const r = await at.solve(3);
            const rec = r.recovery!;
            assert.deepStrictEqual(rec.running, Object.fromEntries(TENANTS.map((t) => [t, RELEASES.fixed])));
            assert.deepStrictEqual(rec.order.map((o) => `${o.step}:${o.application}`), ["1:mandant-a", "2:mandant-b", "3:mandant-c", "4:mandant-d"]);
            assert.ok(await git(["merge-base", "--is-ancestor", r.stall!.commit, rec.commit], at.layout.clone).then(() => true));
            const checks = await verifyTenants({ layout: at.layout, through: 3, cluster: at.cluster });
            assert.deepStrictEqual(checks.filter((c) => !c.ok), []);
            // the fix is pushed only once mandant-b's sync has given up
            assertProgressLines(at.lines, at.layout.root);
            const settled = at.lines.findIndex((l) => /mandant-b's sync to give up \(its retries spent\): after/.test(l));
            const pushed = at.lines.findIndex((l) => /pushed [0-9a-f]{12} to main: every tenant at 1\.2\.1/.test(l));
            assert.ok(settled >= 0 && pushed > settled, at.lines.join("\n"));

            // given recovery.json from a run where mandant-a's entry counted Healthy before its own sync, then the order
            // check passes with mandant-a last but one; with mandant-c before mandant-b, or d before c, it fails
            const file = at.layout.resultFile("recovery");
            const saved = JSON.parse(fs.readFileSync(file, "utf8"));
            const orderCheck = async (times: string[]) => {
                fs.writeFileSync(file, JSON.stringify({ ...saved, order: saved.order.map((o: any, i: number) => ({ ...o, healthy_at: times[i] })) }));
                const checks = await verifyTenants({ layout: at.layout, through: 3 });
                return checks.find((c) => c.check.startsWith("recovery.order:"))!;
            };
            // the order a CI run saw: b, c, a, d (a's comparison at the fix came after b's sync; RollingSync had moved on)
            const late = await orderCheck(["2026-12-02T00:18:04.809Z", "2026-12-02T00:18:03.758Z", "2026-12-02T00:18:04.646Z", "2026-12-02T00:18:05.480Z"]);
            assert.strictEqual(late.ok, true, JSON.stringify(late));
            const wrong = await orderCheck(["2026-12-02T00:18:01.000Z", "2026-12-02T00:18:04.000Z", "2026-12-02T00:18:03.000Z", "2026-12-02T00:18:05.000Z"]);
            assert.strictEqual(wrong.ok, false, JSON.stringify(wrong));
            const last = await orderCheck(["2026-12-02T00:18:01.000Z", "2026-12-02T00:18:02.000Z", "2026-12-02T00:18:04.000Z", "2026-12-02T00:18:03.000Z"]);
            assert.strictEqual(last.ok, false, JSON.stringify(last));
            // given a stall where mandant-c raced ahead (Synced at 1.2.0 when the fix landed, its entry can count Healthy early
            // as mandant-a's), then mandant-d before mandant-c passes: the check leaves c out
            const stallFile = at.layout.resultFile("stall");
            const stall = JSON.parse(fs.readFileSync(stallFile, "utf8"));
            fs.writeFileSync(stallFile, JSON.stringify({ ...stall, running: { ...stall.running, "mandant-c": "1.2.0" }, waiting: ["mandant-d"] }));
            const cAhead = await orderCheck(["2026-12-02T00:18:01.000Z", "2026-12-02T00:18:02.000Z", "2026-12-02T00:18:04.000Z", "2026-12-02T00:18:03.000Z"]);
            assert.strictEqual(cAhead.ok, true, JSON.stringify(cAhead));
            const dBeforeB = await orderCheck(["2026-12-02T00:18:01.000Z", "2026-12-02T00:18:03.000Z", "2026-12-02T00:18:04.000Z", "2026-12-02T00:18:02.000Z"]);
            assert.strictEqual(dBeforeB.ok, false, JSON.stringify(dBeforeB));
        });

        it("when a learner gives mandant-b the extension's keys, then its retry succeeds and step 3 still completes the recovery", async () => {
            const settings = tenantSettings("mandant-b");
            settings.data["settings.ini"] += "news.items_per_page = 5\n";
            await at.cluster.putConfigMap(settings);
            const r = await at.solve(3);
            assert.deepStrictEqual(r.recovery!.running, Object.fromEntries(TENANTS.map((t) => [t, RELEASES.fixed])));
        });

        it("when the fixed release fails its hook too, then step 3 says at once that the recovery stalled again", async () => {
            // the fix ships the template as well: mandant-b's hook fails on 1.2.1 too
            const clone = at.layout.clone;
            fs.copyFileSync(path.join(clone, "releases/1.2.0/code/news.settings-template"), path.join(clone, "releases/1.2.1/code/news.settings-template"));
            const k = path.join(clone, "releases/1.2.1/kustomization.yaml");
            fs.writeFileSync(k, fs.readFileSync(k, "utf8").replace("- code/VERSION", "- code/VERSION\n      - code/news.settings-template"));
            await git(["add", "-A"], clone);
            await git(["commit", "--quiet", "-m", "1.2.1 ships the template too"], clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], clone);
            await assert.rejects(at.solve(3), /the recovery stalled again on 1\.2\.1/);
            assert.ok(!fs.existsSync(at.layout.resultFile("recovery")));
        });
    });
});

describe("the tenants lab's progress lines (fit)", () => {
    it("keeps a short line, and cuts a long one at a word with an ellipsis, within the limit", () => {
        assert.strictEqual(fit("step 2 of 4 stuck", 120), "step 2 of 4 stuck");
        const long = `[tenants 3 recovery] ${"mandant-b retrying its sync; ".repeat(10)}`;
        const cut = fit(long, 120);
        assert.ok(cut.length <= 120 && cut.endsWith("…") && long.startsWith(cut.slice(0, -1)), cut);
        assert.doesNotMatch(cut, /[;,] ?…$/);
    });
});
