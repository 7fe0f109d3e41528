/**
 * The Kubernetes controllers the tenants lab needs, on the simulation's clock:
 * - the Job controller (`pkg/controller/job`): one Pod at a time (parallelism 1, completions 1); a
 *   failed Pod is replaced after the Pod failure backoff (10 s, doubling, capped at 6 min) until
 *   `backoffLimit` failures, then the Job gets `FailureTarget` and `Failed` (reason
 *   `BackoffLimitExceeded`, message `Job has reached the specified backoff limit`, as upstream's
 *   job-failed.yaml); a succeeded Pod makes it `Complete`;
 * - the kubelet for those Pods: a `PodRunner` runs the container and returns its exit code and
 *   log; the log is served at `pods/{name}/log`; the default `terminationMessagePolicy: File`
 *   writes no termination message (nothing writes /dev/termination-log);
 * - the Deployment controller: a Deployment becomes Available (all replicas updated and ready) a
 *   while after each change of its spec.
 */
import { randomBytes } from "crypto";
import { SimClock, TimerHandle } from "./clock";
import { Change, FakeKube } from "./fakeApi";
import type { SimJob, SimPod, SimWorkload } from "./objects";

export const ACTOR = "kube-controller-manager";

export interface PodRun {
    exitCode: number;
    /** stdout and stderr, interleaved as the container wrote them. */
    log: string;
}

/**
 * Runs a Pod's (single) container to completion. `volumeProblem`, where the runner has one, is asked first: a
 * volume that cannot be set up (its ConfigMap missing) keeps the Pod Pending, as the kubelet does, not failed.
 */
export type PodRunner = ((pod: SimPod, kube: FakeKube) => Promise<PodRun>) & {
    volumeProblem?: (pod: SimPod, kube: FakeKube) => Promise<string | undefined>;
};

/**
 * The kubelet's retry of a volume it could not set up: exponential from 500 ms, capped at 2 min 2 s
 * (`pkg/util/goroutinemap/exponentialbackoff`: initialDurationBeforeRetry, maxDurationBeforeRetry).
 */
const MOUNT_RETRY_FIRST_MS = 500;
const MOUNT_RETRY_CAP_MS = 122_000;

export interface WorkloadTimings {
    /** From a Pod's creation to its container's exit (image pull, start, run). */
    podRunMs: number;
    /** The Job controller's Pod failure backoff base (10 s upstream; doubled per failure, capped at 6 min). */
    jobBackoffMs: number;
    /** From a Deployment's spec change to it being Available. */
    rolloutMs: number;
}

export const JOB_BACKOFF_CAP_MS = 360_000;

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const cond = (type: string, reason: string | undefined, message: string | undefined, at: string) => ({
    type,
    status: "True",
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
    lastProbeTime: at,
    lastTransitionTime: at,
});

export class Workloads {
    private unsubscribe?: () => void;
    private readonly timers = new Set<TimerHandle>();
    private readonly work = new Set<Promise<void>>();
    private running = false;
    readonly errors: Error[] = [];

    constructor(
        private readonly kube: FakeKube,
        private readonly timings: WorkloadTimings,
        private readonly clock: SimClock,
        private readonly runner: PodRunner,
    ) {}

    start() {
        this.running = true;
        this.unsubscribe = this.kube.onChange((c) => this.onChange(c));
        // a restarted controller manager picks up what was in flight
        for (const j of this.kube.list("Job"))
            if (!this.finished(j) && !this.activePod(j)) this.later(() => this.startPod(j.metadata.namespace!, j.metadata.name), 0);
        for (const p of this.kube.list("Pod"))
            if (!["Succeeded", "Failed"].includes(p.status?.phase ?? ""))
                this.later(() => this.runPod(p.metadata.namespace!, p.metadata.name), 0);
        for (const d of this.kube.list("Deployment"))
            if (!this.available(d))
                this.later(() => this.rollOut(d.metadata.namespace!, d.metadata.name, d.metadata.generation!), this.timings.rolloutMs);
    }

    async stop() {
        this.running = false;
        this.unsubscribe?.();
        for (const t of this.timers) this.clock.clearTimeout(t);
        this.timers.clear();
        await Promise.all([...this.work]);
    }

    private later(f: () => void | Promise<void>, ms: number) {
        if (!this.running) return;
        const h = this.clock.setTimeout(() => {
            this.timers.delete(h);
            if (!this.running) return;
            const p: Promise<void> = this.clock
                .track(Promise.resolve().then(f))
                .catch((e) => void this.errors.push(e))
                .then(() => void this.work.delete(p));
            this.work.add(p);
        }, ms);
        this.timers.add(h);
    }

    private onChange(c: Change) {
        if (c.type === "DELETED") return;
        const { namespace, name } = c.obj.metadata;
        if (c.kind === "Job" && c.type === "ADDED") {
            // the API server's defaulting: a Job selects its Pods by its controller-uid (what `kubectl logs job/NAME` follows)
            if (!c.obj.spec?.selector) {
                const uid = c.obj.metadata.uid!; // the store sets every uid
                const j = this.kube.get("Job", namespace, name);
                if (j) {
                    j.spec!.selector = { matchLabels: { "batch.kubernetes.io/controller-uid": uid } };
                    j.spec!.template = {
                        ...j.spec!.template,
                        metadata: {
                            ...(j.spec!.template?.metadata ?? {}),
                            labels: {
                                ...(j.spec!.template?.metadata?.labels ?? {}),
                                "batch.kubernetes.io/controller-uid": uid,
                                "batch.kubernetes.io/job-name": name,
                                "controller-uid": uid,
                                "job-name": name,
                            },
                        },
                    };
                    this.kube.put(j, ACTOR);
                }
            }
            this.later(() => this.startPod(namespace!, name), 0);
        }
        if (c.kind === "Deployment" && c.obj.metadata.generation !== c.old?.metadata?.generation) {
            const gen = c.obj.metadata.generation;
            this.later(() => this.rollOut(namespace!, name, gen!), this.timings.rolloutMs);
        }
    }

    private finished(job: SimJob) {
        return (job.status?.conditions ?? []).some((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True");
    }

    private podsOf(job: SimJob): SimPod[] {
        return this.kube
            .list("Pod", job.metadata.namespace)
            .filter((p) => (p.metadata.ownerReferences ?? []).some((r) => r.uid === job.metadata.uid));
    }

    private activePod(job: SimJob) {
        return this.podsOf(job).find((p) => !["Succeeded", "Failed"].includes(p.status?.phase ?? ""));
    }

    /** The Job's next Pod, from its template. */
    private startPod(ns: string, jobName: string) {
        const job = this.kube.get("Job", ns, jobName);
        if (!job || job.metadata.deletionTimestamp || this.finished(job) || this.activePod(job)) return;
        const now = iso(this.clock.now());
        const labels = {
            ...(job.spec!.template?.metadata?.labels ?? {}),
            "controller-uid": job.metadata.uid!,
            "batch.kubernetes.io/controller-uid": job.metadata.uid!,
            "job-name": jobName,
            "batch.kubernetes.io/job-name": jobName,
        };
        const pod = {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
                name: `${jobName}-${randomBytes(3).toString("hex").slice(0, 5)}`,
                namespace: ns,
                labels,
                ownerReferences: [
                    {
                        apiVersion: "batch/v1",
                        kind: "Job",
                        name: jobName,
                        uid: job.metadata.uid,
                        controller: true,
                        blockOwnerDeletion: true,
                    },
                ],
            },
            spec: { ...job.spec!.template!.spec },
            status: { phase: "Pending", startTime: now },
        };
        const created = this.kube.put(pod, ACTOR);
        job.status = { ...(job.status ?? {}), startTime: job.status?.startTime ?? now, active: 1 };
        const updated = this.kube.put(job, ACTOR);
        this.jobEvent(updated, "Normal", "SuccessfulCreate", `Created pod: ${created.metadata.name}`);
        this.later(() => this.runPod(ns, created.metadata.name), 0);
    }

    /** The kubelet: the Pod runs, its container exits, its log is kept; then the Job controller decides. */
    private async runPod(ns: string, name: string, mountTries = 0) {
        const pod = this.kube.get("Pod", ns, name);
        if (!pod) return;
        // a volume it cannot set up (a ConfigMap not there): the Pod stays ContainerCreating, the kubelet says why in an
        // Event (FailedMount) and tries again; nothing runs, no log, the Job waits (a real kubelet, seen on the node)
        const problem = await this.runner.volumeProblem?.(pod, this.kube);
        if (problem) {
            this.waitForVolumes(pod, problem);
            this.later(() => this.runPod(ns, name, mountTries + 1), Math.min(MOUNT_RETRY_FIRST_MS * 2 ** mountTries, MOUNT_RETRY_CAP_MS));
            return;
        }
        const startedAt = iso(this.clock.now());
        const c0 = pod.spec!.containers?.[0]?.name ?? "main";
        pod.status = {
            ...pod.status,
            phase: "Running",
            containerStatuses: [
                {
                    name: c0,
                    ready: true,
                    restartCount: 0,
                    started: true,
                    image: pod.spec!.containers?.[0]?.image,
                    state: { running: { startedAt } },
                },
            ],
        };
        this.kube.put(pod, ACTOR);
        const result = await this.runner(pod, this.kube).catch((e): PodRun => ({
            exitCode: 128,
            log: `simulation: the container could not run: ${e.message}\n`,
        }));
        // the run takes podRunMs on the simulation's clock (a timer, not a sleep: a virtual clock stands still while work is in flight)
        this.later(() => this.finishPod(ns, name, c0, pod.spec!.containers?.[0]?.image, startedAt, result), this.timings.podRunMs);
    }

    private finishPod(ns: string, name: string, c0: string, image: string | undefined, startedAt: string, result: PodRun) {
        const latest = this.kube.get("Pod", ns, name);
        if (!latest) return; // deleted meanwhile (its Job was replaced)
        const finishedAt = iso(this.clock.now());
        this.kube.podLogs.set(`${ns}/${name}`, result.log);
        const ok = result.exitCode === 0;
        latest.status = {
            ...latest.status,
            phase: ok ? "Succeeded" : "Failed",
            containerStatuses: [
                {
                    name: c0,
                    ready: false,
                    restartCount: 0,
                    started: false,
                    image,
                    state: { terminated: { exitCode: result.exitCode, reason: ok ? "Completed" : "Error", startedAt, finishedAt } },
                },
            ],
        };
        this.kube.put(latest, ACTOR);
        this.jobAfterPod(latest);
    }

    private jobAfterPod(pod: SimPod) {
        const owner = (pod.metadata.ownerReferences ?? []).find((r) => r.kind === "Job");
        const job = owner && this.kube.get("Job", pod.metadata.namespace, owner.name);
        if (!job || job.metadata.uid !== owner.uid || this.finished(job)) return;
        const pods = this.podsOf(job);
        const failed = pods.filter((p) => p.status?.phase === "Failed").length;
        const succeeded = pods.filter((p) => p.status?.phase === "Succeeded").length;
        const now = iso(this.clock.now());
        const status: NonNullable<SimJob["status"]> = {
            ...(job.status ?? {}),
            failed: failed || undefined,
            succeeded: succeeded || undefined,
            active: undefined,
            ready: 0,
            terminating: 0,
        };
        const limit = job.spec!.backoffLimit ?? 6;
        if (succeeded > 0) {
            status.conditions = [
                cond("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods", now),
                cond("Complete", "CompletionsReached", "Reached expected number of succeeded pods", now),
            ];
            status.completionTime = now;
        } else if (failed > limit) {
            status.conditions = [
                cond("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit", now),
                cond("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", now),
            ];
        } else {
            // the Pod failure backoff: 10 s, 20 s, 40 s ... capped at 6 min (pkg/controller/job backoff)
            this.later(
                () => this.startPod(job.metadata.namespace!, job.metadata.name),
                Math.min(JOB_BACKOFF_CAP_MS, this.timings.jobBackoffMs * 2 ** (failed - 1)),
            );
        }
        job.status = JSON.parse(JSON.stringify(status));
        const updated = this.kube.put(job, ACTOR);
        if (succeeded > 0) this.jobEvent(updated, "Normal", "Completed", "Job completed");
        else if (failed > limit) this.jobEvent(updated, "Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit");
    }

    /** An Event on a Job, as the Job controller records them (core/v1, source job-controller). */
    /** A Pod waiting for its volumes: ContainerCreating, and one FailedMount Event counted up as the kubelet's correlator does. */
    private waitForVolumes(pod: SimPod, message: string) {
        const c0 = pod.spec!.containers?.[0];
        if (pod.status?.containerStatuses?.[0]?.state?.waiting?.reason !== "ContainerCreating") {
            pod.status = {
                ...pod.status,
                phase: "Pending",
                containerStatuses: [
                    {
                        name: c0?.name ?? "main",
                        ready: false,
                        restartCount: 0,
                        started: false,
                        image: c0?.image,
                        state: { waiting: { reason: "ContainerCreating" } },
                    },
                ],
            };
            this.kube.put(pod, ACTOR);
        }
        const now = iso(this.clock.now());
        const ns = pod.metadata.namespace!;
        const same = this.kube
            .list("Event", ns)
            .find((e) => e.involvedObject?.uid === pod.metadata.uid && e.reason === "FailedMount" && e.message === message);
        if (same) {
            this.kube.put({ ...same, count: (same.count ?? 1) + 1, lastTimestamp: now }, "kubelet");
            return;
        }
        this.kube.put(
            {
                apiVersion: "v1",
                kind: "Event",
                metadata: { name: `${pod.metadata.name}.${randomBytes(8).toString("hex")}`, namespace: ns },
                involvedObject: { apiVersion: "v1", kind: "Pod", namespace: ns, name: pod.metadata.name, uid: pod.metadata.uid },
                type: "Warning",
                reason: "FailedMount",
                message,
                source: { component: "kubelet", host: "node" },
                reportingComponent: "kubelet",
                reportingInstance: "node",
                firstTimestamp: now,
                lastTimestamp: now,
                count: 1,
            },
            "kubelet",
        );
    }

    private jobEvent(job: SimJob, type: "Normal" | "Warning", reason: string, message: string) {
        const now = iso(this.clock.now());
        this.kube.put(
            {
                apiVersion: "v1",
                kind: "Event",
                metadata: { name: `${job.metadata.name}.${randomBytes(8).toString("hex")}`, namespace: job.metadata.namespace },
                involvedObject: {
                    apiVersion: "batch/v1",
                    kind: "Job",
                    namespace: job.metadata.namespace,
                    name: job.metadata.name,
                    uid: job.metadata.uid,
                    resourceVersion: job.metadata.resourceVersion,
                },
                type,
                reason,
                message,
                source: { component: "job-controller" },
                reportingComponent: "job-controller",
                reportingInstance: "",
                firstTimestamp: now,
                lastTimestamp: now,
                count: 1,
            },
            ACTOR,
        );
    }

    private available(d: SimWorkload) {
        return (
            d.status?.observedGeneration === d.metadata.generation &&
            (d.status?.conditions ?? []).some((c) => c.type === "Available" && c.status === "True")
        );
    }

    /** The Deployment's new ReplicaSet is up: every replica updated, ready and available. */
    private rollOut(ns: string, name: string, generation: number) {
        const d = this.kube.get("Deployment", ns, name);
        if (!d || d.metadata.generation !== generation) return; // changed again: that change rolls out instead
        const replicas = d.spec!.replicas ?? 1;
        const now = iso(this.clock.now());
        d.status = {
            observedGeneration: generation,
            replicas,
            updatedReplicas: replicas,
            readyReplicas: replicas,
            availableReplicas: replicas,
            conditions: [
                {
                    type: "Available",
                    status: "True",
                    reason: "MinimumReplicasAvailable",
                    message: "Deployment has minimum availability.",
                    lastUpdateTime: now,
                    lastTransitionTime: now,
                },
                {
                    type: "Progressing",
                    status: "True",
                    reason: "NewReplicaSetAvailable",
                    message: `ReplicaSet "${name}" has successfully progressed.`,
                    lastUpdateTime: now,
                    lastTransitionTime: now,
                },
            ],
        };
        this.kube.put(d, ACTOR);
    }
}
