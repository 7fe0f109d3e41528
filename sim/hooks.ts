/**
 * PreSync hooks as gitops-engine reads them (pkg/sync/hook, pkg/sync/syncwaves): which objects are
 * hooks, their wave, their delete policy, a hook Job's phase and the result the operation reports.
 */
import { HOOK_ANNOTATION, HOOK_DELETE_POLICY, SYNC_WAVE } from "../lab/argo/application";
import { groupOf } from "./resources";
import type { ResourceResult } from "../lab/argo/types";
import type { Manifest, SimJob } from "./objects";

/** What the hook functions read of an object: its annotations. */
type Annotated = { metadata?: { annotations?: Record<string, string> } };

/** The default hook delete policy: the hook's object is deleted before it is created again. */
export const replacesBeforeCreation = (h: Annotated) =>
    String(h.metadata?.annotations?.[HOOK_DELETE_POLICY] ?? "BeforeHookCreation")
        .split(",")
        .map((x) => x.trim())
        .includes("BeforeHookCreation");
export const WAITING_FOR_DELETION = "waiting for deletion of hook";
export const isHook = (o: Annotated) => !!o.metadata?.annotations?.[HOOK_ANNOTATION];
export const wave = (o: Annotated) => Number(o.metadata?.annotations?.[SYNC_WAVE] ?? 0) || 0;

/** A hook Job's phase as the sync reads it: Running until its Complete or Failed condition. */
export function hookPhase(job: SimJob | undefined): { phase: "Running" | "Succeeded" | "Failed"; message: string } {
    if (!job) return { phase: "Running", message: "" };
    const c = (job.status?.conditions ?? []).find((x) => (x.type === "Complete" || x.type === "Failed") && x.status === "True");
    if (c?.type === "Complete") return { phase: "Succeeded", message: c.message ?? "" };
    if (c?.type === "Failed") return { phase: "Failed", message: c.message ?? "" };
    return { phase: "Running", message: "" };
}

/** A hook's entry in the operation's syncResult.resources. */
export function hookResult(h: Manifest, phase: string, message: string): ResourceResult & { version: string } {
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
