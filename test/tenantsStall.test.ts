/**
 * The tenants lab (Part 2) on the simulated cluster, through the product's own code, from the stall
 * on: what stands still, the retries, the doctor live, the recovery and its failure paths. (The way
 * to the stall is in tenantsLab.test.ts.)
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { diagnose } from "../lab/doctor/diagnose";
import { readLive } from "../lab/doctor/watch";
import { verifyTenants } from "../lab/tenants/checks";
import { RELEASES, TENANTS } from "../lab/tenants/layout";
import { HOOK_ERROR, tenantSettings } from "../lab/tenants/repoFiles";
import { siteImage } from "../lab/tenants/siteImages";
import { Stall } from "../lab/tenants/results";
import { TenantsScenarioContext, waitForStallToSettle } from "../lab/tenants/scenario";
import { expect, expectConsistently, holds, pending, succeeded } from "./helpers/expect";
import { app, assertProgressLines, git, tenantsAt, TenantsAt } from "./helpers/tenantsAt";

describe("the tenants lab (simulated cluster)", function () {
    this.timeout(180_000);
    let at: TenantsAt;
    afterEach(async () => at?.stop());

    describe("given the lab at step 2 (stalled)", () => {
        beforeEach(async () => {
            at = await tenantsAt(2);
        });

        it("given a tenant on a release not shipped, or its file's key misspelt, then the hint says so", async () => {
            // the cluster as it answers once the learner pushed mandant-c to 1.3.0 and mandant-d's file with relase:
            const paths: Record<string, string> = { "mandant-c": "releases/1.3.0", "mandant-d": "releases/{{release}}" };
            const moved = Object.assign(Object.create(at.cluster), {
                getApplication: async (name: string) => {
                    const a = (await at.cluster.getApplication(name))!;
                    return paths[name] ? { ...a, spec: { ...a.spec, source: { ...a.spec?.source, path: paths[name] } } } : a;
                },
            }) as typeof at.cluster;
            const rs = await verifyTenants({ layout: at.layout, through: 2, cluster: moved });
            const hints = rs.filter((r) => !r.ok).map((r) => r.hint ?? "");
            assert.ok(
                hints.some((h) =>
                    /^mandant-d tracks releases\/\{\{release\}\}: the generator found no release key in tenants\/mandant-d\.yaml \(a typo\?\)/.test(
                        h,
                    ),
                ),
                hints.join("\n"),
            );
            delete paths["mandant-d"];
            const again = (await verifyTenants({ layout: at.layout, through: 2, cluster: moved }))
                .filter((r) => !r.ok)
                .map((r) => r.hint ?? "");
            assert.ok(
                again.some((h) =>
                    /^mandant-c tracks releases\/1\.3\.0, which the repository does not ship \(its releases: 1\.1\.0, 1\.2\.0, 1\.2\.1\)/.test(
                        h,
                    ),
                ),
                again.join("\n"),
            );
        });

        it("given mandant-c skipped by RollingSync (its Application refreshed before the ApplicationSet), then stall.json's hint names it", async () => {
            // the cluster as a hard refresh of the Applications leaves it: mandant-c's entry Healthy, its Application
            // Synced at the new commit with the old path, never synced; the learner's stall.json has it neither waiting nor passed
            const skipped = Object.assign(Object.create(at.cluster), {
                getApplicationSet: async (name: string, ns?: string) => {
                    const s = (await at.cluster.getApplicationSet(name, ns))!;
                    const entries = (s.status?.applicationStatus ?? []).map((e) =>
                        e.application === "mandant-c"
                            ? { ...e, status: "Healthy", message: "Application resource has synced, updating status to Healthy" }
                            : e,
                    );
                    return { ...s, status: { ...s.status, applicationStatus: entries } };
                },
                getApplication: async (name: string, ns?: string) => {
                    const a = (await at.cluster.getApplication(name, ns))!;
                    if (name !== "mandant-c") return a;
                    const { operation: _, ...rest } = a;
                    const compared = { ...a.spec?.source, path: `releases/${RELEASES.first}` };
                    return {
                        ...rest,
                        status: { ...a.status, sync: { ...a.status?.sync, status: "Synced", comparedTo: { source: compared } } },
                    };
                },
            }) as typeof at.cluster;
            const file = at.layout.resultFile("stall");
            const stall = JSON.parse(fs.readFileSync(file, "utf8"));
            fs.writeFileSync(file, JSON.stringify({ ...stall, waiting: ["mandant-d"] }));
            const r = (await verifyTenants({ layout: at.layout, through: 2, cluster: skipped })).find((c) =>
                c.check.startsWith("stall: the tenants that passed"),
            )!;
            assert.strictEqual(r.ok, false);
            assert.match(
                r.hint ?? "",
                new RegExp(
                    `^mandant-c \\(step 3\\) was skipped by RollingSync: its entry is Healthy, but mandant-c runs releases/${RELEASES.first.replace(/\./g, "\\.")}[^,;]*, not releases/${RELEASES.faulty.replace(/\./g, "\\.")}.*a hard refresh of the Applications.*start the lab again \\(gitops-lab simulate --reset --root `,
                ),
            );
            // stall.json as the report's stall would have it (mandant-c waiting): still not done, the skip named
            fs.writeFileSync(file, JSON.stringify(stall));
            const listed = (await verifyTenants({ layout: at.layout, through: 2, cluster: skipped })).find((c) =>
                c.check.startsWith("stall: the tenants that passed"),
            )!;
            assert.strictEqual(listed.ok, false, "a skipped tenant written as waiting does not pass");
            assert.match(listed.hint ?? "", /^mandant-c \(step 3\) was skipped by RollingSync/);
            fs.writeFileSync(file, JSON.stringify({ ...stall, waiting: ["mandant-d"] }));
            // the same stall.json on the cluster as the lab left it: the field's own hint, no skip named
            const plain = (await verifyTenants({ layout: at.layout, through: 2, cluster: at.cluster })).find((c) =>
                c.check.startsWith("stall: the tenants that passed"),
            )!;
            assert.strictEqual(plain.ok, false);
            assert.doesNotMatch(plain.hint ?? "", /skipped/, plain.hint);
        });

        // then nothing moves on its own: mandant-c and mandant-d stay where the stall left them (at 1.1.0), untouched
        // by any new sync (one that raced ahead goes on retrying its own)
        it("then the tenants behind the stall stay at 1.1.0", async () => {
            // a tenant whose comparison of the faulty commit came before mandant-b's may have been given a sync before the
            // stall, whose hook then fails as mandant-b's does; it retries that same operation (docs/tenants-lab.md)
            const stall = JSON.parse(fs.readFileSync(at.layout.resultFile("stall"), "utf8"));
            const release = (t: string) =>
                at.lab.kube.get("Deployment", t, "site")!.spec!.template!.metadata!.labels!["example.org/release"];
            const started = (t: string) => app(at, t)!.status?.operationState?.startedAt ?? null;
            const operation = (t: string) => JSON.stringify(app(at, t)!.operation ?? null);
            const left = Object.fromEntries(
                ["mandant-c", "mandant-d"].map((t) => [t, { release: stall.running[t], started: started(t), operation: operation(t) }]),
            );
            for (const t of ["mandant-c", "mandant-d"])
                assert.strictEqual(stall.waiting.includes(t), stall.running[t] === RELEASES.first, JSON.stringify(stall));
            await expectConsistently(
                holds(
                    "c and d as the stall left them, with no operation but the one they had",
                    () =>
                        ["mandant-c", "mandant-d"].every(
                            (t) =>
                                (!app(at, t)!.operation || operation(t) === left[t].operation) &&
                                release(t) === left[t].release &&
                                started(t) === left[t].started,
                        ),
                    () => ({
                        left,
                        now: Object.fromEntries(
                            ["mandant-c", "mandant-d"].map((t) => [
                                t,
                                {
                                    release: release(t),
                                    started: started(t),
                                    operation: operation(t),
                                    phase: app(at, t)!.status?.operationState?.phase,
                                },
                            ]),
                        ),
                    }),
                ),
                { forMs: 1_500 },
            );
        });

        // its auto-sync is off under RollingSync, so autoSync (appcontroller.go) has nothing to say
        it("when mandant-b's sync gives up, then it shows no SyncError: the Failed operation is the only record", async () => {
            await at.givenUp();
            assert.match(app(at, "mandant-b")!.status!.operationState!.message!, /\(retried 5 times\)\.$/);
            await expectConsistently(
                holds(
                    "no SyncError on mandant-b",
                    () => !(app(at, "mandant-b")!.status!.conditions ?? []).some((c: any) => c.type === "SyncError"),
                    () => app(at, "mandant-b")!.status!.conditions,
                ),
                { forMs: 1_000 },
            );
        });

        // gitops-engine's BeforeHookCreation
        it("when mandant-b's sync retries, then its hook Job is deleted and made again only once gone, the operation saying so meanwhile", async () => {
            // a restored stall goes on retrying; a fresh stall is where the retries are (the snapshot may be of a stall that gave up)
            const events: string[] = [];
            const messages = new Set<string>();
            const off = at.lab.kube.onChange((c) => {
                if (
                    c.kind === "Job" &&
                    c.obj.metadata.namespace === "mandant-b" &&
                    c.obj.metadata.name === "site-setup" &&
                    c.type !== "MODIFIED"
                )
                    events.push(`${c.type} ${c.obj.metadata.uid}`);
                if (c.kind === "Application" && c.obj.metadata.name === "mandant-b" && c.obj.status?.operationState?.message)
                    messages.add(c.obj.status.operationState.message);
            });
            let learner = false;
            try {
                await expect(
                    holds(
                        "a hook Job replaced",
                        () => {
                            const b = app(at, "mandant-b");
                            if (
                                !learner &&
                                !events.some((e) => e.startsWith("ADDED")) &&
                                !b!.operation &&
                                b!.status!.operationState?.phase !== "Running"
                            ) {
                                // given up (already, or on a last retry that failed at once on the stored result): a learner's sync of it runs the hook again
                                learner = true;
                                at.lab.kube.put(
                                    {
                                        ...b!,
                                        operation: {
                                            sync: { revision: b!.status!.sync!.revision },
                                            initiatedBy: { username: "learner" },
                                            retry: { limit: 1 },
                                        },
                                    },
                                    "client",
                                );
                            }
                            return events.some((e) => e.startsWith("ADDED"));
                        },
                        () => events,
                    ),
                    { timeoutMs: 60_000 },
                );
            } finally {
                off();
            }
            // never two at once: each ADDED follows the DELETED of the one before it
            let live =
                at.lab.kube.list("Job", "mandant-b").length -
                (events.filter((e) => e.startsWith("ADDED")).length - events.filter((e) => e.startsWith("DELETED")).length);
            for (const e of events) {
                live += e.startsWith("ADDED") ? 1 : -1;
                assert.ok(live <= 1, `two hook Jobs at once: ${events.join(", ")}`);
            }
            assert.ok(
                [...messages].some((m) => m === "waiting for deletion of hook batch/Job/site-setup"),
                [...messages].join(" | "),
            );
        });

        it("then the doctor, live, names the hook's error from its Pod's log (the default terminationMessagePolicy writes none)", async () => {
            // the restored lab goes on retrying: while a retry's new hook Job runs there is no failed one to read, so look until there is
            let dump: Awaited<ReturnType<typeof readLive>> | undefined;
            await expect(async () => {
                dump = await readLive(at.cluster);
                const failedPods = dump.pods.filter((p) => p.metadata.namespace === "mandant-b" && p.status?.phase === "Failed");
                const [d] = diagnose(dump, { now: new Date(), stuckAfterSeconds: 600, appset: "tenants" });
                return failedPods.length > 0 && d.blocking[0]?.hook?.log !== undefined
                    ? succeeded()
                    : pending(`${failedPods.length} failed hook Pods; ${d.summary}`);
            });
            const pods = dump!.pods.filter((p) => p.metadata.namespace === "mandant-b" && p.status?.phase === "Failed");
            assert.ok(
                pods.length > 0 &&
                    pods.every((p) => !!p.status?.containerStatuses?.length && !p.status.containerStatuses[0].state?.terminated?.message),
                "no termination message",
            );
            const [d] = diagnose(dump!, { now: new Date(), stuckAfterSeconds: 600, appset: "tenants" });
            assert.strictEqual(d.state, "stuck");
            assert.strictEqual(d.blocking[0].hook?.log, HOOK_ERROR);
            assert.match(d.summary, /rollout stuck at step 2 of 4/);
        });

        // Argo CD 3.6's own metrics, read through the controller Service's proxy, as the step's evidence
        it("then the doctor's findings carry 3.6's own count of the step", async () => {
            const dump = await readLive(at.cluster);
            assert.ok(
                dump.progressiveSync?.some((c) => c.name === "tenants" && c.step === "2"),
                JSON.stringify(dump.progressiveSync),
            );
            const [d] = diagnose(dump, { now: new Date(), stuckAfterSeconds: 600, appset: "tenants" });
            const b = d.findings.find((f) => f.application === "mandant-b");
            const counted = b?.evidence.find((e) => e.object.startsWith("Argo CD 3.6's metric "));
            assert.strictEqual(
                counted?.object,
                `Argo CD 3.6's metric argocd_appset_progressive_sync_app_status{namespace="argocd",name="tenants",step="2"}`,
            );
            assert.match(counted.value, /^(\w+ [1-9]\d*)(, \w+ [1-9]\d*)*$/);
        });

        // verify grades the order from the blocked step on only
        // when the fixed release is pushed, then the rollout completes in step order from the blocked step on, and
        // recovery.json and verify say so
        it("when the fix is pushed, then the rollout completes", async () => {
            const r = await at.solve(3);
            const rec = r.recovery!;
            assert.deepStrictEqual(rec.running, Object.fromEntries(TENANTS.map((t) => [t, RELEASES.fixed])));
            assert.deepStrictEqual(
                rec.order.map((o) => `${o.step}:${o.application}`),
                ["1:mandant-a", "2:mandant-b", "3:mandant-c", "4:mandant-d"],
            );
            assert.ok(await git(["merge-base", "--is-ancestor", r.stall!.commit, rec.commit], at.layout.clone).then(() => true));
            const checks = await verifyTenants({ layout: at.layout, through: 3, cluster: at.cluster });
            assert.deepStrictEqual(
                checks.filter((c) => !c.ok),
                [],
            );
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
                fs.writeFileSync(
                    file,
                    JSON.stringify({ ...saved, order: saved.order.map((o: any, i: number) => ({ ...o, healthy_at: times[i] })) }),
                );
                const checks = await verifyTenants({ layout: at.layout, through: 3 });
                return checks.find((c) => c.check.startsWith("recovery.order:"))!;
            };
            // the order a CI run saw: b, c, a, d (a's comparison at the fix came after b's sync; RollingSync had moved on)
            const late = await orderCheck([
                "2026-12-02T00:18:04.809Z",
                "2026-12-02T00:18:03.758Z",
                "2026-12-02T00:18:04.646Z",
                "2026-12-02T00:18:05.480Z",
            ]);
            assert.strictEqual(late.ok, true, JSON.stringify(late));
            const wrong = await orderCheck([
                "2026-12-02T00:18:01.000Z",
                "2026-12-02T00:18:04.000Z",
                "2026-12-02T00:18:03.000Z",
                "2026-12-02T00:18:05.000Z",
            ]);
            assert.strictEqual(wrong.ok, false, JSON.stringify(wrong));
            const last = await orderCheck([
                "2026-12-02T00:18:01.000Z",
                "2026-12-02T00:18:02.000Z",
                "2026-12-02T00:18:04.000Z",
                "2026-12-02T00:18:03.000Z",
            ]);
            assert.strictEqual(last.ok, false, JSON.stringify(last));
            // given a stall where mandant-c raced ahead (Synced at 1.2.0 when the fix landed, its entry can count Healthy early
            // as mandant-a's), then mandant-d before mandant-c passes: the check leaves c out
            const stallFile = at.layout.resultFile("stall");
            const stall = JSON.parse(fs.readFileSync(stallFile, "utf8"));
            fs.writeFileSync(
                stallFile,
                JSON.stringify({ ...stall, running: { ...stall.running, "mandant-c": "1.2.0" }, waiting: ["mandant-d"] }),
            );
            const cAhead = await orderCheck([
                "2026-12-02T00:18:01.000Z",
                "2026-12-02T00:18:02.000Z",
                "2026-12-02T00:18:04.000Z",
                "2026-12-02T00:18:03.000Z",
            ]);
            assert.strictEqual(cAhead.ok, true, JSON.stringify(cAhead));
            const dBeforeB = await orderCheck([
                "2026-12-02T00:18:01.000Z",
                "2026-12-02T00:18:03.000Z",
                "2026-12-02T00:18:04.000Z",
                "2026-12-02T00:18:02.000Z",
            ]);
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
            // the fix ships the template as well (1.2.1's hook mounts the code image of 1.2.0): mandant-b's hook fails on 1.2.1 too
            const clone = at.layout.clone;
            const job = path.join(clone, "releases/1.2.1/setup-job.yaml");
            fs.writeFileSync(job, fs.readFileSync(job, "utf8").replace(siteImage(RELEASES.fixed), siteImage(RELEASES.faulty)));
            await git(["add", "-A"], clone);
            await git(["commit", "--quiet", "-m", "1.2.1 ships the template too"], clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], clone);
            await assert.rejects(at.solve(3), /the recovery stalled again on 1\.2\.1/);
            assert.ok(!fs.existsSync(at.layout.resultFile("recovery")));
        });
    });
});

describe("step 3 waits for the stall to settle", () => {
    const stall = { blocking: "mandant-b" } as Stall;
    const faulty = { path: `releases/${RELEASES.faulty}` };
    const running = (startedAt: string, retryCount: number) => ({
        spec: { source: faulty },
        operation: {},
        status: {
            operationState: {
                phase: "Running",
                startedAt,
                retryCount,
                operation: { initiatedBy: { username: "applicationset-controller" } },
            },
        },
    });
    const failed = (startedAt: string) => ({
        spec: { source: faulty },
        status: { operationState: { phase: "Failed", startedAt, retryCount: 5 } },
    });
    /** A cluster whose mandant-b goes through `seen`, one state per look (the last one stays), on a clock each sleep moves on. */
    function scripted(seen: any[]) {
        let i = 0;
        let t = 0;
        const lines: string[] = [];
        const cluster = {
            getApplication: async () => seen[Math.min(i++, seen.length - 1)],
            annotateApplicationSet: async () => {},
            annotateApplication: async () => {},
            listApplications: async () => [],
        };
        const ctx: TenantsScenarioContext = {
            layout: {} as any,
            git: {} as any,
            cluster: cluster as any,
            log: (l) => lines.push(l),
            clock: { now: () => t, sleep: async (ms) => void (t += ms) },
            timeouts: { stallMs: 60_000, pollMs: 1_000, refreshEveryMs: 3_600_000 },
        };
        return { ctx, lines };
    }

    it("follows a second sync after the give-up", async () => {
        // each operation takes 50 of the deadline's 60 s: the second one gets a deadline of its own
        const { ctx, lines } = scripted([
            ...Array(50).fill(running("2026-01-01T00:00:00Z", 4)),
            ...Array(50).fill(running("2026-01-01T00:10:00Z", 0)), // given up, and synced again: the entry stayed Pending
            failed("2026-01-01T00:10:00Z"),
        ]);
        await waitForStallToSettle(ctx, stall);
        assert.ok(
            lines.some((l) =>
                /mandant-b's sync gave up; applicationset-controller synced it again \(step still Pending\): waiting$/.test(l),
            ),
            lines.join("\n"),
        );
        assert.match(lines[lines.length - 1], /mandant-b's sync to give up \(its retries spent\): after/);
    });

    it("refuses a third sync", async () => {
        const { ctx } = scripted([
            running("2026-01-01T00:00:00Z", 4),
            running("2026-01-01T00:10:00Z", 0),
            running("2026-01-01T00:20:00Z", 0),
        ]);
        await assert.rejects(waitForStallToSettle(ctx, stall), /Argo CD synced mandant-b a third time after its sync gave up/);
    });
});
