/**
 * The garbage collector's orphaning (kube-controller-manager's pkg/controller/garbagecollector): a delete
 * with propagationPolicy Orphan (kubectl delete --cascade=orphan) takes the owner's references out of its
 * dependents before the owner goes, so that they stay. Argo CD's docs name it for an ApplicationSet whose
 * Applications are to be kept (operator-manual/applicationset/Application-Deletion.md).
 */
import { TYPES } from "./apiTypes";
import type { FakeKube } from "./fakeApi";
import type { StoredObject } from "./objects";

/** The DeleteOptions' propagationPolicy, from the body kubectl sends or the query. */
export function propagationOf(url: URL, body: unknown): string | undefined {
    return (
        (body as { propagationPolicy?: string } | undefined)?.propagationPolicy ?? url.searchParams.get("propagationPolicy") ?? undefined
    );
}

/** Every object owned by `owner` loses that reference (each an update, as the collector's patch is). */
export function orphanDependents(kube: FakeKube, owner: StoredObject) {
    for (const t of TYPES)
        for (const o of kube.list(t.kind)) {
            const refs = o.metadata.ownerReferences ?? [];
            if (!refs.some((r) => r.uid === owner.metadata.uid)) continue;
            const rest = refs.filter((r) => r.uid !== owner.metadata.uid);
            const { ownerReferences: _gone, ...metadata } = o.metadata;
            kube.put({ ...o, metadata: rest.length ? { ...metadata, ownerReferences: rest } : metadata }, "garbage-collector");
        }
}
