/**
 * The update validation of Kubernetes' own kinds that a learner meets in the labs (the API server's
 * pkg/apis/batch/validation, ValidateJobSpecUpdate): a Job's selector is immutable, and its Pod
 * template too unless the Job was suspended. The API server then answers 422 Invalid, nothing stored.
 */
import { isDeepStrictEqual } from "util";
import { invalid } from "./apiTypes";

interface JobLike {
    metadata: { name: string };
    spec?: Record<string, unknown> & { suspend?: boolean };
}

/** Throws the API server's 422 for an update of a Job that changes what cannot change; returns for any other. */
export function refuseImmutableUpdate(kind: string, old: object | undefined, next: object) {
    if (kind !== "Job" || !old) return;
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
