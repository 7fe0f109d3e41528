/**
 * The Kubernetes controllers the tenants lab needs, in the simulation (sim/workloads.ts,
 * sim/podRunner.ts): the Job controller's Pod failure backoff and BackoffLimitExceeded (as
 * upstream's job-failed.yaml shows it), the Pod's log at pods/{name}/log with no termination
 * message, and a hook script run for real as nobody over a read-only ConfigMap mount.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { KubeCluster } from "../lab/ports/cluster";
import { run } from "../lab/ports/exec";
import { RELEASES } from "../lab/tenants/layout";
import { siteImage, siteImages } from "../lab/tenants/siteImages";
import { VirtualClock } from "../sim/clock";
import { FakeKube } from "../sim/fakeApi";
import { runPodContainer, shellPodRunner } from "../sim/podRunner";
import { PodRunner, Workloads } from "../sim/workloads";
import { readFixture } from "./helpers/upstream";

const job = (name: string, backoffLimit: number) => ({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace: "t" },
    spec: {
        backoffLimit,
        template: {
            spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox:1.37.0", command: ["/bin/sh", "-c", "exit 1"] }] },
        },
    },
});

/** Runs a Workloads controller on a virtual clock until `done` holds (or the clock has nothing left to do). */
async function runUntil(
    kube: FakeKube,
    runner: PodRunner,
    done: () => boolean,
    timings = { podRunMs: 1_000, jobBackoffMs: 10_000, rolloutMs: 5_000 },
) {
    const clock = new VirtualClock(() => 0, Date.parse("2026-11-30T12:00:00Z"));
    const w = new Workloads(kube, timings, clock, runner);
    const created: { name: string; at: number }[] = [];
    kube.onChange((c) => {
        if (c.kind === "Pod" && c.type === "ADDED") created.push({ name: c.obj.metadata.name, at: clock.now() });
    });
    w.start();
    // the test waits on the clock, as the product does, so that time may move
    for (let i = 0; i < 1_000 && !done(); i++) await clock.sleep(500);
    await w.stop();
    assert.deepStrictEqual(w.errors, []);
    return { created, clock };
}

describe("simulated Kubernetes workloads (sim/workloads.ts, sim/podRunner.ts)", () => {
    // given a Job whose Pods fail, then it makes backoffLimit+1 Pods 10 s and 20 s apart (Pod failure backoff) and
    // fails with BackoffLimitExceeded
    it("a failing Job's Pods, backed off, then Failed", async () => {
        const kube = new FakeKube();
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "t" } }, "test");
        kube.put(job("setup", 2), "test");
        const failed = () => (kube.get("Job", "t", "setup")?.status?.conditions ?? []).some((c: any) => c.type === "Failed");
        const { created } = await runUntil(
            kube,
            async () => ({ exitCode: 1, log: "In ConfigurationManager.php line 387:\n  config/system/settings.php is not writable.\n" }),
            failed,
        );
        assert.strictEqual(created.length, 3);
        // each Pod runs 1 s; the next starts 10 s, then 20 s after the last one failed
        assert.deepStrictEqual([created[1].at - created[0].at, created[2].at - created[1].at], [11_000, 21_000]);
        const status = kube.get("Job", "t", "setup")!.status;
        const upstream = readFixture("job-failed.yaml")[0].status.conditions.find((c: any) => c.type === "Failed");
        const mine = status!.conditions!.find((c: any) => c.type === "Failed");
        assert.deepStrictEqual(
            { reason: mine!.reason, message: mine!.message, status: mine!.status },
            { reason: upstream.reason, message: upstream.message, status: upstream.status },
        );
        assert.strictEqual(status!.failed, 3);
        for (const p of kube.list("Pod", "t")) {
            const t = p.status!.containerStatuses![0].state!.terminated;
            assert.deepStrictEqual(
                { phase: p.status!.phase, exitCode: t!.exitCode, reason: t!.reason, message: t!.message },
                { phase: "Failed", exitCode: 1, reason: "Error", message: undefined },
            );
        }
    });

    // given a Job whose Pods fail past its backoffLimit, then the Job controller's Events: SuccessfulCreate per Pod,
    // then one Warning BackoffLimitExceeded (as kubectl describe job shows)
    it("a failing Job's Events, as kubectl describe job shows them", async () => {
        const kube = new FakeKube();
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "t" } }, "test");
        kube.put(job("setup", 1), "test");
        await runUntil(
            kube,
            async () => ({ exitCode: 1, log: "failed\n" }),
            () => (kube.get("Job", "t", "setup")?.status?.conditions ?? []).some((c: any) => c.type === "Failed"),
        );
        const events = kube
            .list("Event", "t")
            .filter((e: any) => e.involvedObject?.kind === "Job" && e.involvedObject?.name === "setup")
            .sort((a: any, b: any) => a.firstTimestamp.localeCompare(b.firstTimestamp));
        const pods = kube.list("Pod", "t").map((p: any) => p.metadata.name);
        assert.deepStrictEqual(
            events.map((e: any) => `${e.type} ${e.reason} (${e.source.component})`),
            [
                "Normal SuccessfulCreate (job-controller)",
                "Normal SuccessfulCreate (job-controller)",
                "Warning BackoffLimitExceeded (job-controller)",
            ],
        );
        assert.strictEqual(events[2].message, "Job has reached the specified backoff limit");
        assert.deepStrictEqual(
            events
                .filter((e: any) => e.reason === "SuccessfulCreate")
                .map((e: any) => e.message.replace("Created pod: ", ""))
                .sort(),
            pods.sort(),
        );
        assert.strictEqual(events[0].involvedObject.uid, kube.get("Job", "t", "setup")!.metadata.uid);
    });

    it("given a failed Pod, then its log is served at pods/{name}/log, its tail and bytes as asked (what kubectl logs and the doctor read)", async () => {
        const kube = new FakeKube();
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "t" } }, "test");
        kube.put(job("setup", 0), "test");
        await runUntil(
            kube,
            async () => ({ exitCode: 1, log: "line one\nconfig/system/settings.php is not writable.\n" }),
            () => (kube.get("Job", "t", "setup")?.status?.conditions ?? []).length > 0,
        );
        const url = await kube.start();
        try {
            const pod = kube.list("Pod", "t")[0];
            const cluster = new KubeCluster(kube.kubeconfig(url));
            // its last lines, and at most so many bytes of them, as the kubelet answers tailLines and limitBytes
            assert.strictEqual(
                await cluster.readPodLog("t", pod.metadata.name, { tailLines: 1 }),
                "config/system/settings.php is not writable.\n",
            );
            assert.strictEqual(await cluster.readPodLog("t", pod.metadata.name, { tailLines: 5, limitBytes: 4 }), "line");
            // kubectl logs --timestamps: each line after a time (the container's start: the simulation keeps none per line)
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "logs-"));
            try {
                fs.writeFileSync(path.join(dir, "kubeconfig"), kube.kubeconfig(url));
                const out = (
                    await run("kubectl", [
                        "--kubeconfig",
                        path.join(dir, "kubeconfig"),
                        "logs",
                        "-n",
                        "t",
                        pod.metadata.name,
                        "--timestamps",
                    ])
                ).stdout;
                const lines = out.split("\n").filter(Boolean);
                assert.strictEqual(lines.length, 2, out);
                for (const l of lines)
                    assert.match(l, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z (line one|config\/system\/settings\.php is not writable\.)$/);
            } finally {
                fs.rmSync(dir, { recursive: true, force: true });
            }
        } finally {
            await kube.stop();
        }
    });

    it("given a Job whose Pod succeeds, then it is Complete after one Pod", async () => {
        const kube = new FakeKube();
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "t" } }, "test");
        kube.put(job("setup", 2), "test");
        const { created } = await runUntil(
            kube,
            async () => ({ exitCode: 0, log: "done\n" }),
            () => (kube.get("Job", "t", "setup")?.status?.conditions ?? []).length > 0,
        );
        assert.strictEqual(created.length, 1);
        assert.ok(kube.get("Job", "t", "setup")!.status!.conditions!.some((c: any) => c.type === "Complete" && c.status === "True"));
    });

    // given a Job whose Pod mounts a ConfigMap that is not there, then the Pod waits ContainerCreating with a FailedMount
    // Event counted up (no log, the Job not failed), as a real kubelet keeps it; once the ConfigMap is made, it runs
    it("a Pod whose ConfigMap is missing waits, then runs", async () => {
        const kube = new FakeKube();
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "t" } }, "test");
        const j = job("setup", 2);
        (j.spec.template.spec as any).volumes = [{ name: "settings", configMap: { name: "site-settings" } }];
        (j.spec.template.spec.containers[0] as any).volumeMounts = [{ name: "settings", mountPath: "/settings" }];
        kube.put(j, "test");
        const ran: string[] = [];
        const runner: PodRunner = Object.assign(
            async (p: any) => {
                ran.push(p.metadata.name);
                return { exitCode: 0, log: "done\n" };
            },
            {
                volumeProblem: async (p: any) =>
                    kube.get("ConfigMap", p.metadata.namespace, "site-settings")
                        ? undefined
                        : 'MountVolume.SetUp failed for volume "settings" : configmap "site-settings" not found',
            },
        );
        const mounts = () => kube.list("Event", "t").filter((e: any) => e.reason === "FailedMount");
        await runUntil(kube, runner, () => (mounts()[0]?.count ?? 0) >= 5);
        const [waiting] = kube.list("Pod", "t");
        assert.deepStrictEqual(
            { phase: waiting.status?.phase, state: waiting.status?.containerStatuses?.[0]?.state },
            { phase: "Pending", state: { waiting: { reason: "ContainerCreating" } } },
        );
        const [event] = mounts();
        assert.deepStrictEqual(
            { type: event.type, message: event.message, component: event.source?.component, pod: event.involvedObject?.name },
            {
                type: "Warning",
                message: 'MountVolume.SetUp failed for volume "settings" : configmap "site-settings" not found',
                component: "kubelet",
                pod: waiting.metadata.name,
            },
        );
        assert.deepStrictEqual(ran, [], "nothing ran");
        assert.strictEqual(kube.podLogs.get(`t/${waiting.metadata.name}`), undefined, "no log");
        assert.deepStrictEqual(kube.get("Job", "t", "setup")?.status?.conditions ?? [], [], "the Job neither failed nor completed");
        // given the ConfigMap made, then the same Pod runs at the kubelet's next try and the Job completes
        kube.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "site-settings", namespace: "t" }, data: {} }, "test");
        await runUntil(kube, runner, () => (kube.get("Job", "t", "setup")?.status?.conditions ?? []).length > 0);
        assert.deepStrictEqual(ran, [waiting.metadata.name]);
        assert.ok(kube.get("Job", "t", "setup")!.status!.conditions!.some((c: any) => c.type === "Complete" && c.status === "True"));
    });

    describe("the pod runner: the hook script itself, over its release's read-only image volume", () => {
        const pod = async (settings: string) => {
            const kube = new FakeKube();
            const [image] = (await siteImages()).filter((i) => i.reference === siteImage(RELEASES.faulty));
            await kube.images.load(image);
            kube.put(
                {
                    apiVersion: "v1",
                    kind: "ConfigMap",
                    metadata: { name: "settings", namespace: "t" },
                    data: { tenant: "mandant-x", "settings.ini": settings },
                },
                "test",
            );
            const p = {
                metadata: { name: "p", namespace: "t" },
                spec: {
                    containers: [
                        {
                            name: "setup",
                            command: ["/bin/sh", "/app/setup.sh"],
                            env: [
                                { name: "SITE_CODE_DIR", value: "/app" },
                                { name: "SITE_SETTINGS_DIR", value: "/settings" },
                            ],
                            volumeMounts: [
                                { name: "code", mountPath: "/app", readOnly: true },
                                { name: "settings", mountPath: "/settings", readOnly: true },
                            ],
                        },
                    ],
                    volumes: [
                        { name: "code", image: { reference: siteImage(RELEASES.faulty), pullPolicy: "IfNotPresent" } },
                        { name: "settings", configMap: { name: "settings" } },
                    ],
                },
            };
            return { kube, p };
        };
        let dir: string;
        beforeEach(() => {
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "pods-"));
            fs.chmodSync(dir, 0o755);
        });
        afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

        it("when the tenant's settings lack the extension's keys, then writing into the code fails with the product's error, exit 1", async () => {
            const { kube, p } = await pod("site.name = x\n");
            const r = await shellPodRunner(dir)(p, kube);
            assert.strictEqual(r.exitCode, 1);
            assert.match(r.log, /In ConfigurationManager\.php line 387:\n\n {2}config\/system\/settings\.php is not writable\.\n/);
        });

        it("when the tenant's settings hold the keys, then the hook succeeds", async () => {
            const { kube, p } = await pod("site.name = x\nnews.items_per_page = 25\n");
            const r = await shellPodRunner(dir)(p, kube);
            assert.deepStrictEqual({ exitCode: r.exitCode, nothing: /nothing to install/.test(r.log) }, { exitCode: 0, nothing: true });
        });

        // the service-account token a real API server adds to every Pod (a projected volume) is not laid out, and the
        // script runs (the real plane's hook Pods have it)
        it("a Pod's service-account token volume is left out", async () => {
            const { kube, p } = await pod("site.name = x\n");
            (p.spec.volumes as any[]).push({
                name: "kube-api-access-x1",
                projected: { sources: [{ serviceAccountToken: { path: "token" } }] },
            });
            p.spec.containers[0].volumeMounts.push({
                name: "kube-api-access-x1",
                mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
                readOnly: true,
            });
            const r = await runPodContainer(
                p,
                { configMap: async (ns, name) => kube.get("ConfigMap", ns, name), image: (r) => kube.images.get(r) },
                dir,
            );
            assert.strictEqual(r.exitCode, 1);
            assert.match(r.log, /config\/system\/settings\.php is not writable\./);
        });

        it("a container writing to stdout and stderr by turns has one log in the order written, and its exit status", async () => {
            const p = {
                metadata: { name: "p", namespace: "t" },
                spec: {
                    containers: [{ name: "c", command: ["/bin/sh", "-c", "echo one; echo two >&2; echo three; echo four >&2; exit 4"] }],
                    volumes: [],
                },
            };
            const r = await runPodContainer(p, { configMap: async () => undefined }, dir);
            assert.deepStrictEqual(r, { exitCode: 4, log: "one\ntwo\nthree\nfour\n" });
        });

        const shell = (script: string) => ({
            metadata: { name: "p", namespace: "t" },
            spec: { containers: [{ name: "c", command: ["/bin/sh", "-c", script] }], volumes: [] },
        });

        it("a container reading stdin reads end-of-file (a Pod without stdin: true)", async () => {
            const r = await runPodContainer(
                shell('if read x; then echo "read: $x"; else echo "end of file"; fi'),
                { configMap: async () => undefined },
                dir,
                20_000,
            );
            assert.deepStrictEqual(r, { exitCode: 0, log: "end of file\n" });
        });

        it("a container past its deadline is killed with SIGKILL, even one that ignores SIGTERM: exit 137", async function () {
            this.timeout(20_000); // a SIGTERM alone would leave it its whole 30 s
            const r = await runPodContainer(shell("trap '' TERM; echo started; sleep 30"), { configMap: async () => undefined }, dir, 500);
            assert.strictEqual(r.exitCode, 137, r.log);
        });

        it("a ConfigMap volume that does not exist is the kubelet's volume problem, in its words", async () => {
            const { kube, p } = await pod("x");
            kube.remove("ConfigMap", "t", "settings", "test");
            assert.strictEqual(
                await shellPodRunner(dir).volumeProblem?.(p, kube),
                'MountVolume.SetUp failed for volume "settings" : configmap "settings" not found',
            );
        });
    });
});
