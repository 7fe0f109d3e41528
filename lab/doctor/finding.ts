/**
 * What a finding of the rollout doctor is (its kinds, its evidence), what the findings are found from,
 * and the small helpers every findings file words them with. The files that find them (findings.ts,
 * findings36.ts, hookFindings.ts, skip.ts) import this one, never each other's helpers.
 */
import {
    timeMs,
    type Time,
    type Application,
    type ApplicationSet,
    type ApplicationSetApplicationStatus,
    type AppProject,
    type Job,
    type RollingSyncStep,
} from "../argo/types";

export type FindingKind =
    /** An Application's own sync failed or is being retried after failures, at any step. */
    | "SyncFailed"
    /** Its rollout entry is Healthy while it is OutOfSync at the target, and nothing syncs it (#29240, #29410). */
    | "HealthyOutOfSync"
    /** A step held by an Application that is Healthy but not Synced: a step needs both (#19771). */
    | "HealthyNotSynced"
    /** An entry Pending that never turns Progressing (#12459, #13926, #19535, #20576). */
    | "PendingNotProgressing"
    /** An Application that no step selects: the rollout never syncs it (step -1; #18817). */
    | "NotSelected"
    /** An Application that two or more steps select (#13501). */
    | "SelectedTwice"
    /** A step with no matchExpressions (it selects every Application) or that selects none. */
    | "EmptyStep"
    /** A matchExpression operator RollingSync does not know (Argo CD 3.5 and 3.6 understand In and NotIn). */
    | "InvalidOperator"
    /** A maxUpdate that is not a positive count or percentage. */
    | "InvalidMaxUpdate"
    /** maxUpdate holds the step: as many Applications Pending or Progressing as it allows (#16881). */
    | "MaxUpdateHolding"
    /** A status entry of an Application that no longer exists (#13331). */
    | "DeletedApplication"
    /** An Application Argo CD cannot compare (ComparisonError, InvalidSpecError): its step waits on it when it comes. */
    | "CannotCompare"
    /** A hook the operation still shows Running while its Job has finished (#4979, #15292), or one gone from the cluster. */
    | "HookLeftRunning"
    /** A hook the operation waits for whose Pod has not started (a volume or an image it waits for): the sync waits with it. */
    | "HookNotStarted"
    /** Argo CD's own InvalidRolloutConfig condition (Argo CD 3.6 and later), read as it is. */
    | "InvalidRolloutConfig"
    /** A sync window keeps the step's sync waiting (RollingSync's syncs are automated: manualSync does not let them through). */
    | "SyncWindow"
    /** Argo CD 3.6's reconcile gate holds every step: an Application not reconciled since the latest change. */
    | "ReconcileGate"
    /** Argo CD 3.6 refuses the rollout: its ErrorOccurred condition with reason ApplicationSetRolloutError ("No steps defined for rollout"). */
    | "RolloutError"
    /** A RollingSync with no steps: Argo CD 3.5 runs no rollout at all (each Application syncs by its own policy). */
    | "NoSteps"
    /**
     * The ApplicationSet cannot generate its Applications (its ErrorOccurred condition: a generator's file it cannot
     * parse, ApplicationGenerationFromParamsError, or a template it cannot render, RenderTemplateParamsError): they stay
     * as it last generated them, a commit's change does not reach them.
     */
    | "GenerationError";

export interface Evidence {
    /** The object, as `Kind namespace/name`. */
    object: string;
    /** The field read, as a path. */
    field: string;
    value: string;
    /** When the field got that value, where the object says. */
    time?: string;
}

export interface Finding {
    kind: FindingKind;
    /** The Application it is about; null for the rollout's configuration. */
    application: string | null;
    /** The step it is in (-1: none selects it); null where no step applies. */
    step: number | null;
    /** What is stuck and why, in one sentence. */
    message: string;
    evidence: Evidence[];
    /** One line on what to do. */
    todo: string;
}

/** One Application of the rollout, as diagnose.ts sees it. */
export interface Entry {
    name: string;
    app: Application | undefined;
    /** Its entry in status.applicationStatus, if any. */
    status: ApplicationSetApplicationStatus | undefined;
    step: number | null;
}

export interface FindingsInput {
    appset: ApplicationSet;
    entries: Entry[];
    /** The step the rollout is at, or null when complete. */
    current: number | null;
    now: Date;
    stuckAfterSeconds: number;
    /** Why an Application's sync failed (diagnose.ts's cause), or null when it did not. */
    syncFailure: (app: Application) => { reason: string; message: string; evidence: Evidence[] } | null;
    /** The hook Job of an Application's namespace by name (for HookLeftRunning). */
    job: (namespace: string, name: string) => Job | undefined;
    /** The hook Job a Running operation waits for that is gone from the cluster (hooks.ts's goneHookJob), for HookLeftRunning. */
    goneHook: (app: Application) => { namespace: string; job: string } | null;
    /** The hook Pod a Running operation waits for that has not started (hooks.ts's waitingHookPod), for HookNotStarted. */
    waitingHook: (app: Application) => { namespace: string; job: string; pod: string; reason: string; since?: string } | null;
    /** An Application's AppProject, where the input holds it (for SyncWindow). */
    project: (app: Application) => AppProject | undefined;
    /** Read from a file (a dump may leave objects out: an Application not in it need not be gone). */
    fromFile?: boolean;
}

/** An ApplicationSet's steps as written. */
export const stepsOf = (appset: ApplicationSet): RollingSyncStep[] => appset.spec?.strategy?.rollingSync?.steps ?? [];

export const appRef = (app: Application) => `Application ${app.metadata?.namespace}/${app.metadata?.name}`;
export const setRef = (appset: ApplicationSet) => `ApplicationSet ${appset.metadata?.namespace}/${appset.metadata?.name}`;

/** " (step N)", or nothing for an Application no step places. */
export const stepText = (e: Entry) => (e.step !== null && e.step > 0 ? ` (step ${e.step})` : "");

/** Seconds from an ISO time to now; NaN when the time is missing. */
export const ageSeconds = (t: Time | undefined, now: Date) => (now.getTime() - timeMs(t)) / 1000;
