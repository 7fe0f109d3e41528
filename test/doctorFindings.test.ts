/**
 * The rollout doctor's named findings (lab/doctor/findings.ts): each known way a RollingSync rollout
 * of v3.5.1 stops or leaves an Application behind, from dumps shaped like v3.5.1's objects (the
 * shapes of progressive_sync_test.go and the upstream issues each kind names).
 */
import * as assert from "assert";
import { diagnose, Diagnosis, dumpFromList, Finding, toJson } from "../lab/doctor/diagnose";
import { metricsText } from "../lab/doctor/metrics";
import { application, appSet, failedPreSync, fieldReport, hookJob, list, minutesAgo, NOW, raced, TenantSpec } from "./helpers/rollout";
import { updateApplicationStatusProgress } from "../sim/rollingSync";
import { crdValidator } from "./helpers/upstream";
import { runMain } from "./helpers/cli";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const REV_OLD = "1".repeat(40);
const REV_NEW = "2".repeat(40);

const diagnosed = (l: any, stuckAfterSeconds = 600): Diagnosis => diagnose(dumpFromList(l), { now: NOW, stuckAfterSeconds })[0];
const kinds = (d: Diagnosis) => d.findings.map((f) => `${f.kind} ${f.application ?? "-"} ${f.step ?? "-"}`);
const only = (d: Diagnosis, kind: Finding["kind"]) => d.findings.filter((f) => f.kind === kind);

/** A rollout of these tenants, its Applications, and the objects given. */
function rollout(tenants: TenantSpec[], opts: { rolloutStep?: number | null; steps?: any[]; extra?: any[]; apps?: boolean } = {}) {
    const set = appSet("tenants", tenants, { rolloutStep: opts.rolloutStep ?? null });
    if (opts.steps) set.spec.strategy.rollingSync.steps = opts.steps;
    return list(set, ...(opts.apps === false ? [] : tenants.map((t) => application(set, t))), ...(opts.extra ?? []));
}

/** An Application that synced successfully at `revision`, and is now `sync`/`health`. */
const synced = (sync: string, health: string, revision = REV_NEW, startedMinutesAgo = 30) => ({
    sync: { status: sync, revision: REV_NEW, comparedTo: { source: { path: "x", targetRevision: "main" } } },
    health: { status: health },
    reconciledAt: minutesAgo(1),
    operationState: {
        phase: "Succeeded",
        message: "successfully synced (all tasks run)",
        startedAt: minutesAgo(startedMinutesAgo),
        finishedAt: minutesAgo(startedMinutesAgo - 1),
        operation: { sync: { revision } },
        syncResult: { revision, resources: [] },
    },
});

describe("rollout doctor: named findings", () => {
    it("the fixtures are valid Argo CD v3.5.1 objects (CRD schemas from install.yaml)", () => {
        const appsetOk = crdValidator("ApplicationSet");
        const appOk = crdValidator("Application");
        for (const l of [raced(), holding(), leftRunning()])
            for (const o of l.items) {
                if (o.kind === "ApplicationSet") assert.deepStrictEqual(appsetOk(o), [], o.metadata.name);
                if (o.kind === "Application") assert.deepStrictEqual(appOk(o), [], o.metadata.name);
            }
    });

    it("a fix the generator cannot read (a tenant file with a quote left open): GenerationError, and the line says so", () => {
        const l = fieldReport();
        const set = l.items.find((o: any) => o.kind === "ApplicationSet");
        // as v3.6.2 words it (repo_path_utils.go, sigs.k8s.io/yaml), with the YAML error's own lines after it
        const message = `error generating params from git: unable to process file 'tenants/mandant-b.yaml' from repository 'git://gitd.gitsrv.svc.cluster.local:9418/platform.git': unable to parse file: error converting YAML to JSON: yaml: line 3: found unexpected end of stream\n`;
        set.status.conditions = [
            ...(set.status.conditions ?? []),
            {
                type: "ErrorOccurred",
                status: "True",
                reason: "ApplicationGenerationFromParamsError",
                message,
                lastTransitionTime: minutesAgo(2),
            },
        ];
        const d = diagnosed(l);
        assert.strictEqual(d.state, "stuck");
        assert.deepStrictEqual(kinds(d)[0], "GenerationError - -");
        const [f] = only(d, "GenerationError");
        assert.match(
            f.message,
            /^the ApplicationSet cannot generate its Applications \(its ErrorOccurred condition, ApplicationGenerationFromParamsError\): error generating params from git: unable to process file 'tenants\/mandant-b\.yaml' [^;]*: yaml: line 3: found unexpected end of stream; until it can/,
        );
        assert.match(
            f.todo,
            /kubectl -n argocd annotate applicationset tenants argocd\.argoproj\.io\/application-set-refresh=true --overwrite$/,
        );
        assert.match(
            d.summary,
            / The ApplicationSet cannot generate its Applications: error generating params from git: unable to process file 'tenants\/mandant-b\.yaml' [^(]*\(a fix pushed reaches them only once it can\)\./,
        );
        // the refusal of 3.6's rollout is RolloutError's, not this one
        set.status.conditions.at(-1).reason = "ApplicationSetRolloutError";
        assert.deepStrictEqual(only(diagnosed(l), "GenerationError"), []);
        // one generated Application invalid: the valid ones are still made and updated, so nothing stays as it was
        set.status.conditions.at(-1).reason = "ApplicationValidationError";
        assert.deepStrictEqual(only(diagnosed(l), "GenerationError"), []);
    });

    it("a failed sync of an Application whose resources are gone (health Missing): the finding says it runs nothing", () => {
        const l = fieldReport();
        const app = l.items.find((o: any) => o.kind === "Application" && o.metadata.name === "mandant-b");
        app.status.health = { status: "Missing" };
        const [f] = only(diagnosed(l), "SyncFailed");
        assert.match(
            f.message,
            /^mandant-b \(step 2\): its own sync failed: .*; its resources are not in the cluster \(health Missing: .*\), so it runs nothing until a sync succeeds$/,
        );
    });

    describe("given the newcomer's run: mandant-b's hook failed at step 2, and mandant-c raced ahead and its own hook failed too", () => {
        const d = diagnosed(raced());

        it("then both failing tenants are findings, each with its hook Job, and the rollout is stuck at step 2", () => {
            assert.strictEqual(d.state, "stuck");
            assert.strictEqual(d.step, 2);
            assert.deepStrictEqual(kinds(d), ["SyncFailed mandant-b 2", "SyncFailed mandant-c 3"]);
            const c = only(d, "SyncFailed")[1];
            assert.match(
                c.message,
                /^mandant-c \(step 3\): its own sync failed: PreSync hook Job mandant-c\/site-setup failed \(BackoffLimitExceeded/,
            );
            assert.deepStrictEqual(
                c.evidence.map((e) => `${e.object} ${e.field}=${e.value}`),
                [
                    "Application argocd/mandant-c status.operationState.phase=Failed",
                    "Application argocd/mandant-c status.operationState.message=one or more synchronization tasks completed unsuccessfully (retried 5 times).",
                    "Job mandant-c/site-setup status.conditions[Failed].reason=BackoffLimitExceeded",
                ],
            );
            assert.match(c.todo, /RollingSync does not retry a failed sync/);
        });

        it("then the line names mandant-c as failing on its own, not only waiting", () => {
            assert.match(
                d.summary,
                /Also failing on its own: mandant-c \(step 3\): its own sync failed: PreSync hook Job mandant-c\/site-setup failed/,
            );
        });

        it("then --json carries the findings with their evidence, and the metrics a series per finding", async () => {
            const j = toJson([d]).applicationSets[0];
            assert.deepStrictEqual(
                j.findings.map((f) => [f.kind, f.application, f.step]),
                [
                    ["SyncFailed", "mandant-b", 2],
                    ["SyncFailed", "mandant-c", 3],
                ],
            );
            assert.deepStrictEqual(Object.keys(j.findings[0]), ["kind", "application", "step", "message", "evidence", "todo"]);
            assert.match(String(j.findings[1].evidence[2].time), /^\d{4}-\d\d-\d\dT/); // the Failed condition's time (upstream job-failed.yaml)
            assert.strictEqual(j.findings[1].evidence[1].time, null); // a message has no time of its own
            assert.match(
                await metricsText([d]),
                /gitops_lab_rollout_finding\{namespace="argocd",appset="tenants",kind="SyncFailed",step="3",application="mandant-c"\} 1/,
            );
        });
    });

    it("given a finished rollout, then there is no finding", () => {
        const d = diagnosed(
            rollout([
                { name: "mandant-a", step: 1, status: "Healthy" },
                { name: "mandant-b", step: 2, status: "Healthy" },
            ]),
        );
        assert.strictEqual(d.state, "complete");
        assert.deepStrictEqual(d.findings, []);
    });

    it("given the field report, then its one finding is mandant-b's failed sync", () => {
        assert.deepStrictEqual(kinds(diagnosed(fieldReport())), ["SyncFailed mandant-b 2"]);
    });

    // given mandant-b's failed sync of a release rolled back since (Synced at the revert, which brought back what runs),
    // then that failure is past: no SyncFailed
    it("a failed sync of a revision rolled back since is no finding", () => {
        const back = { ...failedPreSync("site-setup", "mandant-b", false), sync: { status: "Synced", revision: "3".repeat(40) } };
        const d = diagnosed(
            rollout([
                { name: "mandant-a", step: 1, status: "Healthy" },
                { name: "mandant-b", step: 2, status: "Healthy", app: back },
            ]),
        );
        assert.deepStrictEqual(only(d, "SyncFailed"), []);
        assert.doesNotMatch(d.summary, /Also failing on its own/);
    });

    // given a later step's tenant skipped (its entry Healthy, its Application OutOfSync), then it is named skipped, not waiting
    it("a skipped tenant is not also waiting", () => {
        const d = diagnosed(
            rollout(
                [
                    { name: "mandant-a", step: 1, status: "Healthy" },
                    { name: "mandant-b", step: 2, status: "Progressing", app: failedPreSync("site-setup", "mandant-b", false) },
                    { name: "mandant-c", step: 3, status: "Healthy", app: synced("OutOfSync", "Healthy", REV_OLD, 90) },
                    { name: "mandant-d", step: 4, status: "Waiting" },
                ],
                { rolloutStep: 2 },
            ),
        );
        assert.deepStrictEqual(
            d.waiting.map((w) => w.application),
            ["mandant-d"],
        );
        assert.deepStrictEqual(
            d.skipped.map((s) => s.application),
            ["mandant-c"],
        );
    });

    // given an entry Healthy while its Application is OutOfSync at the target and no sync since (#29240), then
    // HealthyOutOfSync with the last synced revision
    it("Healthy but OutOfSync is HealthyOutOfSync", () => {
        const d = diagnosed(
            rollout([
                { name: "mandant-a", step: 1, status: "Healthy" },
                { name: "mandant-b", step: 2, status: "Healthy", app: synced("OutOfSync", "Healthy", REV_OLD, 90) },
            ]),
        );
        const [f] = only(d, "HealthyOutOfSync");
        assert.strictEqual(f.application, "mandant-b");
        assert.match(f.message, /^mandant-b \(step 2\) was skipped: its entry is Healthy but it runs/);
        assert.deepStrictEqual(
            f.evidence.map((e) => `${e.field}=${e.value}`),
            [
                "status.applicationStatus[mandant-b].status=Healthy",
                "status.sync.status=OutOfSync",
                `status.operationState.syncResult.revision=${REV_OLD}`,
            ],
        );
        assert.match(f.todo, /push one, or sync it by hand \(argocd app sync mandant-b\)/);
    });

    // given the same, but the last sync was to the source it should run: its resources changed since (deleted
    // or edited by hand), then the finding says so, not "runs X, not X"
    it("Healthy but OutOfSync at its own source is drift", () => {
        const l = rollout([
            { name: "mandant-a", step: 1, status: "Healthy" },
            { name: "mandant-b", step: 2, status: "Healthy", app: synced("OutOfSync", "Healthy", REV_OLD, 90) },
        ]);
        const app = l.items.find((o: any) => o.kind === "Application" && o.metadata.name === "mandant-b");
        app.status.operationState.syncResult.source = app.spec.source;
        const [f] = only(diagnosed(l), "HealthyOutOfSync");
        assert.match(
            f.message,
            /^mandant-b \(step 2\) is OutOfSync at tenants\/mandant-b at main while its entry is Healthy: its resources are not what Git has \(deleted or changed by hand\?\)$/,
        );
        assert.doesNotMatch(f.message, /runs/);
    });

    it("given step 2 held by an Application Healthy but OutOfSync after a successful sync (#19771), then HealthyNotSynced: a step needs both", () => {
        const d = diagnosed(
            rollout(
                [
                    { name: "mandant-a", step: 1, status: "Healthy" },
                    { name: "mandant-b", step: 2, status: "Progressing", since: 30, app: synced("OutOfSync", "Healthy") },
                    { name: "mandant-c", step: 3, status: "Waiting" },
                ],
                { rolloutStep: 2 },
            ),
        );
        assert.deepStrictEqual(kinds(d), ["HealthyNotSynced mandant-b 2"]);
        assert.match(
            only(d, "HealthyNotSynced")[0].message,
            /is Healthy but OutOfSync: RollingSync counts a step done only when its Applications are Synced and Healthy/,
        );
        assert.match(only(d, "HealthyNotSynced")[0].todo, /argocd app diff mandant-b/);
        // a sync that has just ended, before Argo CD compares again, is no finding
        const fresh = diagnosed(
            rollout(
                [
                    { name: "mandant-a", step: 1, status: "Healthy" },
                    { name: "mandant-b", step: 2, status: "Progressing", since: 2, app: synced("OutOfSync", "Healthy", REV_NEW, 2) },
                ],
                { rolloutStep: 2 },
            ),
        );
        assert.deepStrictEqual(only(fresh, "HealthyNotSynced"), []);
    });

    describe("given an entry Pending past --stuck-after (#12459, #13926, #19535, #20576)", () => {
        const pending = (app: any, since = 30) =>
            diagnosed(
                rollout(
                    [
                        { name: "mandant-a", step: 1, status: "Healthy" },
                        { name: "mandant-b", step: 2, status: "Pending", since, app },
                    ],
                    { rolloutStep: 2 },
                ),
            );

        it("when the application controller has not reconciled it since, then PendingNotProgressing says so, with the times", () => {
            const [f] = only(
                pending({ ...synced("OutOfSync", "Healthy", REV_OLD, 90), reconciledAt: minutesAgo(40) }),
                "PendingNotProgressing",
            );
            assert.match(
                f.message,
                /has been Pending since .* and never turned Progressing: the application controller has not reconciled it since/,
            );
            assert.deepStrictEqual(
                f.evidence.map((e) => `${e.field}=${e.value}`),
                [
                    "status.applicationStatus[mandant-b].status=Pending",
                    `status.operationState.startedAt=${minutesAgo(90)}`,
                    `status.reconciledAt=${minutesAgo(40)}`,
                ],
            );
        });

        it("when it was reconciled since but its last sync started before the entry went Pending, then the sync never reached it", () => {
            const [f] = only(pending(synced("OutOfSync", "Healthy", REV_OLD, 90)), "PendingNotProgressing");
            assert.match(
                f.message,
                /its last sync started at .*, not after the entry went Pending: the ApplicationSet controller's sync never reached it/,
            );
        });

        it("when it is a later step's entry, Pending ahead of the stuck step, then no sync by hand is advised", () => {
            const d = diagnosed(
                rollout(
                    [
                        { name: "mandant-a", step: 1, status: "Healthy" },
                        { name: "mandant-b", step: 2, status: "Progressing", since: 30 },
                        { name: "mandant-c", step: 3, status: "Pending", since: 30, app: synced("OutOfSync", "Healthy", REV_OLD, 90) },
                    ],
                    { rolloutStep: 2 },
                ),
            );
            const [f] = only(d, "PendingNotProgressing");
            assert.strictEqual(f.application, "mandant-c");
            assert.match(f.todo, /^none for mandant-c itself: its step 3 comes after the stuck step 2[^\n]*do not sync it by hand/);
            assert.doesNotMatch(f.todo, /argocd app sync/);
        });

        it("when it has been Pending for less than --stuck-after, then it is no finding", () => {
            assert.deepStrictEqual(only(pending(synced("OutOfSync", "Healthy", REV_OLD, 90), 5), "PendingNotProgressing"), []);
        });
    });

    it("given steps that select mandant-c twice and mandant-d never, then SelectedTwice and NotSelected (step -1, #18817, #13501)", () => {
        const d = diagnosed(
            rollout(
                [
                    { name: "mandant-a", step: 1, status: "Healthy" },
                    { name: "mandant-c", step: 1, status: "Healthy" },
                    { name: "mandant-d", step: -1, status: "Waiting" },
                ],
                {
                    steps: [
                        { matchExpressions: [{ key: "example.org/tenant", operator: "In", values: ["mandant-a", "mandant-c"] }] },
                        { matchExpressions: [{ key: "example.org/tenant", operator: "In", values: ["mandant-c"] }] },
                    ],
                },
            ),
        );
        assert.deepStrictEqual(kinds(d), ["NotSelected mandant-d -1", "SelectedTwice mandant-c 1"]);
        assert.match(only(d, "NotSelected")[0].message, /selected by no step \(its step is -1\): the rollout never syncs it/);
        assert.match(only(d, "SelectedTwice")[0].message, /selected by steps 1 and 2/);
    });

    // given a step with no matchExpressions, one that selects nothing, an operator v3.5.1 does not know and invalid
    // maxUpdates, then each is named
    it("each invalid step is named", () => {
        const d = diagnosed(
            rollout([{ name: "mandant-a", step: 1, status: "Healthy" }], {
                steps: [
                    { matchExpressions: [{ key: "example.org/tenant", operator: "Exists" }], maxUpdate: 0 },
                    { matchExpressions: [{ key: "example.org/tennant", operator: "In", values: ["mandant-a"] }], maxUpdate: "half" },
                    { matchExpressions: [], maxUpdate: "0%" },
                ],
            }),
        );
        assert.deepStrictEqual(
            kinds(d).filter((k) => !k.startsWith("NotSelected") && !k.startsWith("SelectedTwice")),
            [
                "InvalidOperator - 1",
                "InvalidMaxUpdate - 1",
                "EmptyStep - 2",
                "InvalidMaxUpdate - 2",
                "EmptyStep - 3",
                "InvalidMaxUpdate - 3",
            ],
        );
        const msg = (k: string, step: number) => d.findings.find((f) => f.kind === k && f.step === step)!.message;
        assert.match(
            msg("InvalidOperator", 1),
            /RollingSync understands only In and NotIn \(Argo CD 3\.5 and 3\.6\), so this step selects exactly the Applications without the label/,
        );
        assert.match(msg("InvalidMaxUpdate", 1), /no Application of step 1 is ever allowed to update: the step never moves/);
        assert.match(msg("InvalidMaxUpdate", 2), /Argo CD cannot scale it and updates one Application of the step at a time/);
        assert.match(msg("EmptyStep", 2), /selects no Application/);
        // step 1 selects none for its operator, which InvalidOperator says: no "misspelt key?" guess beside it
        assert.ok(!d.findings.some((f) => f.kind === "EmptyStep" && f.step === 1));
        assert.ok(!d.findings.some((f) => /v3\.5\.1/.test(f.message)));
        assert.match(msg("EmptyStep", 3), /has no matchExpressions: it selects every Application \(1\)/);
    });

    it("a step that selects none says why: a key no Application has, a value misspelt, or its Application gone", () => {
        const step = (values: string[], key = "example.org/tenant") => ({ matchExpressions: [{ key, operator: "In", values }] });
        const tenants: TenantSpec[] = [
            { name: "mandant-a", step: 1, status: "Healthy" },
            { name: "mandant-b", step: 2, status: "Healthy" },
            { name: "mandant-c", step: 3, status: "Healthy" },
        ];
        const why = (steps: any[], n: number, of = tenants) =>
            diagnosed(rollout(of, { steps })).findings.find((f) => f.kind === "EmptyStep" && f.step === n)?.message;
        const [a, b, c] = [step(["mandant-a"]), step(["mandant-b"]), step(["mandant-c"])];
        assert.match(
            why([a, b, c, step(["mandant-d"], "example.org/tennant")], 4) ?? "",
            /\(no Application has the label example\.org\/tennant: a misspelt key\?\)$/,
        );
        // mandant-c is selected by no step (its entry's step -1, as Argo CD writes it): step 3's value is its, misspelt
        const unselected = tenants.map((t) => (t.name === "mandant-c" ? { ...t, step: -1, status: "Waiting" as const } : t));
        assert.match(
            why([a, b, step(["mandnat-c"])], 3, unselected) ?? "",
            /\(example\.org\/tenant=mandnat-c is no Application's, example\.org\/tenant=mandant-c is, and no step selects it: a misspelt value\?\)$/,
        );
        // mandant-d's file deleted: its Application is gone, the others are their own steps' (no typo guessed from mandant-a)
        assert.match(
            why([a, b, c, step(["mandant-d"])], 4) ?? "",
            /\(no Application has example\.org\/tenant=mandant-d \(theirs: mandant-a, mandant-b, mandant-c\): the Application the step was for is gone \(its generator no longer makes it: its file or element deleted\?\), or a value misspelt\)$/,
        );
    });

    // given maxUpdate 1 and one Application of the step Progressing, then the Waiting ones are held: 'not allowed to
    // update yet, 1/1 in step 1' (#16881)
    it("maxUpdate 1 holds the Waiting ones", () => {
        const d = diagnosed(holding());
        assert.deepStrictEqual(kinds(d), ["MaxUpdateHolding mandant-b 1", "MaxUpdateHolding mandant-c 1"]);
        assert.match(
            only(d, "MaxUpdateHolding")[0].message,
            /^mandant-b \(step 1\) is not allowed to update yet: 1\/1 in step 1 \(maxUpdate 1\) are updating: mandant-a \(Progressing\)$/,
        );
    });

    // as the simulation counts them too
    it("given maxUpdate 50% and Applications in no step, then they count into step 1's total as v3.5.1's: 2 of 4 may update, nothing is held", () => {
        const l = holding();
        const set = l.items[0];
        set.spec.strategy.rollingSync.steps[0].maxUpdate = "50%";
        set.spec.strategy.rollingSync.steps[0].matchExpressions[0].values = ["mandant-a", "mandant-b"];
        set.status.applicationStatus = set.status.applicationStatus.filter((e: any) => e.application !== "mandant-c");
        l.items = l.items.filter((o: any) => o.metadata.name !== "mandant-c");
        const unselected: TenantSpec[] = [
            { name: "mandant-x", step: -1, status: "Waiting" },
            { name: "mandant-y", step: -1, status: "Waiting" },
        ];
        for (const t of unselected) {
            set.status.applicationStatus.push(...appSet("tenants", [t]).status.applicationStatus);
            l.items.push(application(set, t));
        }
        assert.deepStrictEqual(only(diagnosed(l), "MaxUpdateHolding"), []);
        // the simulation's v3.5.1 logic on the same entries: mandant-b moves to Pending
        const stepOf = new Map([
            ["mandant-a", 0],
            ["mandant-b", 0],
        ]);
        const next = updateApplicationStatusProgress(set, set.status.applicationStatus, new Set(["mandant-b"]), stepOf, NOW.toISOString());
        assert.strictEqual(next.find((e) => e.application === "mandant-b")?.status, "Pending");
    });

    it("given maxUpdate 1 and the step's updating Application only just started, then nothing is held yet: no finding", () => {
        const l = holding();
        l.items[0].status.applicationStatus[0].lastTransitionTime = minutesAgo(2);
        assert.deepStrictEqual(only(diagnosed(l), "MaxUpdateHolding"), []);
    });

    // given a tenant whose last sync failed and whose entry now waits for the fixed revision, then no SyncFailed: its
    // failure was the old revision's
    it("an old revision's failure is not SyncFailed", () => {
        // the failed sync ran at the revision before the one the entry now waits for
        const atOld = failedPreSync("site-setup", "mandant-b", false);
        const old = "1".repeat(40);
        atOld.operationState.operation.sync.revision = old;
        atOld.operationState.syncResult.revision = old;
        const tenants: TenantSpec[] = [
            { name: "mandant-a", step: 1, status: "Progressing", since: 1 },
            { name: "mandant-b", step: 2, status: "Waiting", since: 1, app: atOld },
        ];
        const set = appSet("tenants", tenants, { rolloutStep: 1 });
        const d = diagnosed(list(set, ...tenants.map((t) => application(set, t)), hookJob("mandant-b", "site-setup", "failed")));
        assert.deepStrictEqual(only(d, "SyncFailed"), []);
    });

    // given a tenant the rollout has not reached, synced by hand at the entry's own target revision, whose sync failed:
    // it failed on its own, and is SyncFailed though its entry waits
    it("a waiting tenant's failed sync at its own target revision is SyncFailed", () => {
        const tenants: TenantSpec[] = [
            { name: "mandant-a", step: 1, status: "Progressing", since: 1 },
            { name: "mandant-b", step: 2, status: "Waiting", since: 1, app: failedPreSync("site-setup", "mandant-b", false) },
        ];
        const set = appSet("tenants", tenants, { rolloutStep: 1 });
        const d = diagnosed(list(set, ...tenants.map((t) => application(set, t)), hookJob("mandant-b", "site-setup", "failed")));
        assert.deepStrictEqual(
            only(d, "SyncFailed").map((f) => f.application),
            ["mandant-b"],
        );
    });

    it("given a status entry of an Application that was deleted (#13331), then DeletedApplication, and the step's line names it Missing", () => {
        const tenants: TenantSpec[] = [
            { name: "mandant-a", step: 1, status: "Healthy" },
            { name: "mandant-x", step: 2, status: "Progressing" },
        ];
        const set = appSet("tenants", tenants, { rolloutStep: 2 });
        // read live: the cluster has no such Application
        const live = diagnose(
            { ...dumpFromList(list(set, application(set, tenants[0]))), fromFile: false },
            { now: NOW, stuckAfterSeconds: 600 },
        )[0];
        assert.deepStrictEqual(kinds(live), ["DeletedApplication mandant-x 2"]);
        assert.match(only(live, "DeletedApplication")[0].message, /no such Application exists: step 2 waits for it/);
        assert.match(
            only(live, "DeletedApplication")[0].todo,
            /^have the ApplicationSet controller rewrite its status .*application-set-refresh=true/,
        );
        // from a dump, which may have left it out: said as the dump's, and to dump it first
        const d = diagnosed(list(set, application(set, tenants[0])));
        assert.deepStrictEqual(kinds(d), ["DeletedApplication mandant-x 2"]);
        assert.match(
            only(d, "DeletedApplication")[0].message,
            /the dump holds no such Application \(left out of it, or deleted\?\): step 2 waits for it/,
        );
        assert.match(only(d, "DeletedApplication")[0].todo, /^dump every Application with the rest/);
    });

    it("given a PreSync hook the operation shows Running while its Job is complete (#4979, #15292), then HookLeftRunning with both sides", () => {
        const d = diagnosed(leftRunning());
        assert.deepStrictEqual(kinds(d), ["HookLeftRunning mandant-b 2"]);
        const [f] = only(d, "HookLeftRunning");
        assert.deepStrictEqual(
            f.evidence.map((e) => `${e.object} ${e.field}=${e.value}`),
            [
                "Application argocd/mandant-b status.operationState.syncResult.resources[Job mandant-b/site-setup].hookPhase=Running",
                "Job mandant-b/site-setup status.conditions[Complete]=True",
            ],
        );
        assert.match(f.todo, /argocd app terminate-op mandant-b/);
    });

    it("a hook Job deleted while the sync waits for it: HookLeftRunning says to end the operation, not to fix Git", () => {
        // another tenant's Job in the dump: Jobs were read, and site-setup is not among them
        const d = diagnosed(leftRunning(hookJob("mandant-a", "site-setup", "complete")));
        assert.deepStrictEqual(kinds(d), ["HookLeftRunning mandant-b 2"]);
        const [f] = only(d, "HookLeftRunning");
        assert.match(
            f.message,
            /^mandant-b \(step 2\): its sync waits for hook Job mandant-b\/site-setup, which is gone from the cluster \(deleted while it ran\?\): Argo CD waits for it until the operation is ended, and a new commit does not end it$/,
        );
        assert.match(f.todo, /^end the operation \(argocd app terminate-op mandant-b\)/);
        assert.match(d.summary, /mandant-b: its sync waits for hook Job mandant-b\/site-setup, which is gone from the cluster/);
        assert.doesNotMatch(d.summary, /its own sync failed|fix the cause in Git/);
        // a dump of no Jobs at all says nothing of whether it is gone
        const noJobs = leftRunning();
        noJobs.items = noJobs.items.filter((o: any) => o.kind !== "Job");
        const unknown = diagnose({ ...dumpFromList(noJobs), fromFile: true }, { now: NOW, stuckAfterSeconds: 600 })[0];
        assert.deepStrictEqual(only(unknown, "HookLeftRunning"), []);
    });

    // given the operation waiting for a hook Job whose Pod has been ContainerCreating for 20 minutes (its ConfigMap
    // volume missing: a real kubelet keeps it so, FailedMount in its Events), then HookNotStarted names the Pod
    it("a hook whose Pod never started is HookNotStarted", () => {
        const pod = {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
                name: "site-setup-x1",
                namespace: "mandant-b",
                creationTimestamp: minutesAgo(20),
                labels: { "batch.kubernetes.io/job-name": "site-setup" },
            },
            status: {
                phase: "Pending",
                containerStatuses: [{ name: "setup", ready: false, state: { waiting: { reason: "ContainerCreating" } } }],
            },
        };
        const d = diagnosed(leftRunning(hookJob("mandant-b", "site-setup", "running"), pod));
        assert.deepStrictEqual(kinds(d), ["HookNotStarted mandant-b 2"]);
        const [f] = only(d, "HookNotStarted");
        assert.match(f.message, /waits for hook Job mandant-b\/site-setup, whose Pod site-setup-x1 has not started \(ContainerCreating\)/);
        assert.match(f.todo, /^kubectl -n mandant-b describe pod site-setup-x1 \(its Events say what it waits for\)/);
        // within --stuck-after, not a finding yet, but the line says what the sync waits for and how to see why
        const young = diagnosed(leftRunning(hookJob("mandant-b", "site-setup", "running"), pod), 30 * 60);
        assert.deepStrictEqual(only(young, "HookNotStarted"), []);
        // a Pod made seconds ago (being scheduled): not named yet
        const fresh = { ...pod, metadata: { ...pod.metadata, creationTimestamp: minutesAgo(0.2) } };
        assert.doesNotMatch(diagnosed(leftRunning(hookJob("mandant-b", "site-setup", "running"), fresh)).summary, /has not started/);
        // its entry still Pending (the ApplicationSet controller's message) long after: the hook Pod is the cause, not the controllers
        const pending = leftRunning(hookJob("mandant-b", "site-setup", "running"), pod);
        const set = pending.items.find((o: any) => o.kind === "ApplicationSet");
        const entry = set.status.applicationStatus.find((x: any) => x.application === "mandant-b");
        Object.assign(entry, { status: "Pending", lastTransitionTime: minutesAgo(20) });
        assert.deepStrictEqual(kinds(diagnosed(pending)), ["HookNotStarted mandant-b 2"]);
        // the same, its hook Pod new (a new attempt remade it): the entry's long Pending is a finding still
        const renewed = leftRunning(hookJob("mandant-b", "site-setup", "running"), fresh);
        const entry2 = renewed.items
            .find((o: any) => o.kind === "ApplicationSet")
            .status.applicationStatus.find((x: any) => x.application === "mandant-b");
        Object.assign(entry2, { status: "Pending", lastTransitionTime: minutesAgo(20) });
        assert.deepStrictEqual(kinds(diagnosed(renewed)), ["PendingNotProgressing mandant-b 2"]);
        assert.match(
            young.summary,
            /mandant-b: its sync waits for hook Job mandant-b\/site-setup, whose Pod site-setup-x1 has not started yet \(ContainerCreating since \S+\): kubectl -n mandant-b describe pod site-setup-x1 \(its Events say what it waits for\)/,
        );
    });

    it("given Argo CD's own InvalidRolloutConfig condition (3.6), then it is read and said to be Argo CD's", () => {
        const l = rollout([{ name: "mandant-a", step: 1, status: "Healthy" }]);
        l.items[0].status.conditions.push({
            type: "InvalidRolloutConfig",
            status: "True",
            reason: "InvalidRolloutConfig",
            message: "Application mandant-a is selected by more than one step",
            lastTransitionTime: minutesAgo(5),
        });
        const [f] = only(diagnosed(l), "InvalidRolloutConfig");
        assert.match(
            f.message,
            /its InvalidRolloutConfig condition, Argo CD 3\.6 and later\): Application mandant-a is selected by more than one step$/,
        );
    });

    describe("given step 2's sync held by a sync window (RollingSync's syncs wait for it like any manual sync)", () => {
        /** mandant-b's operation as v3.5.1's application controller leaves it in a window, and its AppProject with these windows. */
        const windowed = (windows: any[] | null) => {
            const tenants: TenantSpec[] = [
                { name: "mandant-a", step: 1, status: "Healthy" },
                {
                    name: "mandant-b",
                    step: 2,
                    status: "Progressing",
                    since: 20,
                    app: {
                        sync: { status: "OutOfSync", revision: REV_NEW },
                        health: { status: "Healthy" },
                        operationState: {
                            phase: "Running",
                            message: "Sync operation blocked by sync window",
                            startedAt: minutesAgo(20),
                            operation: {
                                sync: { revision: REV_NEW },
                                initiatedBy: { username: "applicationset-controller", automated: true },
                            },
                        },
                    },
                },
            ];
            const set = appSet("tenants", tenants, { rolloutStep: 2 });
            const project = {
                apiVersion: "argoproj.io/v1alpha1",
                kind: "AppProject",
                metadata: { name: "default", namespace: "argocd" },
                spec: { sourceRepos: ["*"], destinations: [{ server: "*", namespace: "*" }], syncWindows: windows ?? [] },
            };
            return list(set, ...tenants.map((t) => application(set, t)), ...(windows ? [project] : []));
        };

        it("the AppProject fixtures are valid Argo CD v3.5.1 objects", () => {
            const ok = crdValidator("AppProject");
            const l = windowed([{ kind: "deny", schedule: "0 14 * * *", duration: "2h", namespaces: ["mandant-*"] }]);
            for (const o of l.items.filter((x: any) => x.kind === "AppProject")) assert.deepStrictEqual(ok(o), []);
        });

        it("when the dump holds no AppProject, then SyncWindow from the operation's message, and what to dump to name the window", () => {
            const [f] = only(diagnosed(windowed(null)), "SyncWindow");
            assert.strictEqual(f.application, "mandant-b");
            assert.deepStrictEqual(
                f.evidence.map((e) => `${e.field}=${e.value}`),
                ["status.operationState.message=Sync operation blocked by sync window"],
            );
            assert.match(f.todo, /with appprojects\.argoproj\.io in the dump the doctor names the window/);
        });

        it("when a deny window is active (14:00 for 2h, now 15:00), then it is named with its end", () => {
            const [f] = only(
                diagnosed(windowed([{ kind: "deny", schedule: "0 14 * * *", duration: "2h", namespaces: ["mandant-*"] }])),
                "SyncWindow",
            );
            assert.match(
                f.message,
                /waits for a sync window of project default \(deny 0 14 \* \* \* for 2h\) until 2026-05-29T16:00:00\.000Z/,
            );
            assert.deepStrictEqual(f.evidence[1], {
                object: "AppProject argocd/default",
                field: "spec.syncWindows[0]",
                value: "deny 0 14 * * * for 2h",
            });
        });

        it("when the active deny window has manualSync, then it still holds: RollingSync's syncs are automated (v3.5.1's syncApplication)", () => {
            const [f] = only(
                diagnosed(
                    windowed([{ kind: "deny", schedule: "0 14 * * *", duration: "2h", namespaces: ["mandant-*"], manualSync: true }]),
                ),
                "SyncWindow",
            );
            assert.strictEqual(f.evidence.length, 2, JSON.stringify(f.evidence));
            assert.match(f.message, /manualSync does not let them through/);
        });

        it("when only an allow window exists and it is closed, then it is named with the time it opens", () => {
            const [f] = only(
                diagnosed(windowed([{ kind: "allow", schedule: "0 22 * * *", duration: "1h", applications: ["*"] }])),
                "SyncWindow",
            );
            assert.match(f.message, /\(allow 0 22 \* \* \* for 1h\) until 2026-05-29T22:00:00\.000Z/);
        });

        it("when the window is in another time zone (14:00 in Europe/Berlin is 12:00 UTC, for 4h), then it is active until 16:00 UTC", () => {
            const [f] = only(
                diagnosed(
                    windowed([{ kind: "deny", schedule: "0 14 * * *", duration: "4h", timeZone: "Europe/Berlin", namespaces: ["*"] }]),
                ),
                "SyncWindow",
            );
            assert.match(f.message, /until 2026-05-29T16:00:00\.000Z/);
        });

        it("when a window's schedule has six fields, then Argo CD cannot read it and it holds every sync it applies to", () => {
            const [f] = only(
                diagnosed(windowed([{ kind: "allow", schedule: "0 0 22 * * *", duration: "1h", applications: ["*"] }])),
                "SyncWindow",
            );
            assert.match(f.message, /that Argo CD cannot read \(cannot parse schedule '0 0 22 \* \* \*'/);
            assert.match(f.todo, /five cron fields/);
        });

        // when the window applies to other Applications (or, with andOperator, not to all of its lists), or the
        // operation overruns into it, then only the operation's message speaks
        it("a window that does not hold the sync is not named", () => {
            for (const w of [
                { kind: "deny", schedule: "0 14 * * *", duration: "2h", applications: ["shop-*"] },
                {
                    kind: "deny",
                    schedule: "0 14 * * *",
                    duration: "2h",
                    applications: ["mandant-b"],
                    namespaces: ["other"],
                    andOperator: true,
                },
                // started at 14:40, before this 14:50 deny window, which lets a running operation overrun
                { kind: "deny", schedule: "50 14 * * *", duration: "2h", namespaces: ["*"], syncOverrun: true },
            ]) {
                const [f] = only(diagnosed(windowed([w])), "SyncWindow");
                assert.strictEqual(f.evidence.length, 1, JSON.stringify(w));
            }
        });
    });

    it("given the newcomer's dump, when doctor --from reads it, then it exits 1 and prints each finding with what to do and its evidence", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "findings-"));
        try {
            fs.writeFileSync(path.join(dir, "dump.json"), JSON.stringify(raced()));
            const r = await runMain("doctor", ["--from", path.join(dir, "dump.json")]);
            assert.strictEqual(r.code, 1, r.stderr);
            assert.match(
                r.stdout,
                /^- SyncFailed: mandant-c \(step 3\): its own sync failed: PreSync hook Job mandant-c\/site-setup failed/m,
            );
            assert.match(r.stdout, /^ {2}what to do: fix the cause in Git and push/m);
            assert.match(r.stdout, /^ {4}Job mandant-c\/site-setup status\.conditions\[Failed\]\.reason: BackoffLimitExceeded \(\S+\)$/m);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

/** maxUpdate 1 in a step of three: one Progressing, two Waiting. */
function holding(): any {
    const tenants: TenantSpec[] = [
        { name: "mandant-a", step: 1, status: "Progressing", since: 30, app: { health: { status: "Progressing" } } },
        { name: "mandant-b", step: 1, status: "Waiting" },
        { name: "mandant-c", step: 1, status: "Waiting" },
    ];
    const set = appSet("tenants", tenants, { rolloutStep: 1 });
    set.spec.strategy.rollingSync.steps[0].maxUpdate = 1;
    return list(set, ...tenants.map((t) => application(set, t)));
}

/** mandant-b's operation still shows its PreSync hook Running; the Job completed an hour ago. */
function leftRunning(job = hookJob("mandant-b", "site-setup", "complete"), ...extra: any[]): any {
    const tenants: TenantSpec[] = [
        { name: "mandant-a", step: 1, status: "Healthy" },
        {
            name: "mandant-b",
            step: 2,
            status: "Progressing",
            since: 70,
            app: {
                sync: { status: "OutOfSync", revision: REV_NEW },
                health: { status: "Healthy" },
                operationState: {
                    phase: "Running",
                    message: "waiting for completion of hook batch/Job/site-setup",
                    startedAt: minutesAgo(70),
                    operation: { sync: { revision: REV_NEW } },
                    syncResult: {
                        revision: REV_NEW,
                        resources: [
                            {
                                group: "batch",
                                version: "v1",
                                kind: "Job",
                                namespace: "mandant-b",
                                name: "site-setup",
                                hookType: "PreSync",
                                hookPhase: "Running",
                                message: "",
                                syncPhase: "PreSync",
                            },
                        ],
                    },
                },
            },
        },
    ];
    const set = appSet("tenants", tenants, { rolloutStep: 2 });
    return list(set, ...tenants.map((t) => application(set, t)), job, ...extra);
}
