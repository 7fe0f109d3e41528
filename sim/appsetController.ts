/**
 * The simulation's ApplicationSet controller (`applicationset/controllers/applicationset_controller.go`
 * at v3.5.1 and v3.6.2): its generators and templates (generators.ts) make one Application per element,
 * owned by the ApplicationSet, those that validate created or updated; a hand edit to a generated Application's
 * spec is overwritten from the template. With progressive syncs on, a RollingSync ApplicationSet's
 * rollout runs as rollingSync.ts says; with them off its strategy is ignored and its
 * `status.applicationStatus` cleared. The git generator is requeued every 3 minutes (its
 * `requeueAfterSeconds` default); the annotation `argocd.argoproj.io/application-set-refresh`
 * asks for a reconcile now, past the repo-server's revision cache, and is removed after it.
 */
import { APPSET_REFRESH_ANNOTATION, ARGOCD_NAMESPACE, REFRESH_ANNOTATION, applicationsSyncAllows } from "../lab/argo/application";
import { realSimClock, rfc3339, SimClock, TimerHandle } from "./clock";
import { Change, FakeKube } from "./fakeApi";
import { RenderError, RepoServer } from "./repoServer";
import * as rolling from "./rollingSync";
import { generateApplications, generateFromParams, gitFileParams, Params } from "./generators";
import { AppSetMetrics } from "./appsetMetrics";
import { destinationError } from "./destination";
import { nameInvalid } from "./crdValidation";
import type { Application, ApplicationSet, Condition } from "../lab/argo/types";

export const ACTOR = "applicationset-controller";

type AppSetStatus = NonNullable<ApplicationSet["status"]>;

/**
 * The annotations of a generated Application that an update keeps, the rest coming from the
 * template (applicationset/controllers/applicationset_controller.go createOrUpdateInCluster).
 */
export const PRESERVED_ANNOTATIONS = ["argocd.argoproj.io/refresh", "argocd.argoproj.io/hydrate"];
const preserved = (key: string) =>
    PRESERVED_ANNOTATIONS.includes(key) ||
    key.startsWith("notified.notifications.argoproj.io") ||
    key.startsWith("notifications.argoproj.io/");

/** The git generator's requeue when `requeueAfterSeconds` is unset (generators/git.go getDefaultRequeueAfter). */
export const GIT_REQUEUE_MS = 180_000;

export interface AppSetControllerOptions {
    /** How long generating takes after a change of the ApplicationSet (the real controller runs on its own loop). */
    delayMs?: number;
    clock?: SimClock;
    /** The repo-server the git generator asks (needed only for git generators). */
    repo?: RepoServer;
    /** `applicationsetcontroller.enable.progressive.syncs` as the controller read it when it started. */
    progressiveSyncs?: boolean;
    /** The git generator's requeue (default 3 minutes). */
    gitRequeueMs?: number;
    /** Timestamps in whole seconds, as upstream's (ArgoTimings.wholeSecondTimes). */
    wholeSecondTimes?: boolean;
    /** The Argo CD minor it behaves as (default 3.5): where 3.6 differs, rollingSync.ts says. */
    minor?: rolling.ArgoMinor;
    /** v3.6's `--refresh-grace-period-seconds` (ArgoTimings.refreshGraceMs; default 30 s). */
    refreshGraceMs?: number;
}

/** ReconcileRequeueOnValidationError: a refused ApplicationSet is looked at again after 3 minutes. */
const VALIDATION_REQUEUE_MS = 180_000;

export class AppSetController {
    private unsubscribe?: () => void;
    private readonly timers = new Map<string, { h: TimerHandle; due: number }>();
    /** Reconciles in a row that returned an error, by ApplicationSet: the requeue backoff. */
    private readonly failures = new Map<string, number>();
    private readonly chains = new Map<string, Promise<void>>();
    private readonly delayMs: number;
    private readonly clock: SimClock;
    private running = false;
    /** Errors thrown inside reconciles (a test double must not hide its own bugs). */
    readonly errors: Error[] = [];
    /** v3.6's progressive sync metrics (none as 3.5: it has none of them). */
    readonly metrics = new AppSetMetrics();

    constructor(
        private readonly kube: FakeKube,
        private readonly opts: AppSetControllerOptions = {},
    ) {
        this.delayMs = opts.delayMs ?? 0;
        this.clock = opts.clock ?? realSimClock();
    }

    start() {
        this.running = true;
        this.unsubscribe = this.kube.onChange((c) => this.onChange(c));
        // (the install watches its own namespace only: no applicationsetcontroller.namespaces is configured)
        for (const a of this.kube.list("ApplicationSet", ARGOCD_NAMESPACE)) this.schedule(ARGOCD_NAMESPACE, a.metadata.name, 0);
    }

    async stop() {
        this.running = false;
        this.unsubscribe?.();
        for (const t of this.timers.values()) this.clock.clearTimeout(t.h);
        this.timers.clear();
        await Promise.all([...this.chains.values()]);
    }

    /** Resolves once no reconcile is queued or running (requeues aside). */
    async idle(): Promise<void> {
        while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
    }

    /** One reconcile of an ApplicationSet after `delayMs`; a request due later than a pending one joins it (the earliest wins). */
    private schedule(ns: string, name: string, delayMs: number) {
        if (!this.running) return;
        const key = `${ns}/${name}`;
        const due = this.clock.now() + delayMs;
        const pending = this.timers.get(key);
        if (pending && pending.due <= due) return;
        if (pending) this.clock.clearTimeout(pending.h);
        const h = this.clock.setTimeout(() => {
            this.timers.delete(key);
            const prev = this.chains.get(key) ?? Promise.resolve();
            const next = this.clock
                .track(
                    prev.then(async () => {
                        const current = this.kube.get("ApplicationSet", ns, name);
                        if (current && this.running) await this.reconcile(current);
                    }),
                )
                .catch((e) => void this.errors.push(e));
            this.chains.set(key, next);
            next.then(() => {
                if (this.chains.get(key) === next) this.chains.delete(key);
            });
        }, delayMs);
        this.timers.set(key, { h, due });
    }

    private onChange(c: Change) {
        if (c.actor === ACTOR || c.actor === "garbage-collector" || c.obj.metadata.namespace !== ARGOCD_NAMESPACE) return;
        if (c.kind === "ApplicationSet" && c.type !== "DELETED") {
            this.schedule(c.obj.metadata.namespace!, c.obj.metadata.name, this.delayMs);
        }
        if (c.kind === "Application") {
            const owner = (c.obj.metadata.ownerReferences ?? []).find((r) => r.kind === "ApplicationSet");
            if (!owner || !this.shouldRequeueFor(c.old, c.type === "DELETED" ? undefined : c.obj)) return;
            this.schedule(c.obj.metadata.namespace!, owner.name, 0);
        }
    }

    /** `shouldRequeueForApplication`: what it owns changed, or (progressive syncs) the status the rollout reads. */
    private shouldRequeueFor(old: Application | undefined, now: Application | undefined): boolean {
        if (!old || !now) return true;
        const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
        if (
            !same(old.spec, now.spec) ||
            !same(old.metadata.annotations, now.metadata.annotations) ||
            !same(old.metadata.labels, now.metadata.labels) ||
            !same(old.metadata.finalizers, now.metadata.finalizers)
        )
            return true;
        if (!this.opts.progressiveSyncs) return false;
        if (old.status?.health?.status !== now.status?.health?.status || old.status?.sync?.status !== now.status?.sync?.status) return true;
        const a = old.status?.operationState;
        const b = now.status?.operationState;
        return !!a && !!b && (a.phase !== b.phase || a.startedAt !== b.startedAt);
    }

    private iso() {
        return rfc3339(this.clock.now(), !!this.opts.wholeSecondTimes);
    }

    /** The generated Applications: every generator's parameter sets through the template. */
    private async generate(appset: ApplicationSet): Promise<Application[]> {
        const out: Application[] = [];
        for (const g of appset.spec?.generators ?? []) {
            if (g.list) out.push(...generateApplications({ ...appset, spec: { ...appset.spec, generators: [g] } }));
            else if (g.git) {
                if (!this.opts.repo) throw new RenderError("the simulation has no repo-server for the git generator");
                const refresh = appset.metadata.annotations?.[APPSET_REFRESH_ANNOTATION] !== undefined;
                const sha = await this.opts.repo.resolve(g.git.repoURL!, g.git.revision ?? "HEAD", { noCache: refresh });
                const params: Params[] = [];
                for (const f of g.git.files ?? []) {
                    for (const file of await this.opts.repo.files(g.git.repoURL!, sha, f.path))
                        params.push(...gitFileParams(file.path, file.content, !!appset.spec?.goTemplate));
                }
                out.push(...generateFromParams(appset, params));
            }
        }
        return out;
    }

    async reconcile(appset: ApplicationSet): Promise<void> {
        const namespace = appset.metadata.namespace!; // a namespaced kind: the store sets it
        const name = appset.metadata.name;
        let desired: Application[];
        try {
            desired = await this.generate(appset);
        } catch (e) {
            if (!(e instanceof RenderError)) throw e;
            this.writeStatus(namespace, name, (st) =>
                setCondition(
                    st,
                    { type: "ErrorOccurred", status: "True", reason: "ApplicationGenerationFromParamsError", message: e.message },
                    this.iso(),
                ),
            );
            this.requeue(appset);
            return;
        }
        if (!this.running) return;
        const fresh = this.kube.get("ApplicationSet", namespace, name);
        if (!fresh || fresh.metadata.deletionTimestamp) return;
        // the rollout reads every generated Application; only the valid ones are created or updated (validApps)
        const invalid = this.validateGeneratedApplications(fresh, desired);
        const generated = desired;
        const owned = (a: Application) => (a.metadata.ownerReferences ?? []).some((r) => r.uid === fresh.metadata.uid);
        const current = this.kube.list("Application", namespace).filter(owned);

        const minor = this.opts.minor ?? "3.5";
        if (this.opts.progressiveSyncs && rolling.isRollingSync(fresh) && minor === "3.6" && !rolling.rollingSyncEnabled(fresh)) {
            // v3.6.2: a RollingSync with no steps is refused before any Application is generated or updated
            // (applicationset_controller.go, IsStepsEmpty); v3.5 runs it as a rollout of no steps
            this.writeStatus(namespace, name, (st) =>
                setCondition(
                    st,
                    { type: "ErrorOccurred", status: "True", reason: "ApplicationSetRolloutError", message: rolling.MESSAGES.noSteps },
                    this.iso(),
                ),
            );
            this.schedule(namespace, name, VALIDATION_REQUEUE_MS);
            return;
        }
        if (this.opts.progressiveSyncs && rolling.isRollingSync(fresh)) {
            const now = this.iso();
            const { steps, stepOf, issues } = rolling.buildAppDependencyList(fresh, desired);
            const before = (fresh.status?.applicationStatus ?? []) as rolling.AppStatusEntry[]; // as this controller wrote them
            let statuses = rolling.updateApplicationStatus(fresh, current, desired, stepOf, now);
            // persisted on its own, then again after the progress (progressive_sync.go:516 and :672): a watch sees both writes
            const updated = statuses;
            this.writeStatus(namespace, name, (st) => void (st.applicationStatus = updated));
            const gate =
                minor === "3.6"
                    ? rolling.ensureApplicationsReconciled(
                          rolling.latestWaitingTransition(before) ?? rolling.latestWaitingTransition(statuses),
                          current,
                          this.clock.now(),
                          this.opts.refreshGraceMs ?? 30_000,
                      )
                    : { open: true, refresh: [], recheckMs: null };
            for (const app of gate.refresh) if (this.refreshApp(namespace, app)) this.metrics.refreshTriggered(namespace, name);
            let toSync = new Set<string>();
            if (gate.open) {
                toSync = rolling.appsToSync(statuses, steps, current);
                statuses = rolling.updateApplicationStatusProgress(fresh, statuses, toSync, stepOf, now, issues);
                const conds = [
                    minor === "3.6" ? rolling.invalidRolloutConfig(fresh, issues) : null,
                    rolling.rolloutCondition(fresh, statuses),
                ];
                const progressed = statuses;
                this.writeStatus(namespace, name, (st) => {
                    st.applicationStatus = progressed;
                    for (const c of conds) if (c) setCondition(st, c, now);
                });
            } else if (gate.recheckMs !== null) this.schedule(namespace, name, gate.recheckMs);
            // SyncDesiredApplications reads the status the reconcile started from (the controller passes the
            // ApplicationSet by value to PerformProgressiveSyncs): an entry moved to Pending now is synced on the
            // next reconcile, which the changed applicationStatus requeues (shouldRequeueForApplicationSet)
            if (rolling.rollingSyncEnabled(fresh)) {
                desired = rolling.syncDesiredApplications(before, toSync, desired, minor);
                // one count a sync started, by its entry's step; the time from the look to the syncs (none here)
                const started = desired
                    .filter((d) => d.operation)
                    .map((d) => before.find((e) => e.application === d.metadata.name)?.step ?? "");
                if (minor === "3.6") {
                    for (const step of started) this.metrics.syncTriggered(namespace, name, step);
                    if (toSync.size) this.metrics.detectionToTrigger(namespace, name, 0);
                }
            }
            if (JSON.stringify(before) !== JSON.stringify(statuses)) this.schedule(namespace, name, 0);
        } else if ((fresh.status?.applicationStatus ?? []).length) {
            // progressive syncs off, or no RollingSync strategy: the rollout's entries are cleared
            this.writeStatus(namespace, name, (st) => void delete st.applicationStatus);
        }

        if (invalid.size) {
            // only the last message (by name) goes into the status, to keep its size reasonable
            const last = [...invalid.keys()].sort().pop()!;
            const message = `${invalid.get(last)}${invalid.size > 1 ? ` (and ${invalid.size - 1} more)` : ""}`;
            this.writeStatus(namespace, name, (st) =>
                setCondition(st, { type: "ErrorOccurred", status: "True", reason: "ApplicationValidationError", message }, this.iso()),
            );
        }
        const applyError = this.apply(
            fresh,
            desired.filter((d) => !invalid.has(d.metadata.name)),
            current,
            generated,
        );
        if (applyError) {
            // Reconcile returns the error (UpdateApplicationError; nothing deleted): controller-runtime's
            // per-item backoff requeues it, 5 ms doubling to 1000 s
            this.writeStatus(namespace, name, (st) =>
                setCondition(
                    st,
                    { type: "ErrorOccurred", status: "True", reason: "UpdateApplicationError", message: applyError },
                    this.iso(),
                ),
            );
            const n = (this.failures.get(`${namespace}/${name}`) ?? 0) + 1;
            this.failures.set(`${namespace}/${name}`, n);
            this.schedule(namespace, name, Math.min(5 * 2 ** (n - 1), 1_000_000));
            return;
        }
        this.failures.delete(`${namespace}/${name}`);
        const latest = this.kube.get("ApplicationSet", namespace, name);
        if (latest && latest.metadata.annotations?.[APPSET_REFRESH_ANNOTATION] !== undefined) {
            delete latest.metadata.annotations[APPSET_REFRESH_ANNOTATION];
            this.kube.put(latest, ACTOR);
        }
        if (invalid.size) {
            // the generators' requeue when they have one (getMinRequeueAfter), else ReconcileRequeueOnValidationError
            if (!this.requeue(appset)) this.schedule(namespace, name, VALIDATION_REQUEUE_MS);
            return;
        }
        this.writeStatus(namespace, name, (st) =>
            setCondition(
                st,
                {
                    type: "ResourcesUpToDate",
                    status: "True",
                    reason: "ApplicationSetUpToDate",
                    message: "All applications have been generated successfully",
                },
                this.iso(),
            ),
        );
        this.requeue(appset);
    }

    /**
     * `validateGeneratedApplications`: a generated Application with a name taken already, of a
     * project the controller's namespace does not hold, or for a cluster Argo CD does not know, is not
     * created or updated (its error by name).
     */
    private validateGeneratedApplications(appset: ApplicationSet, desired: Application[]): Map<string, string> {
        const errors = new Map<string, string>();
        const names = new Set<string>();
        for (const app of desired) {
            const n = app.metadata.name;
            // v3.6.2 checks a name is there first; v3.5.1's create of a nameless Application fails (the API server requires one)
            if (!n) {
                errors.set(
                    n,
                    `ApplicationSet ${appset.metadata.name} contains an application with no name; a name must be set in the template's metadata.name or via a templatePatch (generateName is not supported)`,
                );
                continue;
            }
            if (names.has(n)) {
                errors.set(n, `ApplicationSet ${appset.metadata.name} contains applications with duplicate name: ${n}`);
                continue;
            }
            names.add(n);
            const project = app.spec?.project ?? "";
            if (!this.kube.get("AppProject", ARGOCD_NAMESPACE, project)) {
                errors.set(n, `application references project ${project} which does not exist`);
                continue;
            }
            const destination = destinationError(app.spec?.destination);
            if (destination) errors.set(n, `application destination spec is invalid: ${destination}`);
        }
        return errors;
    }

    /** `argoutil.RefreshApp` with RefreshTypeNormal: the annotation the application controller removes once it has compared. */
    /** Whether it added the annotation. */
    private refreshApp(ns: string, name: string): boolean {
        const app = this.kube.get("Application", ns, name);
        if (!app || app.metadata.annotations?.[REFRESH_ANNOTATION]) return false;
        this.kube.put(
            { ...app, metadata: { ...app.metadata, annotations: { ...(app.metadata.annotations ?? {}), [REFRESH_ANNOTATION]: "normal" } } },
            ACTOR,
        );
        return true;
    }

    /** The git generator's requeue (getMinRequeueAfter); whether there is one (a list generator has none). */
    private requeue(appset: ApplicationSet): boolean {
        const git = (appset.spec?.generators ?? []).find((g) => g.git)?.git;
        if (!git) return false;
        const ms = git.requeueAfterSeconds !== undefined ? git.requeueAfterSeconds * 1000 : (this.opts.gitRequeueMs ?? GIT_REQUEUE_MS);
        if (ms <= 0) return false;
        this.schedule(appset.metadata.namespace!, appset.metadata.name, ms);
        return true;
    }

    private writeStatus(ns: string, name: string, f: (status: AppSetStatus) => void) {
        const latest = this.kube.get("ApplicationSet", ns, name);
        if (!latest) return;
        const before = JSON.stringify(latest.status ?? {});
        latest.status = { ...(latest.status ?? {}) };
        f(latest.status);
        // SetProgressiveSyncAppStatus: the per-step counts follow the entries (v3.6)
        if (this.opts.minor === "3.6") this.metrics.setAppStatus(ns, name, latest.status.applicationStatus ?? []);
        if (JSON.stringify(latest.status) !== before) this.kube.put(latest, ACTOR);
    }

    /**
     * createOrUpdateInCluster + deleteInCluster. `generated`: every Application generated, invalid ones too
     * (deleteInCluster keeps them). An Application another controller owns is left as it is
     * (SetControllerReference refuses it, controller-runtime's message); the first such error by name is
     * returned, and then nothing is deleted (Reconcile returns before deleteInCluster).
     */
    private apply(appset: ApplicationSet, desired: Application[], current: Application[], generated: Application[]): string | undefined {
        const names = new Set(generated.map((d) => d.metadata.name));
        // spec.syncPolicy.applicationsSync: an Application that exists is updated only where it allows (createInCluster
        // otherwise), one no longer generated deleted only where it allows
        const { update: allowUpdate, delete: allowDelete } = applicationsSyncAllows(appset.spec?.syncPolicy?.applicationsSync);
        let error: string | undefined;
        for (const d of [...desired].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
            const live = this.kube.get("Application", d.metadata.namespace, d.metadata.name);
            if (live && !allowUpdate) continue;
            if (live?.metadata.deletionTimestamp) continue; // being deleted: generated again once it is gone
            // the create the API server refuses (a name that is no DNS subdomain: an element's key missing from {{...}})
            const refused = live ? undefined : nameInvalid("Application", "argoproj.io", d.metadata.name);
            if (refused) {
                error ??= refused;
                continue;
            }
            // the same owner is the same group, kind and name (referSameObject: not the uid)
            const other = (live?.metadata.ownerReferences ?? []).find(
                (r) =>
                    r.controller &&
                    !(r.kind === "ApplicationSet" && r.name === appset.metadata.name && r.apiVersion?.startsWith("argoproj.io/")),
            );
            if (other) {
                error ??= `Object ${d.metadata.namespace}/${d.metadata.name} is already owned by another ${other.kind} controller ${other.name}`;
                continue;
            }
            // spec, labels and finalizers come from the template; annotations too, but for the preserved keys
            const kept = Object.fromEntries(Object.entries(live?.metadata.annotations ?? {}).filter(([k]) => preserved(k)));
            const annotations = { ...(d.metadata.annotations ?? {}), ...kept };
            const next = live
                ? {
                      ...live,
                      metadata: {
                          ...live.metadata,
                          labels: d.metadata.labels,
                          annotations: Object.keys(annotations).length ? annotations : undefined,
                          finalizers: d.metadata.finalizers,
                          ownerReferences: d.metadata.ownerReferences,
                      },
                      spec: d.spec,
                      // RollingSync's sync: the operation is set on the live Application
                      ...(d.operation ? { operation: d.operation } : {}),
                  }
                : d;
            if (live && JSON.stringify(live) === JSON.stringify(next)) continue;
            this.kube.put(next, ACTOR);
        }
        if (error || !allowDelete) return error;
        for (const app of current) {
            if (!names.has(app.metadata.name)) this.kube.remove("Application", app.metadata.namespace, app.metadata.name, ACTOR);
        }
        return undefined;
    }
}

/**
 * Sets one condition of an ApplicationSet's status by type, with what it implies
 * (setApplicationSetStatusCondition): ResourcesUpToDate True means ErrorOccurred False, ErrorOccurred True
 * means ResourcesUpToDate False. A lastTransitionTime moves only when its condition's status does.
 */
function setCondition(status: AppSetStatus, cond: rolling.Condition, now: string) {
    setOne(status, cond, now);
    if (cond.type === "ResourcesUpToDate" && cond.status === "True")
        setOne(status, { type: "ErrorOccurred", status: "False", reason: cond.reason, message: cond.message }, now);
    if (cond.type === "ErrorOccurred" && cond.status === "True")
        setOne(status, { type: "ResourcesUpToDate", status: "False", reason: "ErrorOccurred", message: cond.message }, now);
}

function setOne(status: AppSetStatus, cond: rolling.Condition, now: string) {
    const conds: Condition[] = status.conditions ?? [];
    const old = conds.find((c) => c.type === cond.type);
    // SetConditions: a condition as it was (status, reason and message) keeps its time; any change is a transition
    const same = old && old.status === cond.status && old.reason === cond.reason && old.message === cond.message;
    const next = { ...cond, lastTransitionTime: same ? old.lastTransitionTime : now };
    status.conditions = [...conds.filter((c) => c.type !== cond.type), next];
}
