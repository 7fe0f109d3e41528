/**
 * The simulated application controller's comparison (upstream's controller/state.go,
 * CompareAppState): the Application's sync status, health and resources from the desired objects
 * and the live ones. What auto-sync does with it stays with the controller (appcontroller.go's
 * autoSync, sim/appController.ts).
 */
import { isHook } from "./hooks";
import { groupOf, keyOf, resourceHealth, worstHealth } from "./resources";
import type { Application, ApplicationStatus, ResourceStatus } from "../lab/argo/types";
import type { Manifest, StoredObject } from "./objects";

/** A live object by the desired one's kind, namespace and name (undefined when there is none). */
export type LiveOf = (obj: Manifest) => StoredObject | undefined;

/** Whether the live object has the desired `data` and `spec` (what the lab's resources carry). */
export function inSync(desired: Manifest, liveOf: LiveOf): boolean {
    const live = liveOf(desired);
    if (!live) return false;
    for (const field of ["data", "spec"]) {
        if (desired[field] !== undefined && JSON.stringify(live[field]) !== JSON.stringify(desired[field])) return false;
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
    const prunable = managed.filter((r) => !desiredKeys.has(`${r.kind}/${r.namespace}/${r.name}`));
    const drifted = desired.filter((d) => !inSync(d, liveOf));
    const outOfSync = drifted.length > 0 || prunable.length > 0;
    status.sync = {
        status: outOfSync ? "OutOfSync" : "Synced",
        revision: sha,
        comparedTo: { source: app.spec?.source, destination: app.spec?.destination },
    };
    const healths = desired.map((d) => resourceHealth(liveOf(d)));
    const worst = worstHealth(healths);
    status.health = {
        status: worst,
        lastTransitionTime: status.health?.status === worst ? (status.health?.lastTransitionTime ?? now) : now,
    };
    status.conditions = (status.conditions ?? []).filter((c) => c.type !== "ComparisonError" && c.type !== "SyncError");
    status.resources = desired.map((d, i) => ({
        ...(groupOf(d) ? { group: groupOf(d) } : {}),
        version: "v1",
        kind: d.kind,
        namespace: d.metadata.namespace,
        name: d.metadata.name,
        status: inSync(d, liveOf) ? "Synced" : "OutOfSync",
        health: healths[i],
    }));
    status.sourceType = "Kustomize";
    return { desired, drifted, outOfSync };
}
