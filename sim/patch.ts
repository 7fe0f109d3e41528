/** The patches the simulated API server applies: JSON merge patch and JSON patch (fast-json-patch). */
import { applyPatch, JsonPatchError, Operation } from "fast-json-patch";
import { BUILT_IN_GROUPS, HttpError } from "./apiTypes";

/** A value as JSON would carry it (undefined fields dropped, a Date a string): what a client's object becomes in the store. */
export const asJson = <T>(v: T): T => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
    if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return asJson(patch);
    const out: Record<string, unknown> = target && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
    for (const [k, v] of Object.entries(patch)) {
        if (v === null) delete out[k];
        else out[k] = mergePatch(out[k], v);
    }
    return out;
}

/**
 * RFC 6902 JSON patch, applied by fast-json-patch to a copy (a failed operation changes nothing),
 * its errors answered as the API server answers them: 422 Invalid, with what failed where.
 */
export function jsonPatch(doc: unknown, ops: Operation[]): unknown {
    try {
        return applyPatch(asJson(doc), ops, true, true).newDocument;
    } catch (e) {
        if (!(e instanceof JsonPatchError)) throw e;
        const path = e.operation?.path ?? "";
        const op = e.operation?.op ?? "";
        switch (e.name) {
            case "TEST_OPERATION_FAILED":
                throw new HttpError(
                    422,
                    "Invalid",
                    `the server rejected our request due to an error in our request: test failed at ${path}`,
                );
            case "OPERATION_PATH_UNRESOLVABLE":
            case "OPERATION_PATH_ILLEGAL_ARRAY_INDEX":
            case "OPERATION_VALUE_OUT_OF_BOUNDS":
                throw new HttpError(422, "Invalid", `${op}: path ${path} does not exist`);
            case "OPERATION_OP_INVALID":
                throw new HttpError(422, "Invalid", `unsupported JSON patch op ${op}`);
            case "OPERATION_PATH_INVALID":
                throw new HttpError(422, "Invalid", `bad JSON pointer ${path}`);
            default:
                throw new HttpError(422, "Invalid", `the JSON patch is invalid: ${e.message.split("\n")[0]}`);
        }
    }
}

/**
 * A PATCH as the API server applies it by its content type: JSON patch, merge patch, server-side
 * apply (merged here), and strategic merge for the built-in kinds only. A custom resource has no
 * strategic merge (no Go struct tags to merge by): the API server answers 415
 * (apiserver/pkg/endpoints/handlers/patch.go, negotiation.NewUnsupportedMediaTypeError).
 */
export function patchAs(contentType: string, current: unknown, body: unknown, group: string): unknown {
    if (contentType === "application/strategic-merge-patch+json" && !BUILT_IN_GROUPS.has(group))
        throw new HttpError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        );
    if (contentType === "application/json-patch+json") {
        if (!Array.isArray(body))
            throw new HttpError(400, "BadRequest", "json: cannot unmarshal object into Go value of type jsonpatch.Patch"); // jsonpatch.DecodePatch, as patch.go answers it
        return jsonPatch(current, body);
    }
    if (contentType === "application/merge-patch+json" || contentType === "application/strategic-merge-patch+json")
        return mergePatch(current, body);
    if (contentType === "application/apply-patch+yaml") return mergePatch(current ?? {}, body);
    throw new HttpError(415, "UnsupportedMediaType", `unsupported patch type ${contentType}`);
}
