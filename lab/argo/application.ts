/**
 * Reading Argo CD v3.5.1 Application status (pure functions over the objects).
 */

import type { Application } from "./types";

/** The namespace the upstream install assumes, and where the labs' Applications live. */
export const ARGOCD_NAMESPACE = "argocd";
/** The cluster Argo CD runs in, as a destination names it (its `in-cluster` cluster's server). */
export const IN_CLUSTER_SERVER = "https://kubernetes.default.svc";
export const REFRESH_ANNOTATION = "argocd.argoproj.io/refresh";
/** Asks the ApplicationSet controller for a reconcile now, past the repo-server's revision cache; removed after it (common.AnnotationApplicationSetRefresh). */
export const APPSET_REFRESH_ANNOTATION = "argocd.argoproj.io/application-set-refresh";
export const ERROR_CONDITION_TYPES = ["ComparisonError", "SyncError", "InvalidSpecError", "UnknownError"];

export function errorConditions(app: Application | null | undefined): { type: string; message: string }[] {
    return (app?.status?.conditions ?? [])
        .filter((c) => ERROR_CONDITION_TYPES.includes(c?.type))
        .map((c) => ({ type: c.type, message: c.message ?? "" }));
}

/**
 * "Synced to commit X" as docs/argocd-v3.5.1.md defines it: sync Synced at X, last operation Succeeded at X,
 * Healthy, and no error condition. Returns null when it holds, else what is missing.
 *
 * `noOpAllowed`: accept a last operation at another commit. Argo CD auto-syncs only when an app is
 * OutOfSync (controller/appcontroller.go autoSync, "Skipping auto-sync: application status is
 * Synced"), so a commit that renders exactly like the last synced one (a revert) is Synced at X
 * with no operation at X, ever.
 */
export function notSyncedBecause(app: Application | null | undefined, sha: string, opts: { noOpAllowed?: boolean } = {}): string | null {
    if (!app) return "the Application does not exist";
    const st = app.status ?? {};
    if (st.sync?.status !== "Synced") return `sync status is ${st.sync?.status ?? "(none)"}`;
    if (st.sync?.revision !== sha) return `synced revision is ${st.sync?.revision ?? "(none)"}`;
    const op = st.operationState;
    if (op?.phase !== "Succeeded") return `last operation is ${op?.phase ?? "(none)"}`;
    if (!opts.noOpAllowed && op?.syncResult?.revision !== sha) return `last operation synced ${op?.syncResult?.revision ?? "(none)"}`;
    if (st.health?.status !== "Healthy") return `health is ${st.health?.status ?? "(none)"}`;
    const errs = errorConditions(app);
    if (errs.length) return `condition ${errs[0].type}`;
    return null;
}

/** The phases of an operation (and of a hook in its sync result) that ended in failure. */
export const FAILED_PHASES: readonly string[] = ["Failed", "Error"];

/**
 * Why an Application can never become synced to `sha` without someone changing something, or null
 * while it still may: the sync to it failed after its retries, a SyncError, or a ComparisonError
 * that a refresh did not clear (`refreshPending`: a refresh annotation is still waiting to be
 * handled, so an error on the app may be from before it).
 */
export function cannotSyncBecause(app: Application | null | undefined, sha: string, opts: { refreshPending: boolean }): string | null {
    if (!app) return null;
    const st = app.status ?? {};
    const op = st.operationState;
    const opRevision = op?.syncResult?.revision ?? op?.operation?.sync?.revision;
    if (op?.phase && FAILED_PHASES.includes(op.phase) && opRevision === sha)
        return `the sync to it ended ${op.phase}: ${op.message ?? "(no message)"}`;
    const conds = errorConditions(app);
    // a SyncError about another commit says nothing about this one
    const syncError = conds.find((c) => c.type === "SyncError" && c.message.includes(sha));
    if (syncError) return `SyncError: ${syncError.message}`;
    const cmp = conds.find((c) => c.type === "ComparisonError");
    if (cmp && !opts.refreshPending) return `Argo CD cannot compare it (ComparisonError after a refresh): ${cmp.message}`;
    return null;
}

/** One line with everything a person needs to see why an Application is not where we wait for it. */
export function describeApp(app: Application | null | undefined): string {
    if (!app) return "the Application does not exist";
    const st = app.status ?? {};
    const op = st.operationState;
    const parts = [
        `targetRevision=${app.spec?.source?.targetRevision ?? "?"}`,
        `sync=${st.sync?.status ?? "?"}`,
        `revision=${st.sync?.revision ?? "?"}`,
        `health=${st.health?.status ?? "?"}`,
        `operation=${op ? `${op.phase}${op.message ? ` (${op.message})` : ""}` : "none"}`,
    ];
    const conds = (st.conditions ?? []).map((c) => `${c.type}: ${c.message}`);
    parts.push(`conditions=${conds.length ? conds.join("; ") : "none"}`);
    return parts.join(", ");
}

/** Argo CD v3's default resource tracking: `<app>:<group>/<kind>:<namespace>/<name>`. */
export const TRACKING_ANNOTATION = "argocd.argoproj.io/tracking-id";
/** The tracking label (Argo CD's label tracking method). */
export const INSTANCE_LABEL = "app.kubernetes.io/instance";
/** The hook annotations (gitops-engine/pkg/sync/hook, common). */
export const HOOK_ANNOTATION = "argocd.argoproj.io/hook";
export const HOOK_DELETE_POLICY = "argocd.argoproj.io/hook-delete-policy";
export const SYNC_WAVE = "argocd.argoproj.io/sync-wave";

/**
 * What an ApplicationSet's spec.syncPolicy.applicationsSync lets its controller do with the Applications it generates
 * (ApplicationsSyncPolicy's AllowUpdate and AllowDelete), as v3.5.1 and v3.6.2 read it with no controller policy set
 * (the install sets none: utils.DefaultPolicy then takes the ApplicationSet's own; unset is sync).
 */
export function applicationsSyncAllows(policy: string | undefined): { update: boolean; delete: boolean } {
    const p = policy ?? "sync";
    return { update: p === "create-update" || p === "sync", delete: p === "sync" || p === "create-delete" };
}
