/**
 * RollingSync as Argo CD does it (`applicationset/progressivesync/progressive_sync.go`), as pure
 * functions over plain objects, in the order `PerformProgressiveSyncs` calls them:
 * buildAppDependencyList -> updateApplicationStatus -> [3.6: reconcileGate] -> appsToSync ->
 * updateApplicationStatusProgress -> [3.6: invalidRolloutConfig] rolloutCondition, then
 * syncDesiredApplications on the generated Applications. The ApplicationSet controller
 * (appsetController.ts) runs them when progressive syncs are on (`applicationsetcontroller.enable.progressive.syncs`
 * in argocd-cmd-params-cm).
 *
 * Two minors are modelled (`ArgoMinor`); where v3.6.2 differs from v3.5.x it says so at the function:
 * the validation issues and the InvalidRolloutConfig condition (validation_issues.go), the reconcile
 * gate (ensureApplicationsReconciled), and a sync pinned to the entry's target revisions
 * (syncApplication). Everything else is the same code in both.
 *
 * Upstream moves Pending to Progressing only when the sync started strictly after the Pending
 * transition, both in whole seconds: a sync started within the second the entry went Pending leaves
 * it Pending, and the entry is synced again (every tenant's first sync on the real plane, in
 * test/real/tenantsLab.real.ts). The profile at v3.5.1's timings writes whole seconds too; the fast
 * profile writes milliseconds (`wholeSecondTimes`), or its every sync would be started twice.
 */

import { REFRESH_ANNOTATION } from "../lab/argo/application";
import type { Application, ApplicationSet, LabelSelectorRequirement, Operation, RollingSyncStep } from "../lab/argo/types";

/** The Argo CD minor the simulation behaves as. */
export type ArgoMinor = "3.5" | "3.6";

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
    validConfig: "Rolling Sync Configured correctly",
    noSteps: "No steps defined for rollout",
};

export const isRollingSync = (appset: ApplicationSet) =>
    appset.spec?.strategy?.type === "RollingSync" && !!appset.spec?.strategy?.rollingSync;
export const rollingSyncEnabled = (appset: ApplicationSet) => isRollingSync(appset) && stepsOf(appset).length > 0;
/** The RollingSync steps as written ([] when there are none). */
const stepsOf = (appset: ApplicationSet): RollingSyncStep[] => appset.spec?.strategy?.rollingSync?.steps ?? [];

/**
 * `labelMatchedExpression`: whether one expression holds for a label the Application has. An operator
 * other than In and NotIn matches nothing (v3.5 logs it; v3.6 also records it as a validation issue).
 * The simulation's own reading of upstream, kept apart from the doctor's (lab/argo/rollingSync.ts), so
 * that a misreading in one is caught by the tests of the other.
 */
function labelMatched(val: string, expr: LabelSelectorRequirement): { matched: boolean; invalid: boolean } {
    if (expr.operator !== "In" && expr.operator !== "NotIn") return { matched: false, invalid: true };
    const listed = (expr.values ?? []).includes(val);
    return { matched: expr.operator === "In" ? listed : !listed, invalid: false };
}

/** What v3.6.2's buildAppDependencyList and its maxUpdate check collect (validation_issues.go); v3.5 collects nothing. */
export interface ValidationIssues {
    /** 0-based step and operator, each pair once. */
    invalidOperators: { step: number; operator: string }[];
    /** Application -> every 0-based step that selects it, the first one first. */
    duplicates: Map<string, number[]>;
    /** 0-based steps that select no Application. */
    emptySteps: number[];
    /** 0-based step and the maxUpdate as written, each step once. */
    invalidMaxUpdates: { step: number; value: string }[];
}

export const noIssues = (): ValidationIssues => ({ invalidOperators: [], duplicates: new Map(), emptySteps: [], invalidMaxUpdates: [] });

const hasIssues = (v: ValidationIssues) =>
    v.invalidOperators.length > 0 || v.duplicates.size > 0 || v.emptySteps.length > 0 || v.invalidMaxUpdates.length > 0;

/** The Applications of each step, each Application's 0-based step (its first matching step), and v3.6's validation issues. */
export function buildAppDependencyList(
    appset: ApplicationSet,
    apps: Application[],
): { steps: string[][]; stepOf: Map<string, number>; issues: ValidationIssues } {
    const issues = noIssues();
    const stepsSpec = rollingSyncEnabled(appset) ? stepsOf(appset) : [];
    const steps: string[][] = stepsSpec.map(() => []);
    const stepOf = new Map<string, number>();
    for (const app of apps) {
        const labels: Record<string, string> = app.metadata?.labels ?? {};
        stepsSpec.forEach((step, i) => {
            let selected = true;
            for (const expr of step.matchExpressions ?? []) {
                const val = labels[expr.key];
                if (val === undefined) {
                    if (expr.operator === "In") {
                        selected = false;
                        break;
                    }
                    continue;
                }
                const m = labelMatched(val, expr);
                if (m.invalid && !issues.invalidOperators.some((o) => o.step === i && o.operator === expr.operator))
                    issues.invalidOperators.push({ step: i, operator: expr.operator });
                if (!m.matched) {
                    selected = false;
                    break;
                }
            }
            if (!selected) return;
            const name = app.metadata.name;
            steps[i].push(name);
            if (stepOf.has(name)) issues.duplicates.set(name, [...(issues.duplicates.get(name) ?? [stepOf.get(name)!]), i]);
            else stepOf.set(name, i);
        });
    }
    steps.forEach((names, i) => names.length === 0 && issues.emptySteps.push(i));
    return { steps, stepOf, issues };
}

/**
 * `getConditionMessage` (v3.6.2 validation_issues.go): one kind of issue, by precedence: operators,
 * Applications selected twice, maxUpdate, empty steps; step numbers 1-based, Go's formatting kept
 * (an empty-steps list prints as `[1 2]`).
 */
export function validationMessage(v: ValidationIssues): string {
    const n = (i: number) => String(i + 1);
    if (v.invalidOperators.length) {
        const steps = v.invalidOperators.map((o) => n(o.step));
        const ops = v.invalidOperators.map((o) => o.operator).join(", ");
        return steps.length === 1
            ? `Step ${steps[0]} has invalid matchExpression operators: ${ops}. Supported Operators are 'In' and 'NotIn'`
            : `Steps ${steps.join(", ")} have invalid matchExpression operators: ${ops}. Supported Operators are 'In' and 'NotIn'`;
    }
    if (v.duplicates.size) {
        const names = [...v.duplicates.keys()].sort();
        const steps = names.map((a) => v.duplicates.get(a)!.map(n).join("-"));
        return names.length === 1
            ? `Application '${names[0]}' is selected by multiple steps: (${steps[0]})`
            : `Applications '${names.join("', '")}' are selected by multiple steps: [(${steps.join("), (")})]`;
    }
    if (v.invalidMaxUpdates.length) {
        const steps = v.invalidMaxUpdates.map((m) => n(m.step));
        const values = v.invalidMaxUpdates.map((m) => m.value);
        return steps.length === 1
            ? `Step ${steps[0]} has an invalid maxUpdate value: ${values[0]}`
            : `Steps ${steps.join(", ")} have invalid maxUpdate values: [${values.join(", ")}]`;
    }
    if (v.emptySteps.length) return `Steps [${v.emptySteps.map(n).join(" ")}] have no applications matching their criteria`;
    return "";
}

/** `getInvalidRolloutConfig` (v3.6.2): the InvalidRolloutConfig condition written with RolloutProgressing at the end of a pass. */
export function invalidRolloutConfig(appset: ApplicationSet, issues: ValidationIssues): Condition | null {
    if (!isRollingSync(appset)) return null;
    return hasIssues(issues)
        ? { type: "InvalidRolloutConfig", status: "True", reason: "ApplicationSetInvalidRolloutConfig", message: validationMessage(issues) }
        : { type: "InvalidRolloutConfig", status: "False", reason: "ApplicationSetValidRolloutConfig", message: MESSAGES.validConfig };
}

export interface Condition {
    type: string;
    status: string;
    reason: string;
    message: string;
}

/** 1-based, -1 for an Application no step selects. */
export const appStep = (name: string, stepOf: Map<string, number>) => (stepOf.has(name) ? stepOf.get(name)! + 1 : -1);

/** `status.GetRevisions()`: the revision the last comparison saw. */
const revisionsOf = (app: Application): string[] =>
    app.status?.sync?.revisions ?? (app.status?.sync?.revision ? [app.status.sync.revision] : []);

/** What `disableAutomatedSync` does to a generated Application before it is written or compared. */
export function disableAutomatedSync(app: Application): Application {
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
    appset: ApplicationSet,
    apps: Application[],
    desired: Application[],
    stepOf: Map<string, number>,
    now: string,
): AppStatusEntry[] {
    const current = (appset.status?.applicationStatus ?? []) as AppStatusEntry[]; // as the controller wrote them
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
                                : ["Failed", "Error"].includes(op.phase ?? "")
                                  ? MESSAGES.pendingCompleted
                                  : MESSAGES.pendingRunning;
                    } else if ((app.status?.conditions ?? []).some((c) => c.type === "InvalidSpecError" || c.type === "UnknownError")) {
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
export function appsToSync(statuses: AppStatusEntry[], steps: string[][], apps: Application[]): Set<string> {
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
/**
 * A step's maxUpdate as `intstr.GetScaledValueFromIntOrPercent(maxUpdate, total, false)` scales it,
 * with progressive_sync.go's raise of a non-zero percentage to at least 1: a number is itself; "N%" of
 * `total`, rounded down; any other string fails to scale (`invalid`: v3.6 records it) and counts as 1.
 * null: no maxUpdate, no limit.
 */
export function scaledMaxUpdate(maxUpdate: unknown, total: number): { limit: number | null; invalid: boolean } {
    if (maxUpdate === undefined || maxUpdate === null) return { limit: null, invalid: false };
    if (typeof maxUpdate === "number") return { limit: maxUpdate, invalid: false };
    const s = String(maxUpdate);
    const pct = /^([+-]?\d+)%$/.exec(s);
    const value = pct ? Math.floor((Number(pct[1]) * total) / 100) : 0;
    return { limit: s !== "0%" && value < 1 ? 1 : value, invalid: !pct };
}

export function updateApplicationStatusProgress(
    appset: ApplicationSet,
    statuses: AppStatusEntry[],
    toSync: Set<string>,
    stepOf: Map<string, number>,
    now: string,
    /** v3.6 records each step's invalid maxUpdate here, once a step. */
    issues: ValidationIssues = noIssues(),
): AppStatusEntry[] {
    if (!rollingSyncEnabled(appset)) return [];
    const stepsSpec = stepsOf(appset);
    const stepIndex = (name: string) => stepOf.get(name) ?? 0; // Go's map default for a missing key
    const updating = stepsSpec.map(() => 0);
    const total = stepsSpec.map(() => 0);
    for (const s of statuses) {
        total[stepIndex(s.application)]++;
        if (s.status === "Pending" || s.status === "Progressing") updating[stepIndex(s.application)]++;
    }
    return statuses.map((s) => {
        const i = stepIndex(s.application);
        const { limit: max, invalid } = scaledMaxUpdate(stepsSpec[i]?.maxUpdate, total[i]);
        if (invalid && !issues.invalidMaxUpdates.some((m) => m.step === i))
            issues.invalidMaxUpdates.push({ step: i, value: String(stepsSpec[i].maxUpdate) });
        const allowed = max === null || !(updating[i] >= max);
        if (s.status === "Waiting" && toSync.has(s.application) && allowed) {
            updating[i]++;
            return { ...s, status: "Pending", message: MESSAGES.movedToPending, lastTransitionTime: now };
        }
        return s;
    });
}

/** `updateApplicationSetApplicationStatusConditions`: RolloutProgressing, True at the first step not all Healthy. */
export function rolloutCondition(appset: ApplicationSet, statuses: AppStatusEntry[]): Condition | null {
    if (!isRollingSync(appset)) return null;
    const done = new Map<string, boolean>();
    for (const s of statuses) done.set(s.step, (done.get(s.step) ?? true) && s.status === "Healthy");
    const n = stepsOf(appset).length;
    for (let i = 1; i <= n; i++) {
        const step = String(i);
        if (done.has(step) && !done.get(step))
            return { type: "RolloutProgressing", status: "True", reason: "ApplicationSetModified", message: MESSAGES.rolloutStep(step) };
    }
    return { type: "RolloutProgressing", status: "False", reason: "ApplicationSetRolloutComplete", message: MESSAGES.rolloutComplete };
}

/**
 * `SyncDesiredApplications` + `syncApplication`: automated sync off on every generated app; a sync
 * operation on the Pending ones allowed to sync. v3.6 pins that sync to the entry's target revisions
 * (`sync.revision`, or `sync.revisions` for several sources), so a commit landing mid-step is not what
 * the step syncs; v3.5 leaves the revision to the application controller (the branch's head then).
 */
export function syncDesiredApplications(
    statuses: AppStatusEntry[],
    toSync: Set<string>,
    desired: Application[],
    minor: ArgoMinor = "3.5",
): Application[] {
    return desired.map((d) => {
        const auto = d.spec?.syncPolicy?.automated;
        const prune = !!auto && auto.enabled !== false && !!auto.prune;
        const app = disableAutomatedSync(d);
        const entry = statuses.find((s) => s.application === d.metadata.name);
        const pending = entry?.status === "Pending";
        if (!(toSync.has(d.metadata.name) && pending)) return app;
        const policy = d.spec?.syncPolicy;
        const sync: NonNullable<Operation["sync"]> = {};
        const operation: Operation = {
            initiatedBy: { username: "applicationset-controller", automated: true },
            info: [{ name: "Reason", value: MESSAGES.syncReason }],
            sync,
            retry: policy?.retry ?? { limit: 5 },
        };
        const pinned = entry?.targetRevisions ?? [];
        if (minor === "3.6") {
            if ((d.spec?.sources ?? []).length > 1) sync.revisions = pinned;
            else if (pinned.length) sync.revision = pinned[0];
        }
        if (policy) {
            if (policy.syncOptions) sync.syncOptions = policy.syncOptions;
            sync.prune = prune;
        }
        return { ...app, operation };
    });
}

/** Whether an entry's message says it changed (not a new Application): `hasPendingChanges` (v3.6.2). */
const hasPendingChanges = (s: AppStatusEntry) =>
    [MESSAGES.revisionChanged, MESSAGES.revisionAndSpecChanged, MESSAGES.specChanged].includes(s.message);

/** `GetLatestWaitingTransitionTimeOfAppset` (v3.6.2): the newest transition of a Waiting entry with pending changes, or null. */
export function latestWaitingTransition(statuses: AppStatusEntry[]): string | null {
    let latest: string | null = null;
    for (const s of statuses) {
        if (s.status !== "Waiting" || !s.lastTransitionTime || !hasPendingChanges(s)) continue;
        if (latest === null || Date.parse(s.lastTransitionTime) > Date.parse(latest)) latest = s.lastTransitionTime;
    }
    return latest;
}

export interface GateResult {
    /** The rollout may go on this pass. */
    open: boolean;
    /** The Applications to annotate with `argocd.argoproj.io/refresh: normal` now. */
    refresh: string[];
    /** When to look again (ms from now), while the gate is held; null when it is open. */
    recheckMs: number | null;
}

/**
 * `ensureApplicationsReconciled` (v3.6.2; v3.5 has no gate). With an entry Waiting on a change (the
 * newest such transition taken from the status before this pass, else after it), no step progresses
 * until every current Application's `status.reconciledAt` is at or after it; within the grace period
 * (`--refresh-grace-period-seconds`, 30 by default) it only waits, then it asks for a refresh of each
 * Application not reconciled since (one that has a refresh annotation already is left) and waits
 * again. The controller looks again when the grace period ends, and every second after it
 * (getMinRequeueAfter). `since`: the newest Waiting transition of the status before the pass, else
 * of the one the pass just wrote (`latestWaitingTransition`).
 */
export function ensureApplicationsReconciled(since: string | null, apps: Application[], nowMs: number, graceMs: number): GateResult {
    if (since === null) return { open: true, refresh: [], recheckMs: null };
    const elapsed = nowMs - Date.parse(since);
    if (graceMs > 0 && elapsed < graceMs) return { open: false, refresh: [], recheckMs: graceMs - elapsed };
    const behind = apps.filter((a) => {
        const at = a.status?.reconciledAt;
        return !at || Date.parse(at) < Date.parse(since);
    });
    if (!behind.length) return { open: true, refresh: [], recheckMs: null };
    const refresh = behind.filter((a) => !a.metadata?.annotations?.[REFRESH_ANNOTATION]).map((a) => a.metadata.name);
    return { open: false, refresh, recheckMs: 1_000 };
}
