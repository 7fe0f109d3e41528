/**
 * The lab's hook Pods, really run on the real plane. KWOK fakes containers: its default stages make
 * every Pod Running and every Job's Pod Succeeded. For the tenants lab the hook's shell script is
 * the cause of the stall, so the Pods of the lab's hook Jobs (and only those) are run here, as a
 * kubelet would run them:
 *
 * - **KWOK's own stages, one changed** (`kwokStages`): KWOK's default node and pod stages, read from
 *   the KWOK module, with `pod-complete` not selecting the Pods of the named Jobs. KWOK still
 *   schedules, starts (`pod-ready`: Running, IPs, conditions) and deletes them (`pod-delete`).
 * - **The container's command, run** (`startHookPodRunner`): each such Pod, once Running, has its
 *   command run by `/bin/sh` as nobody over a read-only layout of its ConfigMap mounts, read from the
 *   real API (sim/podRunner.ts, the simulated kubelet's own run). Its outcome is written through the
 *   API as a kubelet writes it: phase Succeeded or Failed, the container terminated with its exit
 *   code and reason (Completed, Error), Ready False. The real Job controller counts the failure and
 *   backs off; gitops-engine reads the Job's health.
 * - **Its output, through `kubectl logs`**: written to a file in CRI log format and named by a KWOK
 *   `Logs` object for that Pod (KWOK's Logs CRD, owned by the Pod so it goes with it). The API
 *   server's `pods/log` reaches KWOK's kubelet endpoint, which serves the file.
 *
 * What stays emulated: no image is pulled (the host's /bin/sh runs the command), no Pod events
 * (Pulled, Created, Started), no container restarts (the lab's Jobs use restartPolicy Never).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse, stringify } from "yaml";
import { runPodContainer } from "../sim/podRunner";
import { moduleDir } from "./build";
import { keepWatching } from "./watch";
import { REAL_PLANE } from "./versions";

/** The label the Job controller puts on its Pods. */
const JOB_NAME_LABEL = "batch.kubernetes.io/job-name";

/**
 * KWOK's default stages (what kwokctl writes when a configuration has none: `node-initialize`,
 * `node-heartbeat-with-lease`, `pod-ready`, `pod-complete`, `pod-delete`), with `pod-complete` not
 * selecting the Pods of `jobs`, as kwokctl configuration documents.
 */
export async function kwokStages(jobs: readonly string[]): Promise<string> {
    const dir = path.join(await moduleDir(`sigs.k8s.io/kwok@${REAL_PLANE.kwok}`), "kustomize", "stage");
    const files = ["node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml", "pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml"];
    return files
        .map((f) => {
            const stage = parse(fs.readFileSync(path.join(dir, f), "utf8"));
            if (stage.metadata.name === "pod-complete" && jobs.length) {
                stage.spec.selector.matchExpressions.push({ key: `.metadata.labels["${JOB_NAME_LABEL}"]`, operator: "NotIn", values: [...jobs] });
            }
            return stringify(stage);
        })
        .join("---\n");
}

/** One line of a CRI container log (what KWOK's kubelet endpoint reads back). */
function criLog(text: string, at: Date): string {
    const ts = at.toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z");
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    return lines.map((l) => `${ts} stdout F ${l}\n`).join("");
}

export interface HookPodRunner {
    /** What each run did, in the order they finished (`namespace/pod exit N`). */
    runs: string[];
    /** Stops watching and waits for the runs in flight (each has the container's 60 s deadline). */
    stop(): Promise<void>;
}

/** The hook runner's work folders in the system's temp: `hook-pods-<PID>-…`, so a killed run's is found by its PID. */
const HOOK_WORK_PREFIX = "hook-pods-";
const HOOK_WORK = new RegExp(`^${HOOK_WORK_PREFIX}(\\d+)-`);

/** Removes the work folders of hook runners whose process is gone (a killed plane's) from `tmp`; returns their paths. */
export function reapHookPodWork(isAlive: (pid: number) => boolean, tmp = os.tmpdir()): string[] {
    const gone = fs.readdirSync(tmp).filter((n) => {
        const m = HOOK_WORK.exec(n);
        return !!m && !isAlive(Number(m[1]));
    });
    const removed: string[] = [];
    for (const n of gone) {
        try {
            fs.rmSync(path.join(tmp, n), { recursive: true, force: true });
            removed.push(path.join(tmp, n));
        } catch {
            // a folder we may not remove is left as it is: the plane starts all the same
        }
    }
    return removed;
}

/**
 * Runs the Pods of `jobs` (by the Job controller's label) once KWOK has them Running; their logs go
 * under `dir`. A run whose outcome could not be written (an API error) is tried again a second later.
 */
export async function startHookPodRunner(kubeconfig: string, jobs: readonly string[], dir: string, log: (line: string) => void = () => {}): Promise<HookPodRunner> {
    const k8s = require("@kubernetes/client-node");
    const kc = new k8s.KubeConfig();
    kc.loadFromString(kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
    const logsDir = path.join(dir, "hook-pods", "logs");
    fs.mkdirSync(logsDir, { recursive: true });
    // nobody must reach the Pods' layouts: a folder of its own in the system's temp (the plane's folder is 0700)
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `${HOOK_WORK_PREFIX}${process.pid}-`));
    fs.chmodSync(workDir, 0o755);
    const started = new Set<string>();
    const inFlight = new Set<Promise<void>>();
    const runs: string[] = [];
    let stopped = false;
    const at = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

    /** A ConfigMap volume's source; a missing one is the kubelet's "not found", any other API error is thrown (the run is tried again). */
    const configMap = (namespace: string, name: string) =>
        core.readNamespacedConfigMap({ namespace, name }).catch((e: any) => {
            if (e?.code === 404) return undefined;
            throw e;
        });

    const runPod = async (pod: any) => {
        const { namespace, name, uid } = pod.metadata;
        const container = pod.spec.containers?.[0] ?? {};
        const startedAt = new Date();
        const result = await runPodContainer(pod, configMap, workDir);
        const finishedAt = new Date();
        const logsFile = path.join(logsDir, `${namespace}_${name}_${uid}.log`);
        fs.writeFileSync(logsFile, criLog(result.log, finishedAt));
        await custom
            .createNamespacedCustomObject({
                group: "kwok.x-k8s.io",
                version: "v1alpha1",
                namespace,
                plural: "logs",
                body: {
                    apiVersion: "kwok.x-k8s.io/v1alpha1",
                    kind: "Logs",
                    metadata: { name, namespace, ownerReferences: [{ apiVersion: "v1", kind: "Pod", name, uid }] },
                    spec: { logs: [{ containers: [container.name], logsFile }] },
                },
            })
            .catch((e: any) => {
                if (e?.code !== 409) log(`hook Pod ${namespace}/${name}: its Logs object could not be created (${e?.body?.message ?? e.message}); kubectl logs will not show it`);
            });
        const ok = result.exitCode === 0;
        const notReady = { status: "False", reason: ok ? "PodCompleted" : "PodFailed", lastTransitionTime: at(finishedAt) };
        const status = {
            phase: ok ? "Succeeded" : "Failed",
            conditions: [
                ...(pod.status?.conditions ?? []).filter((c: any) => !["Ready", "ContainersReady"].includes(c.type)),
                { type: "Ready", ...notReady },
                { type: "ContainersReady", ...notReady },
            ],
            containerStatuses: [
                {
                    name: container.name,
                    image: container.image,
                    imageID: "",
                    ready: false,
                    started: false,
                    restartCount: 0,
                    state: { terminated: { exitCode: result.exitCode, reason: ok ? "Completed" : "Error", startedAt: at(startedAt), finishedAt: at(finishedAt) } },
                },
            ],
        };
        await core.patchNamespacedPodStatus({ name, namespace, body: { status } }, merge);
        runs.push(`${namespace}/${name} exit ${result.exitCode}`);
        log(`hook Pod ${namespace}/${name}: its command ran (/bin/sh as nobody) and exited ${result.exitCode}`);
    };

    const onEvent = (type: string, pod: any) => {
        if (stopped || type === "DELETED" || pod.metadata.deletionTimestamp || pod.status?.phase !== "Running" || started.has(pod.metadata.uid)) return;
        started.add(pod.metadata.uid);
        const run = runPod(pod)
            .catch((e: any) => {
                log(`hook Pod ${pod.metadata.namespace}/${pod.metadata.name}: its run could not be recorded (${e?.body?.message ?? e.message}); trying again in 1 s`);
                started.delete(pod.metadata.uid);
                setTimeout(() => onEvent("MODIFIED", pod), 1_000);
            })
            .finally(() => inFlight.delete(run));
        inFlight.add(run);
    };
    const watch = await keepWatching(kubeconfig, "/api/v1/pods", { labelSelector: `${JOB_NAME_LABEL} in (${jobs.join(",")})` }, onEvent);
    return {
        runs,
        stop: async () => {
            stopped = true;
            watch.stop();
            await Promise.allSettled([...inFlight]);
            fs.rmSync(workDir, { recursive: true, force: true });
        },
    };
}
