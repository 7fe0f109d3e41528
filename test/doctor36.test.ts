/**
 * The rollout doctor on what Argo CD v3.6.2 writes (applicationset/progressivesync/ and
 * applicationset_controller.go at v3.6.2): its reconcile gate, a RollingSync with no steps refused
 * with ErrorOccurred, and the same objects as 3.5 writes them, where 3.5 has neither.
 */
import * as assert from "assert";
import { diagnose, Diagnosis, dumpFromList } from "../lab/doctor/diagnose";
import { application, appSet, list, minutesAgo, NOW, TenantSpec } from "./helpers/rollout";

const REV_NEW = "2".repeat(40);
const PENDING = "Application has pending changes, setting status to Waiting";
const VALID = {
    type: "InvalidRolloutConfig",
    status: "False",
    reason: "ApplicationSetValidRolloutConfig",
    message: "Rolling Sync Configured correctly",
    lastTransitionTime: minutesAgo(300),
};
const diagnosed = (l: any, stuckAfterSeconds = 600): Diagnosis => diagnose(dumpFromList(l), { now: NOW, stuckAfterSeconds })[0];

/**
 * Four tenants, one step each, all Healthy at the old commit; a new commit `changedMinutesAgo` ago put
 * every entry Waiting on it. `reconciled` gives each tenant's status.reconciledAt (minutes ago; null:
 * never), `refresh` those with the refresh annotation. `v36`: the ApplicationSet carries 3.6's condition.
 */
function afterCommit(o: { changedMinutesAgo: number; reconciled: Record<string, number | null>; refresh?: string[]; v36?: boolean }) {
    const names = ["mandant-a", "mandant-b", "mandant-c", "mandant-d"];
    const tenants: TenantSpec[] = names.map((name, i) => ({ name, step: i + 1, status: "Waiting", since: o.changedMinutesAgo }));
    const set = appSet("tenants", tenants, { rolloutStep: null });
    for (const e of set.status.applicationStatus) e.message = PENDING;
    if (o.v36 !== false) set.status.conditions.push(VALID);
    const apps = tenants.map((t) => {
        const a = application(set, { ...t, status: "Healthy" });
        a.status.sync = { status: "OutOfSync", revision: REV_NEW };
        const m = o.reconciled[t.name];
        if (m === null) delete a.status.reconciledAt;
        else a.status.reconciledAt = minutesAgo(m ?? 0.5);
        if (o.refresh?.includes(t.name)) a.metadata.annotations = { "argocd.argoproj.io/refresh": "normal" };
        return a;
    });
    return list(set, ...apps);
}

describe("rollout doctor on Argo CD 3.6", () => {
    describe("given 3.6's reconcile gate waits for mandant-c, not reconciled since the commit", () => {
        const l = afterCommit({ changedMinutesAgo: 5, reconciled: { "mandant-c": 20 }, refresh: ["mandant-c"] });

        it("then the gate holds the rollout on mandant-c, not the first Waiting tenant", () => {
            const d = diagnosed(l);
            assert.strictEqual(d.state, "progressing");
            assert.strictEqual(d.step, 1);
            assert.deepStrictEqual(
                d.blocking.map((b) => `${b.application} ${b.reason}`),
                ["mandant-c NotReconciled"],
            );
            assert.match(
                d.summary,
                /^tenants: rollout at step 1 of 4 by Argo CD 3\.6's reconcile gate for 5 min, in progress — mandant-c: /,
            );
        });

        it("then the finding gives the change, the reconcile time and the refresh asked for", () => {
            const [f] = diagnosed(l).findings.filter((x) => x.kind === "ReconcileGate");
            assert.strictEqual(f.application, "mandant-c");
            assert.strictEqual(f.step, 3);
            assert.match(f.message, new RegExp(`since the change at ${minutesAgo(5)} \\(last reconciled ${minutesAgo(20)}\\)`));
            assert.match(f.message, /the refresh it was asked for \(argocd\.argoproj\.io\/refresh: normal\) is not done yet/);
            assert.deepStrictEqual(
                f.evidence.map((e) => `${e.object} ${e.field}=${e.value}`),
                [
                    `ApplicationSet argocd/tenants status.applicationStatus[Waiting].lastTransitionTime=${minutesAgo(5)}`,
                    `Application argocd/mandant-c status.reconciledAt=${minutesAgo(20)}`,
                    "Application argocd/mandant-c metadata.annotations[argocd.argoproj.io/refresh]=normal",
                ],
            );
            assert.match(f.todo, /application controller/);
        });

        it("then past --stuck-after it is stuck, still on mandant-c", () => {
            const d = diagnosed(l, 60);
            assert.strictEqual(d.state, "stuck");
            assert.match(d.summary, /^tenants: rollout stuck at step 1 of 4 by Argo CD 3\.6's reconcile gate for 5 min — mandant-c: /);
        });

        it("then an Application never reconciled is named too", () => {
            const d = diagnosed(afterCommit({ changedMinutesAgo: 5, reconciled: { "mandant-c": 20, "mandant-d": null } }));
            assert.deepStrictEqual(
                d.blocking.map((b) => b.application),
                ["mandant-c", "mandant-d"],
            );
            assert.match(d.findings.find((f) => f.application === "mandant-d")!.message, /last reconciled never/);
        });
    });

    describe("given a commit 10 s ago, every Application reconciled since", () => {
        it("then the gate's grace period is named, and nothing else holds", () => {
            const d = diagnosed(
                afterCommit({
                    changedMinutesAgo: 10 / 60,
                    reconciled: { "mandant-a": 0.05, "mandant-b": 0.05, "mandant-c": 0.05, "mandant-d": 0.05 },
                }),
            );
            assert.deepStrictEqual(
                d.blocking.map((b) => b.reason),
                ["ReconcileGate"],
            );
            assert.match(d.blocking[0].message, /no step moves for the refresh grace period \(30 s by default\)/);
            assert.strictEqual(d.state, "progressing");
        });

        it("then one not reconciled yet is a wait, not a finding", () => {
            const d = diagnosed(
                afterCommit({
                    changedMinutesAgo: 10 / 60,
                    reconciled: { "mandant-a": 0.05, "mandant-b": 0.05, "mandant-c": 20, "mandant-d": 0.05 },
                }),
            );
            assert.deepStrictEqual(
                d.blocking.map((b) => `${b.application}/${b.reason}`),
                ["/ReconcileGate"],
            );
            assert.ok(!d.findings.some((f) => f.kind === "ReconcileGate"));
            assert.match(
                d.summary,
                /reconcile gate for under a minute, in progress — waiting out the grace after the change at \S+: .*as after every change; then it asks for a refresh of mandant-c, not reconciled since/,
            );
        });
    });

    describe("given the grace after a commit, and the step's Application failed on its own", () => {
        it("then that Application holds the step, not the grace", () => {
            const l = afterCommit({
                changedMinutesAgo: 10 / 60,
                reconciled: { "mandant-a": 0.05, "mandant-b": 0.05, "mandant-c": 0.05, "mandant-d": 0.05 },
            });
            const set = l.items[0];
            const a = l.items.find((o: any) => o.metadata.name === "mandant-a");
            Object.assign(
                set.status.applicationStatus.find((e: any) => e.application === "mandant-a"),
                {
                    status: "Progressing",
                    message: "Application resource became Progressing, updating status from Pending to Progressing",
                },
            );
            a.status.operationState = { phase: "Failed", message: "one or more synchronization tasks completed unsuccessfully" };
            const d = diagnosed(l);
            assert.deepStrictEqual(
                d.blocking.map((b) => `${b.application}/${b.reason}`),
                ["mandant-a/SyncFailed"],
            );
            assert.strictEqual(d.state, "stuck");
            assert.doesNotMatch(d.summary, /reconcile gate|Also failing on its own/);
        });
    });

    describe("given a later step's Application generated with an unfilled path", () => {
        it("then it is named: Argo CD cannot compare it, the key the generator did not fill", () => {
            const l = afterCommit({ changedMinutesAgo: 5, reconciled: {}, v36: false });
            const c = l.items.find((o: any) => o.metadata.name === "mandant-c");
            c.spec.source.path = "releases/{{release}}";
            c.status.conditions = [
                {
                    type: "ComparisonError",
                    message: "Failed to load target state: `kustomize build` failed",
                    lastTransitionTime: minutesAgo(4),
                },
            ];
            const d = diagnosed(l);
            const f = d.findings.find((x) => x.kind === "CannotCompare");
            assert.strictEqual(f?.application, "mandant-c");
            assert.match(
                f.message,
                /^mandant-c \(step 3\): Argo CD cannot compare it \(ComparisonError\): its source path releases\/\{\{release\}\} holds \{\{release\}\}, which the generator did not fill/,
            );
            assert.match(d.summary, /Also failing on its own: mandant-c \(step 3\): Argo CD cannot compare it/);
        });
    });

    describe("given the same objects as 3.5 writes them (no InvalidRolloutConfig condition)", () => {
        it("then there is no gate: the step's own Waiting tenant is named", () => {
            const d = diagnosed(afterCommit({ changedMinutesAgo: 5, reconciled: { "mandant-c": 20 }, v36: false }));
            assert.deepStrictEqual(
                d.blocking.map((b) => b.application),
                ["mandant-a"],
            );
            assert.ok(!d.findings.some((f) => f.kind === "ReconcileGate"));
        });
    });

    describe("given a RollingSync with no steps", () => {
        const noSteps = (v36: boolean) => {
            const tenants: TenantSpec[] = [{ name: "mandant-a", step: 1, status: "Healthy" }];
            const set = appSet("tenants", tenants, { rolloutStep: null });
            set.spec.strategy.rollingSync.steps = [];
            if (v36) {
                set.status.conditions.push({
                    type: "ErrorOccurred",
                    status: "True",
                    reason: "ApplicationSetRolloutError",
                    message: "No steps defined for rollout",
                    lastTransitionTime: minutesAgo(3),
                });
            } else delete set.status.applicationStatus;
            return list(set, application(set, tenants[0]));
        };

        it("then on 3.6 it is Argo CD's refusal, named from its condition", () => {
            const d = diagnosed(noSteps(true));
            assert.strictEqual(d.state, "stuck");
            assert.deepStrictEqual(
                d.findings.map((f) => f.kind),
                ["RolloutError"],
            );
            assert.match(d.summary, /^tenants: Argo CD refuses the rollout .*ApplicationSetRolloutError.*: No steps defined for rollout; /);
            assert.deepStrictEqual(d.findings[0].evidence[0], {
                object: "ApplicationSet argocd/tenants",
                field: "status.conditions[ErrorOccurred]",
                value: "No steps defined for rollout",
                time: minutesAgo(3),
            });
        });

        it("then on 3.5 it is a rollout of no steps, not progressive syncs off", () => {
            const d = diagnosed(noSteps(false));
            assert.strictEqual(d.state, "complete");
            assert.deepStrictEqual(
                d.findings.map((f) => f.kind),
                ["NoSteps"],
            );
            assert.doesNotMatch(d.summary, /progressive syncs are off/);
            assert.match(d.summary, /has no steps: Argo CD 3\.5 runs no rollout/);
        });
    });

    describe("given a rollout complete with an Application no step selects", () => {
        it("then its one line carries the findings' count and kinds, not 'complete' alone", () => {
            const tenants: TenantSpec[] = [
                { name: "mandant-a", step: 1, status: "Healthy" },
                { name: "mandant-b", step: 2, status: "Healthy" },
            ];
            const set = appSet("tenants", tenants, { rolloutStep: null });
            set.spec.strategy.rollingSync.steps = [set.spec.strategy.rollingSync.steps[0]];
            set.status.applicationStatus[1].step = "-1";
            const d = diagnosed(list(set, ...tenants.map((t) => application(set, t))));
            assert.strictEqual(d.state, "complete");
            assert.match(d.summary, /^tenants: rollout complete .* Findings: 1 \(NotSelected\)\.$/);
        });
    });
});
