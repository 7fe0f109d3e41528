/**
 * The simulated application controller's operations (Argo CD's `controller/appcontroller.go`
 * processRequestedAppOperation and `controller/sync.go`, over gitops-engine's sync context): an
 * operation set on an Application runs (phase Running), its PreSync hooks first (created in wave
 * order, a BeforeHookCreation hook replaced, the attempt waiting for their Jobs), then the Sync phase
 * applies the rendered objects; it ends Succeeded with a history entry, or fails and is retried with
 * backoff up to retry.limit, then Failed. A comparison follows every finished operation. The
 * controller's queue and its comparisons are appController.ts's; it hands this its clock, its
 * scheduling and its view of the live objects (OperationHost).
 */
import { ARGOCD_NAMESPACE, HOOK_ANNOTATION, TRACKING_ANNOTATION } from "../lab/argo/application";
import type { Trigger } from "./appController";
import { SimClock } from "./clock";
import { ACTOR, applySync, createNamespace, SyncOperation } from "./syncTasks";
import { gaveUpMessage, retryingMessage } from "./operationMessages";
import { Change, FakeKube } from "./fakeApi";
import { hookPhase, hookResult, isHook, replacesBeforeCreation, WAITING_FOR_DELETION, wave } from "./hooks";
import { ArgoTimings } from "./profiles";
import { RenderError, RepoServer } from "./repoServer";
import { groupOf, trackingId } from "./resources";
import { withRevisionHistory } from "./revisionHistory";
import type { ArgoMinor } from "./rollingSync";
import type { Application, Operation, ResourceResult } from "../lab/argo/types";
import type { Manifest, StoredObject } from "./objects";

export { ACTOR };

/** What the operations use of their controller: its API, repo-server, timings, clock and queue. */
export interface OperationHost {
    readonly kube: FakeKube;
    readonly repo: RepoServer;
    readonly opts: ArgoTimings;
    readonly clock: SimClock;
    /** The release's minor (see AppController): 3.5 merge-patches an operation's state, 3.6 replaces it. */
    readonly minor: ArgoMinor;
    running(): boolean;
    /** Runs `f` after `ms` on the controller's clock (nothing once it has stopped). */
    later(f: () => void | Promise<void>, ms: number): void;
    iso(ms?: number): string;
    /** Queues a comparison (the refresh queue). */
    schedule(ns: string, name: string, delayMs: number, trigger: Trigger): void;
    /** Asks for a comparison at a later time. */
    scheduleAfter(ns: string, name: string, delayMs: number, trigger: Trigger): void;
    reconcile(ns: string, name: string, trigger: Trigger): Promise<void>;
    /** The live object a rendered one stands for. */
    liveOf(obj: Manifest): StoredObject | undefined;
}

export class Operations {
    /** Sync attempts to fail on purpose, per Application (a test's fault switch). */
    private readonly failing = new Map<string, { left: number; message: string }>();

    constructor(private readonly host: OperationHost) {}

    /** The next `times` sync attempts of this Application fail with `message` (as if the API refused the apply). */
    failSyncs(app: string, times: number, message: string) {
        this.failing.set(app, { left: times, message });
    }

    /** Operations being run now, by "ns/name" (a second trigger joins the one running). */
    private readonly operating = new Set<string>();
    /** Hook Jobs an operation waits for: "ns/job" -> "ns/app". */
    private readonly hookWaits = new Map<string, string>();

    /** Someone else (the ApplicationSet controller's RollingSync, a user) set `operation`: the queue picks it up. */
    onOperationSet(c: Change) {
        if (c.kind !== "Application" || c.obj.metadata.namespace !== ARGOCD_NAMESPACE) return; // the controller's namespace only
        if (!c.obj.operation || c.obj.metadata.deletionTimestamp) return;
        if (JSON.stringify(c.old?.operation ?? null) === JSON.stringify(c.obj.operation)) return;
        const { namespace, name } = c.obj.metadata;
        if (this.operating.has(`${namespace}/${name}`)) return; // the run in progress reads the latest operation
        if (c.obj.status?.operationState?.phase === "Running") return; // a retry is due: it runs the latest operation then
        this.host.later(() => this.runOperation(namespace!, name), this.host.opts.operationDelayMs);
    }

    /**
     * Someone set a running operation's phase to Terminating (argocd app terminate-op, or a kubectl patch of it): it
     * ends Failed, "Operation terminated", and is not retried (appcontroller.go resumes a Terminating operation;
     * gitops-engine's sync context Terminate ends it so).
     */
    onTerminate(c: Change) {
        if (c.kind !== "Application" || c.obj.status?.operationState?.phase !== "Terminating") return;
        if (c.old?.status?.operationState?.phase === "Terminating") return;
        const { namespace, name } = c.obj.metadata;
        this.host.later(() => this.terminate(namespace!, name), this.host.opts.operationDelayMs);
    }

    private terminate(ns: string, name: string) {
        const app = this.host.kube.get("Application", ns, name);
        const state = app?.status?.operationState;
        if (!app || !state || state.phase !== "Terminating") return;
        this.operating.delete(`${ns}/${name}`);
        app.status!.operationState = { ...state, phase: "Failed", message: "Operation terminated", finishedAt: this.host.iso() };
        delete app.operation;
        this.host.kube.put(app, ACTOR);
        this.refreshAfterOperation(ns, name, state.operation ?? {});
    }

    /**
     * The operation queue (appcontroller processRequestedAppOperation, gitops-engine sync): an
     * attempt starts (phase Running; a retry clears the last attempt's syncResult and finishedAt),
     * runs the PreSync hooks and waits for them, then applies the Sync phase; it stays Running for
     * its duration (health assessment) and then finishes. An operation without a revision syncs
     * the Application's target revision as it resolves now.
     */
    async runOperation(ns: string, name: string) {
        const key = `${ns}/${name}`;
        if (this.operating.has(key)) return;
        const first = this.host.kube.get("Application", ns, name);
        if (!first?.operation || first.metadata.deletionTimestamp) return;
        // an Application the controller does not compare (several sources, or none) is not synced either
        if (!first.spec?.source?.repoURL) return;
        this.operating.add(key);
        let handedOff = false;
        try {
            const src = first.spec.source;
            // the revision asked (a branch given to a sync by hand, as kubectl patch's operation.sync.revision: main), or the
            // Application's own, resolved to its commit, which the sync result then names (controller/sync.go)
            const asked = first.operation.sync?.revision || src!.targetRevision || "HEAD";
            let revision = "";
            try {
                revision = await this.host.repo.resolve(src!.repoURL!, asked, { noCache: false });
            } catch (e) {
                if (!(e instanceof RenderError)) throw e;
            }
            // a controller restarted with an operation in flight has not rendered it yet
            let rendered = revision ? this.host.repo.rendered(src!.repoURL!, revision, src!.path!) : [];
            // one that does not render: the sync is not carried out (controller/sync.go: ComparisonError, phase Error)
            let compareError: string | undefined;
            if (revision && !rendered.length)
                rendered = await this.host.repo
                    .render(src!.repoURL!, revision, src!.path!, { hard: false })
                    .catch((e: Error) => ((compareError = e.message.split("\n")[0]), []));
            if (!this.host.running()) return;
            const app = this.host.kube.get("Application", ns, name);
            if (!app?.operation || app.metadata.deletionTimestamp) return;
            const prev = app.status?.operationState;
            const retrying = prev?.phase === "Running" && !!prev.finishedAt;
            const continuing =
                prev?.phase === "Running" &&
                !prev.finishedAt &&
                (!!prev.syncResult?.resources?.some((r) => r.hookType) || String(prev.message).startsWith(WAITING_FOR_DELETION));
            const op = { ...app.operation, sync: { ...(app.operation.sync ?? {}), revision } };
            const fault = this.failing.get(name);
            const fails = !!fault && fault.left > 0;
            if (fails) fault!.left--;
            const desired = rendered.map((o) => ({
                ...o,
                metadata: { ...o.metadata, namespace: o.metadata.namespace ?? app.spec!.destination!.namespace },
            }));
            const hooks =
                fails || !revision
                    ? []
                    : desired.filter((d) => d.metadata.annotations?.[HOOK_ANNOTATION] === "PreSync").sort((x, y) => wave(x) - wave(y));
            // RollingSync moves Pending on only for a sync started strictly after it, in the profile's precision (see rollingSync.ts)
            const startedAt = retrying || continuing ? prev.startedAt : this.host.iso();
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
                    ...(prev?.retryCount && (this.host.minor === "3.5" || retrying || continuing) ? { retryCount: prev.retryCount } : {}),
                },
            };
            if (!revision || compareError) {
                this.host.kube.put(app, ACTOR);
                const failure = compareError ? `ComparisonError: ${compareError}` : `failed to resolve revision '${asked}'`;
                this.host.later(
                    () => this.finishOperation(ns, name, { failure, revision, error: !!compareError }),
                    this.host.opts.operationDurationMs,
                );
                handedOff = true;
                return;
            }
            // the tick after one that only deleted hooks (its state kept the stored results, below): they are read back
            if (hooks.length && continuing && String(prev.message).startsWith(WAITING_FOR_DELETION) && prev.syncResult) {
                // every hook has a stored result: a failed one fails the attempt at once ("completed unsuccessfully", no Job run);
                // all succeeded, nothing is left to do ("successfully synced (no more tasks)", nothing applied)
                const stale = (prev?.syncResult?.resources ?? []).filter((r) => r.hookType);
                const resultOf = (h: Manifest) =>
                    stale.find((r) => r.kind === h.kind && r.namespace === h.metadata.namespace && r.name === h.metadata.name);
                if (hooks.every(resultOf)) {
                    const failed = hooks.some((h) => ["Failed", "Error"].includes(resultOf(h)!.hookPhase!));
                    this.host.kube.put(app, ACTOR);
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
            const live = (h: Manifest) => replacesBeforeCreation(h) && !!this.host.kube.get(h.kind, h.metadata.namespace, h.metadata.name);
            const firstTick = !continuing;
            const lowest = hooks.filter((h) => wave(h) === wave(hooks[0]));
            // the first tick of an attempt acts on the lowest wave only; a later one replaces what is left
            const onlyDeletes = firstTick && lowest.some(live);
            const replaced = onlyDeletes ? lowest.filter(live) : hooks.filter(live);
            if (replaced.length) {
                for (const h of replaced) this.host.kube.remove(h.kind, h.metadata.namespace, h.metadata.name, ACTOR);
                const h = replaced[replaced.length - 1];
                app.status.operationState!.message = `${WAITING_FOR_DELETION} ${groupOf(h)}/${h.kind}/${h.metadata.name}`;
                // an attempt whose first tick only deletes records no result, and Argo CD's merge patch of the operation
                // state leaves the stored syncResult as it was (the last attempt's, or the last operation's): the next
                // tick reads it back as this attempt's (sync.go WithInitialState, appcontroller.go setOperationState)
                // (3.5 only: 3.6 replaces the whole state, so the next tick finds no results and runs the hooks again)
                if (onlyDeletes && prev?.syncResult && this.host.minor === "3.5") app.status.operationState!.syncResult = prev.syncResult;
                this.host.kube.put(app, ACTOR);
                // processed again a moment later, the attempt's start and count kept; while the object is still there (a
                // finalizer) the delete is issued again and the sync goes on waiting, as gitops-engine does at each tick
                this.host.later(() => this.runOperation(ns, name), this.host.opts.operationDelayMs);
                return;
            }
            if (hooks.length) {
                app.status.operationState!.message = `waiting for completion of hook ${groupOf(hooks[hooks.length - 1])}/${hooks[hooks.length - 1].kind}/${hooks[hooks.length - 1].metadata.name}`;
                app.status.operationState!.syncResult = {
                    revision,
                    source: src,
                    resources: hooks.map((h) => hookResult(h, "Running", "")),
                };
                this.host.kube.put(app, ACTOR);
                this.runHooks(app, op, hooks);
                handedOff = true;
                for (const h of hooks) if (h.kind === "Job") this.hookWaits.set(`${h.metadata.namespace}/${h.metadata.name}`, key);
                this.host.later(() => this.checkHooks(ns, name, op, hooks), 0);
                return;
            }
            this.host.kube.put(app, ACTOR);
            handedOff = true;
            this.syncPhase(ns, name, op, desired, [], fails ? fault!.message : undefined);
        } finally {
            if (!handedOff) this.operating.delete(key);
        }
    }

    /** The PreSync hooks, created in wave order (those replaced, BeforeHookCreation, already deleted). */
    private runHooks(app: Application, sync: SyncOperation, hooks: Manifest[]) {
        createNamespace(this.host, app, app.spec!.syncPolicy?.syncOptions ?? sync.sync.syncOptions ?? []);
        for (const h of hooks) {
            const hns = h.metadata.namespace!; // set from the destination when rendered
            // a replaced hook's old object is gone by now (runOperation waited for its deletion)
            const annotations = { ...(h.metadata.annotations ?? {}), [TRACKING_ANNOTATION]: trackingId(app.metadata.name, h, hns) };
            this.host.kube.put({ ...h, metadata: { ...h.metadata, annotations } }, ACTOR);
        }
    }

    /** The hooks' Jobs moved: the waiting operation looks again. */
    onHookJob(c: Change) {
        if (c.kind !== "Job") return;
        const appKey = this.hookWaits.get(`${c.obj.metadata.namespace}/${c.obj.metadata.name}`);
        if (!appKey || hookPhase(c.obj).phase === "Running") return;
        const [ns, name] = appKey.split("/");
        this.host.later(() => this.pokeHooks(ns, name), 0);
    }

    private readonly hookChecks = new Map<string, () => void>();
    private pokeHooks(ns: string, name: string) {
        this.hookChecks.get(`${ns}/${name}`)?.();
    }

    /** Waits for the hook Jobs: a failed one fails the attempt; when all completed, the Sync phase runs. */
    private checkHooks(ns: string, name: string, op: SyncOperation, hooks: Manifest[]) {
        const key = `${ns}/${name}`;
        // the Application whose operation waits: one deleted and made again under its name (an ApplicationSet's) is another
        const uid = this.host.kube.get("Application", ns, name)?.metadata.uid;
        const check = () => {
            if (!this.host.running()) return;
            const app = this.host.kube.get("Application", ns, name);
            if (!app?.operation || app.metadata.deletionTimestamp || app.metadata.uid !== uid) {
                this.hookChecks.delete(key);
                this.operating.delete(key);
                return;
            }
            const results = hooks.map((h) => {
                if (h.kind !== "Job") return { h, ...{ phase: "Succeeded" as const, message: "" } };
                return { h, ...hookPhase(this.host.kube.get("Job", h.metadata.namespace, h.metadata.name)) };
            });
            const resources = results.map((r) => hookResult(r.h, r.phase, r.message));
            const failed = results.find((r) => r.phase === "Failed");
            if (!failed && results.some((r) => r.phase === "Running")) return; // still waiting
            this.hookChecks.delete(key);
            for (const h of hooks) this.hookWaits.delete(`${h.metadata.namespace}/${h.metadata.name}`);
            const src = app.spec!.source;
            if (failed) {
                // gitops-engine: a completed but unsuccessful task fails the sync (the hook's apply itself succeeded)
                this.finishOperation(ns, name, {
                    failure: "one or more synchronization tasks completed unsuccessfully",
                    revision: op.sync.revision,
                    resources,
                });
                return;
            }
            const desired = this.host.repo
                .rendered(src!.repoURL!, op.sync.revision, src!.path!)
                .map((o) => ({ ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? app.spec!.destination!.namespace } }));
            this.syncPhase(ns, name, op, desired, resources, undefined);
        };
        this.hookChecks.set(key, check);
        check();
    }

    /** The Sync phase: apply (unless the attempt fails on purpose), a comparison while Running, then the end. */
    private syncPhase(
        ns: string,
        name: string,
        op: SyncOperation,
        desired: Manifest[],
        hookResults: ResourceResult[],
        failure: string | undefined,
    ) {
        const app = this.host.kube.get("Application", ns, name);
        if (!app?.operation) {
            this.operating.delete(`${ns}/${name}`);
            return;
        }
        const applied =
            failure === undefined
                ? applySync(
                      this.host,
                      app,
                      op,
                      desired.filter((d) => !isHook(d)),
                  )
                : undefined;
        const resources = applied ? [...hookResults, ...applied] : undefined;
        // an object not applied (no namespace, no CreateNamespace) fails it, its messages the reason (gitops-engine setOperationFailed)
        const refused = (applied ?? []).filter((r) => r.status === "SyncFailed").map((r) => r.message ?? "");
        const failed = failure ?? (refused.length ? `one or more objects failed to apply, reason: ${refused.join(",")}` : undefined);
        const finish = () => this.finishOperation(ns, name, { failure: failed, revision: op.sync.revision, resources });
        if (!applied) return this.host.later(finish, this.host.opts.operationDurationMs);
        // the controller watches the objects it applied: a comparison runs (and shows Synced) while the operation still does
        this.host.later(async () => {
            await this.host.reconcile(ns, name, { hard: false, forced: false, recent: true });
            this.host.later(finish, Math.max(0, this.host.opts.operationDurationMs - this.host.opts.reconcileDelayMs));
        }, this.host.opts.reconcileDelayMs);
    }

    /** RetryStrategy.NextRetryAt's wait for a retry count: base * factor^count, at most the cap (pkg/apis/application/v1alpha1/types.go). */
    retryWait(count: number): number {
        return Math.min(this.host.opts.retryBackoffCapMs, this.host.opts.retryBackoffMs * this.host.opts.retryBackoffFactor ** count);
    }

    private finishOperation(
        ns: string,
        name: string,
        end: { failure?: string; revision: string; resources?: ResourceResult[]; message?: string; error?: boolean },
    ) {
        this.operating.delete(`${ns}/${name}`);
        const app = this.host.kube.get("Application", ns, name);
        if (!app?.operation || app.metadata.deletionTimestamp) return;
        const op = { ...app.operation, sync: { ...(app.operation.sync ?? {}), revision: app.operation.sync?.revision || end.revision } };
        const state = app.status!.operationState;
        const now = this.host.iso();
        const syncResult = end.resources ? { revision: end.revision, source: app.spec!.source, resources: end.resources } : undefined;
        if (end.failure !== undefined) {
            const retries = state!.retryCount ?? 0;
            const limit = op.retry?.limit ?? 0;
            if (retries < limit || limit < 0) {
                // appcontroller: the attempt failed, the next one is scheduled; syncResult stays until it starts.
                // The message's time is NextRetryAt(now, count) with the count before it goes up; the retry
                // waits NextRetryAt(finishedAt, count) with the count after it (controller/appcontroller.go)
                const said = this.retryWait(retries);
                app.status!.operationState = {
                    operation: app.operation,
                    phase: "Running",
                    message: retryingMessage(this.host.minor, end.failure, retries + 1, this.host.clock.now() + said),
                    startedAt: state!.startedAt,
                    finishedAt: now,
                    retryCount: retries + 1,
                    ...(syncResult ? { syncResult } : {}),
                };
                this.host.kube.put(app, ACTOR);
                this.host.later(() => this.runOperation(ns, name), this.retryWait(retries + 1));
                // appcontroller.go: a retry also asks for a comparison with the latest at its time
                this.host.scheduleAfter(ns, name, this.retryWait(retries + 1), { hard: false, forced: false });
                return;
            }
            // no condition here: a SyncError is auto-sync's, written by the comparison that follows (none for RollingSync's Applications, whose auto-sync is off)
            app.status!.operationState = {
                operation: op,
                phase: end.error ? "Error" : "Failed",
                message: gaveUpMessage(end.failure, retries),
                startedAt: state!.startedAt,
                finishedAt: now,
                retryCount: retries,
                ...(syncResult ? { syncResult } : {}),
            };
            delete app.operation;
            this.host.kube.put(app, ACTOR);
            this.refreshAfterOperation(ns, name, op);
            return;
        }
        // a sync of the whole Application only: a partial one (selfHeal's, of the drifted resources) adds no entry
        // (controller/sync.go: persistRevisionHistory when len(syncOp.Resources) == 0)
        const history = op.sync.resources?.length
            ? app.status?.history
            : withRevisionHistory(app, {
                  revision: end.revision,
                  deployedAt: now,
                  deployStartedAt: state!.startedAt,
                  source: op.sync.source ?? app.spec!.source,
                  initiatedBy: op.initiatedBy,
              });
        app.status!.operationState = {
            operation: op,
            phase: "Succeeded",
            message: end.message ?? "successfully synced (all tasks run)",
            startedAt: state!.startedAt,
            finishedAt: now,
            ...(state!.retryCount ? { retryCount: state!.retryCount } : {}),
            // the commit synced, whatever the operation asked (a branch's name given by hand)
            syncResult: { revision: end.revision, source: op.sync.source ?? app.spec!.source, resources: end.resources },
        };
        if (history) app.status!.history = history;
        app.status!.conditions = (app.status!.conditions ?? []).filter((c) => c.type !== "SyncError");
        if (!app.status!.conditions.length) delete app.status!.conditions;
        delete app.operation;
        this.host.kube.put(app, ACTOR);
        this.refreshAfterOperation(ns, name, op);
    }

    /**
     * A finished operation is followed by a comparison with the latest at once (appcontroller.go's
     * processRequestedAppOperation: requestAppRefresh without a delay), resolving the revision anew
     * only after a sync someone asked for (CompareWithLatestForceResolve); after an automated one
     * (auto-sync's, RollingSync's) the revision cache answers (CompareWithLatest).
     */
    private refreshAfterOperation(ns: string, name: string, op: Operation) {
        this.host.schedule(ns, name, 0, { hard: false, forced: !op.initiatedBy?.automated });
    }
}
