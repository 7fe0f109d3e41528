/** The rollout doctor: diagnosis as a pure function over v3.5.1-shaped dumps, then the command. */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { runMain } from "./helpers/cli";
import { diagnose, dumpFromList, Diagnosis, toJson, automatedDisabledNote } from "../lab/doctor/diagnose";
import { metricsText } from "../lab/doctor/metrics";
import { RolloutWatcher } from "../lab/doctor/watch";
import { application, appSet, failedPreSync, fieldReport, hookJob, list, NOW, TenantSpec } from "./helpers/rollout";
import { crdValidator } from "./helpers/upstream";

const run = (l: any, stuckAfterSeconds = 600, appset?: string): Diagnosis[] =>
    diagnose(dumpFromList(l), { now: NOW, stuckAfterSeconds, appset });

describe("rollout doctor: diagnosis", () => {
    it("the fixtures are valid Argo CD v3.5.1 objects (CRD schemas from install.yaml)", () => {
        const appsetOk = crdValidator("ApplicationSet");
        const appOk = crdValidator("Application");
        for (const o of [...fieldReport().items, ...fieldReport({ retrying: true }).items]) {
            if (o.kind === "ApplicationSet") assert.deepStrictEqual(appsetOk(o), [], o.metadata.name);
            if (o.kind === "Application") assert.deepStrictEqual(appOk(o), [], o.metadata.name);
        }
    });

    describe("given the field report (step 2's PreSync hook failed after 5 retries)", () => {
        const [d] = run(fieldReport());

        it("then the rollout is stuck at step 2 of 4, since the step began", () => {
            assert.strictEqual(d.state, "stuck");
            assert.strictEqual(d.strategy, "RollingSync");
            assert.strictEqual(d.step, 2);
            assert.strictEqual(d.steps, 4);
            assert.strictEqual(d.since, "2026-05-29T14:02:00Z");
        });

        it("then the blocking app's cause is the hook Job, its reason and the Pod's error", () => {
            assert.deepStrictEqual(d.blocking, [
                {
                    application: "mandant-b",
                    reason: "PreSyncHookFailed",
                    message:
                        'PreSync hook Job mandant-b/site-setup failed (BackoffLimitExceeded: Job has reached the specified backoff limit): "config/system/settings.php is not writable"',
                    hook: {
                        namespace: "mandant-b",
                        job: "site-setup",
                        reason: "BackoffLimitExceeded",
                        message: "Job has reached the specified backoff limit",
                        log: "config/system/settings.php is not writable",
                    },
                },
            ]);
        });

        it("then the apps waiting behind it are named with their steps, in one human line", () => {
            assert.deepStrictEqual(d.waiting, [
                { application: "mandant-c", step: 3 },
                { application: "mandant-d", step: 4 },
            ]);
            assert.strictEqual(
                d.summary,
                'tenants: rollout stuck at step 2 of 4 for 58 min — mandant-b: PreSync hook Job mandant-b/site-setup failed (BackoffLimitExceeded: Job has reached the specified backoff limit): "config/system/settings.php is not writable". Waiting behind it: mandant-c (step 3), mandant-d (step 4).',
            );
        });

        it("then automated.enabled: false is the controller's doing, not a finding", () => {
            assert.match(
                automatedDisabledNote(dumpFromList(fieldReport()), d)!,
                /automated\.enabled: false .* written by the ApplicationSet controller under RollingSync .* not a finding/,
            );
        });

        it("then --json has exactly the fields of the issue", () => {
            const j = toJson([d]);
            assert.deepStrictEqual(Object.keys(j), ["applicationSets"]);
            assert.deepStrictEqual(Object.keys(j.applicationSets[0]), [
                "name",
                "namespace",
                "strategy",
                "state",
                "step",
                "steps",
                "since",
                "summary",
                "blocking",
                "waiting",
                "skipped",
                "findings",
            ]);
            assert.deepStrictEqual(Object.keys(j.applicationSets[0].blocking[0]), ["application", "reason", "message", "hook"]);
            assert.deepStrictEqual(Object.keys(j.applicationSets[0].blocking[0].hook!), ["namespace", "job", "reason", "message", "log"]);
        });

        it("then the metrics name the ApplicationSet, the step and the application", async () => {
            assert.match(
                await metricsText([d]),
                /^gitops_lab_rollout_stuck\{namespace="argocd",appset="tenants",step="2",application="mandant-b",reason="PreSyncHookFailed"\} 1$/m,
            );
        });
    });

    it("given the same while Argo CD still retries the sync, then it is already stuck, and says it is being retried", () => {
        const [d] = run(fieldReport({ retrying: true }));
        assert.strictEqual(d.state, "stuck");
        assert.strictEqual(d.step, 2);
        assert.match(
            d.blocking[0].message,
            /PreSync hook Job mandant-b\/site-setup failed .*"config\/system\/settings\.php is not writable"; the sync is being retried \(attempt 2 of 5\)/,
        );
    });

    it("given the sync retried, then what to do says whether the retries run a fix pushed now (3.5) or not (3.6's pin)", () => {
        const todo = (sync: object) => {
            const l = fieldReport({ retrying: true });
            const b = l.items.find((o: any) => o.kind === "Application" && o.metadata.name === "mandant-b");
            b.operation = { sync, initiatedBy: { username: "applicationset-controller", automated: true }, retry: { limit: 5 } };
            const [d] = run(l);
            return d.findings.find((f) => f.kind === "SyncFailed" && f.application === "mandant-b")?.todo ?? "";
        };
        assert.match(
            todo({}),
            /^fix the cause in Git: each retry syncs the branch's newest commit, so a fix pushed now is what the next retry runs/,
        );
        assert.match(
            todo({ revision: "a".repeat(40) }),
            /^fix the cause in Git: the retries run on the same revision and fail the same way/,
        );
    });

    it("given the hook's Pods deleted (read live), then the line says their logs went with them, not a kubectl logs that would wait", () => {
        const l = fieldReport();
        l.items = l.items.filter((o: any) => o.kind !== "Pod");
        const [d] = diagnose({ ...dumpFromList(l), fromFile: false }, { now: NOW, stuckAfterSeconds: 600 });
        assert.match(d.blocking[0].message, /\(its Pods are gone, deleted\?, and their logs with them: a new sync runs the hook again/);
        assert.doesNotMatch(d.blocking[0].message, /kubectl logs/);
        // a dump (from a file) that holds Pods, none of the hook Job's: the same
        const pods = fieldReport();
        pods.items = pods.items.filter((o: any) => o.kind !== "Pod" || o.metadata?.labels?.["job-name"] !== "site-setup");
        pods.items.push({
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: "site-x", namespace: "mandant-a" },
            status: { phase: "Running" },
        });
        const [fromFile] = diagnose(dumpFromList(pods), { now: NOW, stuckAfterSeconds: 600 });
        assert.match(fromFile.blocking[0].message, /\(its Pods are gone, deleted\?, and their logs with them/);
    });

    it("given a dump of one namespace (no Jobs, no Pods), then the line says the hook's namespace is another", () => {
        const l = fieldReport();
        l.items = l.items.filter((o: any) => !["Job", "Pod"].includes(o.kind));
        const [d] = diagnose({ ...dumpFromList(l), fromFile: true }, { now: NOW, stuckAfterSeconds: 600 });
        assert.match(
            d.blocking[0].message,
            /\(the dump holds no Jobs or Pods: dump them too, kubectl get \.\.\.,jobs,pods -A -o json \(with -A: its objects are all in argocd, and the hook's Job is in mandant-b\)/,
        );
    });

    it("given the blocking Application patched a minute ago, then the step's time is still the rollout's", () => {
        // the patch makes its entry Waiting, then Pending, then Progressing again: the entry's time is a minute old,
        // the RolloutProgressing condition's (kept while the step stays) 58 minutes
        const l = fieldReport();
        const set = l.items.find((o: any) => o.kind === "ApplicationSet");
        set.status.applicationStatus.find((e: any) => e.application === "mandant-b").lastTransitionTime = new Date(
            NOW.getTime() - 60_000,
        ).toISOString();
        const [d] = run(l);
        assert.strictEqual(d.state, "stuck");
        assert.match(d.summary, /^tenants: rollout stuck at step 2 of 4 for 58 min — mandant-b: PreSync hook Job/);
        assert.strictEqual(d.since, "2026-05-29T14:02:00Z");
    });

    it("a retry's hook Job running again, its Pods failing: their error is named", () => {
        const l = fieldReport({ retrying: true });
        const b = l.items.find((o: any) => o.kind === "Application" && o.metadata.name === "mandant-b");
        b.status.operationState.message = "waiting for completion of hook batch/Job/site-setup";
        b.status.operationState.syncResult.resources[0].hookPhase = "Running";
        const [d] = run(l);
        assert.strictEqual(d.state, "stuck");
        assert.match(
            d.blocking[0].message,
            /^PreSync hook Job mandant-b\/site-setup: 1 of its Pods failed so far \(the Job makes new ones\): "config\/system\/settings\.php is not writable"; the sync is being retried \(attempt 2 of 5\)$/,
        );
        // --json's hook names the Job and its error, as a failed hook's does
        assert.deepStrictEqual(
            { ...d.blocking[0].hook },
            {
                namespace: "mandant-b",
                job: "site-setup",
                reason: "PodsFailing",
                message: "1 of its Pods failed so far; the Job makes new ones",
                log: "config/system/settings.php is not writable",
            },
        );
    });

    it("given a finished rollout, then it is complete, with no step", () => {
        const tenants: TenantSpec[] = ["a", "b", "c"].map((n, i) => ({ name: `mandant-${n}`, step: i + 1, status: "Healthy" }));
        const set = appSet("tenants", tenants, { rolloutStep: null });
        const [d] = run(list(set, ...tenants.map((t) => application(set, t))));
        assert.deepStrictEqual([d.state, d.step, d.steps, d.blocking, d.waiting], ["complete", null, 3, [], []]);
        // the revision its entries were rolled out at: a push the ApplicationSet has not read is not in it
        assert.strictEqual(
            d.summary,
            "tenants: rollout complete (3 steps, 3 Applications Healthy) at 222222222222, the revision its Applications were compared at.",
        );
        // entries at two revisions (or none): no one revision said
        set.status!.applicationStatus![0].targetRevisions = ["3".repeat(40)];
        const [two] = run(list(set, ...tenants.map((t) => application(set, t))));
        assert.strictEqual(two.summary, "tenants: rollout complete (3 steps, 3 Applications Healthy).");
    });

    it("given two ApplicationSets of one name in two namespaces, then each line names its namespace", () => {
        const tenants: TenantSpec[] = ["a", "b", "c"].map((n, i) => ({ name: `mandant-${n}`, step: i + 1, status: "Healthy" }));
        const set = appSet("tenants", tenants, { rolloutStep: null });
        const copy = JSON.parse(JSON.stringify(set));
        copy.metadata = { ...copy.metadata, namespace: "team-x", uid: "another-uid" };
        const ds = run(list(set, copy, ...tenants.map((t) => application(set, t))), 600, "tenants");
        assert.deepStrictEqual(
            ds.map((d) => d.summary.split(":")[0]),
            ["argocd/tenants", "team-x/tenants"],
        );
        // a copy with no namespace (a dump made by someone): no "undefined/tenants"
        delete copy.metadata.namespace;
        assert.ok(
            run(list(set, copy, ...tenants.map((t) => application(set, t))), 600, "tenants").every((d) => !/^undefined/.test(d.summary)),
        );
        // alone, it is named as before
        assert.match(run(list(set, ...tenants.map((t) => application(set, t))))[0].summary, /^tenants: rollout complete/);
    });

    it("given a finished rollout with an Application it cannot compare, then the line says so", () => {
        const tenants: TenantSpec[] = ["a", "b", "c"].map((n, i) => ({ name: `mandant-${n}`, step: i + 1, status: "Healthy" }));
        const set = appSet("tenants", tenants, { rolloutStep: null });
        const apps = tenants.map((t) => application(set, t));
        apps[2].status.sync.status = "Unknown"; // a ComparisonError: the repo-server cannot render it
        const [d] = run(list(set, ...apps));
        assert.strictEqual(d.state, "complete");
        assert.strictEqual(
            d.summary,
            "tenants: rollout complete (3 steps), but not every Application is Healthy and Synced: mandant-c (Healthy, Unknown).",
        );
    });

    it("given a step with two apps, one Degraded with no hook involved, then that one blocks and its degraded resource is named", () => {
        const tenants: TenantSpec[] = [
            { name: "mandant-a", step: 1, status: "Healthy" },
            { name: "mandant-b", step: 2, status: "Healthy" },
            {
                name: "mandant-e",
                step: 2,
                status: "Progressing",
                since: 12,
                app: {
                    sync: { status: "Synced", revision: "2".repeat(40) },
                    health: { status: "Degraded" },
                    resources: [
                        {
                            group: "apps",
                            version: "v1",
                            kind: "Deployment",
                            namespace: "mandant-e",
                            name: "web",
                            status: "Synced",
                            health: { status: "Degraded", message: 'Deployment "web" exceeded its progress deadline' },
                        },
                    ],
                },
            },
            { name: "mandant-c", step: 3, status: "Waiting" },
        ];
        const set = appSet("tenants", tenants, { rolloutStep: 2, since: 12 });
        const [d] = run(list(set, ...tenants.map((t) => application(set, t))));
        assert.strictEqual(d.state, "stuck");
        assert.deepStrictEqual(
            d.blocking.map((b) => [b.application, b.reason, b.hook]),
            [["mandant-e", "Degraded", null]],
        );
        assert.match(d.blocking[0].message, /Deployment mandant-e\/web: Deployment "web" exceeded its progress deadline/);
        assert.deepStrictEqual(d.waiting, [{ application: "mandant-c", step: 3 }]);
    });

    it("given a ComparisonError in step 3, then it is stuck at step 3 with the error", () => {
        const tenants: TenantSpec[] = [
            { name: "mandant-a", step: 1, status: "Healthy" },
            { name: "mandant-b", step: 2, status: "Healthy" },
            {
                name: "mandant-c",
                step: 3,
                status: "Progressing",
                since: 5,
                app: {
                    sync: { status: "Unknown", revision: "main" },
                    conditions: [
                        {
                            type: "ComparisonError",
                            message:
                                "Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = Manifest generation error (cached): `kustomize build` failed",
                            lastTransitionTime: "2026-05-29T14:55:00Z",
                        },
                    ],
                },
            },
            { name: "mandant-d", step: 4, status: "Waiting" },
        ];
        const set = appSet("tenants", tenants, { rolloutStep: 3, since: 5 });
        const [d] = run(list(set, ...tenants.map((t) => application(set, t))));
        assert.deepStrictEqual([d.state, d.step], ["stuck", 3]);
        assert.strictEqual(d.blocking[0].reason, "ComparisonError");
        assert.match(
            d.summary,
            /^tenants: rollout stuck at step 3 of 4 for 5 min — mandant-c: Argo CD cannot compare it \(ComparisonError\): Failed to load target state/,
        );
    });

    /** A tenant whose Application Argo CD cannot compare (ComparisonError with this message), 5 minutes in. */
    const cannotCompare =
        (message: string) =>
        (name: string, step: number, status: TenantSpec["status"]): TenantSpec => ({
            name,
            step,
            status,
            since: 5,
            app: {
                sync: { status: "Unknown", revision: "main" },
                conditions: [{ type: "ComparisonError", message, lastTransitionTime: "2026-05-29T14:55:00Z" }],
            },
        });

    it("given a release with no folder (a typo in the tenant files), then the path Git lacks is named, once for the others", () => {
        const message = (p: string) =>
            `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = Manifest generation error (cached): \`kustomize build <path to cached source>/${p}\` failed exit status 1: Error: must build at directory: not a valid directory: evalsymlink failure on '<path to cached source>/${p}' : lstat <path to cached source>/${p}: no such file or directory`;
        const cannot = cannotCompare(message("releases/1.2"));
        const tenants = [cannot("mandant-a", 1, "Progressing"), cannot("mandant-b", 2, "Waiting")];
        const set = appSet("tenants", tenants, { rolloutStep: 1, since: 5 });
        const [d] = run(list(set, ...tenants.map((t) => application(set, t))));
        assert.match(
            d.summary,
            /— mandant-a: Argo CD cannot compare it \(ComparisonError\): its source path releases\/1\.2 is not in the repository at \S+ \(the file or element it was generated from names a folder Git does not have: a typo\?\)\. [^\n]*Also failing on its own: mandant-b \(step 2\): Argo CD cannot compare it \(ComparisonError\): its source path releases\/1\.2 is not/,
        );
    });

    // kustomize says "must build at directory" of a resource its kustomization.yaml lists too: that is no source path
    it("given a resource its kustomization.yaml lists missing, then the file is named, not the source path", () => {
        const message = `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = \`kustomize build <path to cached source>/tenants/mandant-a\` failed exit status 1: Error: accumulating resources: accumulation err='accumulating resources from 'missing.yaml': evalsymlink failure on '<path to cached source>/tenants/mandant-a/missing.yaml' : lstat <path to cached source>/tenants/mandant-a/missing.yaml: no such file or directory': must build at directory: not a valid directory: evalsymlink failure on '<path to cached source>/tenants/mandant-a/missing.yaml' : lstat <path to cached source>/tenants/mandant-a/missing.yaml: no such file or directory`;
        const tenants = [cannotCompare(message)("mandant-a", 1, "Progressing")];
        const set = appSet("tenants", tenants, { rolloutStep: 1, since: 5 });
        const [d] = run(list(set, ...tenants.map((t) => application(set, t))));
        assert.match(
            d.summary,
            /— mandant-a: Argo CD cannot compare it \(ComparisonError\): tenants\/mandant-a\/kustomization\.yaml lists missing\.yaml, which is not in the repository at main \(a file added to resources: and never committed, or a typo\)/,
        );
        assert.doesNotMatch(d.summary, /its source path/);
    });

    it("given the same ComparisonError in every tenant, then the others are named once with it", () => {
        const cannot = cannotCompare(
            "Failed to load target state: `kustomize build <path to cached source>/releases/1.21` failed: no such file or directory",
        );
        const tenants = [cannot("mandant-a", 1, "Progressing"), cannot("mandant-b", 2, "Waiting"), cannot("mandant-c", 3, "Waiting")];
        const set = appSet("tenants", tenants, { rolloutStep: 1, since: 5 });
        const [d] = run(list(set, ...tenants.map((t) => application(set, t))));
        assert.match(
            d.summary,
            / Also failing on its own: mandant-b, mandant-c: Argo CD cannot compare it \(ComparisonError\): Failed to load target state: `kustomize build <path to cached source>\/releases\/1\.21` failed: no such file or directory\./,
        );
    });

    it("given an ApplicationSet without a strategy beside a stuck one, then each is diagnosed on its own", () => {
        const report = fieldReport();
        const plainTenants: TenantSpec[] = [{ name: "docs", step: 1, status: "Healthy" }];
        const plain = appSet("platform", plainTenants, { strategy: false });
        const plainApp = application(plain, plainTenants[0], false);
        const ds = run(list(...report.items, plain, plainApp));
        assert.deepStrictEqual(
            ds.map((d) => [d.name, d.strategy, d.state, d.step, d.steps]),
            [
                ["platform", "none", "complete", null, 0],
                ["tenants", "RollingSync", "stuck", 2, 4],
            ],
        );
        assert.deepStrictEqual(
            run(list(...report.items, plain, plainApp), 600, "platform").map((d) => d.name),
            ["platform"],
        );
    });

    // given a rollout stuck at step 2, when Argo CD retries (a new hook Job runs: progressing at step 2 again), then --watch
    // posts no RolloutResumed (nor a second RolloutStuck after it); when it moves to step 3, then RolloutResumed
    it("given a stuck rollout retried at its step, then --watch says no RolloutResumed until it moves", async () => {
        const at = (step: number): TenantSpec[] => [
            { name: "mandant-a", step: 1, status: "Healthy" },
            {
                name: "mandant-b",
                step: 2,
                status: step === 2 ? "Progressing" : "Healthy",
                since: 1,
                app: { health: { status: "Progressing" }, sync: { status: "Synced", revision: "2".repeat(40) } },
            },
            { name: "mandant-c", step: 3, status: step === 3 ? "Progressing" : "Waiting", since: 1 },
            { name: "mandant-d", step: 4, status: "Waiting" },
        ];
        const progressing = (step: number) => {
            const set = appSet("tenants", at(step), { rolloutStep: step, since: 1 });
            return list(set, ...at(step).map((t) => application(set, t)));
        };
        const rounds = [fieldReport(), progressing(2), fieldReport(), progressing(3)];
        const said: string[] = [];
        const w = new RolloutWatcher(
            async () => dumpFromList(rounds.shift()),
            null,
            { stuckAfterSeconds: 600 },
            (l) => said.push(l.split(":")[0]),
        );
        for (let i = 0; i < 4; i++) await w.tick(NOW);
        assert.deepStrictEqual(said, ["RolloutStuck argocd/tenants", "RolloutResumed argocd/tenants"]);
    });

    it("given an app Progressing with no error, then it is progressing until --stuck-after, and stuck after it", () => {
        const tenants: TenantSpec[] = [
            { name: "mandant-a", step: 1, status: "Healthy" },
            {
                name: "mandant-b",
                step: 2,
                status: "Progressing",
                since: 20,
                app: { health: { status: "Progressing" }, sync: { status: "Synced", revision: "2".repeat(40) } },
            },
            { name: "mandant-c", step: 3, status: "Waiting" },
        ];
        const set = appSet("tenants", tenants, { rolloutStep: 2, since: 20 });
        const l = list(set, ...tenants.map((t) => application(set, t)));
        const [later] = run(l, 3600);
        assert.strictEqual(later.state, "progressing");
        assert.match(later.summary, /^tenants: rollout at step 2 of 3 for 20 min, in progress — mandant-b: /);
        const [now] = run(l, 600);
        assert.strictEqual(now.state, "stuck");
        assert.match(
            now.summary,
            /stuck at step 2 of 3 for 20 min — mandant-b: Application resource became Progressing.*\(sync Synced, health Progressing\)/,
        );
    });

    it("given a malformed dump, then it says what is wrong with it", () => {
        assert.throws(() => dumpFromList({ kind: "List" }), /not a Kubernetes List/);
        assert.throws(() => dumpFromList({ kind: "List", items: [{ metadata: {} }] }), /item 0 of the dump has no kind or metadata\.name/);
        assert.throws(() => dumpFromList("nope"), /not a Kubernetes List/);
    });
});

describe("rollout doctor: the cause where it really is", () => {
    const opts = { now: NOW, stuckAfterSeconds: 600 };
    const itemsOf = (l: any) => l.items as any[];

    it("given the hook's Pods wrote no termination message (the default policy), then from a dump it names the command that shows the Pod's log", () => {
        const l = fieldReport();
        for (const p of itemsOf(l).filter((o) => o.kind === "Pod")) p.status.containerStatuses[0].state.terminated.message = "";
        const [d] = diagnose(dumpFromList(l), opts);
        assert.strictEqual(d.blocking[0].hook!.log, "");
        assert.match(
            d.summary,
            /PreSync hook Job mandant-b\/site-setup failed \(BackoffLimitExceeded: Job has reached the specified backoff limit\) \(its error is in its Pod's log: kubectl logs -n mandant-b job\/site-setup\)/,
        );
    });

    it("a deleted hook Job: no logs command that answers NotFound", () => {
        const l = fieldReport();
        // the sync result still names the hook; mandant-b's Job and its Pods are gone (deleted by hand), other Jobs are there
        l.items = itemsOf(l).filter((o) => !(["Job", "Pod"].includes(o.kind) && o.metadata.namespace === "mandant-b"));
        l.items.push({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "backup", namespace: "ops" }, status: {} });
        const [d] = diagnose(dumpFromList(l), opts);
        assert.strictEqual(d.blocking[0].hook!.job, "site-setup");
        assert.doesNotMatch(d.summary, /kubectl logs/);
        // given up (no retry to come): a new sync is what runs it again
        assert.match(d.summary, /the Job is gone from the cluster, and its Pods' logs with it: a new sync runs the hook again/);
        // while a retry is due, the next attempt does
        const b = itemsOf(l).find((o) => o.kind === "Application" && o.metadata.name === "mandant-b");
        b.status.operationState = { ...b.status.operationState, phase: "Running", retryCount: 1 };
        const [retrying] = diagnose(dumpFromList(l), opts);
        assert.match(
            retrying.summary,
            /the Job is gone from the cluster, and its Pods' logs with it: the next sync attempt runs the hook again/,
        );
    });

    it("a dump with no Jobs or Pods at all: it says to dump them", () => {
        const l = fieldReport();
        l.items = itemsOf(l).filter((o) => o.kind !== "Job" && o.kind !== "Pod");
        const [d] = diagnose(dumpFromList(l), opts);
        assert.match(d.summary, /the dump holds no Jobs or Pods: dump them too, kubectl get \.\.\.,jobs,pods -A -o json/);
    });

    it("a dump with Pods but no Jobs: it says to dump the Jobs, not that the Job is gone", () => {
        const l = fieldReport();
        l.items = itemsOf(l).filter((o) => o.kind !== "Job");
        const [d] = diagnose(dumpFromList(l), opts);
        assert.match(d.summary, /the dump holds no Jobs: dump them too, kubectl get \.\.\.,jobs,pods -A -o json/);
        assert.doesNotMatch(d.summary, /gone from the cluster/);
    });

    it("given the Pod's log (live mode reads it), then the hook's own error line comes from the log", () => {
        const l = fieldReport();
        const pods = itemsOf(l).filter((o) => o.kind === "Pod");
        for (const p of pods) p.status.containerStatuses[0].state.terminated.message = "";
        const dump = {
            ...dumpFromList(l),
            logs: {
                [`mandant-b/${pods[1].metadata.name}`]:
                    "In ConfigurationManager.php line 387:\n\n  config/system/settings.php is not writable.\n",
            },
        };
        const [d] = diagnose(dump, opts);
        assert.strictEqual(d.blocking[0].hook!.log, "config/system/settings.php is not writable.");
    });

    it("given a retry that has started (v3.5.1 clears syncResult then), then the failed hook Job itself is the cause, and the retry is named", () => {
        const l = fieldReport({ retrying: true });
        const app = itemsOf(l).find((o) => o.kind === "Application" && o.metadata.name === "mandant-b");
        delete app.status.operationState.syncResult;
        const job = itemsOf(l).find((o) => o.kind === "Job" && o.metadata.namespace === "mandant-b");
        Object.assign(job, hookJob("mandant-b", "site-setup", "failed"));
        const [d] = diagnose(dumpFromList(l), opts);
        assert.strictEqual(d.state, "stuck");
        assert.strictEqual(d.blocking[0].reason, "PreSyncHookFailed");
        assert.match(
            d.blocking[0].message,
            /PreSync hook Job mandant-b\/site-setup failed .*; the sync is being retried \(attempt 2 of 5\)$/,
        );
    });

    it("a retry waiting for the failed hook Job's deletion: the retry is named, not a sync of its own that failed now", () => {
        const l = fieldReport({ retrying: true });
        const app = itemsOf(l).find((o) => o.kind === "Application" && o.metadata.name === "mandant-b");
        delete app.status.operationState.syncResult;
        app.status.operationState.message = "waiting for deletion of hook batch/Job/site-setup";
        l.items = itemsOf(l).filter((o) => !(["Job", "Pod"].includes(o.kind) && o.metadata.namespace === "mandant-b"));
        const [d] = diagnose(dumpFromList(l), opts);
        assert.strictEqual(d.state, "stuck");
        assert.deepStrictEqual(
            { reason: d.blocking[0].reason, message: d.blocking[0].message },
            { reason: "SyncRetrying", message: "retry 2 of 5 is running: waiting for deletion of hook batch/Job/site-setup" },
        );
    });

    it("given a RollingSync ApplicationSet with no applicationStatus at all, then the finding is that progressive syncs are off", async () => {
        const l = fieldReport();
        delete itemsOf(l).find((o) => o.kind === "ApplicationSet").status.applicationStatus;
        const [d] = diagnose(dumpFromList(l), opts);
        assert.strictEqual(d.state, "stuck");
        assert.strictEqual(d.blocking[0].reason, "ProgressiveSyncsOff");
        assert.match(d.summary, /progressive syncs are off \(applicationsetcontroller\.enable\.progressive\.syncs in argocd-cmd-params-cm/);
        assert.match(await metricsText([d]), /^gitops_lab_rollout_stuck\{.*reason="ProgressiveSyncsOff"\} 1$/m);
    });

    // given a step the condition names whose Applications are all Healthy, past --stuck-after, then it says what is
    // inconsistent, and the metric still has a series
    it("a step of Healthy Applications held: inconsistent", async () => {
        const tenants = [
            { name: "mandant-a", step: 1, status: "Healthy" as const, since: 70 },
            { name: "mandant-b", step: 2, status: "Waiting" as const, since: 70 },
        ];
        const set = appSet("tenants", tenants, { rolloutStep: 1, since: 60 });
        const [d] = diagnose(dumpFromList(list(set, ...tenants.map((t) => application(set, t)))), opts);
        assert.strictEqual(d.state, "stuck");
        assert.match(
            d.summary,
            /rollout stuck at step 1 of 2 .* — the RolloutProgressing condition says step 1, but every Application of step 1 \(mandant-a\) is Healthy; the ApplicationSet controller has not moved on/,
        );
        assert.doesNotMatch(d.summary, /— \./);
        assert.match(
            await metricsText([d]),
            /^gitops_lab_rollout_stuck\{namespace="argocd",appset="tenants",step="1",application="",reason="Inconsistent"\} 1$/m,
        );
    });

    it("given 20,000 Applications waiting, then the line stays at most 1 KiB, naming the first few and counting the rest", () => {
        const tenants = [
            { name: "t-00000", step: 1, status: "Progressing" as const, since: 5 },
            ...Array.from({ length: 20_000 }, (_, i) => ({
                name: `t-${String(i + 1).padStart(5, "0")}`,
                step: 2 + (i % 3),
                status: "Waiting" as const,
                since: 5,
            })),
        ];
        const set = appSet("big", tenants, { rolloutStep: 1, since: 5 });
        const apps = tenants.map((t) => application(set, t));
        apps[0].status = { ...apps[0].status, ...failedPreSync("site-setup", "t-00000", false) };
        const [d] = diagnose({ applicationSets: [set], applications: apps, jobs: [], pods: [] }, opts);
        assert.ok(Buffer.byteLength(d.summary) <= 1024, `${Buffer.byteLength(d.summary)} bytes`);
        assert.match(d.summary, /Waiting behind it: t-00001 \(step 2\), .* and 19995 more\./);
    });
});

describe("rollout doctor: a dump read later", function () {
    this.timeout(60_000);
    // every time a dump holds, moved back a day: the dump taken yesterday
    const shifted = (v: any): any =>
        Array.isArray(v)
            ? v.map(shifted)
            : v && typeof v === "object"
              ? Object.fromEntries(
                    Object.entries(v).map(([k, x]) => [
                        k,
                        typeof x === "string" && /(At|Time|Timestamp)$/.test(k) && Number.isFinite(Date.parse(x))
                            ? new Date(Date.parse(x) - 86_400_000).toISOString()
                            : shifted(x),
                    ]),
                )
              : v;

    it("says how long as of the dump's newest time, not of the reader's clock", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doctor-later-"));
        try {
            const today = path.join(dir, "today.json");
            const yesterday = path.join(dir, "yesterday.json");
            fs.writeFileSync(today, JSON.stringify(fieldReport()));
            fs.writeFileSync(yesterday, JSON.stringify(shifted(fieldReport())));
            // one at a time: runMain takes this process's stdout while it runs
            const spans: RegExpExecArray[] = [];
            for (const f of [today, yesterday]) {
                const r = await runMain("doctor", ["--from", f]);
                assert.strictEqual(r.code, 1, r.out);
                const m = /rollout stuck at step 2 of 4 for ([^(]+) \(as of the dump's newest time, (\S+)\) — /.exec(r.stdout);
                assert.ok(m, r.stdout);
                spans.push(m);
            }
            assert.strictEqual(spans[1][1], spans[0][1], "the same span, a day later");
            assert.strictEqual(Date.parse(spans[0][2]) - Date.parse(spans[1][2]), 86_400_000);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe("rollout doctor: the line's punctuation", () => {
    it("a hook error ending with a full stop is not given a second", () => {
        const report = fieldReport();
        for (const o of report.items)
            for (const c of o.status?.containerStatuses ?? [])
                if (c.state?.terminated?.message)
                    c.state.terminated.message = c.state.terminated.message.replace(/writable\n$/, "writable.\n");
        const [d] = run(report);
        assert.match(d.summary, /"config\/system\/settings\.php is not writable\." Waiting behind it/);
    });
});
