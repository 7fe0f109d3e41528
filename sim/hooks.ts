/**
 * PreSync hooks as gitops-engine reads them (pkg/sync/hook, pkg/sync/syncwaves): which objects are
 * hooks, their wave, their delete policy, a hook Job's phase and the result the operation reports.
 */
import { HOOK_ANNOTATION, HOOK_DELETE_POLICY, SYNC_WAVE } from "../lab/argo/application";
import { groupOf } from "./resources";

/** The default hook delete policy: the hook's object is deleted before it is created again. */
export const replacesBeforeCreation = (h: any) =>
    String(h.metadata?.annotations?.[HOOK_DELETE_POLICY] ?? "BeforeHookCreation")
        .split(",")
        .map((x) => x.trim())
        .includes("BeforeHookCreation");
export const WAITING_FOR_DELETION = "waiting for deletion of hook";
export const isHook = (o: any) => !!o.metadata?.annotations?.[HOOK_ANNOTATION];
export const wave = (o: any) => Number(o.metadata?.annotations?.[SYNC_WAVE] ?? 0) || 0;

/** A hook Job's phase as the sync reads it: Running until its Complete or Failed condition. */
export function hookPhase(job: any | undefined): { phase: "Running" | "Succeeded" | "Failed"; message: string } {
    if (!job) return { phase: "Running", message: "" };
    const c = (job.status?.conditions ?? []).find((x: any) => (x.type === "Complete" || x.type === "Failed") && x.status === "True");
    if (c?.type === "Complete") return { phase: "Succeeded", message: c.message ?? "" };
    if (c?.type === "Failed") return { phase: "Failed", message: c.message ?? "" };
    return { phase: "Running", message: "" };
}

/** A hook's entry in the operation's syncResult.resources. */
export function hookResult(h: any, phase: string, message: string) {
    return {
        group: groupOf(h),
        version: h.apiVersion?.split("/").pop() ?? "v1",
        kind: h.kind,
        namespace: h.metadata.namespace,
        name: h.metadata.name,
        status: "Synced",
        message,
        hookType: "PreSync",
        hookPhase: phase,
        syncPhase: "PreSync",
    };
}
