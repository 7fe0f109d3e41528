/**
 * The tenants lab (Part 2) on the simulated cluster, through the product's own code, from the first
 * rollout to the stall: stall.json, the give-up, the scenario's failure paths and a resumed run.
 * The stalled lab (the doctor, the recovery) is in tenantsStall.test.ts: two files, so that mocha's
 * workers run them side by side.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { madeAt } from "../lab/tenants/resultTimes";
import type { TenantsWorld } from "../lab/tenants/world";
import { verifyTenants } from "../lab/tenants/checks";
import { RELEASES, TENANTS } from "../lab/tenants/layout";
import { HOOK_ERROR, tenantSettings } from "../lab/tenants/repoFiles";
import { fit } from "../lab/kit/text";
import { ARGOCD_RELEASES, DEFAULT_ARGOCD_VERSION } from "../lab/platform/argocd";
import { STALL_MESSAGE } from "../lab/tenants/scenario";
import { expect, holds } from "./helpers/expect";
import { app, appset, assertProgressLines, git, tenantsAt, TenantsAt } from "./helpers/tenantsAt";

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
                assert.strictEqual(app(at, t)!.spec!.syncPolicy!.automated!.enabled, false);
                assert.strictEqual(
                    at.lab.kube.get("Deployment", t, "site")!.spec!.template!.metadata!.labels!["example.org/release"],
                    RELEASES.first,
                );
            }
            const cond = appset(at)!.status!.conditions!.find((c: any) => c.type === "RolloutProgressing");
            assert.strictEqual(cond!.message, "ApplicationSet Rollout has completed");
            assert.deepStrictEqual(
                appset(at)!.status!.applicationStatus!.map((s: any) => `${s.step}:${s.application}:${s.status}`),
                ["1:mandant-a:Healthy", "2:mandant-b:Healthy", "3:mandant-c:Healthy", "4:mandant-d:Healthy"],
            );
        });

        // the race: the ApplicationSet controller reconciles a Pending entry between a sync's end and the comparison that follows it
        it("then each tenant's release was synced once, or twice in v3.5.1's Pending race, never more", () => {
            for (const t of TENANTS) {
                const syncs = app(at, t)!.status!.history!.length;
                assert.ok(syncs >= 1 && syncs <= 2, `${t}: ${syncs} syncs of one release`);
            }
        });

        // CompareWithRecent: appcontroller.go writes reconciledAt on full comparisons only
        it("when a managed object changes, then its watch event's comparison shows OutOfSync and leaves reconciledAt as it was", async () => {
            // given an Application last compared long ago (a status write of its own triggers no comparison; the next poll is minutes away)
            const before = "2020-01-01T00:00:00Z";
            const c = app(at, "mandant-c");
            at.lab.kube.put({ ...c!, status: { ...c!.status, reconciledAt: before } }, "client");
            const d = at.lab.kube.get("Deployment", "mandant-c", "site");
            at.lab.kube.put({ ...d!, spec: { ...d!.spec, replicas: 3 } }, "client");
            await expect(
                holds(
                    "mandant-c compared OutOfSync",
                    () => app(at, "mandant-c")!.status!.sync!.status === "OutOfSync",
                    () => app(at, "mandant-c")!.status!.sync,
                ),
                { timeoutMs: 30_000 },
            );
            assert.strictEqual(app(at, "mandant-c")!.status!.reconciledAt, before);
        });

        it("when the faulty release is pushed, then stall.json names step 2, mandant-b's hook and the script's own error, and verify passes", async () => {
            const r = await at.solve(2);
            // a later tenant whose comparison of the faulty commit came before mandant-b's may have been let through (v3.5.1's
            // RollingSync reads only the entries: docs/tenants-lab.md); it then runs 1.2.0 and is not waiting
            const raced = ["mandant-c", "mandant-d"].filter((t) => r.stall!.running[t] === RELEASES.faulty);
            assert.deepStrictEqual(
                { ...r.stall!, commit: "", detected_after_seconds: 0 },
                {
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
                    running: {
                        "mandant-a": "1.2.0",
                        "mandant-b": "1.1.0",
                        "mandant-c": "1.1.0",
                        "mandant-d": "1.1.0",
                        ...Object.fromEntries(raced.map((t) => [t, "1.2.0"])),
                    },
                    auto_sync_disabled_by_rollingsync: true,
                    detected_after_seconds: 0,
                },
            );
            for (const t of raced)
                assert.strictEqual(
                    at.lab.kube.get("Deployment", t, "site")!.spec!.template!.metadata!.labels!["example.org/release"],
                    RELEASES.faulty,
                    `${t} raced ahead: its site runs it`,
                );
            assert.strictEqual(r.stall!.commit, await git(["rev-parse", "main"], at.layout.clone));
            assertProgressLines(at.lines, at.layout.root);
            assert.ok(
                at.lines.some((l) =>
                    /^\[tenants 2 stall\] stuck at step 2 of 4: mandant-b's hook failed: "config\/system\/settings\.php is not writable\."$/.test(
                        l,
                    ),
                ),
                at.lines.join("\n"),
            );
            const checks = await verifyTenants({ layout: at.layout, through: 2, cluster: at.cluster });
            assert.deepStrictEqual(
                checks.filter((c) => !c.ok),
                [],
            );

            // given stall.json from a run where mandant-d raced ahead, then the stall's checks pass (offline); with it
            // still listed as waiting, or with mandant-b at 1.2.0, they fail
            const file = at.layout.resultFile("stall");
            const saved = r.stall!;
            const failedStallChecks = async (stall: object) => {
                fs.writeFileSync(file, JSON.stringify(stall));
                return (await verifyTenants({ layout: at.layout, through: 2 }))
                    .filter((c) => c.check.startsWith("stall") && !c.ok)
                    .map((c) => c.check);
            };
            const dAhead = {
                ...saved,
                running: { ...saved.running, "mandant-d": "1.2.0" },
                waiting: saved.waiting.filter((t) => t !== "mandant-d"),
            };
            assert.deepStrictEqual(await failedStallChecks(dAhead), []);
            if (!raced.includes("mandant-d")) {
                // live, the claim is held to mandant-d's history: no sync of releases/1.2.0 at the stall's commit
                const live = (await verifyTenants({ layout: at.layout, through: 2, cluster: at.cluster }))
                    .filter((c) => !c.ok)
                    .map((c) => c.check);
                assert.ok(
                    live.some((c) => c.startsWith("live: the tenants after the blocked one that stall.json has racing ahead")),
                    live.join("\n"),
                );
            }
            assert.notDeepStrictEqual(await failedStallChecks({ ...dAhead, waiting: ["mandant-c", "mandant-d"] }), []);
            assert.notDeepStrictEqual(await failedStallChecks({ ...dAhead, running: { ...dAhead.running, "mandant-b": "1.2.0" } }), []);
        });

        const giveKeys = async (t: (typeof TENANTS)[number]) => {
            const settings = tenantSettings(t);
            settings.data["settings.ini"] += "news.items_per_page = 5\n";
            await at.cluster.putConfigMap(settings);
        };

        // 3.5: every other retry fails at once on the last attempt's stored result (gitops-engine, seen on the real plane);
        // 3.6 replaces the whole operation state, so each of the six attempts runs the hook (seen on the real plane too)
        it("when the faulty release is pushed, then mandant-b gives up after 6 attempts", async () => {
            const is36 = ARGOCD_RELEASES[DEFAULT_ARGOCD_VERSION].minor === "3.6";
            const jobs: string[] = [];
            const attempts: string[] = [];
            // the hook Jobs counted when the sync gives up: the re-sync the rollout may start after it (seen on the real plane
            // too: docs/argocd-v3.5.1.md, "A re-sync after the give-up") runs a Job of its own, not one of the six attempts'
            let jobsAtGiveUp: number | undefined;
            let resyncRetried: number | undefined;
            const off = at.lab.kube.onChange((c) => {
                if (c.kind === "Job" && c.type === "ADDED" && c.obj.metadata.namespace === "mandant-b") jobs.push(c.obj.metadata.uid!);
                const op = c.kind === "Application" && c.obj.metadata.name === "mandant-b" ? c.obj.status?.operationState : undefined;
                if (op?.phase && c.kind === "Application" && c.obj.spec?.source?.path === "releases/1.2.0")
                    attempts.push(`${op.retryCount ?? 0} ${jobs.length} ${op.message}`);
                if (op?.phase === "Failed" && /\(retried 5 times\)\.$/.test(op.message!) && jobsAtGiveUp === undefined)
                    jobsAtGiveUp = jobs.length;
                // the re-sync's own first retry: its Jobs from then on are its retries', however far the run has got under load
                if (jobsAtGiveUp !== undefined && resyncRetried === undefined && op?.phase === "Running" && op.retryCount === 1)
                    resyncRetried = jobs.length;
            });
            try {
                await at.solve(2);
                await at.givenUp();
            } finally {
                off();
            }
            assert.match(app(at, "mandant-b")!.status!.operationState!.message!, /\(retried 5 times\)\.$/);
            assert.strictEqual(jobsAtGiveUp, is36 ? 6 : 3, attempts.join("\n"));
            assert.ok(
                (resyncRetried ?? jobs.length) - jobsAtGiveUp! <= 1,
                `at most the re-sync's one Job after the give-up, before its own retries:\n${attempts.join("\n")}`,
            );
            // each retry deletes the last attempt's hook Job first; on 3.5 every other attempt then fails at once and creates no Job
            assert.ok(
                attempts.some((a) => /^1 1 waiting for deletion of hook batch\/Job\/site-setup$/.test(a)),
                attempts.join("\n"),
            );
        });

        it("when mandant-b's settings already hold the extension's keys, then step 2 says at once that the rollout stalls elsewhere", async () => {
            await giveKeys("mandant-b");
            await assert.rejects(
                at.solve(2),
                /stuck, but not where the lab stalls it \(step 2, mandant-b\): tenants: rollout stuck at step 3 of 4/,
            );
            assert.ok(!fs.existsSync(at.layout.resultFile("stall")), "no stall.json is written");
        });

        it("when every tenant's settings hold the extension's keys, then step 2 says at once that the stall never came", async () => {
            for (const t of TENANTS) await giveKeys(t);
            await assert.rejects(at.solve(2), (e: any) =>
                /the stall never came/.test(e.message) ? true : assert.fail(`${e.message}\n${at.lines.slice(-15).join("\n")}`),
            );
            assert.ok(!fs.existsSync(at.layout.resultFile("stall")), "no stall.json is written");
        });
    });

    describe("given a run killed after pushing the faulty release, before it noted the push", () => {
        beforeEach(async () => {
            at = await tenantsAt(1);
        });

        it("then the next run does not wait for the first rollout again: it resumes with that commit and writes stall.json", async () => {
            const clone = at.layout.clone;
            for (const t of TENANTS)
                fs.writeFileSync(path.join(clone, `tenants/${t}.yaml`), `tenant: ${t}\nrelease: "${RELEASES.faulty}"\n`);
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
});

describe("the tenants lab's progress lines (fit)", () => {
    it("keeps a short line, cuts a long one at a word with an ellipsis", () => {
        assert.strictEqual(fit("step 2 of 4 stuck", 120), "step 2 of 4 stuck");
        const long = `[tenants 3 recovery] ${"mandant-b retrying its sync; ".repeat(10)}`;
        const cut = fit(long, 120);
        assert.ok(cut.length <= 120 && cut.endsWith("…") && long.startsWith(cut.slice(0, -1)), cut);
        assert.doesNotMatch(cut, /[;,] ?…$/);
    });
});

describe("when a tenants commit came to be, for the result times", () => {
    // given a commit dated ahead of now (a clock running fast), then its push time counts; without a reflog, never a
    // time still to come
    it("is its push by the reflog, else its date, never later than now", async () => {
        const dated = Date.now() + 600_000;
        const world = (pushed: number | null) =>
            ({ repo: { heldSince: async () => pushed, committedAt: async () => dated } }) as unknown as TenantsWorld;
        const pushedAt = Date.now() - 5_000;
        assert.strictEqual(await madeAt(world(pushedAt), "a".repeat(40)), pushedAt);
        assert.ok((await madeAt(world(null), "a".repeat(40))) <= Date.now());
    });
});
