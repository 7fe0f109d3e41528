/**
 * Conformance of the simulated RollingSync (sim/rollingSync.ts) with Argo CD v3.5.1: cases ported
 * from `applicationset/progressivesync/progressive_sync_test.go` (TestBuildAppDependencyList,
 * TestGetAppsToSync, TestSyncApplication) and
 * `applicationset/controllers/progressive_sync_dependencies_test.go`
 * (TestUpdateApplicationSetApplicationStatus, ...StatusProgress), named as upstream names them.
 */
import * as assert from "assert";
import * as rolling from "../sim/rollingSync";
import { gitFileParams } from "../sim/generators";

const NOW = "2026-11-30T12:00:00.000Z";
const MINUS5 = "2026-11-30T11:55:00.000Z";
const MINUS1 = "2026-11-30T11:59:00.000Z";

const appset = (steps: any[], statuses: any[] = [], extra: any = {}) => ({
    metadata: { name: "appset", namespace: "argocd" },
    spec: { strategy: { type: "RollingSync", rollingSync: { steps } }, template: {}, ...extra },
    status: { applicationStatus: statuses },
});
const app = (name: string, labels: Record<string, string> = {}, status: any = {}, spec: any = { project: "default" }) => ({
    metadata: { name, labels },
    spec,
    status,
});
const inStep = (key: string, values: string[], operator = "In") => ({ matchExpressions: [{ key, operator, values }] });

describe("RollingSync conformance (progressive_sync_test.go, progressive_sync_dependencies_test.go)", () => {
    describe("TestBuildAppDependencyList", () => {
        it("handles selecting 1 application with 1 matchExpression", () => {
            const a = appset([inStep("env", ["dev"])]);
            const { steps } = rolling.buildAppDependencyList(a, [app("app-dev", { env: "dev" }), app("app-qa", { env: "qa" })]);
            assert.deepStrictEqual(steps, [["app-dev"]]);
        });
        it("handles selecting applications with NotIn, and an app in no step gets step -1", () => {
            const a = appset([inStep("env", ["dev"], "NotIn")]);
            const { steps, stepOf } = rolling.buildAppDependencyList(a, [
                app("app-dev", { env: "dev" }),
                app("app-qa", { env: "qa" }),
                app("app-nolabel"),
            ]);
            assert.deepStrictEqual(steps, [["app-qa", "app-nolabel"]]);
            assert.strictEqual(rolling.appStep("app-dev", stepOf), -1);
        });
        it("an In expression on a missing label selects nothing; an app in two steps keeps its first", () => {
            const a = appset([inStep("env", ["dev"]), inStep("region", ["eu"], "NotIn")]);
            const { steps, stepOf } = rolling.buildAppDependencyList(a, [app("a", { env: "dev" }), app("b", {})]);
            assert.deepStrictEqual(steps, [["a"], ["a", "b"]]);
            assert.strictEqual(rolling.appStep("a", stepOf), 1);
        });
        it("handles an empty strategy (no steps)", () => {
            assert.deepStrictEqual(rolling.buildAppDependencyList({ metadata: { name: "s" }, spec: {} }, [app("a")]).steps, []);
        });
    });

    describe("TestGetAppsToSync", () => {
        it("maps the first step's apps, and the next step's only when every app of the step before is Healthy", () => {
            const steps = [["app1", "app2"], ["app3"], ["app4"]];
            const apps = ["app1", "app2", "app3", "app4"].map((n) => app(n));
            const st = (s: Record<string, string>) => Object.entries(s).map(([application, status]) => ({ application, status }) as any);
            assert.deepStrictEqual(
                [...rolling.appsToSync(st({ app1: "Healthy", app2: "Healthy", app3: "Waiting", app4: "Waiting" }), steps, apps)],
                ["app1", "app2", "app3"],
            );
            assert.deepStrictEqual(
                [...rolling.appsToSync(st({ app1: "Healthy", app2: "Progressing", app3: "Waiting", app4: "Waiting" }), steps, apps)],
                ["app1", "app2"],
            );
            // an app of a step that does not exist yet holds the rollout
            assert.deepStrictEqual(
                [...rolling.appsToSync(st({ app1: "Healthy", app2: "Healthy" }), steps, apps.slice(0, 1))],
                ["app1", "app2"],
            );
        });
    });

    describe("TestUpdateApplicationSetApplicationStatus", () => {
        const one = (statuses: any[], a: any, desired: any[] = [a]) => {
            const set = appset([inStep("env", ["dev"])], statuses);
            const { stepOf } = rolling.buildAppDependencyList(set, [a]);
            return rolling.updateApplicationStatus(set, [a], desired, stepOf, NOW);
        };
        const dev = (status: any) => app("app1", { env: "dev" }, status);
        it("moves a new application to healthy when app is synced and healthy", () => {
            const [s] = one([], dev({ sync: { status: "Synced", revision: "Next" }, health: { status: "Healthy" } }));
            assert.deepStrictEqual(
                { status: s.status, message: s.message, step: s.step, targetRevisions: s.targetRevisions },
                { status: "Healthy", message: rolling.MESSAGES.syncedHealthy, step: "1", targetRevisions: ["Next"] },
            );
        });
        it("moves a new application to progressing when app is synced but not healthy", () => {
            const [s] = one([], dev({ sync: { status: "Synced", revision: "Next" }, health: { status: "Progressing" } }));
            assert.strictEqual(s.status, "Progressing");
            assert.strictEqual(s.message, rolling.MESSAGES.syncedProgressing);
        });
        it("moves an application with new version to waiting when it is OutOfSync", () => {
            const [s] = one(
                [
                    {
                        application: "app1",
                        status: "Healthy",
                        step: "1",
                        targetRevisions: ["Current"],
                        lastTransitionTime: MINUS5,
                        message: "",
                    },
                ],
                dev({ sync: { status: "OutOfSync", revision: "Next" }, health: { status: "Healthy" } }),
            );
            assert.deepStrictEqual(
                { status: s.status, message: s.message, targetRevisions: s.targetRevisions },
                { status: "Waiting", message: rolling.MESSAGES.revisionChanged, targetRevisions: ["Next"] },
            );
        });
        it("keeps a Healthy application Healthy while its revision is unchanged", () => {
            const cur = {
                application: "app1",
                status: "Healthy",
                step: "1",
                targetRevisions: ["Current"],
                lastTransitionTime: MINUS5,
                message: "x",
            };
            const [s] = one([cur], dev({ sync: { status: "OutOfSync", revision: "Current" }, health: { status: "Healthy" } }));
            assert.deepStrictEqual(s, cur);
        });
        it("moves a pending application to progressing when operation is running (started after the transition)", () => {
            const cur = {
                application: "app1",
                status: "Pending",
                step: "1",
                targetRevisions: ["Next"],
                lastTransitionTime: MINUS5,
                message: "",
            };
            const [s] = one(
                [cur],
                dev({
                    sync: { status: "OutOfSync", revision: "Next" },
                    health: { status: "Healthy" },
                    reconciledAt: NOW,
                    operationState: { phase: "Running", startedAt: MINUS1 },
                }),
            );
            assert.deepStrictEqual(
                { status: s.status, message: s.message },
                { status: "Progressing", message: rolling.MESSAGES.pendingRunning },
            );
        });
        it("moves a pending application to progressing when sync operation has failed", () => {
            const cur = {
                application: "app1",
                status: "Pending",
                step: "1",
                targetRevisions: ["Next"],
                lastTransitionTime: MINUS5,
                message: "",
            };
            const [s] = one(
                [cur],
                dev({
                    sync: { status: "OutOfSync", revision: "Next" },
                    health: { status: "Healthy" },
                    reconciledAt: NOW,
                    operationState: { phase: "Failed", startedAt: MINUS1 },
                }),
            );
            assert.deepStrictEqual(
                { status: s.status, message: s.message },
                { status: "Progressing", message: rolling.MESSAGES.pendingCompleted },
            );
        });
        it("keeps a Pending application Pending if its sync began before the transition", () => {
            const cur = {
                application: "app1",
                status: "Pending",
                step: "1",
                targetRevisions: ["Next"],
                lastTransitionTime: MINUS1,
                message: "",
            };
            const [s] = one(
                [cur],
                dev({
                    sync: { status: "OutOfSync", revision: "Next" },
                    health: { status: "Healthy" },
                    reconciledAt: NOW,
                    operationState: { phase: "Running", startedAt: MINUS5 },
                }),
            );
            assert.strictEqual(s.status, "Pending");
        });
        it("does not move a pending application to progressing if it has not been reconciled since transition", () => {
            const cur = {
                application: "app1",
                status: "Pending",
                step: "1",
                targetRevisions: ["Next"],
                lastTransitionTime: MINUS1,
                message: "",
            };
            const [s] = one(
                [cur],
                dev({
                    sync: { status: "OutOfSync", revision: "Next" },
                    health: { status: "Healthy" },
                    reconciledAt: MINUS5,
                    operationState: { phase: "Running", startedAt: NOW },
                }),
            );
            assert.strictEqual(s.status, "Pending");
        });
        it("moves a pending application with InvalidSpecError errors to progressing", () => {
            const cur = {
                application: "app1",
                status: "Pending",
                step: "1",
                targetRevisions: ["Next"],
                lastTransitionTime: MINUS5,
                message: "",
            };
            const [s] = one(
                [cur],
                dev({
                    sync: { status: "OutOfSync", revision: "Next" },
                    health: { status: "Healthy" },
                    conditions: [{ type: "InvalidSpecError", message: "bad" }],
                }),
            );
            assert.deepStrictEqual(
                { status: s.status, message: s.message },
                { status: "Progressing", message: rolling.MESSAGES.pendingError },
            );
        });
        it("moves a progressing application to healthy when it is synced and healthy, not when it is not healthy", () => {
            const cur = {
                application: "app1",
                status: "Progressing",
                step: "1",
                targetRevisions: ["Next"],
                lastTransitionTime: MINUS5,
                message: "",
            };
            assert.strictEqual(
                one([cur], dev({ sync: { status: "Synced", revision: "Next" }, health: { status: "Healthy" } }))[0].message,
                rolling.MESSAGES.becameHealthy,
            );
            assert.strictEqual(
                one([cur], dev({ sync: { status: "Synced", revision: "Next" }, health: { status: "Progressing" } }))[0].status,
                "Progressing",
            );
        });
        it("detects spec changes when the generator's parameters change (same Git revision)", () => {
            const cur = {
                application: "app1",
                status: "Healthy",
                step: "1",
                targetRevisions: ["Current"],
                lastTransitionTime: MINUS5,
                message: "",
            };
            const live = app(
                "app1",
                { env: "dev" },
                { sync: { status: "OutOfSync", revision: "Current" }, health: { status: "Healthy" } },
                { source: { path: "releases/1.1.0" } },
            );
            const want = app("app1", { env: "dev" }, {}, { source: { path: "releases/1.2.0" } });
            const [s] = one([cur], live, [want]);
            assert.deepStrictEqual({ status: s.status, message: s.message }, { status: "Waiting", message: rolling.MESSAGES.specChanged });
        });
        it("the live automated.enabled: false written by RollingSync is not a spec change", () => {
            const cur = {
                application: "app1",
                status: "Healthy",
                step: "1",
                targetRevisions: ["Current"],
                lastTransitionTime: MINUS5,
                message: "",
            };
            const spec = { source: { path: "p" }, syncPolicy: { automated: { prune: true } } };
            const live = app(
                "app1",
                { env: "dev" },
                { sync: { status: "OutOfSync", revision: "Current" }, health: { status: "Healthy" } },
                rolling.disableAutomatedSync({ metadata: { name: "a" }, spec }).spec,
            );
            assert.strictEqual(one([cur], live, [app("app1", { env: "dev" }, {}, spec)])[0].status, "Healthy");
        });
        it("application status that is not in steps is updated to -1", () => {
            const set = appset([inStep("env", ["prod"])], []);
            const a = app("app1", { env: "dev" }, { sync: { status: "OutOfSync", revision: "r" }, health: { status: "Healthy" } });
            const { stepOf } = rolling.buildAppDependencyList(set, [a]);
            assert.strictEqual(rolling.updateApplicationStatus(set, [a], [a], stepOf, NOW)[0].step, "-1");
        });
    });

    describe("TestUpdateApplicationSetApplicationStatusProgress", () => {
        const waiting = (n: string) =>
            ({ application: n, status: "Waiting", step: "1", message: "", targetRevisions: [] }) as rolling.AppStatusEntry;
        it("handles updating a RollingSync status from Waiting to Pending", () => {
            const set = appset([inStep("env", ["dev"])]);
            const [s] = rolling.updateApplicationStatusProgress(set, [waiting("app1")], new Set(["app1"]), new Map([["app1", 0]]), NOW);
            assert.deepStrictEqual(
                { status: s.status, message: s.message },
                { status: "Pending", message: rolling.MESSAGES.movedToPending },
            );
        });
        it("does not update a RollingSync status if appSyncMap is false", () => {
            const set = appset([inStep("env", ["dev"])]);
            assert.strictEqual(
                rolling.updateApplicationStatusProgress(set, [waiting("app1")], new Set(), new Map([["app1", 0]]), NOW)[0].status,
                "Waiting",
            );
        });
        it("does not update a status if maxUpdate has already been reached with RollingSync", () => {
            const set = appset([{ ...inStep("env", ["dev"]), maxUpdate: 2 }]);
            const st = [{ ...waiting("app1"), status: "Progressing" }, waiting("app2"), waiting("app3")] as rolling.AppStatusEntry[];
            const out = rolling.updateApplicationStatusProgress(
                set,
                st,
                new Set(["app1", "app2", "app3"]),
                new Map([
                    ["app1", 0],
                    ["app2", 0],
                    ["app3", 0],
                ]),
                NOW,
            );
            assert.deepStrictEqual(
                out.map((s) => s.status),
                ["Progressing", "Pending", "Waiting"],
            );
        });
        it("updates at least 1 application with maxUpdate >0%, none with 0%", () => {
            const map = new Map([
                ["app1", 0],
                ["app2", 0],
                ["app3", 0],
            ]);
            const all = new Set(["app1", "app2", "app3"]);
            const st = [waiting("app1"), waiting("app2"), waiting("app3")];
            assert.deepStrictEqual(
                rolling
                    .updateApplicationStatusProgress(appset([{ ...inStep("env", ["dev"]), maxUpdate: "10%" }]), st, all, map, NOW)
                    .map((s) => s.status),
                ["Pending", "Waiting", "Waiting"],
            );
            assert.deepStrictEqual(
                rolling
                    .updateApplicationStatusProgress(appset([{ ...inStep("env", ["dev"]), maxUpdate: "0%" }]), st, all, map, NOW)
                    .map((s) => s.status),
                ["Waiting", "Waiting", "Waiting"],
            );
        });
    });

    describe("the RolloutProgressing condition (updateApplicationSetApplicationStatusConditions)", () => {
        it("names the first step not all Healthy, and says complete when none is left", () => {
            const set = appset([inStep("t", ["a"]), inStep("t", ["b"])]);
            const st = (b: string) =>
                [
                    { application: "a", status: "Healthy", step: "1" },
                    { application: "b", status: b, step: "2" },
                ] as rolling.AppStatusEntry[];
            assert.deepStrictEqual(rolling.rolloutCondition(set, st("Progressing")), {
                type: "RolloutProgressing",
                status: "True",
                reason: "ApplicationSetModified",
                message: "ApplicationSet is performing rollout of step 2",
            });
            assert.deepStrictEqual(rolling.rolloutCondition(set, st("Healthy")), {
                type: "RolloutProgressing",
                status: "False",
                reason: "ApplicationSetRolloutComplete",
                message: "ApplicationSet Rollout has completed",
            });
        });
    });

    describe("TestSyncApplication / SyncDesiredApplications", () => {
        it("sets automated.enabled false on every generated app and a sync operation (retry limit 5, prune from the policy) on the Pending ones", () => {
            const gen = (n: string) => ({
                metadata: { name: n },
                spec: { syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ["CreateNamespace=true"] } },
            });
            const out = rolling.syncDesiredApplications(
                [{ application: "a", status: "Pending" } as any, { application: "b", status: "Waiting" } as any],
                new Set(["a", "b"]),
                [gen("a"), gen("b")],
            );
            assert.deepStrictEqual(
                out.map((a) => a.spec!.syncPolicy!.automated!.enabled),
                [false, false],
            );
            assert.deepStrictEqual(out[0].operation, {
                initiatedBy: { username: "applicationset-controller", automated: true },
                info: [{ name: "Reason", value: "ApplicationSet RollingSync triggered a sync of this Application resource" }],
                sync: { syncOptions: ["CreateNamespace=true"], prune: true },
                retry: { limit: 5 },
            });
            assert.strictEqual(out[1].operation, undefined);
        });
    });

    describe("the git files generator's parameters (applicationset/generators/git.go)", () => {
        it("flattens the file's keys and adds path, path.basename, path.filename and the normalized names", () => {
            assert.deepStrictEqual(
                gitFileParams("tenants/mandant-a.yaml", 'tenant: mandant-a\nrelease: "1.1.0"\nsite: {tier: gold}\n')[0],
                {
                    tenant: "mandant-a",
                    release: "1.1.0",
                    "site.tier": "gold",
                    path: "tenants",
                    "path.basename": "tenants",
                    "path.filename": "mandant-a.yaml",
                    "path.basenameNormalized": "tenants",
                    "path.filenameNormalized": "mandant-a-yaml",
                    "path[0]": "tenants",
                },
            );
        });
        it("a file that is not YAML is a generation error that names it", () => {
            assert.throws(() => gitFileParams("tenants/x.yaml", "a: [b"), /unable to process file 'tenants\/x.yaml'/);
        });
    });
});
