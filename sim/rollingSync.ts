/**
 * RollingSync as Argo CD v3.5.1 does it (`applicationset/progressivesync/progressive_sync.go`), as
 * pure functions over plain objects, in the order `PerformProgressiveSyncs` calls them:
 * buildAppDependencyList -> updateApplicationStatus -> appsToSync -> updateApplicationStatusProgress
 * -> rolloutCondition, then syncDesiredApplications on the generated Applications. The
 * ApplicationSet controller (appsetController.ts) runs them when progressive syncs are on
 * (`applicationsetcontroller.enable.progressive.syncs` in argocd-cmd-params-cm).
 *
 * Upstream moves Pending to Progressing only when the sync started strictly after the Pending
 * transition, both in whole seconds: a sync started within the second the entry went Pending leaves
 * it Pending, and the entry is synced again (every tenant's first sync on the real plane, in
 * test/real/tenantsLab.real.ts). The profile at v3.5.1's timings writes whole seconds too; the fast
 * profile writes milliseconds (`wholeSecondTimes`), or its every sync would be started twice.
 */
import { maxUpdateLimit, stepSelects } from "../lab/argo/rollingSync";

export interface AppStatusEntry {
    application: string;
    status: "Waiting" | "Pending" | "Progressing" | "Healthy";
    step: string;
    message: string;
    targetRevisions: string[];
    lastTransitionTime?: string;
}

export const MESSAGES = {
    noStatus: "No Application status found, defaulting status to Waiting",
    revisionAndSpecChanged: "Application has pending changes (revision and spec differ), setting status to Waiting",
    revisionChanged: "Application has pending changes, setting status to Waiting",
    specChanged: "Application has pending changes (spec differs), setting status to Waiting",
    syncedHealthy: "Application resource has synced, updating status to Healthy",
    syncedProgressing: "Application resource has synced, updating status to Progressing",
    pendingSucceeded: "Application resource completed a sync successfully, updating status from Pending to Progressing",
    pendingCompleted: "Application resource completed a sync, updating status from Pending to Progressing",
    pendingRunning: "Application resource became Progressing, updating status from Pending to Progressing",
    pendingError: "Application resource has error and cannot sync, updating status to Progressing",
    becameHealthy: "Application resource became Healthy, updating status from Progressing to Healthy",
    movedToPending: "Application moved to Pending status, watching for the Application resource to start Progressing",
    rolloutStep: (step: string) => `ApplicationSet is performing rollout of step ${step}`,
    rolloutComplete: "ApplicationSet Rollout has completed",
    syncReason: "ApplicationSet RollingSync triggered a sync of this Application resource",
};

export const isRollingSync = (appset: any) => appset.spec?.strategy?.type === "RollingSync" && !!appset.spec?.strategy?.rollingSync;
export const rollingSyncEnabled = (appset: any) => isRollingSync(appset) && (appset.spec.strategy.rollingSync.steps ?? []).length > 0;

/** The Applications of each step, and each Application's 0-based step (its first matching step). */
export function buildAppDependencyList(appset: any, apps: any[]): { steps: string[][]; stepOf: Map<string, number> } {
    const stepsSpec: any[] = rollingSyncEnabled(appset) ? appset.spec.strategy.rollingSync.steps : [];
    const steps: string[][] = stepsSpec.map(() => []);
    const stepOf = new Map<string, number>();
    for (const app of apps) {
        stepsSpec.forEach((step, i) => {
            const selected = stepSelects(step, app.metadata?.labels ?? {});
            if (selected) {
                steps[i].push(app.metadata.name);
                if (!stepOf.has(app.metadata.name)) stepOf.set(app.metadata.name, i);
            }
        });
    }
    return { steps, stepOf };
}

/** 1-based, -1 for an Application no step selects. */
export const appStep = (name: string, stepOf: Map<string, number>) => (stepOf.has(name) ? stepOf.get(name)! + 1 : -1);

/** `status.GetRevisions()`: the revision the last comparison saw. */
const revisionsOf = (app: any): string[] => app.status?.sync?.revisions ?? (app.status?.sync?.revision ? [app.status.sync.revision] : []);

/** What `disableAutomatedSync` does to a generated Application before it is written or compared. */
export function disableAutomatedSync(app: any): any {
    if (!app.spec?.syncPolicy?.automated) return app;
    return {
        ...app,
        spec: { ...app.spec, syncPolicy: { ...app.spec.syncPolicy, automated: { ...app.spec.syncPolicy.automated, enabled: false } } },
    };
}

const after = (a: string | undefined, b: string | undefined) => !!a && !!b && Date.parse(a) > Date.parse(b);

/**
 * `UpdateApplicationSetApplicationStatus`: each current Application's entry moved on by what its
 * status shows. `desired` are the generated Applications (a spec change makes an entry Waiting).
 */
export function updateApplicationStatus(
    appset: any,
    apps: any[],
    desired: any[],
    stepOf: Map<string, number>,
    now: string,
): AppStatusEntry[] {
    const current: AppStatusEntry[] = appset.status?.applicationStatus ?? [];
    const desiredByName = new Map(desired.map((d) => [d.metadata.name, d]));
    return apps.map((app) => {
        const name = app.metadata.name;
        const health = app.status?.health?.status;
        const sync = app.status?.sync?.status;
        const found = current.find((s) => s.application === name);
        const cur: AppStatusEntry = found ?? {
            application: name,
            targetRevisions: revisionsOf(app),
            lastTransitionTime: now,
            message: MESSAGES.noStatus,
            status: "Waiting",
            step: String(appStep(name, stepOf)),
        };
        const next: AppStatusEntry = { ...cur, step: String(appStep(name, stepOf)) };
        const revisionsChanged = JSON.stringify(cur.targetRevisions ?? []) !== JSON.stringify(revisionsOf(app));
        const want = desiredByName.get(name);
        const specChanged = !!want && JSON.stringify(app.spec) !== JSON.stringify(disableAutomatedSync(want).spec);
        if (revisionsChanged || specChanged) {
            next.targetRevisions = revisionsOf(app);
            next.message =
                revisionsChanged && specChanged
                    ? MESSAGES.revisionAndSpecChanged
                    : revisionsChanged
                      ? MESSAGES.revisionChanged
                      : MESSAGES.specChanged;
            next.status = "Waiting";
            next.lastTransitionTime = now;
        }
        if (next.status === "Waiting") {
            // a changed app that needs no sync moves on at once
            if (sync === "Synced") {
                next.lastTransitionTime = now;
                next.status = health === "Healthy" ? "Healthy" : "Progressing";
                next.message = health === "Healthy" ? MESSAGES.syncedHealthy : MESSAGES.syncedProgressing;
            }
        } else {
            if (cur.status === "Pending") {
                const reconciledAt = app.status?.reconciledAt;
                if (!reconciledAt || (next.lastTransitionTime && after(reconciledAt, next.lastTransitionTime))) {
                    const op = app.status?.operationState;
                    if (op && after(op.startedAt, cur.lastTransitionTime)) {
                        next.lastTransitionTime = now;
                        next.status = "Progressing";
                        next.message =
                            op.phase === "Succeeded"
                                ? MESSAGES.pendingSucceeded
                                : ["Failed", "Error"].includes(op.phase)
                                  ? MESSAGES.pendingCompleted
                                  : MESSAGES.pendingRunning;
                    } else if (
                        (app.status?.conditions ?? []).some((c: any) => c.type === "InvalidSpecError" || c.type === "UnknownError")
                    ) {
                        next.lastTransitionTime = now;
                        next.status = "Progressing";
                        next.message = MESSAGES.pendingError;
                    }
                }
            }
            if (cur.status === "Progressing" && health === "Healthy" && sync === "Synced") {
                next.lastTransitionTime = now;
                next.status = "Healthy";
                next.message = MESSAGES.becameHealthy;
            }
        }
        return next;
    });
}

/** `getAppsToSync`: every Application of each step up to and including the first step not yet all Healthy. */
export function appsToSync(statuses: AppStatusEntry[], steps: string[][], apps: any[]): Set<string> {
    const exists = new Set(apps.map((a) => a.metadata.name));
    const out = new Set<string>();
    for (const step of steps) {
        for (const name of step) out.add(name);
        const next = step.every((name) => exists.has(name) && statuses.find((s) => s.application === name)?.status === "Healthy");
        if (!next) break;
    }
    return out;
}

/** `UpdateApplicationSetApplicationStatusProgress`: Waiting entries allowed to sync become Pending (maxUpdate per step). */
export function updateApplicationStatusProgress(
    appset: any,
    statuses: AppStatusEntry[],
    toSync: Set<string>,
    stepOf: Map<string, number>,
    now: string,
): AppStatusEntry[] {
    if (!rollingSyncEnabled(appset)) return [];
    const stepsSpec: any[] = appset.spec.strategy.rollingSync.steps;
    const stepIndex = (name: string) => stepOf.get(name) ?? 0; // Go's map default for a missing key
    const updating = stepsSpec.map(() => 0);
    const total = stepsSpec.map(() => 0);
    for (const s of statuses) {
        total[stepIndex(s.application)]++;
        if (s.status === "Pending" || s.status === "Progressing") updating[stepIndex(s.application)]++;
    }
    return statuses.map((s) => {
        const i = stepIndex(s.application);
        const max = maxUpdateLimit(stepsSpec[i]?.maxUpdate, total[i]);
        const allowed = max === null || !(updating[i] >= max);
        if (s.status === "Waiting" && toSync.has(s.application) && allowed) {
            updating[i]++;
            return { ...s, status: "Pending", message: MESSAGES.movedToPending, lastTransitionTime: now };
        }
        return s;
    });
}

/** `updateApplicationSetApplicationStatusConditions`: RolloutProgressing, True at the first step not all Healthy. */
export function rolloutCondition(
    appset: any,
    statuses: AppStatusEntry[],
): { type: string; status: string; reason: string; message: string } | null {
    if (!isRollingSync(appset)) return null;
    const done = new Map<string, boolean>();
    for (const s of statuses) done.set(s.step, (done.get(s.step) ?? true) && s.status === "Healthy");
    const n = (appset.spec.strategy.rollingSync.steps ?? []).length;
    for (let i = 1; i <= n; i++) {
        const step = String(i);
        if (done.has(step) && !done.get(step))
            return { type: "RolloutProgressing", status: "True", reason: "ApplicationSetModified", message: MESSAGES.rolloutStep(step) };
    }
    return { type: "RolloutProgressing", status: "False", reason: "ApplicationSetRolloutComplete", message: MESSAGES.rolloutComplete };
}

/** `SyncDesiredApplications` + `syncApplication`: automated sync off on every generated app; a sync operation on the Pending ones allowed to sync. */
export function syncDesiredApplications(statuses: AppStatusEntry[], toSync: Set<string>, desired: any[]): any[] {
    return desired.map((d) => {
        const auto = d.spec?.syncPolicy?.automated;
        const prune = !!auto && auto.enabled !== false && !!auto.prune;
        const app = disableAutomatedSync(d);
        const pending = statuses.find((s) => s.application === d.metadata.name)?.status === "Pending";
        if (!(toSync.has(d.metadata.name) && pending)) return app;
        const policy = d.spec?.syncPolicy;
        const operation: any = {
            initiatedBy: { username: "applicationset-controller", automated: true },
            info: [{ name: "Reason", value: MESSAGES.syncReason }],
            sync: {},
            retry: policy?.retry ?? { limit: 5 },
        };
        if (policy) {
            if (policy.syncOptions) operation.sync.syncOptions = policy.syncOptions;
            operation.sync.prune = prune;
        }
        return { ...app, operation };
    });
}
