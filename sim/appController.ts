/**
 * The simulation's application controller, one behaviour per method:
 * - refresh: the `argocd.argoproj.io/refresh` annotation triggers a reconcile (hard also bypasses
 *   the repo-server's error cache) and is removed when done;
 * - polling: without a refresh, Git is looked at only every `pollIntervalMs` (Argo CD: 120 s + jitter);
 * - comparison: targetRevision resolved, manifests rendered; a render failure becomes a
 *   ComparisonError with sync status Unknown and the literal targetRevision as revision;
 * - automated sync (prune, CreateNamespace) with an operationState like v3.5.1's;
 * - selfHeal: a change to a managed object triggers a comparison and an in-place repair (uid kept)
 *   after `selfHealDelayMs`; repeated repairs back off (x3 each time, capped).
 */
import { REFRESH_ANNOTATION } from "../lab/argo/application";
import { Change, FakeKube } from "./fakeApi";
import { RESOURCES_FINALIZER } from "./appsetController";
import { RenderError, RepoServer } from "./repoServer";

export const ACTOR = "application-controller";
export const TRACKING_ANNOTATION = "argocd.argoproj.io/tracking-id";

export interface AppControllerOptions {
    /** How long handling a refresh takes. */
    reconcileDelayMs: number;
    /** Git polling interval without a refresh. */
    pollIntervalMs: number;
    /** Delay of the first selfHeal repair after a sync (Argo CD: about 1-3 s). */
    selfHealDelayMs: number;
    /** Base of the backoff of repeated repairs (Argo CD: 2 s, then x3: 6, 18, 54 ...). */
    selfHealBackoffMs: number;
    /** Cap of that backoff (Argo CD: 300 s). */
    selfHealBackoffCapMs: number;
}

export const REALISTIC: AppControllerOptions = {
    reconcileDelayMs: 500,
    pollIntervalMs: 180_000,
    selfHealDelayMs: 1_500,
    selfHealBackoffMs: 2_000,
    selfHealBackoffCapMs: 300_000,
};

const trackingId = (app: string, obj: any, ns: string) => `${app}:${obj.apiVersion?.includes("/") ? obj.apiVersion.split("/")[0] : ""}/${obj.kind}:${ns}/${obj.metadata.name}`;

export class AppController {
    private unsubscribe?: () => void;
    private poller?: NodeJS.Timeout;
    private readonly timers = new Map<string, { t: NodeJS.Timeout; hard: boolean }>();
    private readonly chains = new Map<string, Promise<void>>();
    private readonly finalizeTimers = new Set<NodeJS.Timeout>();
    private readonly selfHealAttempts = new Map<string, number>();
    /** The delay of every selfHeal repair scheduled, in order (what the backoff decided, not a measurement). */
    readonly selfHealDelays: number[] = [];
    /** Errors thrown inside reconciles (a test double must not hide its own bugs). */
    readonly errors: Error[] = [];

    constructor(private readonly kube: FakeKube, private readonly repo: RepoServer, private readonly opts: AppControllerOptions) {}

    start() {
        this.unsubscribe = this.kube.onChange((c) => this.onChange(c));
        this.poller = setInterval(() => {
            for (const app of this.kube.list("Application")) this.schedule(app.metadata.namespace, app.metadata.name, 0, false);
        }, this.opts.pollIntervalMs);
        this.poller.unref();
        // a controller that (re)starts looks at every Application once, and finishes deleting those being deleted
        for (const app of this.kube.list("Application")) {
            if (app.metadata.deletionTimestamp) this.finalizeLater(app);
            else this.schedule(app.metadata.namespace, app.metadata.name, this.opts.reconcileDelayMs, false);
        }
    }

    async stop() {
        this.unsubscribe?.();
        if (this.poller) clearInterval(this.poller);
        for (const p of this.timers.values()) clearTimeout(p.t);
        this.timers.clear();
        for (const t of this.finalizeTimers) clearTimeout(t);
        this.finalizeTimers.clear();
        await Promise.all([...this.chains.values()]);
    }

    /** Resolves once nothing is scheduled or running (e.g. the reconciles a (re)start queues). */
    async idle(): Promise<void> {
        while (this.timers.size > 0 || this.chains.size > 0 || this.finalizeTimers.size > 0) {
            if (this.timers.size > 0 || this.finalizeTimers.size > 0) await new Promise((r) => setTimeout(r, 10));
            const running = [...this.chains.entries()];
            await Promise.all(running.map(([, p]) => p));
            for (const [k, p] of running) if (this.chains.get(k) === p) this.chains.delete(k);
        }
    }

    private onChange(c: Change) {
        if (c.actor === ACTOR) return;
        if (c.kind === "Application") {
            if (c.type === "DELETED") return;
            if (c.obj.metadata.deletionTimestamp) {
                this.finalizeLater(c.obj);
                return;
            }
            const ns = c.obj.metadata.namespace;
            const name = c.obj.metadata.name;
            const refresh = c.obj.metadata.annotations?.[REFRESH_ANNOTATION];
            const specChanged = c.type === "ADDED" || JSON.stringify(c.old?.spec) !== JSON.stringify(c.obj.spec);
            if (refresh || specChanged) this.schedule(ns, name, this.opts.reconcileDelayMs, refresh === "hard");
            return;
        }
        // selfHeal: a change to an object some Application manages
        const id = (c.old ?? c.obj)?.metadata?.annotations?.[TRACKING_ANNOTATION];
        if (!id || c.actor === "garbage-collector") return;
        const appName = String(id).split(":")[0];
        const app = this.kube.list("Application").find((a) => a.metadata.name === appName);
        if (!app?.spec?.syncPolicy?.automated?.selfHeal || app.spec.syncPolicy.automated.enabled === false) return;
        const key = `${app.metadata.namespace}/${appName}`;
        const n = this.selfHealAttempts.get(key) ?? 0;
        const delay = n === 0 ? this.opts.selfHealDelayMs : Math.min(this.opts.selfHealBackoffCapMs, this.opts.selfHealBackoffMs * 3 ** (n - 1));
        this.selfHealAttempts.set(key, n + 1);
        this.selfHealDelays.push(delay);
        this.schedule(app.metadata.namespace, appName, delay, false, true);
    }

    /**
     * An Application being deleted with the resources finalizer: delete the resources it manages,
     * then remove the finalizer, so the API server lets it go (controller/appcontroller.go
     * finalizeApplicationDeletion). Only a running controller does this.
     */
    private finalizeLater(app: any) {
        const t = setTimeout(() => {
            this.finalizeTimers.delete(t);
            this.finalize(app);
        }, this.opts.reconcileDelayMs);
        this.finalizeTimers.add(t);
    }

    private finalize(app: any) {
        if (!(app.metadata.finalizers ?? []).includes(RESOURCES_FINALIZER)) return;
        for (const r of app.status?.resources ?? []) this.kube.remove(r.kind, r.namespace, r.name, ACTOR);
        const latest = this.kube.get("Application", app.metadata.namespace, app.metadata.name);
        if (!latest) return;
        latest.metadata.finalizers = (latest.metadata.finalizers ?? []).filter((f: string) => f !== RESOURCES_FINALIZER);
        this.kube.put(latest, ACTOR);
    }

    /** Queues one reconcile of an Application after `delayMs` (a later request replaces a pending one). */
    schedule(ns: string, name: string, delayMs: number, hard: boolean, selfHeal = false) {
        const key = `${ns}/${name}`;
        const pending = this.timers.get(key);
        if (pending) {
            clearTimeout(pending.t);
            hard = hard || pending.hard;
        }
        const t = setTimeout(() => {
            this.timers.delete(key);
            const prev = this.chains.get(key) ?? Promise.resolve();
            const next = prev.then(() => this.reconcile(ns, name, hard, selfHeal)).catch((e) => {
                this.errors.push(e);
            });
            this.chains.set(key, next);
        }, delayMs);
        this.timers.set(key, { t, hard });
    }

    /** Compare, and sync when automated; writes the status and removes a handled refresh annotation. */
    async reconcile(ns: string, name: string, hard: boolean, selfHeal = false): Promise<void> {
        const app = this.kube.get("Application", ns, name);
        if (!app || app.metadata.deletionTimestamp) return;
        const handledRefresh = app.metadata.annotations?.[REFRESH_ANNOTATION];
        const src = app.spec.source;
        const dest = app.spec.destination;
        const now = new Date().toISOString();
        let status: any = { ...(app.status ?? {}) };
        try {
            const sha = await this.repo.resolve(src.repoURL, src.targetRevision ?? "HEAD");
            const desired = (await this.repo.render(src.repoURL, sha, src.path, { hard: hard || handledRefresh === "hard" })).map((o) => ({
                ...o,
                metadata: { ...o.metadata, namespace: o.metadata.namespace ?? dest.namespace },
            }));
            status = this.compareAndSync(app, sha, desired, status, now, selfHeal);
        } catch (e: any) {
            if (!(e instanceof RenderError)) throw e;
            status.conditions = [{ type: "ComparisonError", message: e.message, lastTransitionTime: now }];
            status.sync = { ...(status.sync ?? {}), status: "Unknown", revision: src.targetRevision };
        }
        status.reconciledAt = now;
        const latest = this.kube.get("Application", ns, name);
        if (!latest || latest.metadata.deletionTimestamp) return;
        latest.status = status;
        if (handledRefresh && latest.metadata.annotations?.[REFRESH_ANNOTATION] === handledRefresh) {
            delete latest.metadata.annotations[REFRESH_ANNOTATION];
        }
        this.kube.put(latest, ACTOR);
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

    private compareAndSync(app: any, sha: string, desired: any[], status: any, now: string, selfHeal: boolean): any {
        const name = app.metadata.name;
        const managed: any[] = status.resources ?? [];
        const desiredKeys = new Set(desired.map((d) => `${d.kind}/${d.metadata.namespace}/${d.metadata.name}`));
        const prunable = managed.filter((r) => !desiredKeys.has(`${r.kind}/${r.namespace}/${r.name}`));
        const outOfSync = desired.some((d) => !this.inSync(d)) || prunable.length > 0;
        const auto = app.spec.syncPolicy?.automated;
        const autoOn = auto && auto.enabled !== false;
        const lastRev = status.operationState?.syncResult?.revision;
        const key = `${app.metadata.namespace}/${name}`;
        const deleting = !!this.kube.get("Application", app.metadata.namespace, name)?.metadata.deletionTimestamp;
        if (outOfSync && autoOn && !deleting && (lastRev !== sha || auto.selfHeal)) {
            if (lastRev !== sha && !selfHeal) this.selfHealAttempts.set(key, 0);
            const results = this.apply(app, desired, auto.prune ? prunable : []);
            status.operationState = {
                operation: { sync: { revision: sha, prune: !!auto.prune, syncOptions: app.spec.syncPolicy?.syncOptions }, initiatedBy: { automated: true }, retry: { limit: 5 } },
                phase: "Succeeded",
                message: "successfully synced (all tasks run)",
                startedAt: now,
                finishedAt: new Date().toISOString(),
                syncResult: { revision: sha, source: app.spec.source, resources: results },
            };
        }
        const stillOut = desired.some((d) => !this.inSync(d));
        status.sync = { status: stillOut ? "OutOfSync" : "Synced", revision: sha, comparedTo: { source: app.spec.source, destination: app.spec.destination } };
        status.health = { status: desired.every((d) => this.liveOf(d)) ? "Healthy" : "Missing", lastTransitionTime: now };
        status.conditions = (status.conditions ?? []).filter((c: any) => c.type !== "ComparisonError");
        if (status.conditions.length === 0) delete status.conditions;
        status.resources = desired.map((d) => ({ version: "v1", kind: d.kind, namespace: d.metadata.namespace, name: d.metadata.name, status: this.inSync(d) ? "Synced" : "OutOfSync", health: { status: "Healthy" } }));
        status.sourceType = "Kustomize";
        return status;
    }

    private apply(app: any, desired: any[], prune: any[]): any[] {
        const name = app.metadata.name;
        const createNs = (app.spec.syncPolicy?.syncOptions ?? []).includes("CreateNamespace=true");
        const results: any[] = [];
        for (const d of desired) {
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
        for (const r of prune) {
            this.kube.remove(r.kind, r.namespace, r.name, ACTOR);
            results.push({ group: "", version: "v1", kind: r.kind, namespace: r.namespace, name: r.name, status: "Pruned", message: "pruned", syncPhase: "Sync" });
        }
        return results;
    }
}
