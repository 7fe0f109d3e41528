/**
 * The simulated Argo CD in time, one behaviour per test, each as v3.5.1 does it (the upstream place
 * is named in the test), and the scenario's waits against them.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { REFRESH_ANNOTATION } from "../lab/argo/application";
import { addMissingResource, switchFeatureOn } from "../lab/shop/edits";
import { Change } from "../sim/fakeApi";
import { VirtualClock } from "../sim/clock";
import { expect, expectConsistently, holds } from "./helpers/expect";
import { operationPhaseIs } from "./helpers/expectations";
import { labAt, LabAt } from "./helpers/labAt";
import { git } from "./helpers/git";

async function pushEdit(at: LabAt, file: string, edit: (t: string) => string, message: string): Promise<string> {
    const clone = at.lab.layout.clone;
    const p = path.join(clone, file);
    fs.writeFileSync(p, edit(fs.readFileSync(p, "utf8")));
    await git(["commit", "--quiet", "-am", message], clone);
    await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], clone);
    return git(["rev-parse", "HEAD"], clone);
}

/** Every write the application controller made to an Application, in order. */
function recordApp(at: LabAt, name: string): any[] {
    const seen: any[] = [];
    at.lab.kube.onChange((c: Change) => {
        if (c.kind === "Application" && c.obj.metadata.name === name && c.actor === "application-controller") seen.push(c.obj);
    });
    return seen;
}

const app = (at: LabAt, name = "shop-dev") => at.lab.kube.get("Application", "argocd", name);

describe("simulated Argo CD in time (v3.5.1)", function () {
    this.timeout(120_000);
    let at: LabAt;
    afterEach(async () => at?.stop());

    // controller/appcontroller.go autoSync, SetAppOperation: setting `operation` clears the last state, and the comparison that sets it removes the refresh annotation
    // an auto-sync is an operation: set by a comparison, run later (Running), ended Succeeded with syncResult and
    // history, then compared again
    it("an auto-sync is an operation, in time", async () => {
        at = await labAt(2);
        const writes = recordApp(at, "shop-dev");
        const sha = await pushEdit(at, "base/configmap.yaml", switchFeatureOn, "feature on");
        await at.cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "normal" });
        await expect(
            holds(
                "shop-dev synced to the commit",
                () =>
                    app(at)!.status!.sync!.status === "Synced" &&
                    app(at)!.status!.sync!.revision === sha &&
                    app(at)!.status!.operationState?.phase === "Succeeded" &&
                    app(at)!.status!.operationState!.syncResult!.revision === sha,
            ),
        );
        const i = writes.findIndex((w) => w.operation?.sync?.revision === sha);
        assert.ok(i >= 0, "a write set operation");
        assert.strictEqual(
            writes[i].status.operationState,
            undefined,
            "setting an operation clears the last one's state (SetAppOperation)",
        );
        const persisted = writes.findIndex((w, k) => k >= i && !w.metadata.annotations?.[REFRESH_ANNOTATION]);
        const firstRunning = writes.findIndex((w) => w.status.operationState?.phase === "Running");
        assert.ok(persisted >= i && persisted < firstRunning, "the refresh annotation went with the comparison, before the sync ran");
        assert.deepStrictEqual(writes[i].operation.initiatedBy, { automated: true });
        assert.strictEqual(writes[i].operation.retry.limit, 5);
        assert.deepStrictEqual(writes[i].operation.sync.source, app(at)!.spec!.source);
        const running = writes.findIndex((w, k) => k > i && w.status.operationState?.phase === "Running");
        const done = writes.findIndex((w, k) => k > running && w.status.operationState?.phase === "Succeeded");
        assert.ok(running > i && done > running, "Running, then Succeeded");
        assert.strictEqual(writes[done].operation, undefined, "the operation field is cleared when it ends");
        assert.strictEqual(app(at)!.status!.history!.at(-1)!.revision, sha);
        // compared again after the operation (the same result may make it a write with no change); it follows, so poll for it
        await expect(
            holds(
                "a comparison after the operation",
                () => Date.parse(app(at)!.status!.reconciledAt!) >= Date.parse(app(at)!.status!.operationState!.finishedAt!),
                () => [app(at)!.status!.reconciledAt, app(at)!.status!.operationState!.finishedAt],
            ),
        );
        assert.strictEqual(
            app(at)!.status!.history!.filter((h: any) => h.revision === sha).length,
            1,
            "one operation for the commit (auto-sync skipped while it ran)",
        );
    });

    // given a sync retrying after failures, when its phase is set to Terminating (argocd app terminate-op's update of
    // it, or a kubectl patch), then it ends Failed, "Operation terminated", and no attempt runs after it
    // (appcontroller.go resumes a Terminating operation; gitops-engine's sync context Terminate ends it so)
    it("a retrying sync set Terminating ends Failed, terminated, and is not tried again", async () => {
        at = await labAt(2);
        at.lab.argo.apps.failSyncs("shop-dev", 100);
        await pushEdit(at, "base/configmap.yaml", switchFeatureOn, "feature on");
        await at.cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "normal" });
        await expect(holds("a retry due", () => /Retrying attempt #\d+ at /.test(app(at)?.status?.operationState?.message ?? "")));
        const a = app(at)!;
        at.lab.kube.put(
            { ...a, status: { ...a.status, operationState: { ...a.status!.operationState!, phase: "Terminating" } } },
            "client",
        );
        await expect(operationPhaseIs(() => app(at), "Failed"));
        assert.strictEqual(app(at)!.status!.operationState!.message, "Operation terminated");
        assert.strictEqual(app(at)!.operation, undefined);
        const count = app(at)!.status!.operationState!.retryCount;
        await expectConsistently(
            holds(
                "no attempt after it",
                () => app(at)!.status!.operationState!.phase === "Failed" && app(at)!.status!.operationState!.retryCount === count,
            ),
            { forMs: 500 },
        );
    });

    // gitops-engine's sync retry (Retry.Limit 5): `Retrying attempt #N` with finishedAt and no syncResult, then `(retried 5 times).`, then the SyncError `Failed last sync attempt to [sha]: <that message>`
    it("a failing sync is retried with backoff, ends Failed after 5 retries with auto-sync's SyncError, and is not tried again for that SHA", async () => {
        at = await labAt(2);
        at.lab.argo.apps.failSyncs("shop-dev", 100);
        const writes = recordApp(at, "shop-dev");
        const sha = await pushEdit(at, "base/configmap.yaml", switchFeatureOn, "feature on");
        await at.cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "normal" });
        await expect(
            operationPhaseIs(() => app(at), "Failed"),
            { timeoutMs: 30_000 },
        );
        const retrying = writes.filter((w) => /Retrying attempt #\d+ at /.test(w.status.operationState?.message ?? ""));
        assert.deepStrictEqual(
            retrying.map((w) => w.status.operationState.retryCount).filter((n, k, a) => a.indexOf(n) === k),
            [1, 2, 3, 4, 5],
        );
        for (const w of retrying) {
            assert.strictEqual(w.status.operationState.phase, "Running");
            assert.ok(w.status.operationState.finishedAt, "finishedAt is set between tries");
            assert.strictEqual(w.status.operationState.syncResult, undefined, "syncResult is reset at each retry");
        }
        assert.match(app(at)!.status!.operationState!.message!, /\(retried 5 times\)\.$/);
        // the SyncError is auto-sync's (appcontroller.go autoSync), written by the comparison that follows the give-up
        await expect(
            holds(
                "a SyncError",
                () => (app(at)!.status!.conditions ?? []).some((c: any) => c.type === "SyncError"),
                () => app(at)!.status!.conditions,
            ),
        );
        assert.deepStrictEqual(
            app(at)!.status!.conditions!.map((c: any) => c.type),
            ["SyncError"],
        );
        assert.match(
            app(at)!.status!.conditions![0].message!,
            new RegExp(`^Failed last sync attempt to \\[${sha}\\]: .*\\(retried 5 times\\)\\.$`),
        );
        await at.cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "normal" });
        await expect(holds("the refresh handled", () => !app(at)!.metadata.annotations?.[REFRESH_ANNOTATION]));
        await expectConsistently(
            holds("no new operation for that SHA", () => !app(at)!.operation && app(at)!.status!.operationState!.phase === "Failed"),
            { forMs: 500 },
        );
    });

    // branch lookups are cached (reposerver/cache/cache.go, 3 min): an unforced comparison keeps the old SHA without
    // ls-remote; a refresh bypasses the cache
    it("branch lookups are cached; a refresh bypasses", async () => {
        at = await labAt(2);
        const before = app(at)!.status!.sync!.revision;
        const sha = await pushEdit(at, "base/configmap.yaml", switchFeatureOn, "feature on");
        const lsRemotes = at.lab.argo.repo.lsRemotes;
        const reconciled = app(at)!.status!.reconciledAt;
        // a watch event on a managed object: a comparison that is not forced
        await at.cluster.patchConfigMapData("shop-dev", "shop-config", { LOG_LEVEL: "info" });
        // repaired from the cached SHA's manifests: the comparison ran, without asking Git
        await expect(
            holds(
                "LOG_LEVEL repaired",
                () =>
                    at.lab.kube.get("ConfigMap", "shop-dev", "shop-config")!.data!.LOG_LEVEL === "debug" &&
                    app(at)!.status!.reconciledAt !== undefined,
            ),
        );
        assert.strictEqual(app(at)!.status!.sync!.revision, before, "still the cached SHA");
        assert.strictEqual(at.lab.argo.repo.lsRemotes, lsRemotes, "no ls-remote");
        assert.ok(reconciled !== undefined);
        await at.cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "normal" });
        await expect(holds("the new SHA after a refresh", () => app(at)!.status!.sync!.revision === sha));
        assert.ok(at.lab.argo.repo.lsRemotes > lsRemotes);
    });

    // repo errors have a grace period (controller/state.go CompareAppState, 180 s): an unforced comparison writes no
    // ComparisonError; a forced one shows it at once
    it("repo errors have a grace period, unless forced", async () => {
        at = await labAt(2, { timings: { revisionCacheMs: 0 } }); // so an unforced comparison sees the new commit
        await pushEdit(at, "envs/dev/kustomization.yaml", addMissingResource, "break dev");
        await at.cluster.patchConfigMapData("shop-dev", "shop-config", { LOG_LEVEL: "info" }); // a watch event: unforced
        await expectConsistently(
            holds("no ComparisonError written", () => !app(at)!.status!.conditions?.some((c: any) => c.type === "ComparisonError")),
            { forMs: 600 },
        );
        await at.cluster.annotateApplication("shop-dev", { [REFRESH_ANNOTATION]: "normal" });
        await expect(
            holds("the ComparisonError, forced", () => !!app(at)!.status!.conditions?.some((c: any) => c.type === "ComparisonError")),
        );
    });

    it("selfHeal is a partial sync of the drifted resource (appcontroller selfHealAttemptsCount), the first repair without backoff", async () => {
        at = await labAt(2);
        await at.cluster.patchConfigMapData("shop-prod", "shop-config", { LOG_LEVEL: "debug" });
        await expect(
            holds(
                "repaired",
                () =>
                    at.lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.data!.LOG_LEVEL === "warn" &&
                    app(at, "shop-prod")!.status!.operationState?.phase === "Succeeded" &&
                    !!app(at, "shop-prod")!.status!.operationState!.operation!.sync!.resources,
            ),
        );
        const op = app(at, "shop-prod")!.status!.operationState!.operation;
        assert.deepStrictEqual(op!.sync!.resources, [{ group: "", kind: "ConfigMap", namespace: "shop-prod", name: "shop-config" }]);
        assert.strictEqual(op!.sync!.selfHealAttemptsCount, 1);
        assert.deepStrictEqual(at.lab.argo.apps.selfHealDelays, [0]);
    });

    // gitops-engine's three-way diff (pkg/diff, ThreeWayDiff over last-applied-configuration): a key added by hand is no
    // drift and an apply keeps it; a key the last apply wrote, changed by hand, is drift and repaired
    it("selfHeal keeps a key added by hand", async () => {
        at = await labAt(2);
        await at.cluster.patchConfigMapData("shop-prod", "shop-config", { EXTRA: "by hand" });
        await at.cluster.annotateApplication("shop-prod", { [REFRESH_ANNOTATION]: "normal" });
        await expect(holds("compared since", () => !app(at, "shop-prod")!.metadata.annotations?.[REFRESH_ANNOTATION]));
        assert.strictEqual(app(at, "shop-prod")!.status!.sync!.status, "Synced", "a key only the live object has is no drift");
        await at.cluster.patchConfigMapData("shop-prod", "shop-config", { LOG_LEVEL: "debug" });
        await expect(
            holds(
                "repaired",
                () =>
                    at.lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.data!.LOG_LEVEL === "warn" &&
                    app(at, "shop-prod")!.status!.operationState?.phase === "Succeeded",
            ),
        );
        assert.strictEqual(at.lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.data!.EXTRA, "by hand");
    });

    // an ApplicationSet update replaces the generated Application's annotations but the preserved keys
    // (applicationset_controller.go createOrUpdateInCluster)
    it("an ApplicationSet update keeps the preserved annotations", async () => {
        at = await labAt(2);
        const a = app(at, "shop-prod");
        at.lab.kube.put(
            {
                ...a,
                metadata: {
                    ...a!.metadata,
                    annotations: { ...(a!.metadata.annotations ?? {}), "example.org/by-hand": "x", "argocd.argoproj.io/hydrate": "normal" },
                },
                spec: { ...a!.spec, project: "by-hand" },
            },
            "client",
        );
        await expect(holds("the template's spec back", () => app(at, "shop-prod")!.spec!.project === "default"));
        const annotations = app(at, "shop-prod")!.metadata.annotations ?? {};
        assert.strictEqual(annotations["example.org/by-hand"], undefined, "a hand-made annotation is replaced");
        assert.strictEqual(annotations["argocd.argoproj.io/hydrate"], "normal", "the hydrate annotation is kept");
    });
});

describe("the scenario's waits against Argo CD in time", function () {
    this.timeout(180_000);
    let at: LabAt;
    afterEach(async () => at?.stop());

    // given prod's selfHeal operation still Running after the drift, when promote follows at once, then the promotion
    // waits it out and succeeds
    it("promote waits out a running selfHeal", async () => {
        at = await labAt(4, { timings: { operationDurationMs: 1_500 } });
        const { results } = await at.solve(6);
        assert.strictEqual(results.promote!.to, results.incident!.commit);
        const ops = app(at, "shop-prod")!.status!.history!.map((h: any) => h.revision);
        assert.strictEqual(ops.at(-1), results.incident!.commit);
    });

    it("given a promotion whose sync fails five times, then the wait ends at once with the SyncError, not at its deadline", async () => {
        at = await labAt(5);
        at.lab.argo.apps.failSyncs("shop-prod", 100);
        const err = await at.solve(6, { syncMs: 600_000 }).then(
            () => null,
            (e) => e as Error,
        );
        assert.ok(err, "the step must fail");
        assert.match(
            err!.message,
            /^Application shop-prod cannot become synced to [0-9a-f]{40}: (SyncError: Failed last sync attempt|the sync to it ended Failed)/,
        );
        assert.ok(!/timed out/.test(err!.message));
        assert.ok(!fs.existsSync(at.lab.layout.resultFile("promote")));
    });

    it("given the repo-error grace period in force, then step 7's wait for the ComparisonError still ends (it forces the comparison)", async () => {
        at = await labAt(6);
        assert.strictEqual(at.lab.argo.timings.repoErrorGraceMs, 180_000, "Argo CD's default grace");
        const { results } = await at.solve(7);
        assert.match(results.revert!.dev_error, /missing\.yaml/);
    });
});

describe("the simulation's virtual clock", () => {
    it("moves to the next timer only while everyone waits on it, in due order", async () => {
        let inFlight = 0;
        const clock = new VirtualClock(() => inFlight, 0);
        const fired: string[] = [];
        clock.setTimeout(() => fired.push("b@200"), 200);
        clock.setTimeout(() => fired.push("a@100"), 100);
        inFlight = 1; // a request being answered: time stands still
        const waking = clock.sleep(1_000);
        await new Promise((r) => setTimeout(r, 20));
        assert.deepStrictEqual(fired, []);
        assert.strictEqual(clock.now(), 0);
        inFlight = 0;
        await waking;
        assert.deepStrictEqual(fired, ["a@100", "b@200"]);
        assert.strictEqual(clock.now(), 1_000);
    });

    it("does not move while tracked work is in flight", async () => {
        const clock = new VirtualClock(() => 0, 0);
        let release!: () => void;
        clock.track(new Promise<void>((r) => (release = r)));
        let woke = false;
        clock.sleep(50).then(() => (woke = true));
        await new Promise((r) => setTimeout(r, 20));
        assert.strictEqual(woke, false);
        release();
        await expect(holds("woke", () => woke));
        assert.strictEqual(clock.now(), 50);
    });
});
