/**
 * The simulation's ApplicationSet controller (list generator, fasttemplate `{{key}}` templating):
 * one Application per element, owned by the ApplicationSet; a hand edit to a generated
 * Application's spec is overwritten from the template, as in Argo CD v3.5.1.
 */
import { realSimClock, SimClock, TimerHandle } from "./clock";
import { Change, FakeKube } from "./fakeApi";

export const ACTOR = "applicationset-controller";

/** Replaces `{{key}}` (fasttemplate) in every string; an unknown key is left as it is. */
export function renderTemplate<T>(value: T, params: Record<string, string>): T {
    if (typeof value === "string") {
        return value.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (all, k) => (k in params ? params[k] : all)) as any;
    }
    if (Array.isArray(value)) return value.map((v) => renderTemplate(v, params)) as any;
    if (value && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderTemplate(v, params)])) as any;
    }
    return value;
}

/** The finalizer that makes Argo CD delete an Application's resources before the Application goes. */
export const RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io";

/**
 * The annotations of a generated Application that an update keeps, the rest coming from the
 * template (applicationset/controllers/applicationset_controller.go createOrUpdateInCluster).
 */
export const PRESERVED_ANNOTATIONS = ["argocd.argoproj.io/refresh", "argocd.argoproj.io/hydrate"];
const preserved = (key: string) => PRESERVED_ANNOTATIONS.includes(key) || key.startsWith("notified.notifications.argoproj.io") || key.startsWith("notifications.argoproj.io/");

/**
 * The Applications an ApplicationSet with a list generator generates (metadata and spec only).
 * Each gets the resources finalizer unless the template sets finalizers or the ApplicationSet says
 * preserveResourcesOnDeletion (applicationset/utils/utils.go).
 */
export function generateApplications(appset: any): any[] {
    const elements: any[] = appset.spec?.generators?.[0]?.list?.elements ?? [];
    return elements.map((el) => {
        for (const [k, v] of Object.entries(el)) {
            if (typeof v !== "string") throw new Error(`list element key ${k} must be a string, got ${typeof v}`);
        }
        const t = renderTemplate(appset.spec.template, el as Record<string, string>);
        return {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Application",
            metadata: {
                name: t.metadata.name,
                namespace: appset.metadata.namespace,
                labels: t.metadata.labels,
                annotations: t.metadata.annotations,
                finalizers: t.metadata.finalizers ?? (appset.spec?.syncPolicy?.preserveResourcesOnDeletion ? undefined : [RESOURCES_FINALIZER]),
                ownerReferences: [{ apiVersion: "argoproj.io/v1alpha1", kind: "ApplicationSet", name: appset.metadata.name, uid: appset.metadata.uid, controller: true, blockOwnerDeletion: true }],
            },
            spec: t.spec,
        };
    });
}

export class AppSetController {
    private unsubscribe?: () => void;

    private readonly timers = new Set<TimerHandle>();

    /** @param delayMs how long generating takes (the real controller runs on its own loop) */
    constructor(private readonly kube: FakeKube, private readonly delayMs = 0, private readonly clock: SimClock = realSimClock()) {}

    start() {
        this.unsubscribe = this.kube.onChange((c) => this.onChange(c));
        for (const a of this.kube.list("ApplicationSet")) this.reconcile(a);
    }

    stop() {
        this.unsubscribe?.();
        for (const t of this.timers) this.clock.clearTimeout(t);
        this.timers.clear();
    }

    private later(f: () => void) {
        if (this.delayMs <= 0) return f();
        const t = this.clock.setTimeout(() => {
            this.timers.delete(t);
            f();
        }, this.delayMs);
        this.timers.add(t);
    }

    private onChange(c: Change) {
        if (c.actor === ACTOR || c.actor === "garbage-collector") return;
        if (c.kind === "ApplicationSet" && c.type !== "DELETED") {
            const { namespace, name } = c.obj.metadata;
            this.later(() => {
                const current = this.kube.get("ApplicationSet", namespace, name);
                if (current) this.reconcile(current);
            });
        }
        if (c.kind === "Application") {
            const owner = (c.obj.metadata.ownerReferences ?? []).find((r: any) => r.kind === "ApplicationSet");
            if (!owner) return;
            const appset = this.kube.get("ApplicationSet", c.obj.metadata.namespace, owner.name);
            if (appset) this.reconcile(appset);
        }
    }

    reconcile(appset: any) {
        const desired = generateApplications(appset);
        const names = new Set(desired.map((d) => d.metadata.name));
        for (const d of desired) {
            const live = this.kube.get("Application", d.metadata.namespace, d.metadata.name);
            if (live?.metadata.deletionTimestamp) continue; // being deleted: generated again once it is gone
            // spec, labels and finalizers come from the template; annotations too, but for the preserved keys
            const kept = Object.fromEntries(Object.entries(live?.metadata.annotations ?? {}).filter(([k]) => preserved(k)));
            const annotations = { ...(d.metadata.annotations ?? {}), ...kept };
            const next = live
                ? {
                      ...live,
                      metadata: { ...live.metadata, labels: d.metadata.labels, annotations: Object.keys(annotations).length ? annotations : undefined, finalizers: d.metadata.finalizers, ownerReferences: d.metadata.ownerReferences },
                      spec: d.spec,
                  }
                : d;
            this.kube.put(next, ACTOR);
        }
        for (const app of this.kube.list("Application", appset.metadata.namespace)) {
            const owned = (app.metadata.ownerReferences ?? []).some((r: any) => r.uid === appset.metadata.uid);
            if (owned && !names.has(app.metadata.name)) this.kube.remove("Application", app.metadata.namespace, app.metadata.name, ACTOR);
        }
    }
}
