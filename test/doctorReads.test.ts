/**
 * What the rollout doctor reads more closely: the error a tool printed (not its last line), the
 * right Job to blame when the sync result names none, who is really waiting, and a dump without an
 * ApplicationSet. The tools' outputs below are written by us in the shape those tools print.
 */
import * as assert from "assert";
import { applicationsWithoutAppSet } from "../cli/doctor";
import { diagnose, dumpFromList, toJson } from "../lab/doctor/diagnose";
import { metricsText } from "../lab/doctor/metrics";
import { readLive, RolloutWatcher } from "../lab/doctor/watch";
import { KubeCluster } from "../lab/ports/cluster";
import { FakeKube } from "../sim/fakeApi";
import { errorLine, MAX_ERROR_BYTES } from "../lab/doctor/errorLine";
import { fieldReport, hookJob, hookPod, list, minutesAgo, NOW } from "./helpers/rollout";

const opts = { now: NOW, stuckAfterSeconds: 600 };
const itemsOf = (l: any): any[] => l.items;

describe("the error, not the last line (errorLine)", () => {
    const outputs: [string, string, string][] = [
        [
            "a TYPO3/Symfony console command: the exception block, then the command's usage",
            "Setting up extension news\n\nIn ConfigurationManager.php line 387:\n\n  config/system/settings.php is not writable.\n\n\nextension:setup [-e|--extension EXTENSION] [--] [<extensions>...]\n\n",
            "config/system/settings.php is not writable.",
        ],
        [
            "a shell with set -x: the trace after the error",
            "+ cp /app/settings.tmpl /app/config/settings.php\ncp: cannot create regular file '/app/config/settings.php': Read-only file system\n+ exit 1\n",
            "cp: cannot create regular file '/app/config/settings.php': Read-only file system",
        ],
        [
            "a Python traceback: its last line",
            'Migrating...\nTraceback (most recent call last):\n  File "/app/migrate.py", line 12, in <module>\n    open(path, "w")\nPermissionError: [Errno 13] Permission denied: \'/app/config/settings.php\'\nmigration aborted\n',
            "PermissionError: [Errno 13] Permission denied: '/app/config/settings.php'",
        ],
        [
            "a Go panic: its first line",
            "starting\npanic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:14 +0x1d\nexit status 2\n",
            "panic: runtime error: invalid memory address or nil pointer dereference",
        ],
        [
            "git: its fatal: line before the hints",
            "Cloning into 'site'...\nfatal: could not read Username for 'https://git.example.org': No such device or address\nhint: use a credential helper\n",
            "fatal: could not read Username for 'https://git.example.org': No such device or address",
        ],
        [
            "Node: the Error: line above its stack",
            "Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16)\n",
            "Error: connect ECONNREFUSED 127.0.0.1:5432",
        ],
        [
            "a log level: FATAL",
            "2026-12-01 INFO starting\n2026-12-01 FATAL database schema is newer than this release\n2026-12-01 INFO shutting down\n",
            "2026-12-01 FATAL database schema is newer than this release",
        ],
        ["nothing marked as an error: the last non-empty line", "step one\nstep two went wrong somehow\n\n", "step two went wrong somehow"],
    ];
    for (const [what, output, want] of outputs) it(`${what}`, () => assert.strictEqual(errorLine(output), want));

    it("quotes at most 1 KiB", () => {
        const line = errorLine(`Error: ${"ä".repeat(2000)}`);
        assert.ok(Buffer.byteLength(line) <= MAX_ERROR_BYTES && line.endsWith("…"), String(Buffer.byteLength(line)));
    });
});

describe("blame the right Job when the sync result names no failed hook", () => {
    /** The field report while mandant-b's retry waits (no syncResult), with `jobs` in place of its hook Job. */
    const retrying = (jobs: any[]) => {
        const l = fieldReport({ retrying: true });
        const app = itemsOf(l).find((o) => o.kind === "Application" && o.metadata.name === "mandant-b");
        delete app.status.operationState.syncResult;
        l.items = [...itemsOf(l).filter((o) => !(o.kind === "Job" && o.metadata.namespace === "mandant-b")), ...jobs];
        return l;
    };
    const blamed = (l: any) => diagnose(dumpFromList(l), opts)[0].blocking[0].hook?.job ?? null;

    it("given another Application's failed hook Job, newer, in the same namespace, then it is not blamed", () => {
        const ours = hookJob("mandant-b", "site-setup", "failed", { minutesOld: 60 });
        const theirs = hookJob("mandant-b", "db-migrate", "failed", { app: "shared-db", minutesOld: 30 });
        assert.strictEqual(blamed(retrying([ours, theirs])), "site-setup");
    });

    it("given only a failed hook Job from before the current operation (an earlier release), then none is blamed", () => {
        assert.strictEqual(blamed(retrying([hookJob("mandant-b", "site-setup", "failed", { minutesOld: 200 })])), null);
    });

    it("given a hook named by generateName, then its Job (tracked by the Application) is blamed", () => {
        assert.strictEqual(blamed(retrying([hookJob("mandant-b", "site-setup-x7k2p", "failed", { minutesOld: 61 })])), "site-setup-x7k2p");
    });

    it("given a HookSucceeded-only delete policy, then the failed Job it keeps is blamed", () => {
        const job = hookJob("mandant-b", "site-setup", "failed", { minutesOld: 61 });
        job.metadata.annotations["argocd.argoproj.io/hook-delete-policy"] = "HookSucceeded";
        assert.strictEqual(blamed(retrying([job])), "site-setup");
    });
});

describe("times as client-node reads them (Date objects, live)", () => {
    // a Job retried across midnight from Sunday to Monday: as strings "Sun ..." sorts after "Mon ..."
    const retriedAcrossMidnight = () => {
        const l = fieldReport();
        const pods = itemsOf(l).filter((o) => o.kind === "Pod" && o.metadata.namespace === "mandant-b");
        const older = hookPod("mandant-b", "site-setup", "sun01", "", 0);
        const newer = hookPod("mandant-b", "site-setup", "mon02", "", 0);
        l.items = [...itemsOf(l).filter((o) => !pods.includes(o)), older, newer];
        const dump = dumpFromList(l);
        for (const [p, at] of [
            [dump.pods.find((x) => x.metadata.name === "site-setup-sun01")!, "2026-12-06T23:59:00Z"],
            [dump.pods.find((x) => x.metadata.name === "site-setup-mon02")!, "2026-12-07T00:01:00Z"],
        ] as const)
            p.metadata.creationTimestamp = new Date(at);
        dump.logs = {
            "mandant-b/site-setup-sun01": "Error: the first attempt's error\n",
            "mandant-b/site-setup-mon02": "Error: the retry's error\n",
        };
        return dump;
    };

    it("given a Job's Pods read live, then the newest Pod's error is quoted", () => {
        const hook = diagnose(retriedAcrossMidnight(), opts)[0].blocking[0].hook;
        assert.strictEqual(hook?.log, "Error: the retry's error");
    });

    it("given a Job's Failed condition read live, then its evidence time is RFC 3339", () => {
        const dump = retriedAcrossMidnight();
        const job = dump.jobs.find((j) => j.metadata.namespace === "mandant-b")!;
        const failed = job.status!.conditions!.find((c) => c.type === "Failed")!;
        failed.lastTransitionTime = new Date("2026-12-07T00:02:00Z");
        const evidence = diagnose(dump, opts)[0].findings.flatMap((f) => f.evidence);
        assert.deepStrictEqual(
            evidence.filter((e) => e.object.startsWith("Job ")).map((e) => e.time),
            ["2026-12-07T00:02:00Z"],
        );
    });
});

describe("a dump whose objects lack metadata.namespace", () => {
    it("given no namespaces at all, then the Applications are still the ApplicationSet's, and the JSON has none", () => {
        const l = fieldReport();
        for (const o of itemsOf(l)) delete o.metadata.namespace;
        const ds = diagnose(dumpFromList(l), opts);
        assert.deepStrictEqual(
            ds[0].findings.filter((f) => f.kind === "DeletedApplication"),
            [],
        );
        assert.ok(!("namespace" in toJson(ds).applicationSets[0]) || toJson(ds).applicationSets[0].namespace === undefined);
    });
});

describe("waiting means waiting", () => {
    it("given a later step's Application already Synced at the target, then it is not listed as waiting", () => {
        const l = fieldReport();
        const c = itemsOf(l).find((o) => o.kind === "Application" && o.metadata.name === "mandant-c");
        c.status.sync.status = "Synced";
        const [d] = diagnose(dumpFromList(l), opts);
        assert.deepStrictEqual(d.waiting, [{ application: "mandant-d", step: 4 }]);
        assert.match(d.summary, /Waiting behind it: mandant-d \(step 4\)\.$/);
    });
});

describe("a dump without an ApplicationSet", () => {
    it("given Applications not at rest and no ApplicationSet, then it says so (a finding), naming them", () => {
        const l = fieldReport();
        const dump = dumpFromList(list(...itemsOf(l).filter((o) => o.kind !== "ApplicationSet")));
        assert.match(
            applicationsWithoutAppSet(dump)!,
            /^no ApplicationSet in the dump, but 3 Applications are not Synced and Healthy: mandant-b \(OutOfSync\/Healthy\), mandant-c \(OutOfSync\/Healthy\), mandant-d \(OutOfSync\/Healthy\); dump the ApplicationSets too \(kubectl get applicationsets/,
        );
    });

    it("given only Applications at rest, then there is nothing to say", () => {
        const app = {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Application",
            metadata: { name: "a", namespace: "argocd", creationTimestamp: minutesAgo(5) },
            status: { sync: { status: "Synced" }, health: { status: "Healthy" } },
        };
        assert.strictEqual(applicationsWithoutAppSet(dumpFromList(list(app))), null);
    });
});

describe("the silent skip (upstream issues #12325, #29410): RollingSync marked an Application Healthy that it never synced", () => {
    /** The field report after the fix was pushed: step 2 done, and mandant-d's entry Healthy while it is OutOfSync at the new path. */
    const skippedReport = () => {
        const l = fieldReport();
        const d = itemsOf(l).find((o) => o.kind === "Application" && o.metadata.name === "mandant-d");
        d.spec.source.path = "releases/1.2.1";
        d.status = {
            sync: { status: "OutOfSync", revision: "b".repeat(40) },
            health: { status: "Healthy" },
            operationState: {
                phase: "Succeeded",
                syncResult: { revision: "a".repeat(40), source: { ...d.spec.source, path: "releases/1.2.0" } },
            },
        };
        const set = itemsOf(l).find((o) => o.kind === "ApplicationSet");
        set.status.applicationStatus.find((s: any) => s.application === "mandant-d").status = "Healthy";
        return l;
    };

    // given an entry Healthy while its Application is OutOfSync at the target, then it is its own finding: the step,
    // both revisions, the remedy
    it("Healthy but OutOfSync is its own finding", () => {
        const [d] = diagnose(dumpFromList(skippedReport()), opts);
        assert.deepStrictEqual(d.skipped, [
            {
                application: "mandant-d",
                step: 4,
                runs: "releases/1.2.0 at main",
                shouldRun: "releases/1.2.1 at main",
                remedy: "it will not sync until the next commit: push one, or sync it by hand (argocd app sync mandant-d)",
            },
        ]);
        assert.match(
            d.summary,
            /mandant-d \(step 4\) was skipped: its entry is Healthy but it runs releases\/1\.2\.0 at main, not releases\/1\.2\.1 at main; it will not sync until the next commit: push one, or sync it by hand \(argocd app sync mandant-d\)\.$/,
        );
        assert.deepStrictEqual(Object.keys(toJson([d]).applicationSets[0].skipped[0]), [
            "application",
            "step",
            "runs",
            "shouldRun",
            "remedy",
        ]);
    });

    it("given a rollout otherwise complete, then it says not every Application got it", () => {
        const l = skippedReport();
        const set = itemsOf(l).find((o) => o.kind === "ApplicationSet");
        for (const s of set.status.applicationStatus) s.status = "Healthy";
        set.status.conditions = set.status.conditions.map((c: any) =>
            c.type === "RolloutProgressing" ? { ...c, status: "False", message: "ApplicationSet Rollout has completed" } : c,
        );
        for (const a of itemsOf(l).filter((o) => o.kind === "Application" && o.metadata.name !== "mandant-d"))
            a.status = { sync: { status: "Synced" }, health: { status: "Healthy" } };
        const [d] = diagnose(dumpFromList(l), opts);
        assert.strictEqual(d.state, "complete");
        assert.match(
            d.summary,
            /^tenants: rollout complete \(4 steps\), but not every Application got it\. mandant-d \(step 4\) was skipped/,
        );
    });

    it("given Synced at the new revision with the old path, then it is reported too", () => {
        const l = skippedReport();
        const app = itemsOf(l).find((o) => o.kind === "Application" && o.metadata.name === "mandant-d");
        app.status.sync = {
            status: "Synced",
            revision: "b".repeat(40),
            comparedTo: { source: { ...app.spec.source, path: "releases/1.2.0" } },
        };
        assert.deepStrictEqual(
            diagnose(dumpFromList(l), opts)[0].skipped.map((s) => s.application),
            ["mandant-d"],
        );
    });

    it("given entries merely Pending, Progressing or Waiting, or an operation under way, then nothing is reported", () => {
        for (const status of ["Pending", "Progressing", "Waiting"]) {
            const l = skippedReport();
            itemsOf(l)
                .find((o) => o.kind === "ApplicationSet")
                .status.applicationStatus.find((s: any) => s.application === "mandant-d").status = status;
            assert.deepStrictEqual(diagnose(dumpFromList(l), opts)[0].skipped, [], status);
        }
        const l = skippedReport();
        itemsOf(l).find((o) => o.kind === "Application" && o.metadata.name === "mandant-d").operation = {
            sync: { revision: "b".repeat(40) },
        };
        assert.deepStrictEqual(diagnose(dumpFromList(l), opts)[0].skipped, []);
        assert.deepStrictEqual(diagnose(dumpFromList(fieldReport()), opts)[0].skipped, [], "the field report has none");
    });

    it("then the metrics carry it as its own series", async () => {
        const text = await metricsText(diagnose(dumpFromList(skippedReport()), opts));
        assert.match(text, /^gitops_lab_rollout_skipped\{namespace="argocd",appset="tenants",step="4",application="mandant-d"\} 1$/m);
    });

    it("then the watcher posts one Warning RolloutSkipped Event naming it, once", async () => {
        const posted: any[] = [];
        const events = { createEvent: async (_ns: string, e: any) => void posted.push(e) } as any;
        const w = new RolloutWatcher(async () => dumpFromList(skippedReport()), events, { stuckAfterSeconds: 600 });
        await w.tick(NOW);
        await w.tick(NOW);
        const skips = posted.filter((e) => e.reason === "RolloutSkipped");
        assert.strictEqual(skips.length, 1);
        assert.strictEqual(skips[0].type, "Warning");
        assert.match(
            skips[0].message,
            /^mandant-d \(step 4\) was skipped: it runs releases\/1\.2\.0 at main, not releases\/1\.2\.1 at main; it will not sync until the next commit/,
        );
    });

    it("given the same state live on the simulated cluster (its controllers stopped), then the doctor's live read finds it", async () => {
        const kube = new FakeKube();
        for (const o of itemsOf(skippedReport())) kube.put(o, "setup");
        const url = await kube.start();
        try {
            const dump = await readLive(new KubeCluster(kube.kubeconfig(url)));
            assert.deepStrictEqual(
                diagnose(dump, opts)[0].skipped.map((s) => `${s.application}:${s.step}`),
                ["mandant-d:4"],
            );
        } finally {
            await kube.stop();
        }
    });
});
