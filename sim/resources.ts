/**
 * How the application controller names and assesses the objects an Application manages: their API
 * group, tracking id and key, and their health as gitops-engine assesses the kinds the labs use.
 */

import type { SimWorkload } from "./objects";

export const groupOf = (o: { apiVersion?: string }) => (o.apiVersion?.includes("/") ? o.apiVersion.split("/")[0] : "");
/** The tracking annotation's value (`app:group/Kind:namespace/name`). */
export const trackingId = (app: string, obj: { apiVersion?: string; kind: string; metadata: { name: string } }, ns: string) =>
    `${app}:${groupOf(obj)}/${obj.kind}:${ns}/${obj.metadata.name}`;
export const keyOf = (o: { kind: string; metadata: { namespace?: string; name: string } }) =>
    `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;

/**
 * Health as gitops-engine assesses the kinds the labs use (pkg/health): a Deployment is Progressing
 * until its current generation is observed and every replica updated and available; anything
 * else that exists is Healthy.
 */
export function resourceHealth(live: { kind?: string } | undefined): { status: string; message?: string } {
    if (!live) return { status: "Missing" };
    if (live.kind === "Deployment") {
        const d = live as SimWorkload;
        const want = d.spec?.replicas ?? 1;
        const st = d.status ?? {};
        if ((st.observedGeneration ?? 0) < (d.metadata.generation ?? 1))
            return {
                status: "Progressing",
                message: "Waiting for rollout to finish: observed deployment generation less than desired generation",
            };
        if ((st.updatedReplicas ?? 0) < want)
            return {
                status: "Progressing",
                message: `Waiting for rollout to finish: ${st.updatedReplicas ?? 0} out of ${want} new replicas have been updated...`,
            };
        if ((st.availableReplicas ?? 0) < want)
            return {
                status: "Progressing",
                message: `Waiting for rollout to finish: ${st.availableReplicas ?? 0} of ${want} updated replicas are available...`,
            };
    }
    return { status: "Healthy" };
}
const HEALTH_ORDER = ["Healthy", "Suspended", "Progressing", "Missing", "Degraded", "Unknown"];

/** An Application's health: the worst of its resources' (gitops-engine's order). */
export function worstHealth(healths: { status: string }[]): string {
    return healths.reduce((w, h) => (HEALTH_ORDER.indexOf(h.status) > HEALTH_ORDER.indexOf(w) ? h.status : w), "Healthy");
}
