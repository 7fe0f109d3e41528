/**
 * The resource types the simulated API server serves (its store, its REST paths, its discovery), and
 * the error its handlers throw to answer with a Kubernetes Status.
 */

export interface ResourceType {
    group: string; // "" for the core group
    version: string;
    plural: string;
    kind: string;
    namespaced: boolean;
    /** What `kubectl get <shortName>` accepts (served through discovery). */
    shortNames?: string[];
    /** Served only while its CRD (plural.group) exists, as a kind the cluster's operators bring (the Prometheus Operator's). */
    withItsCrd?: boolean;
}

/** The types the API serves with `crds` in the cluster (a kind that comes with an operator's CRD only while that CRD is there). */
export const servedTypes = (hasCrd: (name: string) => boolean): ResourceType[] =>
    TYPES.filter((t) => !t.withItsCrd || hasCrd(`${t.plural}.${t.group}`));

/** The API groups of Kubernetes' own types (every other group here is a custom resource's). */
export const BUILT_IN_GROUPS = new Set(["", "apps", "batch", "apiextensions.k8s.io"]);

export const TYPES: ResourceType[] = [
    { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, shortNames: ["ns"] },
    { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, shortNames: ["cm"] },
    { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true, shortNames: ["po"] },
    { group: "", version: "v1", plural: "events", kind: "Event", namespaced: true, shortNames: ["ev"] },
    { group: "apps", version: "v1", plural: "deployments", kind: "Deployment", namespaced: true, shortNames: ["deploy"] },
    { group: "apps", version: "v1", plural: "statefulsets", kind: "StatefulSet", namespaced: true, shortNames: ["sts"] },
    { group: "batch", version: "v1", plural: "jobs", kind: "Job", namespaced: true },
    {
        group: "argoproj.io",
        version: "v1alpha1",
        plural: "applications",
        kind: "Application",
        namespaced: true,
        shortNames: ["app", "apps"],
    },
    {
        group: "argoproj.io",
        version: "v1alpha1",
        plural: "applicationsets",
        kind: "ApplicationSet",
        namespaced: true,
        shortNames: ["appset", "appsets"],
    },
    {
        group: "argoproj.io",
        version: "v1alpha1",
        plural: "appprojects",
        kind: "AppProject",
        namespaced: true,
        shortNames: ["appproj", "appprojs"],
    },
    {
        group: "apiextensions.k8s.io",
        version: "v1",
        plural: "customresourcedefinitions",
        kind: "CustomResourceDefinition",
        namespaced: false,
        shortNames: ["crd", "crds"],
    },
    // served once its CRD object exists (a test puts the CRD to say "the Prometheus Operator is installed"); before, a
    // kubectl apply of one answers "no matches for kind", as a cluster without the operator does
    {
        group: "monitoring.coreos.com",
        version: "v1",
        plural: "prometheusrules",
        kind: "PrometheusRule",
        namespaced: true,
        withItsCrd: true,
    },
];

/** An answer other than 2xx, as a Kubernetes Status (code, reason, message). */
export class HttpError extends Error {
    constructor(
        public code: number,
        public reason: string,
        message: string,
        /** The Status's details (an Invalid's kind, name and causes, which kubectl prints). */
        public details?: { group?: string; kind: string; name: string; causes?: { reason: string; message: string; field: string }[] },
    ) {
        super(message);
    }
}

/**
 * errors.NewInvalid's 422: its message as the API server writes it (one error as it is, several in brackets),
 * each error a cause of its details, so that kubectl prints `The Kind "name" is invalid: field: message`.
 */
export function invalid(kind: string, group: string, name: string, errs: string[]): HttpError {
    const why = errs.length === 1 ? errs[0] : `[${errs.join(", ")}]`;
    const causes = errs.map((e) => {
        const at = e.indexOf(": ");
        const message = e.slice(at + 2);
        const reason = message.startsWith("Required value")
            ? "FieldValueRequired"
            : message.startsWith("Forbidden")
              ? "FieldValueForbidden"
              : "FieldValueInvalid";
        return { reason, message, field: e.slice(0, at) };
    });
    return new HttpError(422, "Invalid", `${kind}${group ? `.${group}` : ""} "${name}" is invalid: ${why}`, { group, kind, name, causes });
}
