/**
 * The cluster port: the few things the lab reads and changes in Kubernetes, behind one small
 * interface. `KubeCluster` implements it with @kubernetes/client-node from a kubeconfig; the
 * tests point the same class at a loopback fake API server.
 */
import type * as k8sTypes from "@kubernetes/client-node";
import { ARGOCD_NAMESPACE } from "../argo/application";
import { apiError, explain, orNull } from "./clusterErrors";
import type {
    AppProject,
    Application,
    ApplicationSet,
    ApplicationSetSpec,
    ConfigMap,
    Job,
    KubeEvent,
    Namespace,
    Pod,
    Workload,
} from "../argo/types";

/** The object each Argo CD kind the port follows holds. */
export interface ArgoKinds {
    applicationsets: ApplicationSet;
    applications: Application;
}

/** A namespaced custom object as putCustomObject takes it (a PrometheusRule): its group in apiVersion, its name, the rest as written. */
export interface CustomObject {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    [field: string]: unknown;
}

export interface JsonPatchOp {
    op: "add" | "remove" | "replace" | "test";
    path: string;
    value?: unknown;
}

/** A local copy of every object of one kind, kept current by a watch (an informer). */
export interface KindCache<T> {
    /** Every object as last seen. */
    list(): T[];
    /** False after the watch broke and until it is listed again (then read with a list instead). */
    healthy(): boolean;
    /** Calls `listener` with each object the watch brings (added, changed or deleted); returns what unsubscribes it. */
    onChange(listener: (obj: T, deleted: boolean) => void): () => void;
    stop(): Promise<void>;
}

export interface ClusterPort {
    /** Which cluster this is, for a person: the kubeconfig's context and server. */
    readonly where?: string;
    getApplication(name: string, namespace?: string): Promise<Application | null>;
    listApplications(namespace?: string): Promise<Application[]>;
    /** Merge-patches metadata.annotations of an Application (e.g. the refresh annotation). */
    annotateApplication(name: string, annotations: Record<string, string>, namespace?: string): Promise<void>;
    getApplicationSet(name: string, namespace?: string): Promise<ApplicationSet | null>;
    listApplicationSets(namespace?: string): Promise<ApplicationSet[]>;
    /** The AppProjects (their sync windows). */
    listAppProjects(namespace?: string): Promise<AppProject[]>;
    createApplicationSet(obj: ApplicationSet): Promise<unknown>;
    /** RFC 6902 JSON patch; `test` operations make it conditional. */
    jsonPatchApplicationSet(name: string, ops: JsonPatchOp[], namespace?: string): Promise<unknown>;
    /** Merge-patches the ApplicationSet's spec.template (leaves the generators alone). */
    patchApplicationSetTemplate(name: string, template: ApplicationSetSpec["template"], namespace?: string): Promise<unknown>;
    deleteApplicationSet(name: string, namespace?: string): Promise<void>;
    /** Removes every finalizer of an Application (what Argo CD's controller does when it has deleted the app's resources). */
    removeApplicationFinalizers(name: string, namespace?: string): Promise<void>;
    getConfigMap(namespace: string, name: string): Promise<ConfigMap | null>;
    /** One key of a Secret, decoded; null when the Secret or the key is not there. */
    getSecretValue(namespace: string, name: string, key: string): Promise<string | null>;
    patchConfigMapData(namespace: string, name: string, data: Record<string, string>): Promise<unknown>;
    deleteNamespace(name: string): Promise<void>;
    getNamespace(name: string): Promise<Namespace | null>;
    /** The namespace's finalize subresource with no finalizers: a Terminating namespace goes now. */
    finalizeNamespace(name: string): Promise<void>;
    /** A Deployment or StatefulSet, or null. */
    getWorkload(kind: "Deployment" | "StatefulSet", namespace: string, name: string): Promise<Workload | null>;
    listJobs(namespace?: string): Promise<Job[]>;
    listPods(namespace?: string): Promise<Pod[]>;
    /** The tail of a Pod's log (pods/log), at most `limitBytes`. */
    readPodLog(namespace: string, name: string, opts?: { tailLines?: number; limitBytes?: number }): Promise<string>;
    /** GET through the API server's service proxy (`service` as name:port), within `timeoutMs`; optional: a port without it reads no service. */
    getServiceProxy?(namespace: string, service: string, path: string, timeoutMs: number): Promise<string>;
    createEvent(namespace: string, event: KubeEvent): Promise<unknown>;
    /** Merge-patches metadata.annotations of an ApplicationSet (e.g. its refresh annotation). */
    annotateApplicationSet(name: string, annotations: Record<string, string>, namespace?: string): Promise<void>;
    /** Creates a namespace with these labels, or adds the labels to the existing one. */
    ensureNamespace(name: string, labels: Record<string, string>): Promise<void>;
    /** Creates a ConfigMap, or replaces the labels and data of the existing one. */
    putConfigMap(obj: {
        metadata: { name: string; namespace: string; labels?: Record<string, string> };
        data: Record<string, string>;
    }): Promise<void>;
    /** Whether a CustomResourceDefinition (e.g. prometheusrules.monitoring.coreos.com) is installed. */
    hasCrd(name: string): Promise<boolean>;
    /** Creates a namespaced custom object, or replaces the existing one's spec, labels and annotations. */
    putCustomObject(obj: CustomObject, plural: string): Promise<void>;
    /**
     * Lists ApplicationSets or Applications once and then follows them with a watch (client-node's
     * informer); a broken watch is started again (a list, then a watch) after `retryMs`.
     */
    cacheArgo<P extends keyof ArgoKinds>(plural: P, opts?: { retryMs?: number }): Promise<KindCache<ArgoKinds[P]>>;
    /** Deletes a namespaced custom object (nothing if it is gone). */
    deleteCustomObject(apiVersion: string, plural: string, namespace: string, name: string): Promise<void>;
}

const ARGO = { group: "argoproj.io", version: "v1alpha1" };
const CALL_TIMEOUT_MS = 30_000;
/** Objects per page of a list. */
const PAGE = 500;

function clientNode(): typeof k8sTypes {
    // ESM-only package; require() of ESM works on Node >= 20.19, unless a flag turns it off
    try {
        return require("@kubernetes/client-node");
    } catch (e) {
        const flag = /--no-experimental-require-module/.test(`${process.env.NODE_OPTIONS ?? ""} ${process.execArgv.join(" ")}`);
        if (flag && (e as { code?: string })?.code === "ERR_REQUIRE_ESM")
            throw new Error(
                "Node runs with --no-experimental-require-module (NODE_OPTIONS holds it?), which keeps it from loading @kubernetes/client-node, an ES module the kit requires: unset NODE_OPTIONS (or take that flag out) and run again",
            );
        throw e;
    }
}

export class KubeCluster implements ClusterPort {
    private readonly custom: k8sTypes.CustomObjectsApi;
    private readonly core: k8sTypes.CoreV1Api;
    private readonly apps: k8sTypes.AppsV1Api;
    private readonly batch: k8sTypes.BatchV1Api;
    private readonly ext: k8sTypes.ApiextensionsV1Api;
    private readonly k8s = clientNode();

    private readonly callTimeoutMs: number;
    private readonly kc: k8sTypes.KubeConfig;

    /**
     * @param kubeconfig the kubeconfig's YAML text
     * @param opts.callTimeoutMs deadline of one API call (default 30 s)
     */
    constructor(kubeconfig: string, opts: { callTimeoutMs?: number } = {}) {
        this.callTimeoutMs = opts.callTimeoutMs ?? CALL_TIMEOUT_MS;
        const kc = new this.k8s.KubeConfig();
        try {
            kc.loadFromString(kubeconfig);
        } catch (e) {
            throw new Error(`the kubeconfig could not be read: ${apiError(e).message}`);
        }
        if (!kc.getCurrentCluster()) throw new Error("the kubeconfig names no current cluster");
        this.kc = kc;
        this.custom = kc.makeApiClient(this.k8s.CustomObjectsApi);
        this.core = kc.makeApiClient(this.k8s.CoreV1Api);
        this.apps = kc.makeApiClient(this.k8s.AppsV1Api);
        this.batch = kc.makeApiClient(this.k8s.BatchV1Api);
        this.ext = kc.makeApiClient(this.k8s.ApiextensionsV1Api);
    }

    get where(): string {
        return `context ${this.kc.getCurrentContext()} (${this.kc.getCurrentCluster()?.server})`;
    }

    private contentType(type: "merge" | "json") {
        return this.k8s.setHeaderOptions(
            "Content-Type",
            type === "merge" ? this.k8s.PatchStrategy.MergePatch : this.k8s.PatchStrategy.JsonPatch,
        );
    }

    /** One API call with a deadline (a hung API server must not hang a pulumi up forever). */
    private async call<T>(what: string, f: () => Promise<T>, timeoutMs = this.callTimeoutMs): Promise<T> {
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<never>((_, reject) => {
            timer = setTimeout(
                () => reject(new Error(`${what}: no answer from the Kubernetes API within ${timeoutMs / 1000} s`)),
                timeoutMs,
            );
        });
        try {
            return await Promise.race([f(), deadline]);
        } catch (e) {
            if (String(apiError(e).message).includes("no answer from the Kubernetes API")) throw e;
            throw explain(what, e);
        } finally {
            clearTimeout(timer);
        }
    }

    private async getArgo<T>(plural: string, name: string, namespace: string): Promise<T | null> {
        return this.call(`get ${plural}/${name}`, () =>
            orNull(this.custom.getNamespacedCustomObject({ ...ARGO, namespace, plural, name })),
        );
    }

    /**
     * Every page of a list (`limit` / `continue`): a cluster with thousands of objects answers in
     * pieces, each within the call's deadline, instead of one response of hundreds of megabytes.
     */
    private async paged<T>(what: string, page: (cont: string | undefined) => Promise<unknown>): Promise<T[]> {
        const items: T[] = [];
        let cont: string | undefined;
        do {
            const res = (await this.call(what, () => page(cont))) as { items?: T[]; metadata?: { _continue?: string; continue?: string } };
            items.push(...(res?.items ?? []));
            cont = res?.metadata?._continue ?? res?.metadata?.continue ?? undefined;
        } while (cont);
        return items;
    }

    private async listArgo<T>(plural: string, namespace?: string): Promise<T[]> {
        return this.paged<T>(`list ${plural}`, (_continue) =>
            namespace
                ? this.custom.listNamespacedCustomObject({ ...ARGO, namespace, plural, limit: PAGE, _continue })
                : this.custom.listClusterCustomObject({ ...ARGO, plural, limit: PAGE, _continue }),
        );
    }

    getApplication(name: string, namespace = ARGOCD_NAMESPACE) {
        return this.getArgo<Application>("applications", name, namespace);
    }
    listApplications(namespace?: string) {
        return this.listArgo<Application>("applications", namespace);
    }
    async annotateApplication(name: string, annotations: Record<string, string>, namespace = ARGOCD_NAMESPACE) {
        await this.call(`annotate applications/${name}`, () =>
            this.custom.patchNamespacedCustomObject(
                { ...ARGO, namespace, plural: "applications", name, body: { metadata: { annotations } } },
                this.contentType("merge"),
            ),
        );
    }
    getApplicationSet(name: string, namespace = ARGOCD_NAMESPACE) {
        return this.getArgo<ApplicationSet>("applicationsets", name, namespace);
    }
    listApplicationSets(namespace?: string) {
        return this.listArgo<ApplicationSet>("applicationsets", namespace);
    }
    listAppProjects(namespace?: string) {
        return this.listArgo<AppProject>("appprojects", namespace);
    }
    createApplicationSet(obj: ApplicationSet) {
        return this.call(`create applicationsets/${obj.metadata.name}`, () =>
            this.custom.createNamespacedCustomObject({
                ...ARGO,
                namespace: obj.metadata.namespace ?? ARGOCD_NAMESPACE,
                plural: "applicationsets",
                body: obj,
            }),
        );
    }
    jsonPatchApplicationSet(name: string, ops: JsonPatchOp[], namespace = ARGOCD_NAMESPACE) {
        return this.call(`patch applicationsets/${name}`, () =>
            this.custom.patchNamespacedCustomObject(
                { ...ARGO, namespace, plural: "applicationsets", name, body: ops },
                this.contentType("json"),
            ),
        );
    }
    patchApplicationSetTemplate(name: string, template: ApplicationSetSpec["template"], namespace = ARGOCD_NAMESPACE) {
        return this.call(`patch applicationsets/${name}`, () =>
            this.custom.patchNamespacedCustomObject(
                { ...ARGO, namespace, plural: "applicationsets", name, body: { spec: { template } } },
                this.contentType("merge"),
            ),
        );
    }
    async deleteApplicationSet(name: string, namespace = ARGOCD_NAMESPACE) {
        await this.call(`delete applicationsets/${name}`, () =>
            orNull(this.custom.deleteNamespacedCustomObject({ ...ARGO, namespace, plural: "applicationsets", name })),
        );
    }
    async removeApplicationFinalizers(name: string, namespace = ARGOCD_NAMESPACE) {
        await this.call(`remove the finalizers of applications/${name}`, () =>
            orNull(
                this.custom.patchNamespacedCustomObject(
                    { ...ARGO, namespace, plural: "applications", name, body: { metadata: { finalizers: null } } },
                    this.contentType("merge"),
                ),
            ),
        );
    }
    getConfigMap(namespace: string, name: string) {
        return this.call(`get configmaps/${name} -n ${namespace}`, () =>
            orNull(this.core.readNamespacedConfigMap({ name, namespace }) as Promise<ConfigMap>),
        );
    }
    async getSecretValue(namespace: string, name: string, key: string) {
        const secret = await this.call(`get secrets/${name} -n ${namespace}`, () =>
            orNull(this.core.readNamespacedSecret({ name, namespace })),
        );
        const value = secret?.data?.[key];
        return typeof value === "string" ? Buffer.from(value, "base64").toString("utf8") : null;
    }
    patchConfigMapData(namespace: string, name: string, data: Record<string, string>) {
        return this.call(`patch configmaps/${name} -n ${namespace}`, () =>
            this.core.patchNamespacedConfigMap({ name, namespace, body: { data } }, this.contentType("merge")),
        );
    }
    async deleteNamespace(name: string) {
        await this.call(`delete namespaces/${name}`, () => orNull(this.core.deleteNamespace({ name })));
    }
    getNamespace(name: string) {
        return this.call(`get namespaces/${name}`, () => orNull(this.core.readNamespace({ name }) as Promise<Namespace>));
    }
    async finalizeNamespace(name: string) {
        await this.call(`finalize namespaces/${name}`, () =>
            orNull(
                this.core.replaceNamespaceFinalize({
                    name,
                    body: { apiVersion: "v1", kind: "Namespace", metadata: { name }, spec: { finalizers: [] } },
                }),
            ),
        );
    }
    getWorkload(kind: "Deployment" | "StatefulSet", namespace: string, name: string) {
        return this.call(`get ${kind.toLowerCase()}s/${name} -n ${namespace}`, () =>
            orNull(
                (kind === "Deployment"
                    ? this.apps.readNamespacedDeployment({ name, namespace })
                    : this.apps.readNamespacedStatefulSet({ name, namespace })) as Promise<Workload>,
            ),
        );
    }
    async listJobs(namespace?: string) {
        return this.paged<Job>("list jobs", (_continue) =>
            namespace
                ? this.batch.listNamespacedJob({ namespace, limit: PAGE, _continue })
                : this.batch.listJobForAllNamespaces({ limit: PAGE, _continue }),
        );
    }
    async listPods(namespace?: string) {
        return this.paged<Pod>("list pods", (_continue) =>
            namespace
                ? this.core.listNamespacedPod({ namespace, limit: PAGE, _continue })
                : this.core.listPodForAllNamespaces({ limit: PAGE, _continue }),
        );
    }
    async getServiceProxy(namespace: string, service: string, path: string, timeoutMs: number) {
        const out: unknown = await this.call(
            `get services/${service}/proxy/${path} -n ${namespace}`,
            () => this.core.connectGetNamespacedServiceProxyWithPath({ name: service, namespace, path }),
            timeoutMs,
        );
        return String(out ?? "");
    }
    async readPodLog(namespace: string, name: string, opts: { tailLines?: number; limitBytes?: number } = {}) {
        const out: unknown = await this.call(`logs pods/${name} -n ${namespace}`, () =>
            this.core.readNamespacedPodLog({ name, namespace, tailLines: opts.tailLines ?? 20, limitBytes: opts.limitBytes ?? 4096 }),
        );
        return String(out ?? "");
    }
    createEvent(namespace: string, event: KubeEvent) {
        return this.call(`create event -n ${namespace}`, () =>
            this.core.createNamespacedEvent({ namespace, body: event as unknown as k8sTypes.CoreV1Event }),
        );
    }
    async annotateApplicationSet(name: string, annotations: Record<string, string>, namespace = ARGOCD_NAMESPACE) {
        await this.call(`annotate applicationsets/${name}`, () =>
            this.custom.patchNamespacedCustomObject(
                { ...ARGO, namespace, plural: "applicationsets", name, body: { metadata: { annotations } } },
                this.contentType("merge"),
            ),
        );
    }
    async ensureNamespace(name: string, labels: Record<string, string>) {
        const live = await this.getNamespace(name);
        if (!live) {
            await this.call(`create namespaces/${name}`, () =>
                this.core.createNamespace({ body: { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } } }),
            );
            return;
        }
        await this.call(`label namespaces/${name}`, () =>
            this.core.patchNamespace({ name, body: { metadata: { labels } } }, this.contentType("merge")),
        );
    }
    async putConfigMap(obj: {
        metadata: { name: string; namespace: string; labels?: Record<string, string> };
        data: Record<string, string>;
    }) {
        await againOnConflict(() => this.putConfigMapOnce(obj));
    }
    private async putConfigMapOnce(obj: {
        metadata: { name: string; namespace: string; labels?: Record<string, string> };
        data: Record<string, string>;
    }) {
        const { name, namespace } = obj.metadata;
        const live = await this.getConfigMap(namespace, name);
        const body = { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, labels: obj.metadata.labels }, data: obj.data };
        if (!live) {
            await this.call(`create configmaps/${name} -n ${namespace}`, () => this.core.createNamespacedConfigMap({ namespace, body }));
            return;
        }
        await this.call(`replace configmaps/${name} -n ${namespace}`, () =>
            this.core.replaceNamespacedConfigMap({
                name,
                namespace,
                body: { ...body, metadata: { ...body.metadata, resourceVersion: live.metadata?.resourceVersion } },
            }),
        );
    }
    async hasCrd(name: string) {
        return (
            (await this.call(`get customresourcedefinitions/${name}`, () => orNull(this.ext.readCustomResourceDefinition({ name })))) !==
            null
        );
    }
    async putCustomObject(obj: CustomObject, plural: string) {
        await againOnConflict(() => this.putCustomObjectOnce(obj, plural));
    }
    private async putCustomObjectOnce(obj: CustomObject, plural: string) {
        const [group, version] = String(obj.apiVersion).split("/");
        const { name, namespace } = obj.metadata;
        const live = await this.call(`get ${plural}/${name}`, () =>
            orNull(
                this.custom.getNamespacedCustomObject({ group, version, namespace, plural, name }) as Promise<{
                    metadata?: { resourceVersion?: string };
                }>,
            ),
        );
        if (!live) {
            await this.call(`create ${plural}/${name}`, () =>
                this.custom.createNamespacedCustomObject({ group, version, namespace, plural, body: obj }),
            );
            return;
        }
        const body = { ...obj, metadata: { ...obj.metadata, resourceVersion: live.metadata?.resourceVersion } };
        await this.call(`replace ${plural}/${name}`, () =>
            this.custom.replaceNamespacedCustomObject({ group, version, namespace, plural, name, body }),
        );
    }
    async deleteCustomObject(apiVersion: string, plural: string, namespace: string, name: string) {
        const [group, version] = apiVersion.split("/");
        await this.call(`delete ${plural}/${name}`, () =>
            orNull(this.custom.deleteNamespacedCustomObject({ group, version, namespace, plural, name })),
        );
    }
    async cacheArgo<P extends keyof ArgoKinds>(plural: P, opts: { retryMs?: number } = {}): Promise<KindCache<ArgoKinds[P]>> {
        type T = ArgoKinds[P];
        const path = `/apis/${ARGO.group}/${ARGO.version}/${plural}`;
        // the informer's object type must look like a KubernetesObject (client-node's, whose times are Dates): Argo CD's are read as JSON
        const informer = this.k8s.makeInformer<k8sTypes.KubernetesObject>(this.kc, path, () =>
            this.call(
                `list ${plural}`,
                () =>
                    this.custom.listClusterCustomObject({ ...ARGO, plural }) as Promise<
                        k8sTypes.KubernetesListObject<k8sTypes.KubernetesObject>
                    >,
            ),
        );
        let healthy = false;
        let stopped = false;
        let timer: NodeJS.Timeout | undefined;
        informer.on("connect", () => (healthy = true));
        informer.on("error", () => {
            healthy = false;
            if (stopped) return;
            // the informer does not restart itself after an error: list and watch again later
            timer = setTimeout(() => informer.start().catch(() => undefined), opts.retryMs ?? 5_000);
        });
        const listeners = new Set<(obj: T, deleted: boolean) => void>();
        informer.on("add", (o) => listeners.forEach((l) => l(o as unknown as T, false)));
        informer.on("update", (o) => listeners.forEach((l) => l(o as unknown as T, false)));
        informer.on("delete", (o) => listeners.forEach((l) => l(o as unknown as T, true)));
        await this.call(`watch ${plural}`, () => informer.start());
        healthy = true;
        return {
            list: () => informer.list() as unknown as T[],
            healthy: () => healthy,
            onChange: (l) => {
                listeners.add(l);
                return () => listeners.delete(l);
            },
            stop: async () => {
                stopped = true;
                if (timer) clearTimeout(timer);
                await informer.stop();
            },
        };
    }
}

/**
 * A read-then-replace again, from a fresh read, when the object changed between the two (409 Conflict: a
 * controller wrote its status meanwhile), as client-go's retry.RetryOnConflict with retry.DefaultRetry does; at most 5 times.
 */
async function againOnConflict(f: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
        try {
            return await f();
        } catch (e) {
            if (attempt >= 5 || (e as { code?: unknown }).code !== 409) throw e;
            // retry.DefaultRetry's backoff: 10 ms, with 10 % jitter
            await new Promise((resolve) => setTimeout(resolve, 10 * (1 + 0.1 * Math.random())));
        }
    }
}
