/**
 * A loopback fake Kubernetes API server: an in-memory object store (this file: objects,
 * resourceVersions, namespaces and their termination, garbage collection of owned objects, the
 * saved cluster) behind the REST paths the lab's client uses (apiServer.ts: get, list, create,
 * replace, merge/JSON/apply patch, delete, watch), so the product's own @kubernetes/client-node code
 * runs against it unchanged. Changes are published to in-process listeners, which is how the Argo CD
 * simulation "watches".
 *
 * Only what the lab touches is implemented; anything else answers 404 with a Status object.
 */
import { HttpError, ResourceType, TYPES } from "./apiTypes";
import { asJson } from "./patch";
import { randomUUID } from "crypto";
import { EventEmitter } from "events";
import * as fs from "fs";
import * as path from "path";
import { NodeImages } from "./nodeImages";
import { ApiServer } from "./apiServer";
import { codeOf, messageOf } from "../lab/ports/errors";
import { writeFailure } from "../lab/ports/files";
import type { ObjectMeta } from "../lab/argo/types";
import { installCrds } from "./argoCrds";
import type { Crd, KindOf, Kinds, StoredObject } from "./objects";

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";
/** A change of one object, typed by its kind (`c.kind === "Job"` makes `c.obj` a Job). */
export type Change = {
    [K in keyof Kinds]: {
        type: ChangeType;
        kind: K;
        obj: Kinds[K];
        old?: Kinds[K];
        /** Who made the change: "client" for API requests, or the name an in-process writer gave. */
        actor: string;
    };
}[keyof Kinds];

/** The ConfigMap kube-controller-manager's root CA publisher keeps in every namespace, and its annotation (pkg/controller/certificates/rootcacertpublisher). */
export const ROOT_CA_CONFIGMAP = "kube-root-ca.crt";
export const ROOT_CA_DESCRIPTION =
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/** RFC 3339 in whole seconds, as the API server writes metadata timestamps. */
const nowRfc3339 = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * A copy of a value already in the store (plain JSON, asJson made it so), which callers may change.
 * The same as asJson for such a value, and 7 times faster: copying what the store hands out was a
 * sixth of the tenants lab's CPU. (Hand-written: structuredClone is slower than JSON here.)
 */
function clone<T>(v: T): T {
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) return v.map(clone) as T;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
        const x = clone((v as Record<string, unknown>)[k]);
        if (k === "__proto__")
            Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true }); // a key like any other in JSON (a ConfigMap may have it)
        else out[k] = x;
    }
    return out as T;
}

/** With persistTo, the controllers' own changes (no client has heard of them yet) are saved within this. */
const SAVE_EVERY_MS = 100;

export class FakeKube {
    private readonly objects = new Map<string, StoredObject>();
    private rv = 1;
    readonly events = new EventEmitter();
    /** The simulated node's image store (its containerd's), which the simulated kubelet mounts image volumes from. */
    readonly images = new NodeImages();
    /** Its HTTP side (apiServer.ts). */
    private readonly api: ApiServer;

    /**
     * The latest changes, each with its resourceVersion, so that a watch from a resourceVersion gets
     * what happened since (as the API server's watch cache does: kubectl lists, then watches from the
     * list's resourceVersion, and must see a deletion that fell in between). Older than this: 410 Gone.
     */
    private readonly history: Change[] = [];
    private static readonly HISTORY = 1000;

    /**
     * The API server's NamespaceLifecycle admission: nothing new goes into a namespace that is not
     * there or is being deleted. Set by a simulated lab, whose cluster has its namespaces as a real
     * one does; a bare store (a test's) takes objects anywhere.
     */
    namespaceLifecycle = false;

    /**
     * The CRDs whose schemas the API server checks custom resources against (the Argo CD release's the
     * cluster is simulated as: simulatedLab sets it; the default version's otherwise). Read at each check,
     * parsed once a version.
     */
    crds: () => Crd[] = () => installCrds();

    /** `requestsKept`: how many of the latest requests `requests` keeps (10 000). */
    constructor(opts: { requestsKept?: number } = {}) {
        this.events.setMaxListeners(100);
        this.api = new ApiServer(this, opts.requestsKept);
    }

    /** The latest requests the API answered (see ApiServer). */
    get requests() {
        return this.api.requests;
    }
    /** Requests being answered now (a watch aside): a virtual clock stands still while there are any. */
    get inFlight() {
        return this.api.inFlight;
    }
    /** The store's resourceVersion now. */
    get resourceVersion() {
        return this.rv;
    }
    /** The latest changes, oldest first (a watch from a resourceVersion replays them). */
    get recentChanges(): readonly Change[] {
        return this.history;
    }

    /** Every change goes out here: a deletion gets a resourceVersion of its own, as on the API server. */
    private changed(u: { type: ChangeType; kind: string; obj: StoredObject; old?: StoredObject; actor: string }) {
        const c = u as Change; // the store keeps each kind's objects under its kind
        if (c.type === "DELETED") c.obj.metadata.resourceVersion = String(++this.rv);
        this.history.push(c);
        if (this.history.length > FakeKube.HISTORY) this.history.splice(0, this.history.length - FakeKube.HISTORY);
        this.events.emit("change", c);
    }

    // ------------------------------------------------------------------ store (in-process API)

    private key(t: ResourceType, ns: string | undefined, name: string) {
        return `${t.group}/${t.plural}/${t.namespaced ? ns : ""}/${name}`;
    }

    typeOfKind(kind: string): ResourceType {
        const t = TYPES.find((x) => x.kind === kind);
        if (!t) throw new Error(`fake API: unknown kind ${kind}`);
        return t;
    }

    get<K extends string>(kind: K, ns: string | undefined, name: string): KindOf<K> | undefined {
        const t = this.typeOfKind(kind);
        this.materialise(t.kind, name);
        return clone(this.objects.get(this.key(t, ns, name))) as KindOf<K> | undefined;
    }

    list<K extends string>(kind: K, ns?: string): KindOf<K>[] {
        const t = this.typeOfKind(kind);
        this.materialise(t.kind);
        const prefix = `${t.group}/${t.plural}/`;
        const out: StoredObject[] = [];
        for (const [k, v] of this.objects) {
            if (!k.startsWith(prefix)) continue;
            if (ns !== undefined && t.namespaced && v.metadata.namespace !== ns) continue;
            out.push(clone(v));
        }
        return out.sort((a, b) =>
            `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`),
        ) as KindOf<K>[];
    }

    /** Cluster-scoped objects that exist from `since` on but are built at their first read, by kind (FakeKube.provide). */
    private readonly provided = new Map<
        string,
        { names: Set<string>; make: (since: string) => StoredObject[]; since: string; done: boolean; built: Map<string, string> }
    >();

    /**
     * Objects of `kind` named `names` that the cluster has had since now, built by `make(since)` only when
     * something first reads them (a get of one of those names, a list or a watch of the kind): the
     * Argo CD install's CRDs, whose parse costs most of a second. Built, they are there as if created
     * at `since` (no watch event: nothing changed). dump() leaves them out while they are as built (a
     * restored store builds them again), so a changed one is saved; a deleted one is back after a restart.
     */
    provide<T extends { metadata: ObjectMeta }>(kind: string, names: string[], make: (since: string) => T[]): void {
        const stored = make as unknown as (since: string) => StoredObject[]; // kept as any stored object
        this.provided.set(this.typeOfKind(kind).kind, {
            names: new Set(names),
            make: stored,
            since: nowRfc3339(),
            done: false,
            built: new Map(),
        });
    }

    /** Builds the objects a provider makes of `kind` (the API server reads them first). */
    materialise(kind: string, name?: string) {
        const p = this.provided.get(kind);
        if (!p || p.done || (name !== undefined && !p.names.has(name))) return;
        p.done = true;
        const t = this.typeOfKind(kind);
        for (const obj of p.make(p.since)) {
            const k = this.key(t, undefined, obj.metadata.name);
            if (this.objects.has(k)) continue;
            const rv = String(++this.rv);
            const metadata = { ...obj.metadata, uid: randomUUID(), creationTimestamp: p.since, resourceVersion: rv, generation: 1 };
            this.objects.set(k, { ...asJson(obj), apiVersion: `${t.group}/${t.version}`, metadata });
            p.built.set(k, rv);
        }
    }

    /** Whether the entry is one provide() built and nobody has changed since. */
    private isAsBuilt(key: string, obj: StoredObject): boolean {
        return this.provided.get(obj.kind ?? "")?.built.get(key) === obj.metadata?.resourceVersion;
    }

    /**
     * Creates or replaces an object as `actor` (uid, creationTimestamp kept on replace). A dry run
     * (`dryRun=All`) answers the object it would store and stores nothing: no resourceVersion, no event.
     */
    put<T extends { kind?: string; metadata: ObjectMeta }>(obj: T, actor: string, dryRun = false): T & { metadata: ObjectMeta } {
        const t = this.typeOfKind(obj.kind ?? "");
        const ns = t.namespaced ? (obj.metadata.namespace ?? "default") : undefined;
        const k = this.key(t, ns, obj.metadata.name);
        const old = this.objects.get(k);
        const next = asJson(obj) as unknown as StoredObject;
        next.apiVersion = t.group ? `${t.group}/${t.version}` : t.version;
        next.metadata = { ...next.metadata };
        if (t.namespaced) next.metadata.namespace = ns;
        else delete next.metadata.namespace;
        // the server assigns uids; an in-process writer may seed one (a restored dump), a client may not
        next.metadata.uid = old?.metadata.uid ?? (actor !== "client" && obj.metadata.uid ? obj.metadata.uid : randomUUID());
        next.metadata.creationTimestamp = old?.metadata.creationTimestamp ?? nowRfc3339();
        next.metadata.resourceVersion = dryRun ? (old?.metadata.resourceVersion ?? "") : String(++this.rv);
        const specChanged = JSON.stringify(old?.spec) !== JSON.stringify(next.spec);
        next.metadata.generation = (old?.metadata.generation ?? 0) + (old && !specChanged ? 0 : 1);
        if (
            old &&
            JSON.stringify({ ...old, metadata: { ...old.metadata, resourceVersion: "" } }) ===
                JSON.stringify({ ...next, metadata: { ...next.metadata, resourceVersion: "" } })
        ) {
            return clone(old) as unknown as T; // no change: no new resourceVersion, no event
        }
        if (old?.metadata.deletionTimestamp)
            next.metadata.deletionTimestamp = old.metadata.deletionTimestamp; // cannot be undone
        else if (
            !old &&
            ns !== undefined &&
            this.objects.get(this.key(this.typeOfKind("Namespace"), undefined, ns))?.metadata.deletionTimestamp
        ) {
            throw new HttpError(
                403,
                "Forbidden",
                `${t.plural} "${next.metadata.name}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
            );
        }
        if (dryRun) return clone(next) as unknown as T;
        this.objects.set(k, next);
        this.changed({ type: old ? "MODIFIED" : "ADDED", kind: t.kind, obj: clone(next), old: clone(old), actor });
        if (!old && t.kind === "Namespace") this.publishRootCa(next.metadata.name);
        if (t.kind === "ConfigMap" && next.metadata.name === ROOT_CA_CONFIGMAP && ns !== undefined && actor !== "root-ca-cert-publisher")
            this.publishRootCa(ns);
        // the last finalizer of an object being deleted is gone: now it goes
        if (next.metadata.deletionTimestamp && !(next.metadata.finalizers ?? []).length && t.kind !== "Namespace")
            this.remove(t.kind, ns, next.metadata.name, actor);
        return clone(next) as unknown as T;
    }

    /**
     * Deletes an object as the API server and its controllers would: an object with finalizers only
     * gets a deletionTimestamp (it goes when its last finalizer is removed); whatever it owns is
     * deleted in the background (the garbage collector); a namespace is Terminating until every
     * object in it is gone.
     */
    remove<K extends string>(kind: K, ns: string | undefined, name: string, actor: string): KindOf<K> | undefined {
        const t = this.typeOfKind(kind);
        const k = this.key(t, ns, name);
        const old = this.objects.get(k);
        if (!old) return undefined;
        if (kind === "Namespace") return this.terminateNamespace(k, old, actor) as KindOf<K>;
        if ((old.metadata.finalizers ?? []).length) {
            if (!old.metadata.deletionTimestamp) {
                const next = clone(old);
                next.metadata.deletionTimestamp = nowRfc3339();
                next.metadata.resourceVersion = String(++this.rv);
                this.objects.set(k, next);
                this.changed({ type: "MODIFIED", kind: t.kind, obj: clone(next), old: clone(old), actor });
                this.collectOwnedBy(old);
            }
            return clone(this.objects.get(k)) as KindOf<K> | undefined;
        }
        this.objects.delete(k);
        this.changed({ type: "DELETED", kind: t.kind, obj: clone(old), old: clone(old), actor });
        this.collectOwnedBy(old);
        if (ns !== undefined) this.finishNamespace(ns);
        if (kind === "ConfigMap" && name === ROOT_CA_CONFIGMAP && ns !== undefined) this.publishRootCa(ns);
        return clone(old) as KindOf<K>;
    }

    /**
     * kube-controller-manager's root CA publisher (rootcacertpublisher syncNamespace): a `kube-root-ca.crt` ConfigMap
     * in every namespace, as a real cluster has, put back when deleted or changed. Its `ca.crt` says there is no CA.
     */
    private publishRootCa(ns: string) {
        const nsObj = this.objects.get(this.key(this.typeOfKind("Namespace"), undefined, ns));
        if (!nsObj || nsObj.metadata.deletionTimestamp) return;
        const data = { "ca.crt": "# the simulated API server speaks plain HTTP on the loopback: it has no CA\n" };
        const cm = this.objects.get(this.key(this.typeOfKind("ConfigMap"), ns, ROOT_CA_CONFIGMAP));
        const published = JSON.stringify(cm?.data) === JSON.stringify(data) && cm?.metadata.annotations?.["kubernetes.io/description"];
        if (cm?.metadata.deletionTimestamp || published) return;
        this.put(
            {
                apiVersion: "v1",
                kind: "ConfigMap",
                metadata: {
                    ...(cm?.metadata ?? { name: ROOT_CA_CONFIGMAP, namespace: ns }),
                    annotations: { ...cm?.metadata.annotations, "kubernetes.io/description": ROOT_CA_DESCRIPTION },
                },
                data,
            },
            "root-ca-cert-publisher",
        );
    }

    private collectOwnedBy(owner: StoredObject) {
        for (const [ok, o] of [...this.objects]) {
            if ((o.metadata.ownerReferences ?? []).some((r) => r.uid === owner.metadata.uid) && !o.metadata.deletionTimestamp) {
                this.remove(this.typeOfStoreKey(ok).kind, o.metadata.namespace, o.metadata.name, "garbage-collector");
            }
        }
    }

    private typeOfStoreKey(k: string): ResourceType {
        return TYPES.find((x) => k.startsWith(`${x.group}/${x.plural}/`))!;
    }

    private terminateNamespace(k: string, old: StoredObject, actor: string) {
        if (!old.metadata.deletionTimestamp) {
            const next = clone(old);
            next.metadata.deletionTimestamp = nowRfc3339();
            next.metadata.resourceVersion = String(++this.rv);
            next.spec = { finalizers: ["kubernetes"] };
            next.status = { phase: "Terminating" };
            this.objects.set(k, next);
            this.changed({ type: "MODIFIED", kind: "Namespace", obj: clone(next), old: clone(old), actor });
            for (const [ok, o] of [...this.objects]) {
                if (o.metadata.namespace === old.metadata.name && !o.metadata.deletionTimestamp)
                    this.remove(this.typeOfStoreKey(ok).kind, o.metadata.namespace, o.metadata.name, "namespace-controller");
            }
        }
        this.finishNamespace(old.metadata.name);
        return clone(this.objects.get(k) ?? old);
    }

    /** A Terminating namespace with nothing left in it goes (the namespace controller's "kubernetes" finalizer). */
    private finishNamespace(name: string, force = false) {
        const k = this.key(this.typeOfKind("Namespace"), undefined, name);
        const nsObj = this.objects.get(k);
        if (!nsObj?.metadata.deletionTimestamp) return;
        const inside = [...this.objects.entries()].filter(([, o]) => o.metadata.namespace === name);
        if (inside.length && !force) return;
        for (const [ok, o] of inside) {
            this.objects.delete(ok);
            this.changed({
                type: "DELETED",
                kind: this.typeOfStoreKey(ok).kind,
                obj: clone(o),
                old: clone(o),
                actor: "namespace-controller",
            });
        }
        this.objects.delete(k);
        this.changed({ type: "DELETED", kind: "Namespace", obj: clone(nsObj), old: clone(nsObj), actor: "namespace-controller" });
    }

    /** PUT /api/v1/namespaces/{name}/finalize with no finalizers: the namespace goes now, whatever is left in it. */
    finalizeNamespace(name: string): KindOf<"Namespace"> | undefined {
        const k = this.key(this.typeOfKind("Namespace"), undefined, name);
        const nsObj = this.objects.get(k);
        if (!nsObj) return undefined;
        if (nsObj.metadata.deletionTimestamp) this.finishNamespace(name, true);
        return clone(nsObj) as KindOf<"Namespace">;
    }

    /** Everything being deleted and held by a finalizer (what `kubectl get -A` shows as Terminating). */
    terminating(): StoredObject[] {
        return [...this.objects.values()].filter((o) => o.metadata.deletionTimestamp).map(clone);
    }

    /** The whole store as JSON (so `npm run simulate` can resume a simulated cluster). */
    dump(): string {
        const objects = [...this.objects.entries()].filter(([k, o]) => !this.isAsBuilt(k, o));
        return JSON.stringify({ rv: this.rv, objects, podLogs: [...this.podLogs.entries()] });
    }

    /** Restores a dump; throws (changing nothing) when the text is not one. */
    load(json: string): void {
        const d = JSON.parse(json);
        if (
            !d ||
            typeof d.rv !== "number" ||
            !Array.isArray(d.objects) ||
            !d.objects.every((e: unknown) => Array.isArray(e) && e.length === 2 && typeof e[0] === "string")
        ) {
            throw new Error("it is JSON, but not a simulated cluster saved by gitops-lab");
        }
        this.rv = d.rv;
        this.objects.clear();
        for (const [k, v] of d.objects) this.objects.set(k, v);
        this.podLogs.clear();
        for (const [k, v] of Array.isArray(d.podLogs) ? d.podLogs : []) this.podLogs.set(k, v);
    }

    /** With persistTo: writes the changes not yet saved (nothing when there are none); throws when the file cannot be written. */
    private saveNow: () => void = () => undefined;
    /** With persistTo: no more saves (stop()). */
    private stopSaving: () => void = () => undefined;

    /** Saves what a client is about to hear of; the reason when that failed. */
    saveBeforeAnswer(): string | undefined {
        try {
            this.saveNow();
            return undefined;
        } catch (e) {
            // the lab's folder deleted while it is served: said, not as ENOENT of a temporary file
            const dir = this.persistedTo && path.dirname(this.persistedTo);
            if (dir && !fs.existsSync(dir))
                return `the simulated cluster could not be saved: its folder ${dir} is gone (deleted while served?); stop this served lab (Ctrl-C) and build it again`;
            return `the simulated cluster could not be saved: ${messageOf(e)}`;
        }
    }

    /**
     * Saves the store to `file`, atomically (a temporary file, then a rename), as etcd keeps the
     * real one: every change a client is told of (an answer, a watch event) is saved before the
     * client hears of it, and the controllers' own changes within SAVE_EVERY_MS. So a process
     * killed at any instant leaves a cluster as it stood at some moment, holding everything any
     * client saw. (Saving after every single change cost the tenants lab a quarter of its CPU:
     * ext4 flushes a file replaced by a rename.)
     */
    /** The file persistTo saves to. */
    private persistedTo: string | undefined;

    persistTo(file: string, everyMs = SAVE_EVERY_MS): void {
        this.persistedTo = file;
        let dirty = true;
        let timer: NodeJS.Timeout | undefined;
        this.saveNow = () => {
            if (timer) clearTimeout(timer);
            timer = undefined;
            if (!dirty) return;
            // (not writeFileAtomic: a folder deleted while served is not made again here, its loss is said)
            const tmp = `${file}.${process.pid}.tmp`;
            try {
                fs.writeFileSync(tmp, this.dump());
                fs.renameSync(tmp, file);
            } catch (e) {
                fs.rmSync(tmp, { force: true }); // nothing half-written left behind (a file-size limit, a full disk)
                throw Object.assign(new Error(`cannot write ${file} (${writeFailure(e)})`), { code: codeOf(e) });
            }
            dirty = false; // only once written: a save that failed is tried again
        };
        this.saveNow();
        const off = this.onChange(() => {
            dirty = true;
            timer ??= setTimeout(() => {
                timer = undefined;
                this.saveBeforeAnswer(); // a failure here is tried again, and reported, at the next answer
            }, everyMs);
        });
        this.stopSaving = () => {
            if (timer) clearTimeout(timer);
            timer = undefined;
            off();
            this.saveNow = () => undefined;
        };
    }

    onChange(listener: (c: Change) => void): () => void {
        this.events.on("change", listener);
        return () => this.events.off("change", listener);
    }

    /** Serves the store over HTTP (see ApiServer.start); the URL. */
    start(opts: { secure?: boolean } = {}): Promise<string> {
        return this.api.start(opts);
    }

    /** Saves what is not saved yet, saves nothing more, and stops answering. */
    async stop(): Promise<void> {
        try {
            this.saveNow();
        } finally {
            this.stopSaving(); // nothing is saved after a stop: a reset removes the file next
        }
        await this.api.close();
    }

    /** A kubeconfig for the product's client (see ApiServer.kubeconfig). */
    kubeconfig(url: string, name?: string): string {
        return this.api.kubeconfig(url, name);
    }

    /** Text answered at a path by GET (a Service's proxy path: kubectl get --raw), e.g. a controller's metrics. */
    readonly proxied = new Map<string, () => string>();

    /** What a Pod wrote (served at pods/{name}/log), by "namespace/name". */
    readonly podLogs = new Map<string, string>();
}
