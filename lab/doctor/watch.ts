/**
 * The alert the field report wished for: re-diagnose as soon as a rollout's or an Application's
 * state changes (and at least every interval), post one Kubernetes Event on the ApplicationSet when
 * its rollout becomes stuck (Warning RolloutStuck, the human line) and one when it moves again
 * (Normal RolloutResumed), and serve the diagnosis as Prometheus metrics.
 */
import { clipBytes } from "./errorLine";
import * as http from "http";
import * as os from "os";
import { Clock } from "../ports/clock";
import { ClusterPort, KindCache } from "../ports/cluster";
import type { AppProject, Application, ApplicationSet, KubeEvent } from "../argo/types";
import { jobFailed } from "./hooks";
import { FAILED_PHASES, HOOK_ANNOTATION } from "../argo/application";
import { APPSET_METRICS, progressiveSyncCounts, type ProgressiveSyncCount } from "../argo/appsetMetrics";
import { writtenBy36 } from "../argo/rollingSync";
import { diagnose, DiagnoseOptions, Diagnosis, Dump } from "./diagnose";
import { RolloutMetrics } from "./metrics";
import { rfc3339 } from "../kit/text";

export const EVENT_SOURCE = "gitops-lab-rollout-doctor";

/** How many namespaces of Applications whose own sync failed, beyond the blocking ones, a round reads Jobs and Pods in. */
export const MAX_FAILED_NAMESPACES = 20;

/**
 * The four kinds the doctor reads, from the live cluster. Jobs and Pods only where a cause can be:
 * the destination namespaces of the Applications a first diagnosis (from the ApplicationSets and
 * Applications alone) finds blocking — for a RollingSync rollout the current step's Applications
 * that are not Healthy, not every Application behind it — and of up to MAX_FAILED_NAMESPACES more
 * whose own sync failed at another step, so a round reads a few namespaces, not the whole cluster.
 */
export async function readLive(cluster: ClusterPort): Promise<Dump> {
    const [applicationSets, applications] = await Promise.all([cluster.listApplicationSets(), cluster.listApplications()]);
    return readCauses(cluster, applicationSets, applications);
}

/**
 * What of an ApplicationSet or an Application a diagnosis turns on: its rollout's entries and
 * conditions; an Application's sync and health status, its operation and the operation's phase and
 * attempt. A change of anything else (reconciledAt every few minutes, resources' details, managed
 * fields) calls for no new round.
 */
export function rolloutSignature(obj: Application | ApplicationSet): string {
    if (obj?.kind === "ApplicationSet") {
        const st = (obj as ApplicationSet).status ?? {};
        return JSON.stringify([
            obj.metadata?.generation,
            obj.metadata?.deletionTimestamp,
            (st.applicationStatus ?? []).map((e) => [e.application, e.status, e.step, e.targetRevisions]),
            (st.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message]),
        ]);
    }
    const app = obj as Application;
    const st = app?.status ?? {};
    const op = st.operationState;
    return JSON.stringify([
        app?.metadata?.deletionTimestamp,
        !!app?.operation,
        st.sync?.status,
        st.sync?.revision,
        st.health?.status,
        op?.phase,
        op?.retryCount,
        op?.startedAt,
    ]);
}

/**
 * Says which objects a watch brought changed what a diagnosis turns on (rolloutSignature), by
 * each object's uid: `changed(obj, deleted)` is true for a new object, a deleted one, and one whose
 * signature moved.
 */
export class RolloutChanges {
    private readonly seen = new Map<string, string>();
    changed(obj: Application | ApplicationSet, deleted: boolean): boolean {
        const key = obj?.metadata?.uid ?? `${obj?.kind}/${obj?.metadata?.namespace}/${obj?.metadata?.name}`;
        if (deleted) {
            this.seen.delete(key);
            return true;
        }
        const sig = rolloutSignature(obj);
        if (this.seen.get(key) === sig) return false;
        this.seen.set(key, sig);
        return true;
    }
}

/**
 * For --watch: ApplicationSets and Applications from watches (informers: listed once, then followed),
 * so a round lists only the Jobs and Pods of the Applications readCauses names; while a watch is broken, a
 * round lists that kind instead. `onChange` says when the watches brought a change a diagnosis turns on.
 */
export class LiveReader {
    private caches?: { sets: KindCache<ApplicationSet>; apps: KindCache<Application> };
    private readonly listeners = new Set<() => void>();
    private readonly changes = new RolloutChanges();
    constructor(private readonly cluster: ClusterPort) {}

    async start(): Promise<void> {
        const [sets, apps] = await Promise.all([this.cluster.cacheArgo("applicationsets"), this.cluster.cacheArgo("applications")]);
        this.caches = { sets, apps };
        for (const [kind, cache] of [
            ["ApplicationSet", sets],
            ["Application", apps],
        ] as const)
            cache.onChange((obj, deleted) => {
                if (this.changes.changed({ kind, ...obj }, deleted)) this.listeners.forEach((l) => l());
            });
    }

    /** Calls `listener` when a watched object changed what a diagnosis turns on; returns what unsubscribes it. */
    onChange(listener: () => void): () => void {
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
    }

    async read(): Promise<Dump> {
        if (!this.caches) await this.start();
        const { sets, apps } = this.caches!;
        const applicationSets = sets.healthy() ? sets.list() : await this.cluster.listApplicationSets();
        const applications = apps.healthy() ? apps.list() : await this.cluster.listApplications();
        return readCauses(this.cluster, applicationSets, applications);
    }

    async stop(): Promise<void> {
        await Promise.all([this.caches?.sets.stop(), this.caches?.apps.stop()]);
    }
}

async function readCauses(cluster: ClusterPort, applicationSets: ApplicationSet[], applications: Application[]): Promise<Dump> {
    const first = diagnose(
        { applicationSets, applications, jobs: [], pods: [], jobNamespaces: [] },
        { now: new Date(), stuckAfterSeconds: Number.POSITIVE_INFINITY },
    );
    const blocking = new Set(first.flatMap((d) => d.blocking.map((b) => `${d.namespace}/${b.application}`)));
    // an Application without a RollingSync ApplicationSet is its own rollout: a failing one is blocking too.
    // And, at any step, those whose own sync failed (Failed, Error, or retried after failures: one that raced
    // ahead of its step): their hook Jobs and Pods' logs are their findings' evidence. At most
    // MAX_FAILED_NAMESPACES of those, so a fleet with many failed syncs still costs a round a few reads;
    // past them a finding's evidence is what the Application's sync result says of its hook.
    const failedOwnSync = (a: Application) => {
        const op = a.status?.operationState;
        // (and those a hook holds: its Pod may not have started, which only the Pod shows)
        return (
            FAILED_PHASES.includes(op?.phase ?? "") ||
            (op?.phase === "Running" && (Number(op?.retryCount ?? 0) > 0 || /waiting for completion of hook/.test(op?.message ?? "")))
        );
    };
    const destination = (a: Application): string | undefined => a.spec?.destination?.namespace;
    const blockingNamespaces = applications.filter((a) => blocking.has(`${a.metadata?.namespace}/${a.metadata?.name}`)).map(destination);
    const failedNamespaces = [...new Set(applications.filter(failedOwnSync).map(destination).filter(Boolean))]
        .filter((ns) => !blockingNamespaces.includes(ns))
        .sort()
        .slice(0, MAX_FAILED_NAMESPACES);
    const namespaces = [...new Set([...blockingNamespaces, ...failedNamespaces].filter(Boolean))] as string[];
    const jobs = (await Promise.all(namespaces.map((ns) => cluster.listJobs(ns)))).flat();
    const pods = (await Promise.all(namespaces.map((ns) => cluster.listPods(ns)))).flat();
    // the failed hook Pods' logs, where their own error text is (the default terminationMessagePolicy writes none)
    const failedHooks = new Set(
        jobs
            .filter((j) => j.metadata?.annotations?.[HOOK_ANNOTATION] && (jobFailed(j) || Number(j.status?.failed ?? 0) > 0))
            .map((j) => `${j.metadata.namespace}/${j.metadata.name}`),
    );
    const logs: Record<string, string> = {};
    for (const p of pods) {
        const job = p.metadata?.labels?.["job-name"] ?? p.metadata?.labels?.["batch.kubernetes.io/job-name"];
        if (!job || !failedHooks.has(`${p.metadata.namespace}/${job}`) || p.status?.phase !== "Failed") continue;
        logs[`${p.metadata.namespace}/${p.metadata.name}`] = await cluster
            .readPodLog(p.metadata.namespace ?? "", p.metadata.name, { tailLines: 20, limitBytes: 4096 })
            .catch(() => "");
    }
    // the AppProjects of the blocking Applications, for their sync windows; a role without them reads on without
    const projectNamespaces = [
        ...new Set(
            applications.filter((a) => blocking.has(`${a.metadata?.namespace}/${a.metadata?.name}`)).map((a) => a.metadata?.namespace),
        ),
    ] as string[];
    const appProjects = (
        await Promise.all(projectNamespaces.map((ns) => cluster.listAppProjects(ns).catch((): AppProject[] => [])))
    ).flat();
    // Argo CD 3.6's own count of each step's Applications, where an ApplicationSet was written by 3.6
    const progressiveSync = applicationSets.some(writtenBy36) ? await readProgressiveSync(cluster) : undefined;
    const jobNamespaces = namespaces; // the Jobs of these alone: a hook elsewhere is not judged gone
    return { applicationSets, applications, jobs, pods, logs, appProjects, jobNamespaces, ...(progressiveSync ? { progressiveSync } : {}) };
}

/** How long a round waits for the ApplicationSet controller's metrics: they are evidence, never what a round waits on. */
const METRICS_TIMEOUT_MS = 3_000;

/**
 * The controller's `argocd_appset_progressive_sync_app_status` through the API server's service
 * proxy; undefined where it does not answer in time, a role may not read services/proxy, or the
 * series is not there (3.5): the diagnosis reads on from the objects.
 */
async function readProgressiveSync(cluster: ClusterPort): Promise<ProgressiveSyncCount[] | undefined> {
    if (!cluster.getServiceProxy) return undefined;
    try {
        const counts = progressiveSyncCounts(
            await cluster.getServiceProxy(APPSET_METRICS.namespace, APPSET_METRICS.service, APPSET_METRICS.path, METRICS_TIMEOUT_MS),
        );
        return counts.length ? counts : undefined;
    } catch {
        return undefined;
    }
}

export function rolloutEvent(
    appset: { name: string; namespace: string; uid?: string },
    type: "Warning" | "Normal",
    reason: string,
    message: string,
    now: Date,
): KubeEvent {
    const ts = rfc3339(now);
    return {
        apiVersion: "v1",
        kind: "Event",
        metadata: { generateName: `${appset.name}.`, namespace: appset.namespace },
        involvedObject: {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "ApplicationSet",
            name: appset.name,
            namespace: appset.namespace,
            ...(appset.uid ? { uid: appset.uid } : {}),
        },
        type,
        reason,
        message,
        source: { component: EVENT_SOURCE, host: os.hostname() },
        reportingComponent: EVENT_SOURCE,
        reportingInstance: os.hostname(),
        firstTimestamp: ts,
        lastTimestamp: ts,
        count: 1,
    };
}

export class RolloutWatcher {
    /** Each ApplicationSet's rollout as last said: stuck (at its step), or not. */
    private readonly stuck = new Map<string, boolean>();
    private readonly stuckAt = new Map<string, number | null>();
    /** The Applications each ApplicationSet's rollout passed over, as last seen (an Event when that set grows). */
    private readonly skipped = new Map<string, Set<string>>();
    /** The latest diagnosis. */
    last: Diagnosis[] = [];
    /** What the metrics endpoint serves: the latest diagnosis as Prometheus series. */
    readonly metrics = new RolloutMetrics();

    constructor(
        private readonly read: () => Promise<Dump>,
        private readonly events: ClusterPort | null,
        private readonly opts: Omit<DiagnoseOptions, "now">,
        private readonly log: (line: string) => void = () => {},
    ) {}

    /** One round: diagnose, and post an Event for every rollout that became stuck or moved again. */
    async tick(now = new Date()): Promise<Diagnosis[]> {
        const dump = await this.read();
        const ds = diagnose(dump, { ...this.opts, now });
        for (const d of ds) {
            const key = `${d.namespace}/${d.name}`;
            const was = this.stuck.get(key) ?? false;
            // still at the step it was stuck at, progressing only because Argo CD retries (a new hook Job runs, and fails
            // again): not moved, so no RolloutResumed (and no second RolloutStuck after it); it moves on to another step,
            // or completes
            const is = d.state === "stuck" || (was && d.state === "progressing" && d.step === this.stuckAt.get(key));
            const uid = dump.applicationSets.find((a) => a.metadata.name === d.name && a.metadata.namespace === d.namespace)?.metadata?.uid;
            // the Event first, then the line: a doctor whose output's reader is gone (| head) ends at its next line, and the
            // Event it posts is what stays
            if (is && !was) {
                await this.events?.createEvent(
                    d.namespace,
                    rolloutEvent({ name: d.name, namespace: d.namespace, uid }, "Warning", "RolloutStuck", d.summary, now),
                );
                this.log(`RolloutStuck ${key}: ${d.summary}`);
            } else if (!is && was) {
                await this.events?.createEvent(
                    d.namespace,
                    rolloutEvent({ name: d.name, namespace: d.namespace, uid }, "Normal", "RolloutResumed", d.summary, now),
                );
                this.log(`RolloutResumed ${key}: ${d.summary}`);
            }
            this.stuck.set(key, is);
            if (is && !was) this.stuckAt.set(key, d.step);
            const before = this.skipped.get(key) ?? new Set<string>();
            const fresh = d.skipped.filter((s) => !before.has(s.application));
            if (fresh.length) {
                const message = fresh
                    .map((s) => `${s.application} (step ${s.step}) was skipped: it runs ${s.runs}, not ${s.shouldRun}; ${s.remedy}`)
                    .join("; ");
                this.log(`RolloutSkipped ${key}: ${message}`);
                await this.events?.createEvent(
                    d.namespace,
                    rolloutEvent({ name: d.name, namespace: d.namespace, uid }, "Warning", "RolloutSkipped", clipBytes(message), now),
                );
            }
            this.skipped.set(key, new Set(d.skipped.map((s) => s.application)));
        }
        this.last = ds;
        this.metrics.set(ds);
        return ds;
    }
}

export interface RoundOptions {
    /** The longest time between the starts of two rounds. */
    intervalMs: number;
    /** The shortest time between the starts of two rounds when changes call for them. */
    minGapMs: number;
    clock: Clock;
    /** True when no further round should start (asked at least every POLL_MS). */
    stopped: () => boolean;
    /** Subscribes to the changes that call for a round at once; returns what unsubscribes. */
    changes?: (listener: () => void) => () => void;
}

/** The shortest time between two rounds that changes call for: a burst of changes (a sync's many status writes) is one round. */
export const MIN_ROUND_GAP_MS = 1_000;

/** How often a wait between rounds looks whether a change came or the loop was stopped. */
const POLL_MS = 200;

/**
 * The share of its time the doctor may spend on rounds that changes call for: a round that took t
 * waits (ROUND_SHARE - 1) * t more before the next change's round, so a cluster whose Applications
 * change all the time (thousands of them, rounds of a second) costs a fifth of a core, not a whole one.
 */
const ROUND_SHARE = 5;

/**
 * Runs `round` at once, then again when a change calls for it (not sooner than minGapMs, nor than
 * ROUND_SHARE times the round's own time, after the last round began) or when intervalMs has passed,
 * until stopped. A change during a round brings the next one. A failing round is `onError`'s to
 * report; the loop goes on.
 */
export async function watchRounds(round: () => Promise<void>, o: RoundOptions, onError: (e: unknown) => void = () => {}): Promise<void> {
    let changed = false;
    const off = o.changes?.(() => (changed = true));
    try {
        while (!o.stopped()) {
            const started = o.clock.now();
            changed = false;
            await round().catch(onError);
            const gap = Math.max(o.minGapMs, ROUND_SHARE * (o.clock.now() - started));
            for (;;) {
                const now = o.clock.now();
                const next = changed ? Math.min(started + gap, started + o.intervalMs) : started + o.intervalMs;
                if (o.stopped() || now >= next) break;
                await o.clock.sleep(Math.min(POLL_MS, next - now));
            }
        }
    } finally {
        off?.();
    }
}

/** Serves GET /metrics with the watcher's latest diagnosis. */
export function serveMetrics(watcher: RolloutWatcher, port: number, host = "0.0.0.0"): Promise<http.Server> {
    const server = http.createServer((req, res) => {
        if (req.url?.split("?")[0] !== "/metrics") {
            res.writeHead(404, { "Content-Type": "text/plain" });
            res.end("try /metrics\n");
            return;
        }
        watcher.metrics.text().then(
            (text) => {
                res.writeHead(200, { "Content-Type": watcher.metrics.contentType });
                res.end(text);
            },
            (e) => {
                res.writeHead(500, { "Content-Type": "text/plain" });
                res.end(`${e?.message ?? e}\n`);
            },
        );
    });
    return new Promise((resolve, reject) => {
        server.once("error", (e: NodeJS.ErrnoException) =>
            reject(
                e?.code === "EADDRINUSE"
                    ? new Error(`port ${port} is in use by another process: choose another --metrics-port (or stop that process)`)
                    : e?.code === "EACCES"
                      ? new Error(`port ${port} needs privileges this process lacks: choose a port above 1023 for --metrics-port`)
                      : e,
            ),
        );
        server.listen(port, host, () => resolve(server));
    });
}
