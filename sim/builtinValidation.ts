/**
 * The update validation of Kubernetes' own kinds that a learner meets in the labs (the API server's
 * pkg/apis/batch/validation, ValidateJobSpecUpdate): a Job's selector is immutable, and its Pod
 * template too unless the Job was suspended; an immutable ConfigMap's or Secret's data. The API server then answers
 * 422 Invalid, nothing stored.
 */
import { isDeepStrictEqual } from "util";
import { invalid } from "./apiTypes";

interface JobLike {
    metadata: { name: string };
    spec?: Record<string, unknown> & { suspend?: boolean };
}

interface DataLike {
    metadata: { name: string };
    immutable?: boolean;
    data?: Record<string, string>;
    binaryData?: Record<string, string>;
}

/** An empty map and none are one (the API server stores neither). */
const same = (a: object | undefined, b: object | undefined) =>
    isDeepStrictEqual(a && Object.keys(a).length ? a : undefined, b && Object.keys(b).length ? b : undefined);

/**
 * ValidateConfigMapUpdate and ValidateSecretUpdate (pkg/apis/core/validation): once `immutable: true` is stored, the
 * data, binaryData and the flag itself cannot change.
 */
function refuseImmutableData(kind: "ConfigMap" | "Secret", was: DataLike, now: DataLike) {
    if (was.immutable !== true) return;
    const forbidden = "Forbidden: field is immutable when `immutable` is set";
    const errs = [
        ...(now.immutable !== true ? [`immutable: ${forbidden}`] : []),
        ...(same(was.data, now.data) ? [] : [`data: ${forbidden}`]),
        ...(same(was.binaryData, now.binaryData) ? [] : [`binaryData: ${forbidden}`]),
    ];
    if (errs.length) throw invalid(kind, "", was.metadata.name, errs);
}

/** Throws the API server's 422 for an update of a Job, or of an immutable ConfigMap or Secret, that changes what cannot change; returns for any other. */
export function refuseImmutableUpdate(kind: string, old: object | undefined, next: object) {
    if (!old) return;
    if (kind === "ConfigMap" || kind === "Secret") return refuseImmutableData(kind, old as DataLike, next as DataLike);
    if (kind !== "Job") return;
    const [was, now] = [old as JobLike, next as JobLike];
    // field.Invalid(..., "field is immutable"): the value is an internal type, printed with %#v (here shortened)
    const changed = (
        [
            ["selector", "v1.LabelSelector"],
            ...(was.spec?.suspend ? [] : [["template", "core.PodTemplateSpec"]]),
            ["completionMode", "batch.CompletionMode"],
            ["podFailurePolicy", "batch.PodFailurePolicy"],
        ] as const
    ).filter(([f]) => !isDeepStrictEqual(was.spec?.[f], now.spec?.[f]));
    if (changed.length)
        throw invalid(
            "Job",
            "batch",
            was.metadata.name,
            changed.map(([f, type]) => `spec.${f}: Invalid value: ${type}{…}: field is immutable`),
        );
}
