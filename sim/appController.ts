/**
 * The simulation's application controller (Argo CD v3.5.1's `controller/appcontroller.go` and
 * `controller/state.go`, as docs/argocd-v3.5.1.md describes them), on the simulation's clock:
 * - comparison: triggered by the refresh annotation (removed when the comparison is persisted), a
 *   spec change, a watch event on a managed object, or the poll (every interval plus jitter);
 *   targetRevision resolved through the repo-server's revision cache (bypassed when forced),
 *   manifests rendered; a render failure is a ComparisonError (sync Unknown, the literal revision),
 *   except that a comparison that is not forced ignores repo errors for the grace period;
 * - auto-sync sets `operation`; the operation runs later (phase Running), then Succeeded with
 *   syncResult and a history entry, or fails and is retried with backoff up to retry.limit, then
 *   Failed with a SyncError and no further auto-sync for that SHA; auto-sync is skipped while an
 *   operation exists; a comparison follows every finished operation;
 * - selfHeal: a partial sync of the drifted resources, backed off from the last operation's
 *   finishedAt, the first repair after a sync to a new revision without delay;
 * - deletion: the resources finalizer is honoured only while the controller runs.
 */
import { REFRESH_ANNOTATION } from "../lab/argo/application";
import { RESOURCES_FINALIZER } from "./appsetController";
import { SimClock, TimerHandle } from "./clock";
import { Change, FakeKube } from "./fakeApi";
import { ArgoTimings } from "./profiles";
import { RenderError, RepoServer } from "./repoServer";

export const ACTOR = "application-controller";
export const TRACKING_ANNOTATION = "argocd.argoproj.io/tracking-id";
const RETRY_LIMIT = 5;

const trackingId = (app: string, obj: any, ns: string) => `${app}:${obj.apiVersion?.includes("/") ? obj.apiVersion.split("/")[0] : ""}/${obj.kind}:${ns}/${obj.metadata.name}`;
const keyOf = (o: { kind: string; metadata: { namespace?: string; name: string } }) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;

type Trigger = { hard: boolean; forced: boolean };

export class AppController {
    private unsubscribe?: () => void;
    private readonly timers = new Map<string, { h: TimerHandle; trigger: Trigger }>();
    private readonly others = new Set<TimerHandle>();
    private readonly polls = new Map<string, TimerHandle>();
    private readonly chains = new Map<string, Promise<void>>();
    private readonly selfHealAttempts = new Map<string, number>();
    /** When an unforced comparison first met a repo error (the grace period runs from it). */
    private readonly errorSince = new Map<string, number>();
    /** Sync attempts to fail on purpose, per Application (a test's fault switch). */
    private readonly failing = new Map<string, { left: number; message: string }>();
    private running = false;
    /** The backoff chosen for every selfHeal repair, in order (what the controller decided, not a measurement). */
    readonly selfHealDelays: number[] = [];
    /** Errors thrown inside reconciles (a test double must not hide its own bugs). */
    readonly errors: Error[] = [];

    constructor(
        private readonly kube: FakeKube,
        private readonly repo: RepoServer,
        private readonly opts: ArgoTimings,
        private readonly clock: SimClock,
    ) {}

    start() {
        this.running = true;
        this.unsubscribe = this.kube.onChange((c) => this.onChange(c));
        // a controller that (re)starts looks at every Application once, finishes deleting those being
        // deleted, and resumes an operation in flight
        for (const app of this.kube.list("Application")) {
            if (app.metadata.deletionTimestamp) this.later(() => this.finalize(app), this.opts.reconcileDelayMs);
            else {
                this.schedule(app.metadata.namespace, app.metadata.name, this.opts.reconcileDelayMs, { hard: false, forced: false });
                if (app.operation) this.later(() => this.runOperation(app.metadata.namespace, app.metadata.name), this.opts.operationDelayMs);
            }
        }
    }

    async stop() {
        this.running = false;
        this.unsubscribe?.();
        for (const p of this.timers.values()) this.clock.clearTimeout(p.h);
        this.timers.clear();
        for (const h of this.others) this.clock.clearTimeout(h);
        this.others.clear();
        for (const h of this.polls.values()) this.clock.clearTimeout(h);
        this.polls.clear();
        await Promise.all([...this.chains.values()]);
    }

    /** Resolves once nothing is scheduled or running (e.g. the reconciles a (re)start queues), polls aside. */
    async idle(): Promise<void> {
        while (this.timers.size > 0 || this.others.size > 0 || this.chains.size > 0) {
            if (this.timers.size > 0 || this.others.size > 0) await this.clock.sleep(10);
            const running = [...this.chains.entries()];
            await Promise.all(running.map(([, p]) => p));
            for (const [k, p] of running) if (this.chains.get(k) === p) this.chains.delete(k);
        }
    }

    /** The next `times` sync attempts of this Application fail with `message` (as if the API refused the apply). */
    failSyncs(app: string, times: number, message = `one or more objects failed to apply, reason: configmaps "shop-config" is forbidden: the simulated API refused the apply`) {
        this.failing.set(app, { left: times, message });
    }

    private later(f: () => void | Promise<void>, ms: number) {
        if (!this.running) return;
        const h = this.clock.setTimeout(() => {
            this.others.delete(h);
            if (!this.running) return;
            const p = this.clock.track(Promise.resolve().then(f)).catch((e) => {
                this.errors.push(e);
            });
            this.chains.set(`other-${h.id}`, p.then(() => void this.chains.delete(`other-${h.id}`)));
        }, ms);
        this.others.add(h);
    }

    private onChange(c: Change) {
        if (c.actor === ACTOR) return;
        if (c.kind === "Application") {
            if (c.type === "DELETED") return;
            if (c.obj.metadata.deletionTimestamp) {
                this.later(() => this.finalize(c.obj), this.opts.reconcileDelayMs);
                return;
            }
            const ns = c.obj.metadata.namespace;
            const name = c.obj.metadata.name;
            const refresh = c.obj.metadata.annotations?.[REFRESH_ANNOTATION];
            const specChanged = c.type === "ADDED" || JSON.stringify(c.old?.spec) !== JSON.stringify(c.obj.spec);
            if (refresh || specChanged) this.schedule(ns, name, this.opts.reconcileDelayMs, { hard: refresh === "hard", forced: true });
            return;
        }
        // a watch event on an object some Application manages: compare at once (selfHeal decides in the comparison)
        const id = (c.old ?? c.obj)?.metadata?.annotations?.[TRACKING_ANNOTATION];
        if (!id || c.actor === "garbage-collector" || c.actor === "namespace-controller") return;
        const appName = String(id).split(":")[0];
        const app = this.kube.list("Application").find((a) => a.metadata.name === appName);
        if (!app) return;
        this.schedule(app.metadata.namespace, appName, this.opts.reconcileDelayMs, { hard: false, forced: false });
    }

    /** Queues one comparison of an Application after `delayMs` (a later request joins a pending one). */
    schedule(ns: string, name: string, delayMs: number, trigger: Trigger) {
        if (!this.running) return;
        const key = `${ns}/${name}`;
        const pending = this.timers.get(key);
        if (pending) {
            this.clock.clearTimeout(pending.h);
            trigger = { hard: trigger.hard || pending.trigger.hard, forced: trigger.forced || pending.trigger.forced };
        }
        const h = this.clock.setTimeout(() => {
            this.timers.delete(key);
            const prev = this.chains.get(key) ?? Promise.resolve();
            const next = this.clock.track(prev.then(() => this.reconcile(ns, name, trigger))).catch((e) => {
                this.errors.push(e);
            });
            this.chains.set(key, next);
            next.then(() => {
                if (this.chains.get(key) === next) this.chains.delete(key);
            });
        }, delayMs);
        this.timers.set(key, { h, trigger });
    }

    /** The next poll of this Application: the interval plus jitter after its last comparison (not work in flight: idle() ignores it). */
    private schedulePoll(ns: string, name: string) {
        if (!this.running) return;
        const key = `${ns}/${name}`;
        this.clock.clearTimeout(this.polls.get(key));
        const h = this.clock.setTimeout(() => {
            this.polls.delete(key);
            if (this.running) this.schedule(ns, name, 0, { hard: false, forced: false });
        }, this.opts.pollIntervalMs + Math.floor(this.clock.random() * this.opts.pollJitterMs));
        this.polls.set(key, h);
    }

    private iso(ms = this.clock.now()) {
        return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
    }

    /** Compare, write the status (and `operation` when auto-sync decides to sync), remove a handled refresh. */
    async reconcile(ns: string, name: string, trigger: Trigger): Promise<void> {
        const app = this.kube.get("Application", ns, name);
        if (!app || app.metadata.deletionTimestamp) return;
        const key = `${ns}/${name}`;
        const handledRefresh = app.metadata.annotations?.[REFRESH_ANNOTATION];
        const src = app.spec.source;
        const dest = app.spec.destination;
        const sourceChanged = JSON.stringify(app.status?.sync?.comparedTo?.source ?? null) !== JSON.stringify(src);
        const forced = trigger.forced || !!handledRefresh || sourceChanged;
        // the slow part (git, kustomize) first; the decision then on the Application as it is now
        let rendered: { sha: string; desired: any[] } | undefined;
        let renderError: RenderError | undefined;
        try {
            const sha = await this.repo.resolve(src.repoURL, src.targetRevision ?? "HEAD", { noCache: forced });
            const desired = (await this.repo.render(src.repoURL, sha, src.path, { hard: trigger.hard || handledRefresh === "hard" })).map((o) => ({
                ...o,
                metadata: { ...o.metadata, namespace: o.metadata.namespace ?? dest.namespace },
            }));
            rendered = { sha, desired };
        } catch (e: any) {
            if (!(e instanceof RenderError)) throw e;
            renderError = e;
        }
        if (!this.running) return; // stopped while comparing: write nothing
        const latest = this.kube.get("Application", ns, name);
        if (!latest || latest.metadata.deletionTimestamp) return;
        if (JSON.stringify(latest.spec.source) !== JSON.stringify(src)) return; // the source moved meanwhile: its own comparison is queued
        const now = this.iso();
        let status: any = { ...(latest.status ?? {}) };
        let operation: any = undefined;
        if (rendered) {
            this.errorSince.delete(key);
            ({ status, operation } = this.compare(latest, rendered.sha, rendered.desired, status, now));
        } else {
            if (!forced) {
                // controller/state.go: an unforced comparison ignores repo errors for the grace period, writing nothing
                const since = this.errorSince.get(key) ?? this.clock.now();
                this.errorSince.set(key, since);
                if (this.clock.now() - since < this.opts.repoErrorGraceMs) {
                    this.schedulePoll(ns, name);
                    return;
                }
            }
            status.conditions = [...(status.conditions ?? []).filter((c: any) => c.type !== "ComparisonError"), { type: "ComparisonError", message: renderError!.message, lastTransitionTime: now }];
            status.sync = { ...(status.sync ?? {}), status: "Unknown", revision: src.targetRevision };
        }
        status.reconciledAt = now;
        if (operation) {
            // controller/appcontroller.go: auto-sync sets the operation (clearing the last one's state) in its
            // own patch, before the comparison's status is persisted
            const first = { ...latest, operation, status: { ...(latest.status ?? {}) } };
            delete first.status.operationState;
            this.kube.put(first, ACTOR);
        }
        latest.status = status;
        if (operation) latest.operation = operation;
        if (handledRefresh && latest.metadata.annotations?.[REFRESH_ANNOTATION] === handledRefresh) {
            delete latest.metadata.annotations[REFRESH_ANNOTATION];
        }
        this.kube.put(latest, ACTOR);
        if (operation) this.later(() => this.runOperation(ns, name), this.opts.operationDelayMs);
        this.schedulePoll(ns, name);
    }

    private liveOf(obj: any) {
        return this.kube.get(obj.kind, obj.metadata.namespace, obj.metadata.name);
    }

    private inSync(desired: any): boolean {
        const live = this.liveOf(desired);
        if (!live) return false;
        for (const field of ["data", "spec"]) {
            if (desired[field] !== undefined && JSON.stringify(live[field]) !== JSON.stringify(desired[field])) return false;
        }
        return true;
    }

    /** The comparison's status, and the operation auto-sync starts (if it does). */
    private compare(app: any, sha: string, desired: any[], status: any, now: string): { status: any; operation?: any } {
        const name = app.metadata.name;
        const key = `${app.metadata.namespace}/${name}`;
        const managed: any[] = status.resources ?? [];
        const desiredKeys = new Set(desired.map(keyOf));
        const prunable = managed.filter((r) => !desiredKeys.has(`${r.kind}/${r.namespace}/${r.name}`));
        const drifted = desired.filter((d) => !this.inSync(d));
        const outOfSync = drifted.length > 0 || prunable.length > 0;
        status.sync = { status: outOfSync ? "OutOfSync" : "Synced", revision: sha, comparedTo: { source: app.spec.source, destination: app.spec.destination } };
        status.health = { status: desired.every((d) => this.liveOf(d)) ? "Healthy" : "Missing", lastTransitionTime: status.health?.lastTransitionTime ?? now };
        status.conditions = (status.conditions ?? []).filter((c: any) => c.type !== "ComparisonError");
        status.resources = desired.map((d) => ({ version: "v1", kind: d.kind, namespace: d.metadata.namespace, name: d.metadata.name, status: this.inSync(d) ? "Synced" : "OutOfSync", health: { status: "Healthy" } }));
        status.sourceType = "Kustomize";

        const auto = app.spec.syncPolicy?.automated;
        const op = status.operationState;
        const cleanup = () => {
            if (status.conditions.length === 0) delete status.conditions;
        };
        if (!auto || auto.enabled === false || !outOfSync) return cleanup(), { status };
        // "Skipping auto-sync: another operation is in progress"
        if (app.operation || op?.phase === "Running") return cleanup(), { status };
        const lastRev = op?.syncResult?.revision ?? op?.operation?.sync?.revision;
        // a sync to this SHA already failed after its retries: no further auto-sync for it
        if (op && ["Failed", "Error"].includes(op.phase) && op.operation?.sync?.revision === sha) return cleanup(), { status };
        const base = { revision: sha, prune: !!auto.prune, syncOptions: app.spec.syncPolicy?.syncOptions, source: app.spec.source };
        if (lastRev !== sha || op?.phase !== "Succeeded") {
            this.selfHealAttempts.set(key, 0);
            cleanup();
            // util/argo SetAppOperation: a new operation clears the last one's state
            delete status.operationState;
            return { status, operation: { sync: base, initiatedBy: { automated: true }, retry: { limit: RETRY_LIMIT } } };
        }
        if (!auto.selfHeal) return cleanup(), { status };
        // selfHeal: backed off from the last operation's finishedAt (appcontroller selfHealRemainingBackoff)
        const n = this.selfHealAttempts.get(key) ?? 0;
        const backoff = n === 0 ? 0 : Math.min(this.opts.selfHealBackoffCapMs, this.opts.selfHealBackoffMs * this.opts.selfHealBackoffFactor ** (n - 1));
        const remaining = backoff - (this.clock.now() - Date.parse(op.finishedAt ?? now));
        if (remaining > 0) {
            this.schedule(app.metadata.namespace, name, remaining, { hard: false, forced: false });
            return cleanup(), { status };
        }
        this.selfHealDelays.push(backoff);
        this.selfHealAttempts.set(key, n + 1);
        cleanup();
        delete status.operationState; // SetAppOperation, as above
        const resources = drifted.map((d) => ({ group: d.apiVersion?.includes("/") ? d.apiVersion.split("/")[0] : "", kind: d.kind, namespace: d.metadata.namespace, name: d.metadata.name }));
        return { status, operation: { sync: { ...base, resources, selfHealAttemptsCount: n + 1 }, initiatedBy: { automated: true }, retry: { limit: RETRY_LIMIT } } };
    }

    /**
     * The operation queue: the operation starts (phase Running) and applies at once; it stays
     * Running for its duration (health assessment, sync waves) and then finishes.
     */
    private async runOperation(ns: string, name: string) {
        const first = this.kube.get("Application", ns, name);
        if (!first?.operation || first.metadata.deletionTimestamp) return;
        const src = first.spec.source;
        // a controller restarted with an operation in flight has not rendered it yet
        if (!this.repo.rendered(src.repoURL, first.operation.sync.revision, src.path).length) {
            await this.repo.render(src.repoURL, first.operation.sync.revision, src.path, { hard: false }).catch(() => undefined);
        }
        if (!this.running) return;
        const app = this.kube.get("Application", ns, name);
        if (!app?.operation || app.metadata.deletionTimestamp) return;
        const prev = app.status?.operationState;
        const retrying = prev?.phase === "Running" && prev.finishedAt;
        const fault = this.failing.get(name);
        const fails = !!fault && fault.left > 0;
        if (fails) fault!.left--;
        const resources = fails ? undefined : this.apply(app, app.operation);
        const latest = this.kube.get("Application", ns, name) ?? app;
        latest.status = {
            ...(latest.status ?? {}),
            operationState: {
                operation: latest.operation,
                phase: "Running",
                message: retrying ? prev.message : "one or more tasks are running",
                startedAt: retrying ? prev.startedAt : this.iso(),
                ...(retrying ? { retryCount: prev.retryCount, finishedAt: prev.finishedAt } : {}),
            },
        };
        this.kube.put(latest, ACTOR);
        const finish = () => this.finishOperation(ns, name, resources, fails ? fault!.message : undefined);
        if (!resources) return this.later(finish, this.opts.operationDurationMs);
        // the controller watches the objects it applied: a comparison runs (and shows Synced) while the operation still does
        this.later(async () => {
            await this.reconcile(ns, name, { hard: false, forced: false });
            this.later(finish, Math.max(0, this.opts.operationDurationMs - this.opts.reconcileDelayMs));
        }, this.opts.reconcileDelayMs);
    }

    private finishOperation(ns: string, name: string, resources: any[] | undefined, failure: string | undefined) {
        const app = this.kube.get("Application", ns, name);
        if (!app?.operation || app.metadata.deletionTimestamp) return;
        const op = app.operation;
        const state = app.status.operationState;
        const now = this.iso();
        if (failure !== undefined) {
            const fault = { message: failure };
            const retries = (state.retryCount ?? 0) + 1;
            const limit = op.retry?.limit ?? 0;
            if (retries <= limit) {
                // gitops-engine: a retry resets syncResult; the message says when the next attempt runs
                const wait = Math.min(this.opts.retryBackoffCapMs, this.opts.retryBackoffMs * this.opts.retryBackoffFactor ** (retries - 1));
                const at = new Date(this.clock.now() + wait).toISOString().slice(11, 19);
                app.status.operationState = { operation: op, phase: "Running", message: `${fault.message}. Retrying attempt #${retries} at ${at}.`, startedAt: state.startedAt, finishedAt: now, retryCount: retries };
                this.kube.put(app, ACTOR);
                this.later(() => this.runOperation(ns, name), wait);
                return;
            }
            app.status.operationState = { operation: op, phase: "Failed", message: `${fault.message} (retried ${limit} times).`, startedAt: state.startedAt, finishedAt: now, retryCount: limit };
            app.status.conditions = [...(app.status.conditions ?? []).filter((c: any) => c.type !== "SyncError"), { type: "SyncError", message: `Failed last sync attempt to [${op.sync.revision}]: ${fault.message}`, lastTransitionTime: now }];
            delete app.operation;
            this.kube.put(app, ACTOR);
            return;
        }
        const history = [...(app.status.history ?? [])];
        history.push({ revision: op.sync.revision, deployedAt: now, deployStartedAt: state.startedAt, id: history.length, source: op.sync.source, initiatedBy: op.initiatedBy });
        app.status.operationState = {
            operation: op,
            phase: "Succeeded",
            message: "successfully synced (all tasks run)",
            startedAt: state.startedAt,
            finishedAt: now,
            syncResult: { revision: op.sync.revision, source: op.sync.source, resources },
        };
        app.status.history = history.slice(-10);
        app.status.conditions = (app.status.conditions ?? []).filter((c: any) => c.type !== "SyncError");
        if (!app.status.conditions.length) delete app.status.conditions;
        delete app.operation;
        this.kube.put(app, ACTOR);
        // a finished automated operation is followed by a comparison (CompareWithLatest)
        this.schedule(ns, name, this.opts.reconcileDelayMs, { hard: false, forced: true });
    }

    /** Applies the rendered objects (only those the operation names, for a partial sync); prunes when asked. */
    private apply(app: any, op: any): any[] {
        const name = app.metadata.name;
        const dest = app.spec.destination;
        const createNs = (app.spec.syncPolicy?.syncOptions ?? []).includes("CreateNamespace=true");
        const desired: any[] = this.repo.rendered(app.spec.source.repoURL, op.sync.revision, app.spec.source.path).map((o) => ({ ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? dest.namespace } }));
        const only = op.sync.resources ? new Set(op.sync.resources.map((r: any) => `${r.kind}/${r.namespace}/${r.name}`)) : null;
        const results: any[] = [];
        for (const d of desired) {
            if (only && !only.has(keyOf(d))) continue;
            const ns = d.metadata.namespace;
            if (!this.kube.get("Namespace", undefined, ns)) {
                if (!createNs) {
                    results.push({ kind: d.kind, namespace: ns, name: d.metadata.name, status: "SyncFailed", message: `namespaces "${ns}" not found`, syncPhase: "Sync" });
                    continue;
                }
                this.kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }, ACTOR);
            }
            const live = this.liveOf(d);
            const annotations = { ...(live?.metadata.annotations ?? {}), ...(d.metadata.annotations ?? {}), [TRACKING_ANNOTATION]: trackingId(name, d, ns) };
            // an apply: the object is patched in place, so its uid stays
            const next = { ...(live ?? {}), ...d, metadata: { ...(live?.metadata ?? {}), ...d.metadata, annotations } };
            this.kube.put(next, ACTOR);
            results.push({ group: "", version: "v1", kind: d.kind, namespace: ns, name: d.metadata.name, status: "Synced", message: `${d.kind.toLowerCase()}/${d.metadata.name} ${live ? "configured" : "created"}`, syncPhase: "Sync" });
        }
        if (op.sync.prune && !only && desired.length) {
            const keys = new Set(desired.map(keyOf));
            for (const r of app.status?.resources ?? []) {
                if (keys.has(`${r.kind}/${r.namespace}/${r.name}`)) continue;
                this.kube.remove(r.kind, r.namespace, r.name, ACTOR);
                results.push({ group: "", version: "v1", kind: r.kind, namespace: r.namespace, name: r.name, status: "Pruned", message: "pruned", syncPhase: "Sync" });
            }
        }
        return results;
    }

    /**
     * An Application being deleted with the resources finalizer: delete the resources it manages,
     * then remove the finalizer, so the API server lets it go (controller/appcontroller.go
     * finalizeApplicationDeletion). Only a running controller does this.
     */
    private finalize(app: any) {
        if (!(app.metadata.finalizers ?? []).includes(RESOURCES_FINALIZER)) return;
        for (const r of app.status?.resources ?? []) this.kube.remove(r.kind, r.namespace, r.name, ACTOR);
        const latest = this.kube.get("Application", app.metadata.namespace, app.metadata.name);
        if (!latest) return;
        latest.metadata.finalizers = (latest.metadata.finalizers ?? []).filter((f: string) => f !== RESOURCES_FINALIZER);
        this.kube.put(latest, ACTOR);
    }
}
