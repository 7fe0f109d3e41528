/**
 * A sync's Sync phase as gitops-engine's sync context carries it out (pkg/sync/sync_context.go): the
 * destination namespace first (CreateNamespace=true), then each rendered object applied in wave order
 * (its fields merged three ways with the last applied and the live object, its tracking annotation
 * set), then, with prune, the tracked objects the commit no longer has removed; one result per object.
 */
import { TRACKING_ANNOTATION } from "../lab/argo/application";
import type { Application, Operation, ResourceResult } from "../lab/argo/types";
import { FakeKube } from "./fakeApi";
import { refuseImmutableUpdate } from "./builtinValidation";
import { createNameError } from "./crdValidation";
import { wave } from "./hooks";
import type { Manifest, StoredObject } from "./objects";
import { groupOf, keyOf, trackingId } from "./resources";
import { APPLIED_FIELDS, LAST_APPLIED, lastApplied, threeWayMerge } from "./state";

export const ACTOR = "application-controller";

/** An operation being carried out: its sync's revision resolved. */
export type SyncOperation = Operation & { sync: NonNullable<Operation["sync"]> & { revision: string } };

/** What the sync uses of its controller: the API and its view of the live objects. */
export interface SyncHost {
    readonly kube: FakeKube;
    /** The live object a rendered one stands for. */
    liveOf(obj: Manifest): StoredObject | undefined;
}

/** CreateNamespace=true: the sync's namespace task, first, makes the destination's namespace (not one an object names). */
export function createNamespace(host: SyncHost, app: Application, syncOptions: string[]) {
    const ns = app.spec!.destination?.namespace;
    // (never one the API server refuses: a name that is no DNS label; the sync fails on it, applySync says so)
    if (
        ns &&
        syncOptions.includes("CreateNamespace=true") &&
        !createNameError("Namespace", ns) &&
        !host.kube.get("Namespace", undefined, ns)
    )
        host.kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }, ACTOR);
}

/** Applies the rendered objects (only those the operation names, for a partial sync); prunes when asked. */
export function applySync(host: SyncHost, app: Application, op: SyncOperation, desired: Manifest[]): ResourceResult[] {
    const name = app.metadata.name;
    // a destination namespace the API server refuses to make (no DNS label: shop_dev): the namespace task fails, and the sync
    const ns = app.spec!.destination?.namespace;
    const options = app.spec!.syncPolicy?.syncOptions ?? op.sync.syncOptions ?? [];
    const badNamespace = ns && options.includes("CreateNamespace=true") ? createNameError("Namespace", ns) : undefined;
    if (ns && badNamespace)
        return [
            {
                version: "v1",
                kind: "Namespace",
                name: ns,
                status: "SyncFailed",
                message: `Namespace "${ns}" is invalid: ${badNamespace}`,
                syncPhase: "PreSync",
            },
        ];
    createNamespace(host, app, options);
    const only = op.sync.resources ? new Set(op.sync.resources.map((r) => `${r.kind}/${r.namespace}/${r.name}`)) : null;
    const results: ResourceResult[] = [];
    for (const d of [...desired].sort((x, y) => wave(x) - wave(y))) {
        if (only && !only.has(keyOf(d))) continue;
        const ns = d.metadata.namespace!; // set from the destination when rendered
        if (!host.kube.get("Namespace", undefined, ns)) {
            results.push({
                kind: d.kind,
                namespace: ns,
                name: d.metadata.name,
                status: "SyncFailed",
                message: `namespaces "${ns}" not found`,
                syncPhase: "Sync",
            });
            continue;
        }
        const live = host.liveOf(d);
        const applied = {
            ...d,
            metadata: {
                ...d.metadata,
                annotations: { ...(d.metadata.annotations ?? {}), [TRACKING_ANNOTATION]: trackingId(name, d, ns) },
            },
        };
        const annotations = {
            ...(live?.metadata.annotations ?? {}),
            ...applied.metadata.annotations,
            [LAST_APPLIED]: JSON.stringify(applied),
        };
        // an apply: the object is patched in place, so its uid stays; its fields merged three ways, so a key added by hand stays
        const next: Manifest = { ...(live ?? {}), ...d, metadata: { ...(live?.metadata ?? {}), ...d.metadata, annotations } };
        const last = lastApplied(live);
        for (const field of APPLIED_FIELDS) if (d[field] !== undefined) next[field] = threeWayMerge(last?.[field], d[field], live?.[field]);
        const result = (status: "Synced" | "SyncFailed", message: string) =>
            results.push({
                group: groupOf(d),
                version: d.apiVersion?.split("/").pop() ?? "v1",
                kind: d.kind,
                namespace: ns,
                name: d.metadata.name,
                status,
                message,
                syncPhase: "Sync",
            });
        // the API server's update validation (an immutable ConfigMap's data changed): the apply is refused, the task fails
        try {
            refuseImmutableUpdate(d.kind, live, next);
        } catch (e) {
            result("SyncFailed", (e as Error).message);
            continue;
        }
        host.kube.put(next, ACTOR);
        result(
            "Synced",
            `${d.kind.toLowerCase()}${groupOf(d) ? `.${groupOf(d)}` : ""}/${d.metadata.name} ${live ? "configured" : "created"}`,
        );
    }
    // (a partial sync, selfHeal's, prunes those of its resources that require it)
    if (op.sync.prune && desired.length) {
        const keys = new Set(desired.map(keyOf));
        for (const r of app.status?.resources ?? []) {
            if (keys.has(`${r.kind}/${r.namespace}/${r.name}`)) continue;
            if (only && !only.has(`${r.kind}/${r.namespace}/${r.name}`)) continue;
            // only an object this Application tracks (its tracking id), as Argo CD prunes: another's, or a hook, stays
            const live = host.kube.get(r.kind!, r.namespace, r.name);
            if (r.hook || live?.metadata.annotations?.[TRACKING_ANNOTATION]?.split(":")[0] !== app.metadata.name) continue;
            host.kube.remove(r.kind!, r.namespace, r.name, ACTOR);
            results.push({
                group: r.group ?? "",
                version: r.version ?? "v1",
                kind: r.kind,
                namespace: r.namespace,
                name: r.name,
                status: "Pruned",
                message: "pruned",
                syncPhase: "Sync",
            });
        }
    }
    return results;
}
