/**
 * ApplicationSets of the doctor's conformance cases, the same on the real node and in the
 * simulation: a list generator of rings, each ring one Application labelled with it, RollingSync
 * steps over the labels.
 */
import { ARGOCD_NAMESPACE } from "../../lab/argo/application";
import { toYaml } from "../../lab/ports/files";

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

/**
 * The silent skip's case (#29240), the same on the real node and in the simulation: one step, one
 * Application (`respec-s`) whose path its list element gives, respec/v1 at first; the repository has
 * respec/v1 and respec/v2 (each one ConfigMap `respec`, as a kustomization: the simulated repo-server
 * renders kustomize sources only).
 */
export const RESPEC = { appset: "respec", app: "respec-s", firstPath: "respec/v1", newPath: "respec/v2" };

export const respecFiles = (): Record<string, string> =>
    Object.fromEntries(
        ["v1", "v2"].flatMap((v) => [
            [
                `respec/${v}/configmap.yaml`,
                toYaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "respec" }, data: { version: v } }),
            ],
            [`respec/${v}/kustomization.yaml`, toYaml({ resources: ["configmap.yaml"] })],
        ]),
    );

export const respecAppSet = (repoURL: string) =>
    ringAppSet({
        repoURL,
        name: RESPEC.appset,
        rings: ["s"],
        steps: [{ rings: ["s"] }],
        element: { path: RESPEC.firstPath },
        appName: "respec-{{.ring}}",
        path: "{{.path}}",
        prune: true,
    });

/** The JSON patch that gives the Application its new path (no commit). */
export const respecNewPath = [{ op: "replace" as const, path: "/spec/generators/0/list/elements/0/path", value: RESPEC.newPath }];
