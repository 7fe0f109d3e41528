/**
 * The simulated application controller's comparison (upstream's controller/state.go,
 * CompareAppState): the Application's sync status, health and resources from the desired objects
 * and the live ones. What auto-sync does with it stays with the controller (appcontroller.go's
 * autoSync, sim/appController.ts).
 */
import { isHook } from "./hooks";
import { TRACKING_ANNOTATION } from "../lab/argo/application";
import { groupOf, keyOf, resourceHealth, worstHealth } from "./resources";
import type { Application, ApplicationStatus, ResourceStatus } from "../lab/argo/types";
import type { Manifest, StoredObject } from "./objects";

/** A live object by the desired one's kind, namespace and name (undefined when there is none). */
const SHARED = "SharedResourceWarning";

export type LiveOf = (obj: Manifest) => StoredObject | undefined;

/** Where kubectl apply, and Argo CD's client-side apply, keep what they last applied (gitops-engine's diff reads it). */
export const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** The fields the lab's resources carry, and so the ones compared and applied (a ConfigMap's immutable flag too). */
export const APPLIED_FIELDS = ["data", "spec", "immutable"] as const;

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * kubectl apply's three-way merge of one field (gitops-engine's ThreeWayDiff predicts the live
 * object with it): a key `desired` has is set, one the last apply wrote that `desired` no longer has
 * is removed, one only `live` has (added by another hand: kubectl edit, a controller) is kept. Lists
 * are replaced whole: the strategic merge of lists by key (a Deployment's containers by name) is not
 * modelled, as no lab edits such a list by hand.
 */
export function threeWayMerge(last: unknown, desired: unknown, live: unknown): unknown {
    if (!isMap(desired) || !isMap(live)) return desired;
    const before = isMap(last) ? last : {};
    const out: Record<string, unknown> = { ...live };
    for (const k of Object.keys(before)) if (!(k in desired)) delete out[k];
    for (const [k, v] of Object.entries(desired)) out[k] = threeWayMerge(before[k], v, live[k]);
    return out;
}

/** What the last apply wrote into the object (its annotation), or undefined (made by another hand, or unreadable). */
export function lastApplied(live: StoredObject | undefined): Record<string, unknown> | undefined {
    const text = live?.metadata.annotations?.[LAST_APPLIED];
    if (!text) return undefined;
    try {
        const o: unknown = JSON.parse(text);
        return isMap(o) ? o : undefined;
    } catch {
        return undefined;
    }
}

/**
 * Whether applying the desired object would leave the live one as it is (gitops-engine's
 * three-way diff over `data` and `spec`): a key added by hand is no drift, a key changed or removed is.
 */
export function inSync(desired: Manifest, liveOf: LiveOf): boolean {
    const live = liveOf(desired);
    if (!live) return false;
    const last = lastApplied(live);
    for (const field of APPLIED_FIELDS) {
        if (desired[field] === undefined) continue;
        if (JSON.stringify(threeWayMerge(last?.[field], desired[field], live[field])) !== JSON.stringify(live[field])) return false;
    }
    return true;
}

export interface Comparison {
    /** The desired objects, hooks left out (they are not part of the sync status). */
    desired: Manifest[];
    /** The desired objects whose live object differs or is missing. */
    drifted: Manifest[];
    outOfSync: boolean;
}

/**
 * Writes the comparison into `status` (sync, health, resources, sourceType; the last comparison's
 * ComparisonError and SyncError conditions taken out) and returns what auto-sync reads.
 */
export function compareAppState(
    app: Application,
    sha: string,
    desiredAll: Manifest[],
    status: ApplicationStatus,
    now: string,
    liveOf: LiveOf,
): Comparison {
    const desired = desiredAll.filter((d) => !isHook(d));
    const managed: ResourceStatus[] = status.resources ?? [];
    const desiredKeys = new Set(desired.map(keyOf));
    // a live object of this Application's (its tracking id) that the source no longer renders: OutOfSync, and kept in
    // status.resources with requiresPruning until a sync with prune deletes it (state.go: targetObj == nil && liveObj != nil).
    // The simulation finds them among the resources its last comparison listed, as Argo CD finds them by tracking id.
    const liveOfStatus = (r: ResourceStatus) =>
        liveOf({
            apiVersion: r.group ? `${r.group}/${r.version ?? "v1"}` : (r.version ?? "v1"),
            kind: r.kind ?? "",
            metadata: { name: r.name, namespace: r.namespace },
        });
    const prunable = managed
        .filter((r) => !r.hook && !desiredKeys.has(`${r.kind}/${r.namespace}/${r.name}`))
        .filter((r) => liveOfStatus(r)?.metadata.annotations?.[TRACKING_ANNOTATION]?.split(":")[0] === app.metadata.name);
    const drifted = desired.filter((d) => !inSync(d, liveOf));
    const outOfSync = drifted.length > 0 || prunable.length > 0;
    status.sync = {
        status: outOfSync ? "OutOfSync" : "Synced",
        revision: sha,
        comparedTo: { source: app.spec?.source, destination: app.spec?.destination },
    };
    const healths = desired.map((d) => resourceHealth(liveOf(d)));
    const prunableHealths = prunable.map((r) => resourceHealth(liveOfStatus(r)));
    const worst = worstHealth([...healths, ...prunableHealths]);
    status.health = {
        status: worst,
        lastTransitionTime: status.health?.status === worst ? (status.health?.lastTransitionTime ?? now) : now,
    };
    const before = status.conditions ?? [];
    status.conditions = before.filter((c) => c.type !== "ComparisonError" && c.type !== "SyncError" && c.type !== SHARED);
    // a live object another Application's tracking id names (two Applications rendering one object): a warning, each
    // comparison anew (controller/state.go CompareAppState: "%s/%s is part of applications %s and %s")
    for (const d of desired) {
        const owner = liveOf(d)?.metadata?.annotations?.[TRACKING_ANNOTATION]?.split(":")[0];
        if (!owner || owner === app.metadata.name) continue;
        const message = `${d.kind}/${d.metadata.name} is part of applications ${app.metadata.name} and ${owner.replace(/_/g, "/")}`;
        const was = before.find((c) => c.type === SHARED && c.message === message);
        status.conditions.push({ type: SHARED, message, lastTransitionTime: was?.lastTransitionTime ?? now });
    }
    status.resources = desired.map((d, i) => ({
        ...(groupOf(d) ? { group: groupOf(d) } : {}),
        version: "v1",
        kind: d.kind,
        namespace: d.metadata.namespace,
        name: d.metadata.name,
        status: inSync(d, liveOf) ? "Synced" : "OutOfSync",
        health: healths[i],
    }));
    status.resources.push(
        ...prunable.map((r, i) => ({
            ...(r.group ? { group: r.group } : {}),
            version: r.version ?? "v1",
            kind: r.kind,
            namespace: r.namespace,
            name: r.name,
            status: "OutOfSync",
            health: prunableHealths[i],
            requiresPruning: true,
        })),
    );
    status.sourceType = "Kustomize";
    return { desired, drifted, outOfSync };
}
