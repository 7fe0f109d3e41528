/**
 * gitops-lab bench --doctor: the rollout doctor at scale against the simulated Kubernetes API. A
 * synthetic cluster (by default 10,000 Applications in 50 RollingSync ApplicationSets, 100,000
 * Pods; a few rollouts stuck on a failed hook, the rest complete) is served on loopback; the doctor
 * runs in its own process (so its memory is its own), reads it live round after round and reports
 * each round's time and its peak memory. Then `doctor --from` on a dump of 20,000 Applications, as a
 * whole process. Not a test: it prints figures for the README.
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { doctorBundle } from "../components/rolloutDoctor";
import { FakeKube } from "../sim/fakeApi";
import type { Application, ApplicationSet, Job, Pod } from "../lab/argo/types";
import { IN_CLUSTER_SERVER } from "../lab/argo/application";

export interface DoctorScale {
    apps: number;
    appsets: number;
    pods: number;
    /** Rollouts stuck on a failed hook (their namespaces are the ones the doctor reads Jobs and Pods in). */
    stuck: number;
}

export const DEFAULT_SCALE: DoctorScale = { apps: 10_000, appsets: 50, pods: 100_000, stuck: 20 };

const TS = "2026-11-30T12:00:00Z";

/** One synthetic rollout: an ApplicationSet with one step per Application, its Applications, and (when stuck) a failed hook at step 2. */
export function syntheticObjects(scale: DoctorScale): { appsets: ApplicationSet[]; apps: Application[]; jobs: Job[]; pods: Pod[] } {
    const perSet = Math.max(1, Math.floor(scale.apps / scale.appsets));
    const podsPerApp = Math.max(0, Math.floor(scale.pods / scale.apps));
    const out = { appsets: [] as ApplicationSet[], apps: [] as Application[], jobs: [] as Job[], pods: [] as Pod[] };
    for (let s = 0; s < scale.appsets; s++) {
        const set = `rollout-${s}`;
        const stuck = s < scale.stuck;
        const names = Array.from({ length: perSet }, (_, i) => `${set}-t${i}`);
        const statuses = names.map((n, i) => ({
            application: n,
            status: stuck ? (i === 0 ? "Healthy" : i === 1 ? "Progressing" : "Waiting") : "Healthy",
            step: String(i + 1),
            message: "",
            targetRevisions: ["a".repeat(40)],
            lastTransitionTime: TS,
        }));
        out.appsets.push({
            apiVersion: "argoproj.io/v1alpha1",
            kind: "ApplicationSet",
            metadata: { name: set, namespace: "argocd", uid: `uid-${set}` },
            spec: {
                strategy: {
                    type: "RollingSync",
                    rollingSync: { steps: names.map((n) => ({ matchExpressions: [{ key: "tenant", operator: "In", values: [n] }] })) },
                },
                template: { metadata: {}, spec: {} },
                generators: [],
            },
            status: {
                applicationStatus: statuses,
                conditions: [
                    stuck
                        ? {
                              type: "RolloutProgressing",
                              status: "True",
                              message: "ApplicationSet is performing rollout of step 2",
                              reason: "ApplicationSetModified",
                              lastTransitionTime: TS,
                          }
                        : {
                              type: "RolloutProgressing",
                              status: "False",
                              message: "ApplicationSet Rollout has completed",
                              reason: "ApplicationSetRolloutComplete",
                              lastTransitionTime: TS,
                          },
                ],
            },
        });
        names.forEach((n, i) => {
            const blocked = stuck && i === 1;
            const waiting = stuck && i > 1;
            out.apps.push({
                apiVersion: "argoproj.io/v1alpha1",
                kind: "Application",
                metadata: {
                    name: n,
                    namespace: "argocd",
                    labels: { tenant: n },
                    ownerReferences: [
                        { apiVersion: "argoproj.io/v1alpha1", kind: "ApplicationSet", name: set, uid: `uid-${set}`, controller: true },
                    ],
                },
                spec: {
                    destination: { namespace: n, server: IN_CLUSTER_SERVER },
                    source: { repoURL: "git://example/x.git", path: "p", targetRevision: "main" },
                    syncPolicy: { automated: { enabled: false } },
                },
                status: {
                    sync: { status: blocked || waiting ? "OutOfSync" : "Synced", revision: "a".repeat(40) },
                    health: { status: "Healthy" },
                    ...(blocked
                        ? {
                              operationState: {
                                  phase: "Running",
                                  retryCount: 2,
                                  message: "one or more synchronization tasks completed unsuccessfully. Retrying attempt #2 at 12:01PM.",
                                  startedAt: TS,
                                  finishedAt: TS,
                                  operation: { retry: { limit: 5 }, sync: {} },
                              },
                          }
                        : {}),
                },
            });
            if (blocked) {
                out.jobs.push({
                    apiVersion: "batch/v1",
                    kind: "Job",
                    metadata: { name: "setup", namespace: n, annotations: { "argocd.argoproj.io/hook": "PreSync" }, creationTimestamp: TS },
                    spec: {},
                    status: {
                        failed: 3,
                        conditions: [
                            {
                                type: "Failed",
                                status: "True",
                                reason: "BackoffLimitExceeded",
                                message: "Job has reached the specified backoff limit",
                            },
                        ],
                    },
                });
            }
            for (let p = 0; p < podsPerApp; p++) {
                const hook = blocked && p < 3;
                out.pods.push({
                    apiVersion: "v1",
                    kind: "Pod",
                    metadata: {
                        name: hook ? `setup-${p}` : `site-${p}`,
                        namespace: n,
                        labels: hook ? { "job-name": "setup" } : { app: "site" },
                        creationTimestamp: TS,
                    },
                    spec: { containers: [{ name: "c", image: "busybox" }] },
                    status: {
                        phase: hook ? "Failed" : "Running",
                        containerStatuses: [
                            { name: "c", state: hook ? { terminated: { exitCode: 1, reason: "Error" } } : { running: { startedAt: TS } } },
                        ],
                    },
                });
            }
        });
    }
    return out;
}

/** The doctor's own process: `rounds` live reads and diagnoses, timed, then its peak memory. */
const CHILD = `
const { KubeCluster } = require(process.env.LAB_DIR + "/lab/ports/cluster");
const { readLive, LiveReader } = require(process.env.LAB_DIR + "/lab/doctor/watch");
const { diagnose } = require(process.env.LAB_DIR + "/lab/doctor/diagnose");
(async () => {
    const cluster = new KubeCluster(require("fs").readFileSync(process.env.KC, "utf8"), { callTimeoutMs: 120000 });
    const rounds = [];
    let stuck = 0;
    // --watch: the watches' first list is its own figure; rounds then read from them
    const watch = process.env.MODE === "watch" ? new LiveReader(cluster) : null;
    let startMs = 0;
    if (watch) { const t = process.hrtime.bigint(); await watch.start(); startMs = Number(process.hrtime.bigint() - t) / 1e6; }
    for (let i = 0; i < Number(process.env.ROUNDS); i++) {
        const t0 = process.hrtime.bigint();
        const d = diagnose(watch ? await watch.read() : await readLive(cluster), { now: new Date(), stuckAfterSeconds: 600 });
        rounds.push(Number(process.hrtime.bigint() - t0) / 1e6);
        stuck = d.filter((x) => x.state === "stuck").length;
    }
    if (watch) await watch.stop();
    console.log(JSON.stringify({ rounds, stuck, startMs, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
})().catch((e) => { console.error(e.message); process.exit(1); });
`;

function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
    const t0 = Date.now();
    return new Promise((resolve) => {
        const child = spawn(process.execPath, args, { env: { ...process.env, ...env } });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("exit", (code) => resolve({ code, stdout, stderr, ms: Date.now() - t0 }));
    });
}

export interface DoctorBenchResult {
    scale: DoctorScale;
    live: { rounds_s: number[]; max_round_s: number; max_rss_mb: number; stuck: number };
    watch: { start_s: number; rounds_s: number[]; max_round_s: number; max_rss_mb: number; stuck: number };
    from: { applications: number; seconds: number; max_rss_mb: number };
}

export async function benchDoctor(scale: DoctorScale, rounds: number, log: (l: string) => void): Promise<DoctorBenchResult> {
    const projectDir = path.resolve(__dirname, "..");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-doctor-"));
    const kube = new FakeKube();
    try {
        const objs = syntheticObjects(scale);
        log(
            `synthetic cluster: ${objs.appsets.length} ApplicationSets, ${objs.apps.length} Applications, ${objs.pods.length} Pods, ${objs.jobs.length} failed hook Jobs`,
        );
        for (const o of [...objs.appsets, ...objs.apps, ...objs.jobs, ...objs.pods]) kube.put(o, "bench");
        const kc = path.join(dir, "kubeconfig");
        fs.writeFileSync(kc, kube.kubeconfig(await kube.start()));
        const child = async (mode: string) => {
            const r = await runNode(["-r", path.join(projectDir, "loader", "register.js"), "-e", CHILD], {
                LAB_DIR: projectDir,
                KC: kc,
                ROUNDS: String(rounds),
                MODE: mode,
            });
            if (r.code !== 0) throw new Error(`the doctor's process failed: ${r.stderr.trim()}`);
            return JSON.parse(r.stdout.trim().split("\n").pop()!);
        };
        const l = await child("lists");
        log(
            `live, lists every round: ${rounds} rounds, ${l.rounds.map((r: number) => (r / 1000).toFixed(2)).join(", ")} s; peak memory ${Math.round(l.maxRssMb)} MB; ${l.stuck} rollouts stuck`,
        );
        const w = await child("watch");
        log(
            `live, --watch (informers): first list and watch ${(w.startMs / 1000).toFixed(2)} s, then ${rounds} rounds, ${w.rounds.map((r: number) => (r / 1000).toFixed(2)).join(", ")} s; peak memory ${Math.round(w.maxRssMb)} MB; ${w.stuck} rollouts stuck`,
        );
        await kube.stop();

        // --from: a dump of twice as many Applications, through the command itself
        const big = syntheticObjects({ ...scale, apps: scale.apps * 2, appsets: scale.appsets * 2, pods: 0 });
        const dump = path.join(dir, "bundle.json");
        fs.writeFileSync(
            path.join(dir, "maxrss.js"),
            `process.on("exit", () => process.stderr.write("BENCH " + JSON.stringify({ maxRssMb: process.resourceUsage().maxRSS / 1024 }) + "\\n"));`,
        );
        fs.writeFileSync(dump, JSON.stringify({ apiVersion: "v1", kind: "List", items: [...big.appsets, ...big.apps, ...big.jobs] }));
        // the doctor as it runs in the cluster: the one-file bundle with plain node (the figure includes Node's start)
        const bundleFile = path.join(dir, "doctor.js");
        fs.writeFileSync(bundleFile, doctorBundle().js);
        const from = await runNode(["--require", path.join(dir, "maxrss.js"), bundleFile, "--from", dump, "--json"], {});
        const mem = JSON.parse(/BENCH (.*)/.exec(from.stderr)?.[1] ?? "{}");
        if (from.code !== 1) throw new Error(`doctor --from exited ${from.code} (expected 1: stuck rollouts): ${from.stderr.trim()}`);
        log(
            `--from: ${big.apps.length} Applications in ${(from.ms / 1000).toFixed(2)} s (the bundle's whole process, Node's start included); peak memory ${Math.round(mem.maxRssMb)} MB`,
        );
        return {
            scale,
            live: {
                rounds_s: l.rounds.map((r: number) => Math.round(r) / 1000),
                max_round_s: Math.round(Math.max(...l.rounds)) / 1000,
                max_rss_mb: Math.round(l.maxRssMb),
                stuck: l.stuck,
            },
            watch: {
                start_s: Math.round(w.startMs) / 1000,
                rounds_s: w.rounds.map((r: number) => Math.round(r) / 1000),
                max_round_s: Math.round(Math.max(...w.rounds)) / 1000,
                max_rss_mb: Math.round(w.maxRssMb),
                stuck: w.stuck,
            },
            from: { applications: big.apps.length, seconds: from.ms / 1000, max_rss_mb: Math.round(mem.maxRssMb) },
        };
    } finally {
        await kube.stop().catch(() => undefined);
        fs.rmSync(dir, { recursive: true, force: true });
    }
}
