/**
 * ApplicationSets of the doctor's conformance cases, the same on the real node and in the
 * simulation: a list generator of rings, each ring one Application labelled with it, RollingSync
 * steps over the labels.
 */
import { ARGOCD_NAMESPACE } from "../../lab/argo/application";

/** The label each ring's Application carries, which the steps select. */
export const RING = "gitops-lab.test/ring";

/** A RollingSync ApplicationSet of one Application per ring, labelled with its ring, each step a set of rings. */
export function ringAppSet(o: {
    repoURL: string;
    name: string;
    rings: string[];
    steps: { rings: string[]; maxUpdate?: number }[];
    /** More parameters of every ring's element. */
    element?: Record<string, string>;
    /** The Applications' name and namespace, from the ring. */
    appName: string;
    path: string;
    prune: boolean;
}): any {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "ApplicationSet",
        metadata: { name: o.name, namespace: ARGOCD_NAMESPACE },
        spec: {
            goTemplate: true,
            generators: [{ list: { elements: o.rings.map((ring) => ({ ring, ...o.element })) } }],
            strategy: {
                type: "RollingSync",
                rollingSync: {
                    steps: o.steps.map((s) => ({
                        matchExpressions: [{ key: RING, operator: "In", values: s.rings }],
                        ...(s.maxUpdate ? { maxUpdate: s.maxUpdate } : {}),
                    })),
                },
            },
            template: {
                metadata: { name: o.appName, labels: { [RING]: "{{.ring}}" } },
                spec: {
                    project: "default",
                    source: { repoURL: o.repoURL, targetRevision: "main", path: o.path },
                    destination: { server: "https://kubernetes.default.svc", namespace: o.appName },
                    syncPolicy: { automated: { prune: o.prune }, syncOptions: ["CreateNamespace=true"] },
                },
            },
        },
    };
}
