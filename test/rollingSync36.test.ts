/**
 * Conformance of the simulated RollingSync with Argo CD v3.6.2 where it differs from v3.5: cases ported
 * from `applicationset/progressivesync/validation_issues_test.go` (TestFormat*Message),
 * `progressive_sync_test.go` (TestBuildAppDependencyList's issues, TestGetLatestWaitingTransitionTimeOfAppset,
 * TestEnsureApplicationsReconciled, TestSyncApplication's pinned revision), named as upstream names them.
 */
import * as assert from "assert";
import * as rolling from "../sim/rollingSync";

const NOW_MS = Date.parse("2026-11-30T12:00:00.000Z");
const at = (minutes: number) => new Date(NOW_MS + minutes * 60_000).toISOString();
const issues = (v: Partial<rolling.ValidationIssues>): rolling.ValidationIssues => ({ ...rolling.noIssues(), ...v });

const appset = (steps: any[]) => ({
    metadata: { name: "appset", namespace: "argocd" },
    spec: { strategy: { type: "RollingSync", rollingSync: { steps } }, template: {} },
});
const app = (name: string, labels: Record<string, string> = {}, status: any = {}, annotations?: Record<string, string>) => ({
    metadata: { name, labels, ...(annotations ? { annotations } : {}) },
    spec: { project: "default" },
    status,
});
const inStep = (key: string, values: string[], operator = "In") => ({ matchExpressions: [{ key, operator, values }] });

describe("RollingSync conformance, v3.6.2 (validation_issues_test.go, progressive_sync_test.go)", () => {
    describe("TestFormat*Message", () => {
        const cases: [string, Partial<rolling.ValidationIssues>, string][] = [
            [
                "multiple steps have InvalidMatchExpressions",
                {
                    invalidOperators: [
                        { step: 0, operator: "Invalid" },
                        { step: 4, operator: "Another" },
                    ],
                },
                "Steps 1, 5 have invalid matchExpression operators: Invalid, Another. Supported Operators are 'In' and 'NotIn'",
            ],
            [
                "single step has InvalidMatchExpressions",
                { invalidOperators: [{ step: 0, operator: "Invalid" }] },
                "Step 1 has invalid matchExpression operators: Invalid. Supported Operators are 'In' and 'NotIn'",
            ],
            [
                "application duplicated in multiple steps",
                { duplicates: new Map([["foo", [0, 1]]]) },
                "Application 'foo' is selected by multiple steps: (1-2)",
            ],
            [
                "multiple applications selected in multiple steps (sorted by name)",
                {
                    duplicates: new Map([
                        ["foo", [0, 1]],
                        ["bar", [1, 2]],
                    ]),
                },
                "Applications 'bar', 'foo' are selected by multiple steps: [(2-3), (1-2)]",
            ],
            [
                "single step with invalid maxUpdate",
                { invalidMaxUpdates: [{ step: 0, value: "Invalid" }] },
                "Step 1 has an invalid maxUpdate value: Invalid",
            ],
            [
                "multiple steps with invalid maxUpdate",
                {
                    invalidMaxUpdates: [
                        { step: 0, value: "Invalid" },
                        { step: 4, value: "Another" },
                    ],
                },
                "Steps 1, 5 have invalid maxUpdate values: [Invalid, Another]",
            ],
            ["single step with no matching application", { emptySteps: [0] }, "Steps [1] have no applications matching their criteria"],
            [
                "multiple steps with no matching applications",
                { emptySteps: [0, 4] },
                "Steps [1 5] have no applications matching their criteria",
            ],
            [
                "operators come before every other kind",
                { emptySteps: [1], invalidOperators: [{ step: 0, operator: "Exists" }] },
                "Step 1 has invalid matchExpression operators: Exists. Supported Operators are 'In' and 'NotIn'",
            ],
        ];
        for (const [name, given, message] of cases) it(name, () => assert.strictEqual(rolling.validationMessage(issues(given)), message));
    });

    describe("TestBuildAppDependencyList: the issues it collects", () => {
        it("an app two steps select: both list it, its step is the first, both named", () => {
            const a = appset([inStep("env", ["dev"]), inStep("region", ["eu"], "NotIn")]);
            const r = rolling.buildAppDependencyList(a, [app("a", { env: "dev" }), app("b", { env: "qa" })]);
            assert.deepStrictEqual(r.steps, [["a"], ["a", "b"]]);
            assert.strictEqual(rolling.appStep("a", r.stepOf), 1);
            assert.deepStrictEqual([...r.issues.duplicates], [["a", [0, 1]]]);
        });
        it("an invalid operator on a present label selects nothing, recorded once a step", () => {
            const a = appset([{ matchExpressions: [{ key: "env", operator: "Exists", values: [] }] }, inStep("env", ["dev"])]);
            const r = rolling.buildAppDependencyList(a, [app("a", { env: "dev" }), app("b", { env: "qa" })]);
            assert.deepStrictEqual(r.steps, [[], ["a"]]);
            assert.deepStrictEqual(r.issues.invalidOperators, [{ step: 0, operator: "Exists" }]);
            assert.deepStrictEqual(r.issues.emptySteps, [0]);
        });
        it("a valid rollout: no issue, and InvalidRolloutConfig False", () => {
            const a = appset([inStep("env", ["dev"]), inStep("env", ["prod"])]);
            const r = rolling.buildAppDependencyList(a, [app("a", { env: "dev" }), app("b", { env: "prod" })]);
            assert.deepStrictEqual(rolling.invalidRolloutConfig(a, r.issues), {
                type: "InvalidRolloutConfig",
                status: "False",
                reason: "ApplicationSetValidRolloutConfig",
                message: "Rolling Sync Configured correctly",
            });
        });
    });

    describe("UpdateApplicationSetApplicationStatusProgress: an invalid maxUpdate", () => {
        it("is recorded once for its step and counts as 1", () => {
            const a = appset([{ ...inStep("env", ["dev"]), maxUpdate: "half" }]);
            const waiting = (n: string) => ({ application: n, status: "Waiting", step: "1", message: "", targetRevisions: [] }) as any;
            const found = rolling.noIssues();
            const stepOf = new Map([
                ["a", 0],
                ["b", 0],
            ]);
            const out = rolling.updateApplicationStatusProgress(a, [waiting("a"), waiting("b")], new Set(["a", "b"]), stepOf, at(0), found);
            assert.deepStrictEqual(
                out.map((s) => s.status),
                ["Pending", "Waiting"],
            );
            assert.deepStrictEqual(found.invalidMaxUpdates, [{ step: 0, value: "half" }]);
        });
    });

    describe("TestGetLatestWaitingTransitionTimeOfAppset", () => {
        const entry = (status: string, minutes: number, message = rolling.MESSAGES.revisionChanged) =>
            ({ application: `x${minutes}`, status, step: "1", message, targetRevisions: [], lastTransitionTime: at(minutes) }) as any;
        it("the newest Waiting entry with changes; a new app's Waiting does not count", () => {
            assert.strictEqual(rolling.latestWaitingTransition([entry("Waiting", -5), entry("Waiting", -2), entry("Healthy", -1)]), at(-2));
            assert.strictEqual(rolling.latestWaitingTransition([entry("Waiting", -1, rolling.MESSAGES.noStatus)]), null);
            assert.strictEqual(rolling.latestWaitingTransition([]), null);
        });
    });

    describe("TestEnsureApplicationsReconciled (grace period 0, as upstream's cases)", () => {
        const cases: [string, string | null, any[], boolean, string[]][] = [
            ["no applications in waiting state returns true", null, [app("a", {}, { reconciledAt: at(5) })], true, []],
            [
                "waiting, has a refresh annotation, reconciledAt after the transition: true",
                at(-5),
                [app("a", {}, { reconciledAt: at(5) }, { "argocd.argoproj.io/refresh": "normal" })],
                true,
                [],
            ],
            ["waiting and not reconciled adds annotations", at(0), [app("a", {}, { reconciledAt: at(-5) })], false, ["a"]],
            ["without ReconciledAt adds annotations and returns false", at(0), [app("a", {}, {})], false, ["a"]],
            [
                "one already asked for a refresh is not annotated again",
                at(0),
                [app("a", {}, { reconciledAt: at(-5) }, { "argocd.argoproj.io/refresh": "normal" })],
                false,
                [],
            ],
        ];
        for (const [name, since, apps, open, refresh] of cases)
            it(name, () => {
                const r = rolling.ensureApplicationsReconciled(since, apps, NOW_MS, 0);
                assert.deepStrictEqual({ open: r.open, refresh: r.refresh }, { open, refresh });
            });
        it("within the grace period it only waits, and looks again when it ends", () => {
            const r = rolling.ensureApplicationsReconciled(at(0), [app("a", {}, { reconciledAt: at(1) })], NOW_MS + 10_000, 30_000);
            assert.deepStrictEqual(r, { open: false, refresh: [], recheckMs: 20_000 });
        });
    });

    describe("TestSyncApplication: the sync is pinned to the entry's revisions", () => {
        const desired = [{ metadata: { name: "a" }, spec: { source: {}, syncPolicy: { automated: { prune: true } } } }];
        const pending = [{ application: "a", status: "Pending", step: "1", message: "", targetRevisions: ["abc"] }] as any;
        it("3.6 pins sync.revision; 3.5 leaves it to the application controller", () => {
            const [v36] = rolling.syncDesiredApplications(pending, new Set(["a"]), desired, "3.6");
            const [v35] = rolling.syncDesiredApplications(pending, new Set(["a"]), desired, "3.5");
            assert.strictEqual(v36.operation!.sync!.revision, "abc");
            assert.strictEqual(v35.operation!.sync!.revision, undefined);
            assert.strictEqual(v36.operation!.sync!.prune, true);
        });
    });
});
