/**
 * The silent skip (#29240, #29410) as the doctor says it: an Application whose rollout entry is Healthy
 * while it is OutOfSync at the target and nothing syncs it. diagnose.ts finds them (its `skipped`).
 */
import type { Application, ApplicationSet } from "../argo/types";
import { appRef, setRef, type Finding } from "./finding";

/**
 * A skipped Application in words: a source it never synced to, or (the same source) resources that are
 * no longer what Git has: deleted or changed by hand, which auto-sync, off under RollingSync, does not repair.
 */
export function skipText(s: { application: string; step: number; runs: string; shouldRun: string }): string {
    return s.runs === s.shouldRun
        ? `${s.application} (step ${s.step}) is OutOfSync at ${s.shouldRun} while its entry is Healthy: its resources are not what Git has (deleted or changed by hand?)`
        : `${s.application} (step ${s.step}) was skipped: its entry is Healthy but it runs ${s.runs}, not ${s.shouldRun}`;
}

/** The silent skip as a finding (#29240, #29410): diagnose.ts finds them (its `skipped`). */
export function skipFinding(
    appset: ApplicationSet,
    app: Application,
    s: { application: string; step: number; runs: string; shouldRun: string; remedy: string },
): Finding {
    const entry = (appset.status?.applicationStatus ?? []).find((x) => x.application === s.application);
    return {
        kind: "HealthyOutOfSync",
        application: s.application,
        step: s.step,
        message: skipText(s),
        evidence: [
            {
                object: setRef(appset),
                field: `status.applicationStatus[${s.application}].status`,
                value: "Healthy",
                time: entry?.lastTransitionTime,
            },
            { object: appRef(app), field: "status.sync.status", value: String(app.status?.sync?.status) },
            {
                object: appRef(app),
                field: "status.operationState.syncResult.revision",
                value: String(app.status?.operationState?.syncResult?.revision ?? "(none)"),
                time: app.status?.operationState?.finishedAt,
            },
        ],
        todo: s.remedy,
    };
}
