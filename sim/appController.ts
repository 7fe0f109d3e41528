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
 * state.go's CompareAppState), their names and health (resources.ts), the hooks (hooks.ts), the
 * revision history (revisionHistory.ts).
 */
import { HOOK_ANNOTATION, REFRESH_ANNOTATION, TRACKING_ANNOTATION } from "../lab/argo/application";
import { RESOURCES_FINALIZER } from "./appsetController";
import { rfc3339, SimClock, TimerHandle } from "./clock";
import { Change, FakeKube } from "./fakeApi";
import { ArgoTimings } from "./profiles";
import type { ArgoMinor } from "./rollingSync";
import { RenderError, RepoServer } from "./repoServer";
import { hookPhase, hookResult, isHook, replacesBeforeCreation, WAITING_FOR_DELETION, wave } from "./hooks";
import { groupOf, keyOf, trackingId } from "./resources";
import { withRevisionHistory } from "./revisionHistory";
import { compareAppState } from "./state";

export const ACTOR = "application-controller";
const RETRY_LIMIT = 5;

/** time.Kitchen, as the retry message prints the next attempt's time. */
const kitchen = (ms: number) => {
    const d = new Date(ms);
    const h = d.getUTCHours();
    return `${h % 12 === 0 ? 12 : h % 12}:${String(d.getUTCMinutes()).padStart(2, "0")}${h < 12 ? "AM" : "PM"}`;
};

/**
 * hard: a hard refresh; forced: past the revision cache; recent: a watch event's comparison
 * (CompareWithRecent), which does not move `reconciledAt` (appcontroller.go writes it only on a
 * comparison at CompareWithLatest or above, or when it has none yet).
 */
type Trigger = { hard: boolean; forced: boolean; recent?: boolean };

export class AppController {
    private unsubscribe?: () => void;
    private readonly timers = new Map<string, { h: TimerHandle; trigger: Trigger; due: number }>();
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
        /**
         * The release's minor. 3.5 merge-patches an operation's state over the last one's (appcontroller.go
         * setOperationState), so fields a new state leaves out keep their old values; 3.6 replaces the whole
         * state (v3.6.2 appcontroller.go:1810, "Replace the whole operationState"): a new operation starts at
         * retry 0, and an attempt keeps no stored hook results of the last one.
         */
        private readonly minor: ArgoMinor = "3.5",
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
                if (app.operation) {
                    // an attempt that failed and waits for its retry keeps waiting until NextRetryAt, restart or not
                    const st = app.status?.operationState;
                    const due =
                        st?.phase === "Running" && st.finishedAt
                            ? Date.parse(st.finishedAt) + this.retryWait(Number(st.retryCount ?? 0)) - this.clock.now()
                            : 0;
                    this.later(
                        () => this.runOperation(app.metadata.namespace, app.metadata.name),
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
            this.chains.set(
                `other-${h.id}`,
                p.then(() => void this.chains.delete(`other-${h.id}`)),
            );
        }, ms);
        this.others.add(h);
    }

    private onChange(c: Change) {
        this.onHookJob(c);
        if (c.actor === ACTOR) return;
        this.onOperationSet(c);
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
        // (a namespace deleted by hand takes its objects with it: each deletion is such an event, as on a real cluster)
        if (!id || c.actor === "garbage-collector") return;
        const appName = String(id).split(":")[0];
        const app = this.kube.list("Application").find((a) => a.metadata.name === appName);
        if (!app) return;
        this.schedule(app.metadata.namespace, appName, this.opts.reconcileDelayMs, { hard: false, forced: false, recent: true });
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
        const src = app.spec.source;
        const dest = app.spec.destination;
        const sourceChanged = JSON.stringify(app.status?.sync?.comparedTo?.source ?? null) !== JSON.stringify(src);
        const forced = trigger.forced || !!handledRefresh || sourceChanged;
        // the comparison's time (reconciledAt, and the status' transition times) is taken before it runs, as upstream's
        const now = this.iso();
        // the slow part (git, kustomize) first; the decision then on the Application as it is now
        let rendered: { sha: string; desired: any[] } | undefined;
        let renderError: RenderError | undefined;
        try {
            const sha = await this.repo.resolve(src.repoURL, src.targetRevision ?? "HEAD", { noCache: forced });
            const desired = (await this.repo.render(src.repoURL, sha, src.path, { hard: trigger.hard || handledRefresh === "hard" })).map(
                (o) => ({
                    ...o,
                    metadata: { ...o.metadata, namespace: o.metadata.namespace ?? dest.namespace },
                }),
            );
            rendered = { sha, desired };
        } catch (e: any) {
            if (!(e instanceof RenderError)) throw e;
            renderError = e;
        }
        if (!this.running) return; // stopped while comparing: write nothing
        const latest = this.kube.get("Application", ns, name);
        if (!latest || latest.metadata.deletionTimestamp) return;
        if (JSON.stringify(latest.spec.source) !== JSON.stringify(src)) return; // the source moved meanwhile: its own comparison is queued
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
            status.conditions = [
                ...(status.conditions ?? []).filter((c: any) => c.type !== "ComparisonError"),
                { type: "ComparisonError", message: renderError!.message, lastTransitionTime: now },
            ];
            status.sync = { ...(status.sync ?? {}), status: "Unknown", revision: src.targetRevision };
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
        if (operation) this.later(() => this.runOperation(ns, name), this.opts.operationDelayMs);
        this.schedulePoll(ns, name);
    }

    private liveOf(obj: any) {
        return this.kube.get(obj.kind, obj.metadata.namespace, obj.metadata.name);
    }

    /** The comparison (sim/state.ts, state.go), then auto-sync's decision (appcontroller.go autoSync): the status, and the operation it starts (if it does). */
    private compare(app: any, sha: string, desiredAll: any[], status: any, now: string): { status: any; operation?: any } {
        const name = app.metadata.name;
        const key = `${app.metadata.namespace}/${name}`;
        // SyncError is auto-sync's: cleared whenever it has nothing to report (autoSync returns nil), set again below when it has
        const lastSyncError = (status.conditions ?? []).find((c: any) => c.type === "SyncError");
        const { drifted, outOfSync } = compareAppState(app, sha, desiredAll, status, now, (o) => this.liveOf(o));

        const auto = app.spec.syncPolicy?.automated;
        const op = status.operationState;
        const cleanup = () => {
            if (status.conditions.length === 0) delete status.conditions;
        };
        if (!auto || auto.enabled === false || !outOfSync) return (cleanup(), { status });
        // "Skipping auto-sync: another operation is in progress"
        if (app.operation || op?.phase === "Running") return (cleanup(), { status });
        const lastRev = op?.syncResult?.revision ?? op?.operation?.sync?.revision;
        // a sync to this SHA already failed after its retries: no further auto-sync for it, and the reason as a SyncError
        // (appcontroller.go autoSync: "Failed last sync attempt to %s: %s", the revisions and the operation's message)
        if (op && ["Failed", "Error"].includes(op.phase) && op.operation?.sync?.revision === sha) {
            const message = `Failed last sync attempt to [${sha}]: ${op.message}`;
            status.conditions.push({
                type: "SyncError",
                message,
                lastTransitionTime: lastSyncError?.message === message ? lastSyncError.lastTransitionTime : now,
            });
            return { status };
        }
        const base = { revision: sha, prune: !!auto.prune, syncOptions: app.spec.syncPolicy?.syncOptions, source: app.spec.source };
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
            this.scheduleAfter(app.metadata.namespace, name, remaining, { hard: false, forced: false });
            return (cleanup(), { status });
        }
        this.selfHealDelays.push(backoff);
        this.selfHealAttempts.set(key, n + 1);
        cleanup();
        delete status.operationState; // SetAppOperation, as above
        const resources = drifted.map((d) => ({
            group: groupOf(d),
            kind: d.kind,
            namespace: d.metadata.namespace,
            name: d.metadata.name,
        }));
        return {
            status,
            operation: {
                sync: { ...base, resources, selfHealAttemptsCount: n + 1 },
                initiatedBy: { automated: true },
                retry: { limit: RETRY_LIMIT },
            },
        };
    }

    /** Operations being run now, by "ns/name" (a second trigger joins the one running). */
    private readonly operating = new Set<string>();
    /** Hook Jobs an operation waits for: "ns/job" -> "ns/app". */
    private readonly hookWaits = new Map<string, string>();

    /** Someone else (the ApplicationSet controller's RollingSync, a user) set `operation`: the queue picks it up. */
    private onOperationSet(c: Change) {
        if (c.kind !== "Application" || !c.obj.operation || c.obj.metadata.deletionTimestamp) return;
        if (JSON.stringify(c.old?.operation ?? null) === JSON.stringify(c.obj.operation)) return;
        const { namespace, name } = c.obj.metadata;
        if (this.operating.has(`${namespace}/${name}`)) return; // the run in progress reads the latest operation
        if (c.obj.status?.operationState?.phase === "Running") return; // a retry is due: it runs the latest operation then
        this.later(() => this.runOperation(namespace, name), this.opts.operationDelayMs);
    }

    /**
     * The operation queue (appcontroller processRequestedAppOperation, gitops-engine sync): an
     * attempt starts (phase Running; a retry clears the last attempt's syncResult and finishedAt),
     * runs the PreSync hooks and waits for them, then applies the Sync phase; it stays Running for
     * its duration (health assessment) and then finishes. An operation without a revision syncs
     * the Application's target revision as it resolves now.
     */
    private async runOperation(ns: string, name: string) {
        const key = `${ns}/${name}`;
        if (this.operating.has(key)) return;
        const first = this.kube.get("Application", ns, name);
        if (!first?.operation || first.metadata.deletionTimestamp) return;
        this.operating.add(key);
        let handedOff = false;
        try {
            const src = first.spec.source;
            let revision: string = first.operation.sync?.revision;
            if (!revision) {
                try {
                    revision = await this.repo.resolve(src.repoURL, src.targetRevision ?? "HEAD", { noCache: false });
                } catch (e: any) {
                    if (!(e instanceof RenderError)) throw e;
                    revision = "";
                }
            }
            // a controller restarted with an operation in flight has not rendered it yet
            let rendered = revision ? this.repo.rendered(src.repoURL, revision, src.path) : [];
            if (revision && !rendered.length)
                rendered = await this.repo.render(src.repoURL, revision, src.path, { hard: false }).catch(() => []);
            if (!this.running) return;
            const app = this.kube.get("Application", ns, name);
            if (!app?.operation || app.metadata.deletionTimestamp) return;
            const prev = app.status?.operationState;
            const retrying = prev?.phase === "Running" && !!prev.finishedAt;
            const continuing =
                prev?.phase === "Running" &&
                !prev.finishedAt &&
                (!!prev.syncResult?.resources?.some((r: any) => r.hookType) || String(prev.message).startsWith(WAITING_FOR_DELETION));
            const op = { ...app.operation, sync: { ...(app.operation.sync ?? {}), revision } };
            const fault = this.failing.get(name);
            const fails = !!fault && fault.left > 0;
            if (fails) fault!.left--;
            const desired = rendered.map((o) => ({
                ...o,
                metadata: { ...o.metadata, namespace: o.metadata.namespace ?? app.spec.destination.namespace },
            }));
            const hooks =
                fails || !revision
                    ? []
                    : desired.filter((d) => d.metadata.annotations?.[HOOK_ANNOTATION] === "PreSync").sort((x, y) => wave(x) - wave(y));
            // RollingSync moves Pending on only for a sync started strictly after it, in the profile's precision (see rollingSync.ts)
            const startedAt = retrying || continuing ? prev.startedAt : this.iso();
            app.status = {
                ...(app.status ?? {}),
                operationState: {
                    operation: app.operation,
                    phase: "Running",
                    message: retrying ? `Retrying operation. Attempt #${prev.retryCount}` : "one or more tasks are running",
                    startedAt,
                    // a new operation's state is merge-patched over the last one's, and a zero retryCount is left out
                    // (omitempty): the count stays, and a sync of an Application that gave up before gets no retries
                    // (seen on the real plane: mandant-b's next sync showed `retry 5` and failed after one attempt)
                    ...(prev?.retryCount && (this.minor === "3.5" || retrying || continuing) ? { retryCount: prev.retryCount } : {}),
                },
            };
            if (!revision) {
                this.kube.put(app, ACTOR);
                this.later(
                    () => this.finishOperation(ns, name, { failure: `failed to resolve revision '${src.targetRevision}'`, revision }),
                    this.opts.operationDurationMs,
                );
                handedOff = true;
                return;
            }
            // the tick after one that only deleted hooks (its state kept the stored results, below): they are read back
            if (hooks.length && continuing && String(prev.message).startsWith(WAITING_FOR_DELETION) && prev.syncResult) {
                // every hook has a stored result: a failed one fails the attempt at once ("completed unsuccessfully", no Job run);
                // all succeeded, nothing is left to do ("successfully synced (no more tasks)", nothing applied)
                const stale: any[] = (prev?.syncResult?.resources ?? []).filter((r: any) => r.hookType);
                const resultOf = (h: any) =>
                    stale.find((r) => r.kind === h.kind && r.namespace === h.metadata.namespace && r.name === h.metadata.name);
                if (hooks.every(resultOf)) {
                    const failed = hooks.some((h) => ["Failed", "Error"].includes(resultOf(h).hookPhase));
                    this.kube.put(app, ACTOR);
                    handedOff = true;
                    this.finishOperation(
                        ns,
                        name,
                        failed
                            ? {
                                  failure: "one or more synchronization tasks completed unsuccessfully",
                                  revision,
                                  resources: prev.syncResult.resources,
                              }
                            : { revision, resources: prev.syncResult.resources, message: "successfully synced (no more tasks)" },
                    );
                    return;
                }
            }
            // gitops-engine (sync_context.go): a hook to be replaced (BeforeHookCreation) whose object exists is deleted
            // first, in the foreground, and the sync waits ("waiting for deletion of hook ...") until it is gone
            const live = (h: any) => replacesBeforeCreation(h) && !!this.kube.get(h.kind, h.metadata.namespace, h.metadata.name);
            const firstTick = !continuing;
            const lowest = hooks.filter((h) => wave(h) === wave(hooks[0]));
            // the first tick of an attempt acts on the lowest wave only; a later one replaces what is left
            const onlyDeletes = firstTick && lowest.some(live);
            const replaced = onlyDeletes ? lowest.filter(live) : hooks.filter(live);
            if (replaced.length) {
                for (const h of replaced) this.kube.remove(h.kind, h.metadata.namespace, h.metadata.name, ACTOR);
                const h = replaced[replaced.length - 1];
                app.status.operationState.message = `${WAITING_FOR_DELETION} ${groupOf(h)}/${h.kind}/${h.metadata.name}`;
                // an attempt whose first tick only deletes records no result, and Argo CD's merge patch of the operation
                // state leaves the stored syncResult as it was (the last attempt's, or the last operation's): the next
                // tick reads it back as this attempt's (sync.go WithInitialState, appcontroller.go setOperationState)
                // (3.5 only: 3.6 replaces the whole state, so the next tick finds no results and runs the hooks again)
                if (onlyDeletes && prev?.syncResult && this.minor === "3.5") app.status.operationState.syncResult = prev.syncResult;
                this.kube.put(app, ACTOR);
                // processed again a moment later, the attempt's start and count kept; while the object is still there (a
                // finalizer) the delete is issued again and the sync goes on waiting, as gitops-engine does at each tick
                this.later(() => this.runOperation(ns, name), this.opts.operationDelayMs);
                return;
            }
            if (hooks.length) {
                app.status.operationState.message = `waiting for completion of hook ${groupOf(hooks[hooks.length - 1])}/${hooks[hooks.length - 1].kind}/${hooks[hooks.length - 1].metadata.name}`;
                app.status.operationState.syncResult = {
                    revision,
                    source: src,
                    resources: hooks.map((h) => hookResult(h, "Running", "")),
                };
                this.kube.put(app, ACTOR);
                this.runHooks(app, hooks);
                handedOff = true;
                for (const h of hooks) if (h.kind === "Job") this.hookWaits.set(`${h.metadata.namespace}/${h.metadata.name}`, key);
                this.later(() => this.checkHooks(ns, name, op, hooks), 0);
                return;
            }
            this.kube.put(app, ACTOR);
            handedOff = true;
            this.syncPhase(ns, name, op, desired, [], fails ? fault!.message : undefined);
        } finally {
            if (!handedOff) this.operating.delete(key);
        }
    }

    /** The PreSync hooks, created in wave order (those replaced, BeforeHookCreation, already deleted). */
    private runHooks(app: any, hooks: any[]) {
        for (const h of hooks) {
            const hns = h.metadata.namespace;
            if (!this.kube.get("Namespace", undefined, hns) && (app.spec.syncPolicy?.syncOptions ?? []).includes("CreateNamespace=true")) {
                this.kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: hns } }, ACTOR);
            }
            // a replaced hook's old object is gone by now (runOperation waited for its deletion)
            const annotations = { ...(h.metadata.annotations ?? {}), [TRACKING_ANNOTATION]: trackingId(app.metadata.name, h, hns) };
            this.kube.put({ ...h, metadata: { ...h.metadata, annotations } }, ACTOR);
        }
    }

    /** The hooks' Jobs moved: the waiting operation looks again. */
    private onHookJob(c: Change) {
        if (c.kind !== "Job") return;
        const appKey = this.hookWaits.get(`${c.obj.metadata.namespace}/${c.obj.metadata.name}`);
        if (!appKey || hookPhase(c.obj).phase === "Running") return;
        const [ns, name] = appKey.split("/");
        this.later(() => this.pokeHooks(ns, name), 0);
    }

    private readonly hookChecks = new Map<string, () => void>();
    private pokeHooks(ns: string, name: string) {
        this.hookChecks.get(`${ns}/${name}`)?.();
    }

    /** Waits for the hook Jobs: a failed one fails the attempt; when all completed, the Sync phase runs. */
    private checkHooks(ns: string, name: string, op: any, hooks: any[]) {
        const key = `${ns}/${name}`;
        const check = () => {
            if (!this.running) return;
            const app = this.kube.get("Application", ns, name);
            if (!app?.operation || app.metadata.deletionTimestamp) {
                this.hookChecks.delete(key);
                this.operating.delete(key);
                return;
            }
            const results = hooks.map((h) => {
                if (h.kind !== "Job") return { h, ...{ phase: "Succeeded" as const, message: "" } };
                return { h, ...hookPhase(this.kube.get("Job", h.metadata.namespace, h.metadata.name)) };
            });
            const resources = results.map((r) => hookResult(r.h, r.phase, r.message));
            const failed = results.find((r) => r.phase === "Failed");
            if (!failed && results.some((r) => r.phase === "Running")) return; // still waiting
            this.hookChecks.delete(key);
            for (const h of hooks) this.hookWaits.delete(`${h.metadata.namespace}/${h.metadata.name}`);
            const src = app.spec.source;
            if (failed) {
                // gitops-engine: a completed but unsuccessful task fails the sync (the hook's apply itself succeeded)
                this.finishOperation(ns, name, {
                    failure: "one or more synchronization tasks completed unsuccessfully",
                    revision: op.sync.revision,
                    resources,
                });
                return;
            }
            const desired = this.repo
                .rendered(src.repoURL, op.sync.revision, src.path)
                .map((o) => ({ ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? app.spec.destination.namespace } }));
            this.syncPhase(ns, name, op, desired, resources, undefined);
        };
        this.hookChecks.set(key, check);
        check();
    }

    /** The Sync phase: apply (unless the attempt fails on purpose), a comparison while Running, then the end. */
    private syncPhase(ns: string, name: string, op: any, desired: any[], hookResults: any[], failure: string | undefined) {
        const app = this.kube.get("Application", ns, name);
        if (!app?.operation) {
            this.operating.delete(`${ns}/${name}`);
            return;
        }
        const applied =
            failure === undefined
                ? this.apply(
                      app,
                      op,
                      desired.filter((d) => !isHook(d)),
                  )
                : undefined;
        const resources = applied ? [...hookResults, ...applied] : undefined;
        const finish = () => this.finishOperation(ns, name, { failure, revision: op.sync.revision, resources });
        if (!applied) return this.later(finish, this.opts.operationDurationMs);
        // the controller watches the objects it applied: a comparison runs (and shows Synced) while the operation still does
        this.later(async () => {
            await this.reconcile(ns, name, { hard: false, forced: false, recent: true });
            this.later(finish, Math.max(0, this.opts.operationDurationMs - this.opts.reconcileDelayMs));
        }, this.opts.reconcileDelayMs);
    }

    /** RetryStrategy.NextRetryAt's wait for a retry count: base * factor^count, at most the cap (pkg/apis/application/v1alpha1/types.go). */
    private retryWait(count: number): number {
        return Math.min(this.opts.retryBackoffCapMs, this.opts.retryBackoffMs * this.opts.retryBackoffFactor ** count);
    }

    private finishOperation(ns: string, name: string, end: { failure?: string; revision: string; resources?: any[]; message?: string }) {
        this.operating.delete(`${ns}/${name}`);
        const app = this.kube.get("Application", ns, name);
        if (!app?.operation || app.metadata.deletionTimestamp) return;
        const op = { ...app.operation, sync: { ...(app.operation.sync ?? {}), revision: app.operation.sync?.revision || end.revision } };
        const state = app.status.operationState;
        const now = this.iso();
        const syncResult = end.resources ? { revision: end.revision, source: app.spec.source, resources: end.resources } : undefined;
        if (end.failure !== undefined) {
            const retries = state.retryCount ?? 0;
            const limit = op.retry?.limit ?? 0;
            if (retries < limit || limit < 0) {
                // appcontroller: the attempt failed, the next one is scheduled; syncResult stays until it starts.
                // The message's time is NextRetryAt(now, count) with the count before it goes up; the retry
                // waits NextRetryAt(finishedAt, count) with the count after it (controller/appcontroller.go)
                const said = this.retryWait(retries);
                app.status.operationState = {
                    operation: app.operation,
                    phase: "Running",
                    message: `${end.failure}. Retrying attempt #${retries + 1} at ${kitchen(this.clock.now() + said)}.`,
                    startedAt: state.startedAt,
                    finishedAt: now,
                    retryCount: retries + 1,
                    ...(syncResult ? { syncResult } : {}),
                };
                this.kube.put(app, ACTOR);
                this.later(() => this.runOperation(ns, name), this.retryWait(retries + 1));
                // appcontroller.go: a retry also asks for a comparison with the latest at its time
                this.scheduleAfter(ns, name, this.retryWait(retries + 1), { hard: false, forced: false });
                return;
            }
            // no condition here: a SyncError is auto-sync's, written by the comparison that follows (none for RollingSync's Applications, whose auto-sync is off)
            app.status.operationState = {
                operation: op,
                phase: "Failed",
                message: `${end.failure} (retried ${retries} times).`,
                startedAt: state.startedAt,
                finishedAt: now,
                retryCount: retries,
                ...(syncResult ? { syncResult } : {}),
            };
            delete app.operation;
            this.kube.put(app, ACTOR);
            this.refreshAfterOperation(ns, name, op);
            return;
        }
        const history = withRevisionHistory(app, {
            revision: op.sync.revision,
            deployedAt: now,
            deployStartedAt: state.startedAt,
            source: op.sync.source ?? app.spec.source,
            initiatedBy: op.initiatedBy,
        });
        app.status.operationState = {
            operation: op,
            phase: "Succeeded",
            message: end.message ?? "successfully synced (all tasks run)",
            startedAt: state.startedAt,
            finishedAt: now,
            ...(state.retryCount ? { retryCount: state.retryCount } : {}),
            syncResult: { revision: op.sync.revision, source: op.sync.source ?? app.spec.source, resources: end.resources },
        };
        app.status.history = history;
        app.status.conditions = (app.status.conditions ?? []).filter((c: any) => c.type !== "SyncError");
        if (!app.status.conditions.length) delete app.status.conditions;
        delete app.operation;
        this.kube.put(app, ACTOR);
        this.refreshAfterOperation(ns, name, op);
    }

    /**
     * A finished operation is followed by a comparison with the latest at once (appcontroller.go's
     * processRequestedAppOperation: requestAppRefresh without a delay), resolving the revision anew
     * only after a sync someone asked for (CompareWithLatestForceResolve); after an automated one
     * (auto-sync's, RollingSync's) the revision cache answers (CompareWithLatest).
     */
    private refreshAfterOperation(ns: string, name: string, op: any) {
        this.schedule(ns, name, 0, { hard: false, forced: !op.initiatedBy?.automated });
    }

    /** Applies the rendered objects (only those the operation names, for a partial sync); prunes when asked. */
    private apply(app: any, op: any, desired: any[]): any[] {
        const name = app.metadata.name;
        const createNs = (app.spec.syncPolicy?.syncOptions ?? op.sync.syncOptions ?? []).includes("CreateNamespace=true");
        const only = op.sync.resources ? new Set(op.sync.resources.map((r: any) => `${r.kind}/${r.namespace}/${r.name}`)) : null;
        const results: any[] = [];
        for (const d of [...desired].sort((x, y) => wave(x) - wave(y))) {
            if (only && !only.has(keyOf(d))) continue;
            const ns = d.metadata.namespace;
            if (!this.kube.get("Namespace", undefined, ns)) {
                if (!createNs) {
                    results.push({
                        kind: d.kind,
                        namespace: ns,
                        name: d.metadata.name,
                        status: "SyncFailed",
                        message: `namespaces "${ns}" not found`,
                        syncPhase: "Sync",
                    });
                    continue;
                }
                this.kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }, ACTOR);
            }
            const live = this.liveOf(d);
            const annotations = {
                ...(live?.metadata.annotations ?? {}),
                ...(d.metadata.annotations ?? {}),
                [TRACKING_ANNOTATION]: trackingId(name, d, ns),
            };
            // an apply: the object is patched in place, so its uid stays
            const next = { ...(live ?? {}), ...d, metadata: { ...(live?.metadata ?? {}), ...d.metadata, annotations } };
            this.kube.put(next, ACTOR);
            results.push({
                group: groupOf(d),
                version: d.apiVersion?.split("/").pop() ?? "v1",
                kind: d.kind,
                namespace: ns,
                name: d.metadata.name,
                status: "Synced",
                message: `${d.kind.toLowerCase()}${groupOf(d) ? `.${groupOf(d)}` : ""}/${d.metadata.name} ${live ? "configured" : "created"}`,
                syncPhase: "Sync",
            });
        }
        if (op.sync.prune && !only && desired.length) {
            const keys = new Set(desired.map(keyOf));
            for (const r of app.status?.resources ?? []) {
                if (keys.has(`${r.kind}/${r.namespace}/${r.name}`)) continue;
                this.kube.remove(r.kind, r.namespace, r.name, ACTOR);
                results.push({
                    group: r.group ?? "",
                    version: r.version ?? "v1",
                    kind: r.kind,
                    namespace: r.namespace,
                    name: r.name,
                    status: "Pruned",
                    message: "pruned",
                    syncPhase: "Sync",
                });
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
