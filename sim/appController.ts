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
 * What it reads of the objects is beside it, as upstream's files are: the comparison (state.ts,
 * state.go's CompareAppState), the operations it runs (operations.ts: processRequestedAppOperation and
 * sync.go), their names and health (resources.ts), the hooks (hooks.ts), the revision history
 * (revisionHistory.ts).
 */
import { ARGOCD_NAMESPACE, REFRESH_ANNOTATION, TRACKING_ANNOTATION } from "../lab/argo/application";
import { RESOURCES_FINALIZER } from "./generators";
import { rfc3339, SimClock, TimerHandle } from "./clock";
import { Change, FakeKube } from "./fakeApi";
import { ArgoTimings } from "./profiles";
import type { ArgoMinor } from "./rollingSync";
import { RenderError, RepoServer } from "./repoServer";
import { groupOf } from "./resources";
import { ACTOR, Operations } from "./operations";
import { compareAppState } from "./state";
import type { Application, ApplicationStatus, Operation } from "../lab/argo/types";
import type { Manifest } from "./objects";

const RETRY_LIMIT = 5;

/**
 * hard: a hard refresh; forced: past the revision cache; recent: a watch event's comparison
 * (CompareWithRecent), which does not move `reconciledAt` (appcontroller.go writes it only on a
 * comparison at CompareWithLatest or above, or when it has none yet).
 */
export type Trigger = { hard: boolean; forced: boolean; recent?: boolean };

/** What the simulated application controller says of an Application it does not compare (several sources, or none). */
export const SINGLE_SOURCE_ONLY =
    "the simulated Argo CD compares Applications of one source (spec.source with a repoURL); this one has spec.sources or no source";

export class AppController {
    private unsubscribe?: () => void;
    private readonly timers = new Map<string, { h: TimerHandle; trigger: Trigger; due: number }>();
    private readonly others = new Set<TimerHandle>();
    private readonly polls = new Map<string, TimerHandle>();
    private readonly chains = new Map<string, Promise<void>>();
    private readonly selfHealAttempts = new Map<string, number>();
    /** When an unforced comparison first met a repo error (the grace period runs from it). */
    private readonly errorSince = new Map<string, number>();
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
        /**
         * The release's minor. 3.5 merge-patches an operation's state over the last one's (appcontroller.go
         * setOperationState), so fields a new state leaves out keep their old values; 3.6 replaces the whole
         * state (v3.6.2 appcontroller.go:1810, "Replace the whole operationState"): a new operation starts at
         * retry 0, and an attempt keeps no stored hook results of the last one.
         */
        private readonly minor: ArgoMinor = "3.5",
    ) {
        this.ops = new Operations({
            kube,
            repo,
            opts,
            clock,
            minor,
            running: () => this.running,
            later: (f, ms) => this.later(f, ms),
            iso: (ms) => this.iso(ms),
            schedule: (ns, name, delayMs, trigger) => this.schedule(ns, name, delayMs, trigger),
            scheduleAfter: (ns, name, delayMs, trigger) => this.scheduleAfter(ns, name, delayMs, trigger),
            reconcile: (ns, name, trigger) => this.reconcile(ns, name, trigger),
            liveOf: (obj) => this.liveOf(obj),
        });
    }

    /** The operations this controller runs (operations.ts). */
    private readonly ops: Operations;

    start() {
        this.running = true;
        this.unsubscribe = this.kube.onChange((c) => this.onChange(c));
        // a controller that (re)starts looks at every Application once, finishes deleting those being
        // deleted, and resumes an operation in flight
        // (the install watches its own namespace only: no application.namespaces is configured)
        for (const app of this.kube.list("Application", ARGOCD_NAMESPACE)) {
            if (app.metadata.deletionTimestamp) this.later(() => this.finalize(app), this.opts.reconcileDelayMs);
            else {
                this.schedule(app.metadata.namespace!, app.metadata.name, this.opts.reconcileDelayMs, { hard: false, forced: false });
                if (app.operation) {
                    // an attempt that failed and waits for its retry keeps waiting until NextRetryAt, restart or not
                    const st = app.status?.operationState;
                    const due =
                        st?.phase === "Running" && st.finishedAt
                            ? Date.parse(st.finishedAt) + this.ops.retryWait(Number(st.retryCount ?? 0)) - this.clock.now()
                            : 0;
                    this.later(
                        () => this.ops.runOperation(app.metadata.namespace!, app.metadata.name),
                        Math.max(this.opts.operationDelayMs, due),
                    );
                }
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
        this.asked.clear();
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
    failSyncs(
        app: string,
        times: number,
        message = `one or more objects failed to apply, reason: configmaps "shop-config" is forbidden: the simulated API refused the apply`,
    ) {
        this.ops.failSyncs(app, times, message);
    }

    private later(f: () => void | Promise<void>, ms: number) {
        if (!this.running) return;
        const h = this.clock.setTimeout(() => {
            this.others.delete(h);
            if (!this.running) return;
            const p = this.clock.track(Promise.resolve().then(f)).catch((e) => {
                this.errors.push(e);
            });
            this.chains.set(
                `other-${h.id}`,
                p.then(() => void this.chains.delete(`other-${h.id}`)),
            );
        }, ms);
        this.others.add(h);
    }

    private onChange(c: Change) {
        this.ops.onHookJob(c);
        if (c.actor === ACTOR) return;
        this.ops.onOperationSet(c);
        this.ops.onTerminate(c);
        if (c.kind === "Application") {
            if (c.type === "DELETED" || c.obj.metadata.namespace !== ARGOCD_NAMESPACE) return;
            if (c.obj.metadata.deletionTimestamp) {
                this.later(() => this.finalize(c.obj), this.opts.reconcileDelayMs);
                return;
            }
            const ns = c.obj.metadata.namespace;
            const name = c.obj.metadata.name;
            const refresh = c.obj.metadata.annotations?.[REFRESH_ANNOTATION];
            const specChanged = c.type === "ADDED" || JSON.stringify(c.old?.spec) !== JSON.stringify(c.obj.spec);
            if (refresh || specChanged) this.schedule(ns!, name, this.opts.reconcileDelayMs, { hard: refresh === "hard", forced: true });
            return;
        }
        // a project made or deleted: its Applications are compared again (the controller watches AppProjects)
        if (c.kind === "AppProject") {
            for (const a of this.kube.list("Application", ARGOCD_NAMESPACE))
                if ((a.spec?.project ?? "") === c.obj.metadata.name)
                    this.schedule(ARGOCD_NAMESPACE, a.metadata.name, this.opts.reconcileDelayMs, { hard: false, forced: true });
            return;
        }
        // a watch event on an object some Application manages: compare at once (selfHeal decides in the comparison)
        const id = (c.old ?? c.obj)?.metadata?.annotations?.[TRACKING_ANNOTATION];
        // (a namespace deleted by hand takes its objects with it: each deletion is such an event, as on a real cluster)
        if (!id || c.actor === "garbage-collector") return;
        const appName = String(id).split(":")[0];
        const app = this.kube.list("Application", ARGOCD_NAMESPACE).find((a) => a.metadata.name === appName);
        if (!app) return;
        this.schedule(app.metadata.namespace!, appName, this.opts.reconcileDelayMs, { hard: false, forced: false, recent: true });
    }

    /**
     * Queues one comparison of an Application after `delayMs` (the time a request takes to become a
     * comparison). Like upstream's refresh workqueue, a request for an Application already queued joins
     * it (the triggers merged) and never puts it off: the earliest due time wins. A comparison asked for
     * at a later time is scheduleAfter's.
     */
    schedule(ns: string, name: string, delayMs: number, trigger: Trigger) {
        if (!this.running) return;
        const key = `${ns}/${name}`;
        const due = this.clock.now() + delayMs;
        const pending = this.timers.get(key);
        if (pending) {
            const merged = {
                hard: trigger.hard || pending.trigger.hard,
                forced: trigger.forced || pending.trigger.forced,
                recent: !!trigger.recent && !!pending.trigger.recent,
            };
            if (pending.due <= due) {
                pending.trigger = merged;
                return;
            }
            this.clock.clearTimeout(pending.h);
            trigger = merged;
        }
        const entry = { h: undefined as unknown as TimerHandle, trigger, due };
        entry.h = this.clock.setTimeout(() => {
            this.timers.delete(key);
            const prev = this.chains.get(key) ?? Promise.resolve();
            const next = this.clock.track(prev.then(() => this.reconcile(ns, name, entry.trigger))).catch((e) => {
                this.errors.push(e);
            });
            this.chains.set(key, next);
            next.then(() => {
                if (this.chains.get(key) === next) this.chains.delete(key);
            });
        }, delayMs);
        this.timers.set(key, entry);
    }

    /** Comparisons asked for at a later time, by Application: when each is due. */
    private readonly asked = new Map<string, number>();

    /**
     * A comparison asked for `delayMs` from now (upstream's delayed comparison queue, AddAfter: the
     * earliest per Application kept), queued then as any other request; a comparison queued sooner
     * does not take its place.
     */
    private scheduleAfter(ns: string, name: string, delayMs: number, trigger: Trigger) {
        const key = `${ns}/${name}`;
        const due = this.clock.now() + delayMs;
        const known = this.asked.get(key);
        if (known !== undefined && known <= due) return;
        this.asked.set(key, due);
        this.later(() => {
            if (this.asked.get(key) === due) this.asked.delete(key);
            this.schedule(ns, name, 0, trigger);
        }, delayMs);
    }

    /** The next poll of this Application: the interval plus jitter after its last comparison (not work in flight: idle() ignores it). */
    private schedulePoll(ns: string, name: string) {
        if (!this.running) return;
        const key = `${ns}/${name}`;
        this.clock.clearTimeout(this.polls.get(key));
        const h = this.clock.setTimeout(
            () => {
                this.polls.delete(key);
                if (this.running) this.schedule(ns, name, 0, { hard: false, forced: false });
            },
            this.opts.pollIntervalMs + Math.floor(this.clock.random() * this.opts.pollJitterMs),
        );
        this.polls.set(key, h);
    }

    private iso(ms = this.clock.now()) {
        return rfc3339(ms, this.opts.wholeSecondTimes);
    }

    /** Compare, write the status (and `operation` when auto-sync decides to sync), remove a handled refresh. */
    async reconcile(ns: string, name: string, trigger: Trigger): Promise<void> {
        const app = this.kube.get("Application", ns, name);
        if (!app || app.metadata.deletionTimestamp) return;
        const key = `${ns}/${name}`;
        const handledRefresh = app.metadata.annotations?.[REFRESH_ANNOTATION];
        const src = app.spec?.source;
        const dest = app.spec?.destination;
        if (!src?.repoURL) {
            // several sources (spec.sources), or none: not what the simulation compares; said as Argo CD says a source it cannot read
            const message = SINGLE_SOURCE_ONLY;
            if (app.status?.conditions?.some((c) => c.type === "ComparisonError" && c.message === message)) return;
            const conditions = [
                ...(app.status?.conditions ?? []).filter((c) => c.type !== "ComparisonError"),
                { type: "ComparisonError", message, lastTransitionTime: this.iso() },
            ];
            this.kube.put({ ...app, status: { ...(app.status ?? {}), conditions, sync: { status: "Unknown" } } }, ACTOR);
            return;
        }
        // refreshAppConditions: an Application of a project that does not exist is not compared, nor synced
        const project = app.spec?.project ?? "";
        if (!this.kube.get("AppProject", ARGOCD_NAMESPACE, project)) {
            const message = `Application referencing project ${project} which does not exist`;
            if (app.status?.conditions?.some((c) => c.type === "InvalidSpecError" && c.message === message)) return;
            const conditions = [
                ...(app.status?.conditions ?? []).filter((c) => c.type !== "InvalidSpecError" && c.type !== "UnknownError"),
                { type: "InvalidSpecError", message, lastTransitionTime: this.iso() },
            ];
            const status = {
                ...(app.status ?? {}),
                conditions,
                sync: { ...app.status?.sync, status: "Unknown" },
                health: { status: "Unknown" },
            };
            this.kube.put({ ...app, status }, ACTOR);
            return;
        }
        const sourceChanged = JSON.stringify(app.status?.sync?.comparedTo?.source ?? null) !== JSON.stringify(src);
        const forced = trigger.forced || !!handledRefresh || sourceChanged;
        // the comparison's time (reconciledAt, and the status' transition times) is taken before it runs, as upstream's
        const now = this.iso();
        // the slow part (git, kustomize) first; the decision then on the Application as it is now
        let rendered: { sha: string; desired: Manifest[] } | undefined;
        let renderError: RenderError | undefined;
        try {
            const sha = await this.repo.resolve(src!.repoURL!, src!.targetRevision ?? "HEAD", { noCache: forced });
            const desired = (
                await this.repo.render(src!.repoURL!, sha, src!.path!, { hard: trigger.hard || handledRefresh === "hard" })
            ).map((o) => ({
                ...o,
                metadata: { ...o.metadata, namespace: o.metadata.namespace ?? dest!.namespace },
            }));
            rendered = { sha, desired };
        } catch (e) {
            if (!(e instanceof RenderError)) throw e;
            renderError = e;
        }
        if (!this.running) return; // stopped while comparing: write nothing
        const latest = this.kube.get("Application", ns, name);
        if (!latest || latest.metadata.deletionTimestamp) return;
        if (JSON.stringify(latest.spec!.source) !== JSON.stringify(src)) return; // the source moved meanwhile: its own comparison is queued
        // the project is there (checked above): its InvalidSpecError, if any, is over
        const specErrors = (latest.status?.conditions ?? []).filter((c) => c.type !== "InvalidSpecError");
        let status: ApplicationStatus = { ...(latest.status ?? {}), conditions: specErrors.length ? specErrors : undefined };
        let operation: Operation | undefined = undefined;
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
            status.conditions = [
                ...(status.conditions ?? []).filter((c) => c.type !== "ComparisonError"),
                { type: "ComparisonError", message: renderError!.message, lastTransitionTime: now },
            ];
            status.sync = { ...(status.sync ?? {}), status: "Unknown", revision: src!.targetRevision };
        }
        // a watch event's comparison (CompareWithRecent) leaves reconciledAt as it was; a source change compares with the latest
        if (!status.reconciledAt || !trigger.recent || forced) status.reconciledAt = now;
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
        if (operation) this.later(() => this.ops.runOperation(ns, name), this.opts.operationDelayMs);
        this.schedulePoll(ns, name);
    }

    private liveOf(obj: Manifest) {
        return this.kube.get(obj.kind, obj.metadata.namespace, obj.metadata.name);
    }

    /** The comparison (sim/state.ts, state.go), then auto-sync's decision (appcontroller.go autoSync): the status, and the operation it starts (if it does). */
    private compare(
        app: Application,
        sha: string,
        desiredAll: Manifest[],
        status: ApplicationStatus,
        now: string,
    ): { status: ApplicationStatus; operation?: Operation } {
        const name = app.metadata.name;
        const key = `${app.metadata.namespace}/${name}`;
        // SyncError is auto-sync's: cleared whenever it has nothing to report (autoSync returns nil), set again below when it has
        const lastSyncError = (status.conditions ?? []).find((c) => c.type === "SyncError");
        const { drifted, outOfSync } = compareAppState(app, sha, desiredAll, status, now, (o) => this.liveOf(o));

        const auto = app.spec!.syncPolicy?.automated;
        const op = status.operationState;
        const cleanup = () => {
            if (status.conditions!.length === 0) delete status.conditions;
        };
        if (!auto || auto.enabled === false || !outOfSync) return (cleanup(), { status });
        // "Skipping auto-sync: another operation is in progress"
        if (app.operation || op?.phase === "Running") return (cleanup(), { status });
        // "Skipping auto-sync: need to prune extra resources only but automated prune is disabled"
        const resourcesNow = status.resources ?? [];
        if (!auto.prune && resourcesNow.every((r) => r.status === "Synced" || r.requiresPruning)) return (cleanup(), { status });
        const lastRev = op?.syncResult?.revision ?? op?.operation?.sync?.revision;
        // a sync to this SHA already failed after its retries: no further auto-sync for it, and the reason as a SyncError
        // (appcontroller.go autoSync: "Failed last sync attempt to %s: %s", the revisions and the operation's message)
        if (op && ["Failed", "Error"].includes(op.phase!) && op.operation?.sync?.revision === sha) {
            const message = `Failed last sync attempt to [${sha}]: ${op.message}`;
            status.conditions!.push({
                type: "SyncError",
                message,
                lastTransitionTime: lastSyncError?.message === message ? lastSyncError.lastTransitionTime : now,
            });
            return { status };
        }
        const base = { revision: sha, prune: !!auto.prune, syncOptions: app.spec!.syncPolicy?.syncOptions, source: app.spec!.source };
        if (lastRev !== sha || op?.phase !== "Succeeded") {
            this.selfHealAttempts.set(key, 0);
            cleanup();
            // util/argo SetAppOperation: a new operation clears the last one's state
            delete status.operationState;
            return { status, operation: { sync: base, initiatedBy: { automated: true }, retry: { limit: RETRY_LIMIT } } };
        }
        if (!auto.selfHeal) return (cleanup(), { status });
        // selfHeal: backed off from the last operation's finishedAt (appcontroller selfHealRemainingBackoff)
        const n = this.selfHealAttempts.get(key) ?? 0;
        const backoff =
            n === 0
                ? 0
                : Math.min(this.opts.selfHealBackoffCapMs, this.opts.selfHealBackoffMs * this.opts.selfHealBackoffFactor ** (n - 1));
        const remaining = backoff - (this.clock.now() - Date.parse(op.finishedAt ?? now));
        if (remaining > 0) {
            this.scheduleAfter(app.metadata.namespace!, name, remaining, { hard: false, forced: false });
            return (cleanup(), { status });
        }
        this.selfHealDelays.push(backoff);
        this.selfHealAttempts.set(key, n + 1);
        cleanup();
        delete status.operationState; // SetAppOperation, as above
        // every resource not Synced: the drifted, and those requiring pruning (pruned by this sync when prune is on)
        const resources = [
            ...drifted.map((d) => ({ group: groupOf(d), kind: d.kind, namespace: d.metadata.namespace, name: d.metadata.name })),
            ...resourcesNow
                .filter((r) => r.requiresPruning)
                .map((r) => ({ group: r.group ?? "", kind: r.kind!, namespace: r.namespace, name: r.name })),
        ];
        return {
            status,
            operation: {
                sync: { ...base, resources, selfHealAttemptsCount: n + 1 },
                initiatedBy: { automated: true },
                retry: { limit: RETRY_LIMIT },
            },
        };
    }

    /**
     * An Application being deleted with the resources finalizer: delete the resources it manages,
     * then remove the finalizer, so the API server lets it go (controller/appcontroller.go
     * finalizeApplicationDeletion). Only a running controller does this.
     */
    private finalize(app: Application) {
        if (!(app.metadata.finalizers ?? []).includes(RESOURCES_FINALIZER)) return;
        for (const r of app.status?.resources ?? []) this.kube.remove(r.kind!, r.namespace, r.name, ACTOR);
        const latest = this.kube.get("Application", app.metadata.namespace, app.metadata.name);
        if (!latest) return;
        latest.metadata.finalizers = (latest.metadata.finalizers ?? []).filter((f: string) => f !== RESOURCES_FINALIZER);
        this.kube.put(latest, ACTOR);
    }
}
