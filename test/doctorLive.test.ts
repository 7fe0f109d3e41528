/**
 * The rollout doctor against a cluster (the loopback fake Kubernetes API, through the product's
 * own client): live reads, the --watch alert as Kubernetes Events, the metrics, the command.
 */
import * as assert from "assert";
import { roundTrouble, SERVED_SYNC_NOTE } from "../cli/doctor";
import { ChildProcess, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { KubeCluster } from "../lab/ports/cluster";
import { diagnose } from "../lab/doctor/diagnose";
import {
    LiveReader,
    MAX_FAILED_NAMESPACES,
    readLive,
    RolloutChanges,
    RolloutWatcher,
    serveMetrics,
    EVENT_SOURCE,
} from "../lab/doctor/watch";
import { pollUntil } from "../lab/ports/wait";
import { isAlive } from "../lab/ports/proc";
import { BIN, runCli, runFamily, runMain, startCli } from "./helpers/cli";
import { fieldReport, hookPod, NOW, raced, TYPO3_ERROR } from "./helpers/rollout";
import { FakeKube } from "../sim/fakeApi";
import { expect, holds } from "./helpers/expect";

function get(url: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
        http.get(url, (res) => {
            let body = "";
            res.on("data", (d) => (body += d));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        }).on("error", reject);
    });
}

/** Marks mandant-b's step done and step 3 under way: the rollout moves again. */
function unblock(kube: FakeKube) {
    const set = kube.get("ApplicationSet", "argocd", "tenants");
    for (const s of set!.status!.applicationStatus!) {
        if (s.application === "mandant-b") Object.assign(s, { status: "Healthy", lastTransitionTime: new Date().toISOString() });
        if (s.application === "mandant-c") Object.assign(s, { status: "Progressing", lastTransitionTime: new Date().toISOString() });
    }
    set!.status!.conditions = set!.status!.conditions!.map((c: any) =>
        c.type === "RolloutProgressing"
            ? { ...c!, message: "ApplicationSet is performing rollout of step 3", lastTransitionTime: new Date().toISOString() }
            : c,
    );
    kube.put(set!, "applicationset-controller");
    const c = kube.get("Application", "argocd", "mandant-c");
    kube.put(
        { ...c!, status: { ...c!.status, health: { status: "Progressing" }, sync: { status: "Synced", revision: "2".repeat(40) } } },
        "application-controller",
    );
}

describe("rollout doctor against a cluster", function () {
    this.timeout(120_000);
    let kube: FakeKube;
    let cluster: KubeCluster;
    let kubeconfigFile: string;

    beforeEach(async () => {
        kube = new FakeKube();
        for (const o of fieldReport().items) kube.put(o, "setup");
        const url = await kube.start();
        cluster = new KubeCluster(kube.kubeconfig(url));
        kubeconfigFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "doctor-")), "kubeconfig");
        fs.writeFileSync(kubeconfigFile, kube.kubeconfig(url));
    });
    afterEach(async () => kube.stop());

    const events = () => kube.list("Event", "argocd");

    it("a cluster with no ApplicationSets and no Applications is exit 1, naming the kubeconfig (a wrong context)", async () => {
        for (const a of [...kube.list("ApplicationSet", "argocd"), ...kube.list("Application", "argocd")])
            kube.remove(a.kind!, "argocd", a.metadata.name, "setup");
        await expect(
            holds(
                "nothing of Argo CD left",
                () => !kube.list("Application", "argocd").length && !kube.list("ApplicationSet", "argocd").length,
            ),
        );
        const r = await runMain("doctor", ["--kubeconfig", kubeconfigFile]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stderr, new RegExp(`the cluster of ${kubeconfigFile} has no ApplicationSets and no Applications .*--kubeconfig`));
    });

    it("reads the four kinds live, Jobs and Pods only in the namespaces of the blocking Applications (not those waiting behind them), in pages", async () => {
        const before = kube.requests.length;
        const dump = await readLive(cluster);
        assert.deepStrictEqual(
            [dump.applicationSets.length, dump.applications.length, dump.jobs.length, dump.pods.length],
            [1, 4, 1, 2],
            "mandant-a's finished hook Job is not read",
        );
        const lists = kube.requests
            .slice(before)
            .filter((r) => r.method === "GET" && /\/(jobs|pods)$/.test(r.path))
            .map((r) => r.path);
        assert.ok(
            lists.length > 0 && lists.every((p) => /\/namespaces\/mandant-b\//.test(p)),
            `mandant-b's lists only: ${lists.join(", ")}`,
        );
    });

    it("--watch reads ApplicationSets and Applications from watches: each listed once, then its changes arrive by the watch", async () => {
        const reader = new LiveReader(cluster);
        try {
            const before = kube.requests.length;
            const stuck = diagnose(await reader.read(), { now: NOW, stuckAfterSeconds: 600 })[0];
            assert.strictEqual(stuck.state, "stuck");
            unblock(kube);
            await pollUntil(
                async () => {
                    const d = diagnose(await reader.read(), { now: new Date(), stuckAfterSeconds: 600 })[0];
                    return d.step === 3 ? d : undefined;
                },
                { timeoutMs: 30_000, intervalMs: 50, describe: () => "the watch never brought the change" },
            );
            const lists = (plural: string) =>
                kube.requests.slice(before).filter((r) => r.method === "GET" && r.path === `/apis/argoproj.io/v1alpha1/${plural}`).length;
            assert.deepStrictEqual(
                [lists("applications"), lists("applicationsets")],
                [2, 2],
                "one list and one watch each, however many rounds",
            );
        } finally {
            await reader.stop();
        }
    });

    it("reads a list of many objects page by page (limit / continue), all of them", async () => {
        for (let i = 0; i < 1_203; i++)
            kube.put({ apiVersion: "v1", kind: "Pod", metadata: { name: `p-${i}`, namespace: "many" } }, "setup");
        const before = kube.requests.length;
        assert.strictEqual((await cluster.listPods("many")).length, 1_203);
        assert.strictEqual(kube.requests.slice(before).filter((r) => r.path === "/api/v1/namespaces/many/pods").length, 3, "pages of 500");
    });

    it("--watch posts one RolloutStuck Warning on the ApplicationSet, nothing more while it stays stuck, and RolloutResumed when it moves", async () => {
        const w = new RolloutWatcher(() => readLive(cluster), cluster, { stuckAfterSeconds: 600 });
        await w.tick(NOW);
        assert.strictEqual(events().length, 1);
        const stuck = events()[0];
        assert.deepStrictEqual(
            [stuck.type, stuck.reason, stuck.involvedObject.kind, stuck.involvedObject.name, stuck.involvedObject.uid],
            ["Warning", "RolloutStuck", "ApplicationSet", "tenants", "uid-tenants"],
        );
        assert.match(
            stuck.message,
            /^tenants: rollout stuck at step 2 of 4 for 58 min — mandant-b: PreSync hook Job mandant-b\/site-setup failed/,
        );
        assert.strictEqual(stuck.source!.component, EVENT_SOURCE);

        await w.tick(NOW);
        assert.strictEqual(events().length, 1, "no repeat while still stuck");

        unblock(kube);
        await w.tick(new Date());
        const resumed = events().filter((e) => e.reason === "RolloutResumed");
        assert.strictEqual(resumed.length, 1);
        assert.strictEqual(resumed[0].type, "Normal");
        assert.match(resumed[0].message, /rollout at step 3 of 4/);
    });

    it("--watch posts its Event before it prints the line (a reader gone at that line leaves the Event posted)", async () => {
        const w = new RolloutWatcher(
            () => readLive(cluster),
            cluster,
            { stuckAfterSeconds: 600 },
            (l) => {
                if (l.startsWith("RolloutResumed")) throw new Error("its output's reader is gone");
            },
        );
        await w.tick(NOW);
        unblock(kube);
        await assert.rejects(w.tick(new Date()), /reader is gone/);
        assert.strictEqual(events().filter((e) => e.reason === "RolloutResumed").length, 1);
    });

    it("serves Prometheus text: one series per blocking app while stuck, none after", async () => {
        const w = new RolloutWatcher(() => readLive(cluster), null, { stuckAfterSeconds: 600 });
        const server = await serveMetrics(w, 0, "127.0.0.1");
        try {
            const port = (server.address() as any).port;
            await w.tick(NOW);
            const m = await get(`http://127.0.0.1:${port}/metrics`);
            assert.strictEqual(m.status, 200);
            assert.match(m.body, /# TYPE gitops_lab_rollout_stuck gauge/);
            assert.match(
                m.body,
                /^gitops_lab_rollout_stuck\{namespace="argocd",appset="tenants",step="2",application="mandant-b",reason="PreSyncHookFailed"\} 1$/m,
            );
            unblock(kube);
            await w.tick(new Date());
            assert.ok(!/^gitops_lab_rollout_stuck\{/m.test((await get(`http://127.0.0.1:${port}/metrics`)).body));
        } finally {
            server.close();
        }
    });

    it("the command reads the live cluster and exits 1 (a finding) when stuck; the served lab's sync by hand said", async () => {
        const r = await runMain("doctor", ["--kubeconfig", kubeconfigFile]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /^tenants: rollout stuck at step 2 of 4 for \d+ (min|h \d+ min|d \d+ h) — mandant-b: PreSync hook Job mandant-b\/site-setup failed \(BackoffLimitExceeded: Job has reached the specified backoff limit\): "config\/system\/settings\.php is not writable"\. Waiting behind it: mandant-c \(step 3\), mandant-d \(step 4\)\.$/m,
        );
        assert.match(
            r.stdout,
            /^Note: automated\.enabled: false on the Applications of tenants is written by the ApplicationSet controller/m,
        );
        // a served simulated lab's kubeconfig: its lab has no argocd command, so the kubectl that syncs there is said
        assert.ok(r.stdout.includes("argocd app sync"), r.stdout);
        assert.ok(r.stdout.includes(`\n${SERVED_SYNC_NOTE}\n`), r.stdout);
        // and not for another cluster's (the same findings read through a kubeconfig of its own naming)
        fs.writeFileSync(kubeconfigFile, fs.readFileSync(kubeconfigFile, "utf8").replace(/\bfake\b/g, "prod-west"));
        const other = await runMain("doctor", ["--kubeconfig", kubeconfigFile]);
        assert.strictEqual(other.code, 1, other.out);
        assert.ok(!other.stdout.includes(SERVED_SYNC_NOTE), other.stdout);
    });

    /** The command's --watch at `interval`: its RolloutStuck Event, then, once the rollout moves, its RolloutResumed. */
    async function watchStuckThenResumed(interval: string, resumedWithin: string): Promise<string> {
        const child: ChildProcess = startCli("doctor", ["--kubeconfig", kubeconfigFile, "--watch", "--interval", interval], {
            stdout: "pipe",
        });
        let out = "";
        child.stdout!.on("data", (d) => (out += d));
        const event = (reason: string, describe: string) =>
            pollUntil(async () => events().find((e) => e.reason === reason), {
                timeoutMs: 30_000,
                intervalMs: 100,
                describe: () => describe,
            });
        try {
            const ev = await event("RolloutStuck", "no RolloutStuck Event from doctor --watch within 30 s");
            assert.strictEqual(ev.involvedObject.name, "tenants");
            unblock(kube);
            await event("RolloutResumed", `no RolloutResumed Event ${resumedWithin}`);
        } finally {
            child.kill("SIGTERM");
        }
        // all it wrote: it ends its round and exits on SIGTERM
        await new Promise((resolve) => child.once("close", resolve));
        return out;
    }

    it("the command's --watch posts the Event on the live cluster within one interval", async () => {
        const out = await watchStuckThenResumed("0.2", "within 30 s");
        // every line begins with its time, written as Kubernetes writes its own (the findings' times are those)
        const lines = out.trim().split("\n");
        assert.ok(lines.length >= 2, out);
        for (const l of lines) assert.match(l, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \S/, l);
        assert.ok(
            events().every((e) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(String(e.firstTimestamp))),
            "the Events' times too",
        );
    });

    // given --watch with an hour between rounds, when the rollout moves, then the command re-diagnoses at once (the
    // watch's change), not an hour later
    it("--watch re-diagnoses on a change, not the hour", async () => {
        await watchStuckThenResumed("3600", "within 30 s of the change (rounds only every --interval?)");
    });

    it("--watch --json writes JSON lines alone on stdout, its log on stderr", async () => {
        const child = spawn(process.execPath, [BIN, "doctor", "--kubeconfig", kubeconfigFile, "--watch", "--json", "--interval", "0.2"], {
            stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        let err = "";
        child.stdout!.on("data", (d) => (out += d));
        child.stderr!.on("data", (d) => (err += d));
        try {
            await pollUntil(async () => (out.split("\n").filter(Boolean).length >= 2 ? true : undefined), {
                timeoutMs: 30_000,
                intervalMs: 100,
                describe: () => `fewer than two rounds on stdout: ${out} ${err}`,
            });
        } finally {
            child.kill("SIGTERM");
            await new Promise((resolve) => child.once("close", resolve));
        }
        for (const line of out.split("\n").filter(Boolean)) assert.doesNotThrow(() => JSON.parse(line), line);
        assert.match(err, /watching for changes and every 0\.2 s/);
    });

    it("--watch --appset naming no ApplicationSet says so on stderr, once", async () => {
        const child = spawn(
            process.execPath,
            [BIN, "doctor", "--kubeconfig", kubeconfigFile, "--watch", "--appset", "tenant", "--interval", "0.2"],
            {
                stdio: ["ignore", "pipe", "pipe"],
            },
        );
        let err = "";
        child.stderr!.on("data", (d) => (err += d));
        try {
            await pollUntil(async () => (/no ApplicationSet named "tenant"/.test(err) ? true : undefined), {
                timeoutMs: 30_000,
                intervalMs: 100,
                describe: () => `no line on stderr for the misspelt --appset: ${err}`,
            });
        } finally {
            child.kill("SIGTERM");
            await new Promise((resolve) => child.once("close", resolve));
        }
        assert.match(err, /doctor: no ApplicationSet named "tenant": watching for it, and nothing else is alerted \(a misspelt name\?/);
        assert.strictEqual(err.match(/no ApplicationSet named/g)?.length, 1, err);
    });

    it("--watch of ApplicationSets with no rollout strategy says so on stderr, once", async () => {
        const set = kube.get("ApplicationSet", "argocd", "tenants")!;
        kube.put({ ...set, spec: { ...set.spec, strategy: undefined } }, "client");
        const child = spawn(process.execPath, [BIN, "doctor", "--kubeconfig", kubeconfigFile, "--watch", "--interval", "0.2"], {
            stdio: ["ignore", "pipe", "pipe"],
        });
        let err = "";
        child.stderr!.on("data", (d) => (err += d));
        try {
            await pollUntil(async () => (/no rollout strategy/.test(err) ? true : undefined), {
                timeoutMs: 30_000,
                intervalMs: 100,
                describe: () => `no line on stderr for the ApplicationSet with no strategy: ${err}`,
            });
        } finally {
            child.kill("SIGTERM");
            await new Promise((resolve) => child.once("close", resolve));
        }
        assert.match(err, /doctor: argocd\/tenants has no rollout strategy: its Applications sync on their own, with no step to stall/);
        assert.strictEqual(err.match(/no rollout strategy/g)?.length, 1, err);
    });

    it("--watch ends when the npx that started it is killed", async () => {
        // a launcher as npx is (npm's title), the doctor its child, which a kill of npx does not signal
        const launcher = spawn(
            process.execPath,
            [
                "-e",
                `process.title = "npm exec gitops-lab doctor";
                 const c = require("child_process").spawn(process.execPath, ${JSON.stringify([BIN, "doctor", "--kubeconfig", kubeconfigFile, "--watch", "--interval", "0.2"])}, { stdio: "inherit" });
                 console.log("LAUNCHED " + c.pid);
                 setInterval(() => {}, 1e6);`,
            ],
            { stdio: ["ignore", "pipe", "pipe"] },
        );
        let out = "";
        launcher.stdout!.on("data", (d) => (out += d));
        launcher.stderr!.on("data", (d) => (out += d));
        await expect(
            holds("watching", () => /watching for changes/.test(out)),
            { timeoutMs: 30_000 },
        );
        const child = Number(/LAUNCHED (\d+)/.exec(out)![1]);
        launcher.kill("SIGKILL");
        try {
            await expect(
                holds(
                    "the doctor gone",
                    () => !isAlive(child),
                    () => out.slice(-300),
                ),
                { timeoutMs: 30_000 },
            );
        } finally {
            if (isAlive(child)) process.kill(child, "SIGTERM");
        }
        assert.match(out, /the npm or npx that started it is gone: stopping/);
    });

    // given --watch on a served lab's kubeconfig, when the lab is started again (a new address and token in the same
    // file), then the doctor reads the cluster the file names now: its Events go there
    it("--watch follows its kubeconfig file to a cluster started again", async () => {
        const child = spawn(process.execPath, [BIN, "doctor", "--kubeconfig", kubeconfigFile, "--watch", "--interval", "0.2"], {
            stdio: ["ignore", "ignore", "pipe"],
        });
        let err = "";
        child.stderr!.on("data", (d) => (err += d));
        const again = new FakeKube();
        try {
            await pollUntil(async () => events().find((e) => e.reason === "RolloutStuck"), {
                timeoutMs: 30_000,
                intervalMs: 100,
                describe: () => `no RolloutStuck Event on the first cluster: ${err}`,
            });
            await kube.stop();
            for (const o of fieldReport().items) again.put(o, "setup");
            const url = await again.start();
            fs.writeFileSync(`${kubeconfigFile}.tmp`, again.kubeconfig(url));
            fs.renameSync(`${kubeconfigFile}.tmp`, kubeconfigFile);
            await pollUntil(async () => (/changed: reading the cluster it names now/.test(err) ? true : undefined), {
                timeoutMs: 30_000,
                intervalMs: 100,
                describe: () => `the doctor never read the file again: ${err}`,
            });
            unblock(again);
            await pollUntil(async () => again.list("Event", "argocd").find((e) => e.reason === "RolloutResumed"), {
                timeoutMs: 30_000,
                intervalMs: 100,
                describe: () => `no RolloutResumed Event on the cluster started again: ${err}`,
            });
        } finally {
            child.kill("SIGTERM");
            await new Promise((resolve) => child.once("close", resolve));
            await kube.stop(); // the first cluster, stopped already unless the test failed before
            kube = again; // afterEach stops it
        }
    });

    it("a change of what a diagnosis turns on calls for a round; a new reconciledAt or a resource's detail does not", () => {
        const changes = new RolloutChanges();
        const app = kube.get("Application", "argocd", "mandant-b");
        assert.strictEqual(changes.changed(app!, false), true, "first seen");
        assert.strictEqual(changes.changed({ ...app!, status: { ...app!.status, reconciledAt: new Date().toISOString() } }, false), false);
        assert.strictEqual(changes.changed({ ...app!, status: { ...app!.status, resources: [] } }, false), false);
        const op = app!.status!.operationState;
        assert.strictEqual(
            changes.changed(
                { ...app!, status: { ...app!.status, operationState: { ...op!, retryCount: (op!.retryCount ?? 0) + 1 } } },
                false,
            ),
            true,
            "a new attempt",
        );
        const set = kube.get("ApplicationSet", "argocd", "tenants");
        assert.strictEqual(changes.changed(set!, false), true, "first seen");
        const moved = structuredClone(set);
        moved!.status!.applicationStatus![0].status = moved!.status!.applicationStatus![0].status === "Healthy" ? "Pending" : "Healthy";
        assert.strictEqual(changes.changed(moved!, false), true, "a rollout entry moved");
        assert.strictEqual(changes.changed(moved!, true), true, "deleted");
    });

    it("given hook Pods with no termination message (the default policy), then live mode reads the error from the failed Pod's log (pods/log)", async () => {
        for (const p of kube.list("Pod", "mandant-b")) {
            p.status!.containerStatuses![0].state!.terminated!.message = "";
            kube.put(p, "setup");
            kube.podLogs.set(
                `mandant-b/${p.metadata.name}`,
                "In ConfigurationManager.php line 387:\n\n  config/system/settings.php is not writable.\n",
            );
        }
        const dump = await readLive(cluster);
        assert.ok(Object.keys(dump.logs ?? {}).length >= 1, "it read the failed Pods' logs");
        const r = await runMain("doctor", ["--kubeconfig", kubeconfigFile, "--json"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.strictEqual(JSON.parse(r.stdout).applicationSets[0].blocking[0].hook.log, "config/system/settings.php is not writable.");
    });

    // given mandant-c raced ahead and its own hook failed too, then live mode reads its Job and its Pod's log as well,
    // and names both with their Jobs' reasons
    it("two failing tenants are both read and named", async () => {
        for (const o of raced().items) kube.put(o, "setup");
        kube.put(hookPod("mandant-c", "site-setup", "c1", "", 57), "setup");
        kube.podLogs.set("mandant-c/site-setup-c1", TYPO3_ERROR);
        const r = await runMain("doctor", ["--kubeconfig", kubeconfigFile, "--json"]);
        assert.strictEqual(r.code, 1, r.out);
        const findings = JSON.parse(r.stdout).applicationSets[0].findings;
        assert.deepStrictEqual(
            findings.map((f: any) => `${f.kind} ${f.application} ${f.evidence.at(-1).object} ${f.evidence.at(-1).value}`),
            [
                "SyncFailed mandant-b Job mandant-b/site-setup BackoffLimitExceeded",
                "SyncFailed mandant-c Job mandant-c/site-setup BackoffLimitExceeded",
            ],
        );
        assert.match(findings[1].message, /failed \(BackoffLimitExceeded: [^)]*\): "config\/system\/settings\.php is not writable"/);
    });

    // given 25 Applications whose own sync failed at other steps, then a round lists Jobs and Pods in the blocking
    // namespace and 20 of theirs, no more
    it("a round reads at most 20 other namespaces", async () => {
        const c = raced().items.find((o: any) => o.kind === "Application" && o.metadata.name === "mandant-c");
        for (let i = 0; i < 25; i++) {
            const name = `failed-${String(i).padStart(2, "0")}`;
            const { uid: _uid, resourceVersion: _rv, ...metadata } = c.metadata;
            kube.put(
                { ...c, metadata: { ...metadata, name }, spec: { ...c.spec, destination: { ...c.spec.destination, namespace: name } } },
                "setup",
            );
        }
        const before = kube.requests.length;
        await readLive(cluster);
        const listed = new Set(
            kube.requests
                .slice(before)
                .filter((r) => r.method === "GET" && /\/(jobs|pods)$/.test(r.path))
                .map((r) => /\/namespaces\/([^/]+)\//.exec(r.path)?.[1]),
        );
        assert.strictEqual(listed.size, 1 + MAX_FAILED_NAMESPACES, [...listed].join(", "));
        assert.ok(listed.has("mandant-b"), "the blocking Application's namespace first");
    });

    it("an unreachable cluster is one clear line and exit 1", async () => {
        // a server where nothing listens: port 1 on loopback (not the stopped server's port, which another
        // worker's server may have taken by the time the doctor connects)
        const unreachable = path.join(path.dirname(kubeconfigFile), "unreachable-kubeconfig");
        fs.writeFileSync(unreachable, kube.kubeconfig("http://127.0.0.1:1"));
        const r = runCli("doctor", ["--kubeconfig", unreachable]);
        assert.strictEqual(r.code, 1);
        assert.match(r.stderr, /^gitops-lab doctor: cannot read the cluster: .*(ECONNREFUSED|connect)/);
        assert.ok(!/\n\s+at /.test(r.stderr));
    });
});

describe("rollout doctor: the command on a saved dump", function () {
    this.timeout(60_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doctor-dump-"));
    const file = (name: string, content: unknown) => {
        const p = path.join(dir, name);
        fs.writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
        return p;
    };

    it("--from FILE --json prints the diagnosis and exits 1 when stuck", async () => {
        const r = await runMain("doctor", ["--from", file("report.json", fieldReport()), "--json"]);
        assert.strictEqual(r.code, 1, r.out);
        const j = JSON.parse(r.stdout);
        assert.strictEqual(j.applicationSets[0].state, "stuck");
        assert.strictEqual(j.applicationSets[0].blocking[0].hook.log, "config/system/settings.php is not writable");
    });

    it("exits 0 when nothing is stuck (--appset picks one ApplicationSet)", async () => {
        const l = fieldReport();
        l.items.push({
            apiVersion: "argoproj.io/v1alpha1",
            kind: "ApplicationSet",
            metadata: { name: "quiet", namespace: "argocd", uid: "q" },
            spec: { generators: [], template: { metadata: {}, spec: { project: "default", destination: {} } } },
        });
        const r = await runMain("doctor", ["--from", file("two.json", l), "--appset", "quiet"]);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.stdout, /^quiet: no rollout strategy \(all Applications sync on their own\); nothing is failing\.$/m);
    });

    it("a malformed or missing dump is one clear line and exit 1", async () => {
        const cases = [
            [["--from", file("bad.json", "{ not json")], /is not JSON .*kubectl get applicationsets\.argoproj\.io/],
            [["--from", file("notlist.json", { kind: "Pod" })], /the dump is not a Kubernetes List/],
            // PowerShell's "> file" writes a byte-order mark
            [["--from", file("bom.json", "\ufeff{}")], /bom\.json is not JSON \(it starts with a byte-order mark \(U\+FEFF/],
            [
                ["--from", path.join(dir, "missing.json")],
                /cannot read .*missing\.json \(no such file\): give the file of a dump; make it with kubectl get /,
            ],
        ] as [string[], RegExp][];
        const results = await runFamily(
            "doctor",
            cases.map(([args]) => args),
        );
        for (const [i, [args, msg]] of cases.entries()) {
            const r = results[i];
            assert.strictEqual(r.code, 1, `${args.join(" ")}: ${r.out}`);
            assert.match(r.stderr, msg);
            assert.strictEqual(r.stderr.trim().split("\n").length, 1, "one line");
        }
    });

    it("given a dump with no items (another context's, or an empty namespace's), then it is a failure in one line (exit 1), never \"nothing stuck\"", async () => {
        const empty = file("empty.json", { apiVersion: "v1", kind: "List", items: [] });
        const r = await runMain("doctor", ["--from", empty]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stderr,
            /^gitops-lab doctor: \S+empty\.json holds no ApplicationSets and no Applications \(a dump of another context or namespace\?\); make it with kubectl get /,
        );
        assert.strictEqual(r.stderr.trim().split("\n").length, 1, "one line");
    });

    it('--appset naming an ApplicationSet that does not exist is a failure (exit 1), never "nothing stuck"', async () => {
        const r = await runMain("doctor", ["--from", file("report2.json", fieldReport()), "--appset", "nope"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stderr, /^gitops-lab doctor: no ApplicationSet named "nope" \(found: argocd\/tenants\)\n$/);
        // an Application's name: its ApplicationSet is named
        const app = await runMain("doctor", ["--from", file("report2b.json", fieldReport()), "--appset", "mandant-b"]);
        assert.strictEqual(app.code, 1, app.out);
        assert.match(app.stderr, /^gitops-lab doctor: "mandant-b" is an Application of ApplicationSet argocd\/tenants: --appset tenants/);
    });

    it("--appset takes NAMESPACE/NAME too, as stall.json and the findings write it", async () => {
        const byName = await runMain("doctor", ["--from", file("report3.json", fieldReport()), "--appset", "tenants", "--json"]);
        const byRef = await runMain("doctor", ["--from", file("report3.json", fieldReport()), "--appset", "argocd/tenants", "--json"]);
        assert.strictEqual(byRef.code, byName.code, byRef.out);
        assert.deepStrictEqual(JSON.parse(byRef.stdout), JSON.parse(byName.stdout));
        assert.deepStrictEqual(
            JSON.parse(byRef.stdout).applicationSets.map((a: any) => `${a.namespace}/${a.name}`),
            ["argocd/tenants"],
        );
    });

    it("--from - reads the dump from standard input, as kubectl get ... | doctor --from - gives it", () => {
        const dumpFile = file("report4.json", fieldReport());
        const piped = spawnSync(process.execPath, [BIN, "doctor", "--from", "-"], {
            input: fs.readFileSync(dumpFile, "utf8"),
            encoding: "utf8",
            timeout: 60_000,
        });
        const read = runCli("doctor", ["--from", dumpFile]);
        assert.strictEqual(piped.status, read.code, piped.stderr);
        assert.ok(read.stdout.length > 0);
        assert.strictEqual(piped.stdout, read.stdout.split(dumpFile).join("-"));
    });

    it("--from - with nothing piped in says standard input was empty", () => {
        const piped = spawnSync(process.execPath, [BIN, "doctor", "--from", "-"], { input: "", encoding: "utf8", timeout: 60_000 });
        assert.strictEqual(piped.status, 1, piped.stderr);
        assert.match(
            piped.stderr,
            /^gitops-lab doctor: standard input was empty \(did the kubectl before the pipe fail\?\); make it with kubectl get /,
        );
    });

    it("bad usage exits 2 with one line: a missing value, an unknown option", async () => {
        const cases = [
            [["--interval"], /--interval/],
            [["--watch", "--interval", "x"], /--interval takes a number of seconds >= 0\.05, got "x"/],
            [["--bogus"], /Unknown option '--bogus'.*--help/],
        ] as [string[], RegExp][];
        const results = await runFamily(
            "doctor",
            cases.map(([args]) => args),
        );
        for (const [i, [args, msg]] of cases.entries()) {
            const r = results[i];
            assert.strictEqual(r.code, 2, `${args.join(" ")}: ${r.out}`);
            assert.match(r.stderr, msg);
            assert.strictEqual(r.stderr.trim().split("\n").length, 1, "one line");
        }
    });

    // its series are grouped without the reason
    // the shipped PrometheusRule's stuck alert names the ApplicationSet, step and application, and keeps its series
    // when the reason flips; the skip has its own
    it("the PrometheusRule's alerts and their labels", () => {
        // the timing itself (within 2 minutes of the hook Job's failure) is proven by promtool in the real tier: test/real/alertRules.real.ts
        const rule = parse(fs.readFileSync(path.join(__dirname, "..", "lab", "doctor", "prometheusrule.yaml"), "utf8"));
        assert.strictEqual(rule.apiVersion, "monitoring.coreos.com/v1");
        assert.strictEqual(rule.kind, "PrometheusRule");
        const [stuck, skipped] = rule.spec.groups[0].rules;
        assert.deepStrictEqual(
            [stuck.alert, stuck.for, skipped.alert, skipped.for],
            ["RollingSyncRolloutStuck", undefined, "RollingSyncApplicationSkipped", "5m"],
        );
        assert.strictEqual(stuck.expr, "max by (namespace, appset, step, application) (gitops_lab_rollout_stuck) == 1");
        assert.match(skipped.expr, /\(gitops_lab_rollout_skipped\) == 1$/);
        for (const a of [stuck, skipped])
            for (const label of ["appset", "step", "application"])
                assert.ok(a.annotations.summary.includes(`$labels.${label}`), `${a.alert}: ${label}`);
        assert.ok(!JSON.stringify(rule).includes("$labels.reason"), "no annotation names a label the alert does not have");
    });
});

describe("doctor --watch when rounds fail", () => {
    it("a failure is said once, again when it changes, and the round that works again", () => {
        const said: string[] = [];
        const t = roundTrouble((l) => said.push(`warn ${l}`), 2);
        for (let i = 0; i < 100; i++) t.failed(new Error("cannot read the cluster: nothing answers"));
        t.failed(new Error("cannot read the cluster: 401"));
        t.ok();
        t.ok();
        assert.deepStrictEqual(said, [
            "warn cannot read the cluster: nothing answers (trying again every 2 s; said again only if it changes)",
            "warn cannot read the cluster: 401 (trying again every 2 s; said again only if it changes)",
            "warn a round works again",
        ]);
    });
});
