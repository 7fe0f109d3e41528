/**
 * The scenario's steps one by one, Given / When / Then, against the simulated cluster: the good
 * path of each step and the failure paths a lab author can meet.
 */
import * as assert from "assert";
import { parse } from "yaml";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { INCIDENT_MESSAGE, readShopResults, runShopScenario } from "../lab/shop/scenario";
import { addMissingResource, switchFeatureOn } from "../lab/shop/edits";
import { cannotSyncBecause } from "../lab/argo/application";
import { applyShopAppSet, shopApplicationSet } from "../lab/shop/appset";
import { expect, holds } from "./helpers/expect";
import { labAt, LabAt } from "./helpers/labAt";
import { git } from "./helpers/git";

/** Another person's clone of the lab repository, to move the remote under the scenario's feet. */
async function otherClone(at: LabAt): Promise<string> {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "other-")), "repo");
    await git(["clone", "--quiet", at.lab.layout.bareRepo, dir]);
    await git(["config", "user.name", "Someone Else"], dir);
    await git(["config", "user.email", "else@localhost"], dir);
    return dir;
}

describe("scenario steps (simulated cluster)", function () {
    this.timeout(120_000);

    describe("step 2 sync", () => {
        it("given the ApplicationSet was just applied and its Applications do not exist yet, then step 2 waits for them and for their sync", async () => {
            const at = await labAt(1, { timings: { generateDelayMs: 1_000 } });
            try {
                await applyShopAppSet(at.cluster, at.lab.layout, shopApplicationSet());
                assert.strictEqual(at.lab.kube.get("Application", "argocd", "shop-dev"), undefined, "not generated yet");
                await at.solve(2);
                assert.ok(
                    at.lines.some((l) => /^\[step 2 sync\] waiting for shop-dev synced to [0-9a-f]{12}/.test(l)),
                    at.lines.join("\n"),
                );
                const main = await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "main"]);
                for (const app of ["shop-dev", "shop-prod"])
                    assert.strictEqual(at.lab.kube.get("Application", "argocd", app)!.status!.sync!.revision, main);
            } finally {
                await at.stop();
            }
        });
    });

    describe("step 3 incident", () => {
        let at: LabAt;
        beforeEach(async () => (at = await labAt(2)));
        afterEach(async () => at.stop());

        it("given both apps synced to main, when the base switches the feature on, then both environments get it", async () => {
            const main0 = await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "main"]);
            const { results } = await at.solve(3);
            assert.strictEqual(await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", `${results.incident!.commit}^`]), main0);
            assert.deepStrictEqual(results.incident, { commit: results.incident!.commit, dev_value: "on", prod_value: "on" });
            assert.strictEqual(at.lab.kube.get("ConfigMap", "shop-dev", "shop-config")!.data!.FEATURE_CHECKOUT_V2, "on");
            const base = await git(["--git-dir", at.lab.layout.bareRepo, "show", `${results.incident!.commit}:base/configmap.yaml`]);
            assert.match(base, /FEATURE_CHECKOUT_V2: "on"/, "quoted: a bare on would be a YAML 1.1 boolean");
            assert.ok(!fs.existsSync(at.lab.layout.resultFile("pin")), "stops after step 3");
            assert.ok(at.lines.some((l) => /\[step 3 incident\] waiting for shop-prod synced to [0-9a-f]{12}/.test(l)));
            assert.ok(at.lines.some((l) => /\[step 3 incident\] done in \d+\.\d s/.test(l)));
        });
    });

    describe("a wait that times out", () => {
        let at: LabAt;
        beforeEach(async () => (at = await labAt(2)));
        afterEach(async () => at.stop());

        it("given Argo CD stops syncing, when the incident waits, then the error names the app, the SHA and the last status", async () => {
            await at.lab.argo.apps.stop(); // the application controller is gone
            const err = await at.solve(3, { syncMs: 1_500 }).then(
                () => null,
                (e) => e as Error,
            );
            assert.ok(err, "the wait must fail");
            const head = await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "main"]);
            assert.match(err!.message, /timed out after 1\.5 s waiting for Application shop-dev to be synced to/);
            assert.ok(err!.message.includes(head), "names the SHA it waited for");
            assert.match(
                err!.message,
                /Last status: targetRevision=main, sync=Synced, revision=[0-9a-f]{40}, health=Healthy, operation=Succeeded/,
            );
            assert.ok(!fs.existsSync(at.lab.layout.resultFile("incident")), "no result file for a failed step");
        });
    });

    describe("a remote that moved under us", () => {
        let at: LabAt;
        beforeEach(async () => (at = await labAt(2)));
        afterEach(async () => at.stop());

        it("given the clone and the remote's main both moved on (diverged), when the incident runs, then it refuses and commits nothing", async () => {
            const other = await otherClone(at);
            fs.writeFileSync(path.join(other, "NOTES.md"), "someone else's change\n");
            await git(["add", "NOTES.md"], other);
            await git(["commit", "--quiet", "-m", "someone else"], other);
            await git(["push", "--quiet", "origin", "main"], other);
            const { clone } = at.lab.layout;
            fs.writeFileSync(path.join(clone, "MINE.md"), "mine\n");
            await git(["add", "MINE.md"], clone);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-m", "mine"], clone);
            const ours = await git(["rev-parse", "HEAD"], clone);
            await assert.rejects(
                at.solve(3),
                /have gone apart: a commit of the clone.s rewritten after its push \(git commit --amend, a rebase\), or a push from elsewhere.*Nothing was committed or pushed/s,
            );
            assert.strictEqual(await git(["rev-parse", "HEAD"], clone), ours, "the clone did not move");
        });

        it("given someone else pushed to main, when the incident runs, then it refuses and commits nothing", async () => {
            const other = await otherClone(at);
            fs.writeFileSync(path.join(other, "NOTES.md"), "someone else's change\n");
            await git(["add", "NOTES.md"], other);
            await git(["commit", "--quiet", "-m", "someone else"], other);
            await git(["push", "--quiet", "origin", "main"], other);
            const theirs = await git(["rev-parse", "HEAD"], other);
            const ours = await git(["rev-parse", "HEAD"], at.lab.layout.clone);

            await assert.rejects(
                at.solve(3),
                /the remote's main is at [0-9a-f]{40}, ahead of the clone \S+ \(at [0-9a-f]{40}\): pushed from elsewhere.*Nothing was committed or pushed; bring the clone up to it \(git -C \S+ pull --ff-only\)/s,
            );
            assert.strictEqual(await git(["rev-parse", "HEAD"], at.lab.layout.clone), ours, "the clone did not move");
            assert.strictEqual(
                await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "main"]),
                theirs,
                "the remote keeps their commit",
            );
        });
    });

    describe("step 4 pin", () => {
        let at: LabAt;
        beforeEach(async () => (at = await labAt(3)));
        afterEach(async () => at.stop());

        // given the incident, when prod is pinned, then release/prod is the incident's parent, the ApplicationSet's
        // prod element changes, and prod is off again
        it("pin: release/prod at the incident's parent", async () => {
            const appsBefore = at.lab.kube.requests.length;
            const { results } = await at.solve(4);
            const incident = results.incident!;
            assert.strictEqual(
                results.pin!.release_prod_initial,
                await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", `${incident.commit}^`]),
            );
            assert.strictEqual(
                await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "refs/heads/release/prod"]),
                results.pin!.release_prod_initial,
            );
            assert.strictEqual(results.pin!.prod_value_after_pin, "off");
            const patches = at.lab.kube.requests
                .slice(appsBefore)
                .filter((r) => r.method === "PATCH" && r.path.includes("/applicationsets/shop"));
            assert.strictEqual(patches.length, 1);
            assert.strictEqual(patches[0].contentType, "application/json-patch+json");
            assert.deepStrictEqual((patches[0].body as unknown[])[0], {
                op: "test",
                path: "/spec/generators/0/list/elements/1/env",
                value: "prod",
            });
            const edited = at.lab.kube.requests
                .slice(appsBefore)
                .filter(
                    (r) =>
                        r.method !== "GET" && r.path.includes("/applications/") && JSON.stringify(r.body ?? {}).includes("targetRevision"),
                );
            assert.deepStrictEqual(edited, [], "the Application itself is never edited");
            assert.match(fs.readFileSync(at.lab.layout.appsetFile, "utf8"), /env: prod\n\s+revision: release\/prod/);
            assert.strictEqual(at.lab.kube.get("Application", "argocd", "shop-dev")!.spec!.source!.targetRevision, "main");
        });
    });

    describe("step 5 drift", () => {
        it("given prod pinned, when LOG_LEVEL is patched to debug, then selfHeal puts warn back in place and the seconds are whole", async () => {
            const at = await labAt(4);
            try {
                const uid = at.lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.metadata.uid;
                const { results } = await at.solve(5);
                assert.deepStrictEqual(results.drift, { uid, edited: "debug", restored: "warn", seconds: results.drift!.seconds });
                assert.ok(Number.isInteger(results.drift!.seconds), `seconds ${results.drift!.seconds} is whole`);
                assert.strictEqual(at.lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.metadata.uid, uid);
            } finally {
                await at.stop();
            }
        });

        // given a run stopped between the drift patch and selfHeal's repair, when step 5 runs again, then Git's value
        // comes from Git and the step finishes
        it("step 5 resumed after the drift patch", async () => {
            const at = await labAt(4);
            try {
                // what the stopped run left: LOG_LEVEL drifted, not yet repaired (the application controller held still)
                await at.lab.argo.apps.stop();
                const cm = at.lab.kube.get("ConfigMap", "shop-prod", "shop-config");
                at.lab.kube.put({ ...cm!, data: { ...cm!.data, LOG_LEVEL: "debug" } }, "client");
                const ctx = at.ctx();
                const log = ctx.log!;
                // the controller comes back once step 5 has looked and decided (a patch or not): its repair is what the step waits for
                ctx.log = (l: string) => {
                    log(l);
                    if (/\[step 5 drift\] (patched|shop-prod\/shop-config already has)/.test(l)) at.lab.argo.apps.start();
                };
                const { results } = await runShopScenario(ctx, 5);
                assert.deepStrictEqual(
                    { edited: results.drift!.edited, restored: results.drift!.restored },
                    { edited: "debug", restored: "warn" },
                );
                assert.ok(
                    at.lines.some((l) =>
                        /\[step 5 drift\] shop-prod\/shop-config already has LOG_LEVEL=debug \(an earlier run's patch, not yet repaired\); Git says warn/.test(
                            l,
                        ),
                    ),
                    at.lines.join("\n"),
                );
                assert.ok(!at.lines.some((l) => /debug -> debug/.test(l)));
            } finally {
                await at.stop();
            }
        });

        it("given something recreates the ConfigMap instead of repairing it, then the step fails and says the uid changed", async () => {
            const at = await labAt(4);
            try {
                at.lab.kube.onChange((c) => {
                    if (c.kind === "ConfigMap" && c.actor === "client" && c.obj.data?.LOG_LEVEL === "debug") {
                        const fresh = {
                            ...c.obj,
                            metadata: { name: c.obj.metadata.name, namespace: c.obj.metadata.namespace },
                            data: { ...c.obj.data, LOG_LEVEL: "warn" },
                        };
                        at.lab.kube.remove("ConfigMap", c.obj.metadata.namespace, c.obj.metadata.name, "someone");
                        at.lab.kube.put(fresh, "someone");
                    }
                });
                await assert.rejects(at.solve(5), /was recreated during the drift test: uid [0-9a-f-]+ became [0-9a-f-]+/);
                assert.ok(!fs.existsSync(at.lab.layout.resultFile("drift")));
            } finally {
                await at.stop();
            }
        });
    });

    describe("step 6 promote", () => {
        it("given release/prod at the incident's parent, when promoted, then it fast-forwards to the incident and prod turns on", async () => {
            const at = await labAt(5);
            try {
                const { results } = await at.solve(6);
                assert.deepStrictEqual(results.promote, { from: results.pin!.release_prod_initial, to: results.incident!.commit });
                assert.strictEqual(
                    await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "refs/heads/release/prod"]),
                    results.incident!.commit,
                );
                assert.strictEqual(at.lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.data!.FEATURE_CHECKOUT_V2, "on");
            } finally {
                await at.stop();
            }
        });

        it("given release/prod moved off the incident's line, then the promotion is refused and nothing is pushed", async () => {
            const at = await labAt(5);
            try {
                const other = await otherClone(at);
                await git(["checkout", "--quiet", "-b", "hotfix", "origin/release/prod"], other);
                fs.writeFileSync(path.join(other, "HOTFIX.md"), "a prod-only hotfix\n");
                await git(["add", "HOTFIX.md"], other);
                await git(["commit", "--quiet", "-m", "hotfix on prod"], other);
                await git(["push", "--quiet", "origin", "HEAD:refs/heads/release/prod"], other);
                const hotfix = await git(["rev-parse", "HEAD"], other);

                await assert.rejects(
                    at.solve(6),
                    new RegExp(
                        `promotion refused: release/prod is at ${hotfix}, which is not an ancestor of [0-9a-f]{40}, so this is not a fast-forward.*Nothing was pushed`,
                        "s",
                    ),
                );
                assert.strictEqual(
                    await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "refs/heads/release/prod"]),
                    hotfix,
                    "release/prod untouched",
                );
                assert.ok(!fs.existsSync(at.lab.layout.resultFile("promote")));
            } finally {
                await at.stop();
            }
        });
    });

    describe("step 7 revert", () => {
        let at: LabAt;
        beforeEach(async () => (at = await labAt(6)));
        afterEach(async () => at.stop());

        // given prod promoted, when dev gets a commit that cannot render, then dev shows the ComparisonError, prod
        // stays at the promoted commit, and a revert heals dev
        it("a render error on dev leaves prod, and a revert heals", async () => {
            const { results } = await at.solve(7);
            const r = results.revert!;
            assert.strictEqual(r.prod_revision_during, results.promote!.to);
            assert.match(r.dev_error, /accumulating resources from 'missing\.yaml'/);
            assert.strictEqual(await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", `${r.revert_commit}^`]), r.bad_commit);
            assert.strictEqual(await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "main"]), r.revert_commit);
            const dev = at.lab.kube.get("Application", "argocd", "shop-dev");
            assert.strictEqual(dev!.status!.sync!.status, "Synced");
            assert.strictEqual(dev!.status!.sync!.revision, r.revert_commit);
            assert.ok(at.lines.some((l) => /\[step 7 revert\] waiting for the ComparisonError on shop-dev/.test(l)));
        });
    });

    describe("step 8 report", () => {
        let at: LabAt;
        beforeEach(async () => (at = await labAt(7)));
        afterEach(async () => at.stop());

        it("given the revert, when the report is written, then it is derived from the Applications and the repository", async () => {
            const { results } = await at.solve(8);
            assert.deepStrictEqual(results.report, {
                dev_tracks: "main",
                prod_tracks: "release/prod",
                promoted_commit: results.promote!.to,
                drift_seconds: results.drift!.seconds,
                bad_commit_reached_prod: false,
                rollback: "revert",
            });
        });
    });
});

describe("waits that cannot succeed end at once", function () {
    this.timeout(120_000);

    it("given dev cannot render main, when the incident waits for dev, then it ends with the ComparisonError instead of at its deadline", async () => {
        const at = await labAt(2);
        try {
            const clone = at.lab.layout.clone;
            const file = path.join(clone, "envs", "dev", "kustomization.yaml");
            fs.writeFileSync(file, addMissingResource(fs.readFileSync(file, "utf8")));
            await git(["commit", "--quiet", "-am", "break dev first"], clone);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], clone);
            const err = await at.solve(3, { syncMs: 600_000 }).then(
                () => null,
                (e) => e as Error,
            );
            assert.ok(err, "the step must fail");
            assert.match(
                err!.message,
                /^Application shop-dev cannot become synced to [0-9a-f]{40}: Argo CD cannot compare it \(ComparisonError after a refresh\): .*missing\.yaml/,
            );
            assert.ok(!/timed out/.test(err!.message), "not at the 600 s deadline");
            assert.ok(!fs.existsSync(at.lab.layout.resultFile("incident")));
        } finally {
            await at.stop();
        }
    });

    it("tells a failed sync, a SyncError and a lasting ComparisonError from states that may still move", () => {
        const sha = "a".repeat(40);
        const metadata = { name: "shop-dev" };
        const failedOp = {
            metadata,
            status: {
                operationState: {
                    phase: "Failed",
                    message: "one or more synchronization tasks completed unsuccessfully (retried 5 times).",
                    syncResult: { revision: sha },
                },
            },
        };
        assert.match(
            cannotSyncBecause(failedOp, sha, { refreshPending: false })!,
            /^the sync to it ended Failed: one or more synchronization tasks completed unsuccessfully \(retried 5 times\)\.$/,
        );
        assert.strictEqual(
            cannotSyncBecause(failedOp, "b".repeat(40), { refreshPending: false }),
            null,
            "a failure at another commit says nothing about this one",
        );
        const syncError = {
            metadata,
            status: {
                conditions: [{ type: "SyncError", message: `Failed last sync attempt to [${sha}]: one or more objects failed to apply` }],
            },
        };
        assert.match(cannotSyncBecause(syncError, sha, { refreshPending: false })!, /^SyncError: Failed last sync attempt/);
        const cmp = { metadata, status: { conditions: [{ type: "ComparisonError", message: "rpc error" }] } };
        assert.strictEqual(cannotSyncBecause(cmp, sha, { refreshPending: true }), null, "the refresh we asked for may still clear it");
        assert.match(cannotSyncBecause(cmp, sha, { refreshPending: false })!, /ComparisonError after a refresh/);
        assert.strictEqual(
            cannotSyncBecause({ metadata, status: { operationState: { phase: "Running" } } }, sha, { refreshPending: false }),
            null,
        );
    });
});

describe("step 8 refuses a report it cannot derive", function () {
    this.timeout(120_000);
    let at: LabAt;
    beforeEach(async () => (at = await labAt(7)));
    afterEach(async () => at.stop());

    it("given prod moved back to main in the ApplicationSet, then the report is refused and not written", async () => {
        await at.cluster.jsonPatchApplicationSet("shop", [
            { op: "replace", path: "/spec/generators/0/list/elements/1/revision", value: "main" },
        ]);
        await expect(
            holds(
                "shop-prod tracks main",
                () => at.lab.kube.get("Application", "argocd", "shop-prod")!.spec!.source!.targetRevision === "main",
            ),
        );
        await assert.rejects(at.solve(8), /Application shop-prod tracks main, not release\/prod as step 4 pinned it; nothing was written/);
        assert.ok(!fs.existsSync(at.lab.layout.resultFile("report")));
    });

    it("given an Application that does not exist, then the report is not written", async () => {
        at.lab.argo.appsets.stop(); // nothing generates it again
        at.lab.kube.remove("Application", "argocd", "shop-dev", "client");
        await expect(holds("shop-dev gone", () => !at.lab.kube.get("Application", "argocd", "shop-dev")));
        await assert.rejects(
            at.solve(8),
            /Application shop-dev does not exist, so the report cannot say what it tracks; nothing was written/,
        );
        assert.ok(!fs.existsSync(at.lab.layout.resultFile("report")));
    });
});

describe("a run that died after its push", function () {
    this.timeout(120_000);

    // given the incident commit was made (not pushed) and no incident.json, when the step runs again, then it reuses
    // the commit instead of committing twice
    it("an unpushed incident commit is reused", async () => {
        const at = await labAt(2);
        try {
            const clone = at.lab.layout.clone;
            const file = path.join(clone, "base", "configmap.yaml");
            fs.writeFileSync(file, switchFeatureOn(fs.readFileSync(file, "utf8")));
            await git(["commit", "--quiet", "-am", INCIDENT_MESSAGE], clone);
            const made = await git(["rev-parse", "HEAD"], clone);
            const { results } = await at.solve(3);
            assert.strictEqual(results.incident!.commit, made);
            assert.strictEqual(await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "main"]), made, "pushed now");
            assert.strictEqual(
                await git(["--git-dir", at.lab.layout.bareRepo, "rev-list", "--count", "main"]),
                "2",
                "one incident commit, not two",
            );
        } finally {
            await at.stop();
        }
    });
});

describe("solveThrough: stop, resume, repeat", function () {
    this.timeout(120_000);
    let at: LabAt | undefined;
    afterEach(async () => at?.stop());

    it("given solveThrough 3, then only incident.json is written, prod still on main", async () => {
        at = await labAt(3);
        assert.ok(fs.existsSync(at.lab.layout.resultFile("incident")));
        for (const f of ["pin", "drift", "promote", "revert", "report"] as const) assert.ok(!fs.existsSync(at.lab.layout.resultFile(f)), f);
        assert.strictEqual(at.lab.kube.get("Application", "argocd", "shop-prod")!.spec!.source!.targetRevision, "main");
    });

    it("given a lab at step 3, when solved through 8, then it resumes from the files without redoing earlier steps", async () => {
        at = await labAt(3);
        const incident = JSON.parse(fs.readFileSync(at.lab.layout.resultFile("incident"), "utf8"));
        const { results } = await at.solve(8);
        assert.deepStrictEqual(results.incident, incident, "incident.json unchanged");
        assert.ok(at.lines.some((l) => l.startsWith("[step 3 incident] already done")));
        assert.ok(!at.lines.some((l) => l.startsWith("[step 3 incident] start")));
        assert.strictEqual(results.promote!.to, incident.commit);
        assert.strictEqual(results.report!.bad_commit_reached_prod, false);
    });

    it("given step 7's bad commit made by hand, when solved through 8, then it is refused with how to start step 7 over", async () => {
        at = await labAt(6);
        const { clone } = at.lab.layout;
        const file = path.join(clone, "envs", "dev", "kustomization.yaml");
        fs.writeFileSync(file, addMissingResource(fs.readFileSync(file, "utf8")));
        await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-am", "break dev on purpose"], clone);
        await git(["push", "--quiet", "origin", "HEAD:main"], clone);
        await assert.rejects(at.solve(8), (e: Error) =>
            /lists missing\.yaml already \(step 7's bad commit made by hand\?\).*or start over: gitops-lab simulate --reset --root \S+ .*--through 6 --serve; on a host, pulumi destroy, then pulumi up with solveThrough 6$/.test(
                e.message,
            ),
        );
    });

    it("given a finished lab, when solved again, then nothing changes: no commit, no cluster write", async () => {
        at = await labAt(8);
        const main = await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "main"]);
        const writesBefore = at.lab.kube.requests.filter((r) => r.method !== "GET").length;
        const run2 = await at.solve(8);
        assert.ok(run2.timings.every((t) => t.skipped));
        assert.strictEqual(await git(["--git-dir", at.lab.layout.bareRepo, "rev-parse", "main"]), main);
        assert.strictEqual(at.lab.kube.requests.filter((r) => r.method !== "GET").length, writesBefore);
    });

    it("given a later file without an earlier one, then the checkpoint is refused as inconsistent", async () => {
        at = await labAt(8);
        fs.rmSync(at.lab.layout.resultFile("pin"));
        assert.throws(
            () => readShopResults(at!.lab.layout),
            /drift\.json exists but .*pin\.json does not: the checkpoint is inconsistent\. If pin\.json was deleted or moved, put it back \(step 4 does not run again on a lab the later steps have changed\); if drift\.json was written ahead of its step, move it away together with the later \S+promote\.json, \S+revert\.json, \S+report\.json; else start the lab over$/,
        );
    });

    it("given a result file that does not match its schema, then the checkpoint is refused, naming the file and the field", async () => {
        at = await labAt(8);
        const file = at.lab.layout.resultFile("drift");
        fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), seconds: "3" }));
        assert.throws(
            () => readShopResults(at!.lab.layout),
            /drift\.json is not a valid drift result \(seconds: .*\); move it away together with the later \S+promote\.json, \S+revert\.json, \S+report\.json to let step 5 run again$/,
        );
    });

    it("refuses a solveThrough outside 0..8", async () => {
        at = await labAt(2);
        await assert.rejects(runShopScenario(at.ctx(), 9), /solveThrough must be a whole number from 0 to 8, got 9/);
    });
});

describe("the solver's edit of a base that already has the flag on (step 3 made by hand)", () => {
    it("is refused in one line that says what to write", () => {
        const text =
            'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop-config\ndata:\n  FEATURE_CHECKOUT_V2: "on"\n  LOG_LEVEL: info\n';
        assert.throws(
            () => switchFeatureOn(text),
            (e: Error) =>
                !e.message.includes("\n") &&
                /^base\/configmap\.yaml on main has FEATURE_CHECKOUT_V2: "on" already \(step 3's commit made by hand\?\): the solver does not make it twice; write incident\.json/.test(
                    e.message,
                ),
        );
    });
});

describe("the solver's bad commit on a dev overlay that lists missing.yaml already (step 7 made by hand)", () => {
    it("is refused in one line that says how to finish the step", () => {
        const text = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../base\n  - missing.yaml\n";
        assert.throws(
            () => addMissingResource(text),
            (e: Error) =>
                !e.message.includes("\n") &&
                /^envs\/dev\/kustomization\.yaml on main lists missing\.yaml already \(step 7's bad commit made by hand\?\): the solver does not make it twice; finish step 7 by hand .*verify --step 7.*or start over$/.test(
                    e.message,
                ),
        );
    });
});

describe("the solver's bad commit on a dev overlay written with bases: (kustomize's deprecated alias of resources:)", () => {
    it("adds missing.yaml to bases:, the list the overlay has", () => {
        const text = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nbases:\n  - ../../base\n";
        assert.deepStrictEqual(parse(addMissingResource(text)).bases, ["../../base", "missing.yaml"]);
        assert.strictEqual(parse(addMissingResource(text)).resources, undefined);
    });
});
