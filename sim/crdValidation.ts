/**
 * What apiextensions-apiserver refuses of a custom resource before storing it: a field its CRD's
 * schema requires that the object lacks (`spec.template.spec.project: Required value`), answered
 * 422 Invalid as the API server answers it; a name that is not a DNS subdomain; a field the schema
 * does not declare (pruned, or refused under kubectl's strict field validation); a field of another type
 * than its schema's. The simulation checks no formats or enums, and not `status` (its controllers write
 * it in-process, as Argo CD's write it).
 */
import { isDeepStrictEqual } from "util";
import { HttpError, invalid } from "./apiTypes";
import type { Crd, Schema } from "./objects";

/** The paths of the fields `schema` requires that `value` lacks ("spec.template.metadata"). */
export function missingRequired(schema: Schema | undefined, value: unknown, at = ""): string[] {
    if (!schema || value === null || typeof value !== "object") return [];
    const join = (k: string) => (at ? `${at}.${k}` : k);
    if (Array.isArray(value)) return value.flatMap((v, i) => missingRequired(schema.items, v, `${at}[${i}]`));
    const obj = value as Record<string, unknown>;
    const out = (schema.required ?? []).filter((k) => obj[k] === undefined || obj[k] === null).map(join);
    for (const [k, sub] of Object.entries(schema.properties ?? {}))
        if (k !== "status" || at) out.push(...missingRequired(sub, obj[k], join(k)));
    return out;
}

/** A JSON value's type as kube-openapi's validator names it ("string", "boolean", "integer", "number", "object", "array"). */
const typeOf = (v: unknown): string =>
    Array.isArray(v) ? "array" : typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v;

/**
 * The fields of `value` whose type is not their schema's (prune: "true" where a boolean is declared), each as
 * apiextensions-apiserver words it (field.Invalid over kube-openapi's InvalidTypeError). A null is not checked:
 * the API server drops it from a field that is not nullable before it validates.
 */
export function wrongTypes(schema: Schema | undefined, value: unknown, at = "", old?: unknown): string[] {
    if (!schema || value === null || value === undefined) return [];
    // ratcheting (CRDValidationRatcheting, on since Kubernetes 1.30): a value an update leaves as it was is not checked again
    if (old !== undefined && isDeepStrictEqual(value, old)) return [];
    const has = typeOf(value);
    const want = schema.type;
    const fits =
        !want ||
        has === want ||
        (want === "number" && has === "integer") ||
        (schema["x-kubernetes-int-or-string"] && (has === "integer" || has === "string"));
    if (!fits) return [`${at}: Invalid value: "${has}": ${at} in body must be of type ${want}: "${has}"`];
    // a list changed is checked whole: the API server pairs no elements of an atomic list (Argo CD's CRDs declare no
    // list type, so every list is one), only a map-typed list's by key
    if (Array.isArray(value)) return value.flatMap((v, i) => wrongTypes(schema.items, v, `${at}[${i}]`));
    if (typeof value !== "object") return [];
    const join = (k: string) => (at ? `${at}.${k}` : k);
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
        // the root's metadata is ObjectMeta's, and status is the controllers' (as missingRequired leaves them)
        !at && (k === "metadata" || k === "status" || k === "apiVersion" || k === "kind")
            ? []
            : wrongTypes(
                  schema.properties?.[k] ?? (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined),
                  v,
                  join(k),
                  old !== null && typeof old === "object" && !Array.isArray(old) ? (old as Record<string, unknown>)[k] : undefined,
              ),
    );
}

/** Throws the API server's 422 when `obj` of `kind` (a custom resource of the shipped CRDs) lacks a required field, or has one of another type. */
export function checkRequired(
    crds: Crd[],
    kind: string,
    group: string,
    obj: { metadata?: { name?: string } },
    checkName = false,
    /** The object stored now, for an update: its values an update leaves unchanged are not checked again. */
    old?: unknown,
): void {
    const { schema } = schemaOf(crds, kind, group);
    if (!schema) return; // a kind of the API server's own: its names and fields are not checked here
    const badName = checkName && obj.metadata?.name ? nameError(obj.metadata.name) : undefined;
    const missing = [
        ...(badName ? [badName] : []),
        ...wrongTypes(schema, obj, "", old),
        ...missingRequired(schema, obj).map((p) => `${p}: Required value`),
    ];
    if (!missing.length) return;
    throw invalid(kind, group, obj.metadata?.name ?? "", missing);
}

/**
 * Structural pruning (apiextensions-apiserver's pruning.PruneWithOptions): removes from `value` every
 * field its schema does not declare, where the schema neither preserves unknown fields nor has
 * `additionalProperties`, and returns their paths ("spec.syncPolicy.automated", "spec.generators[0].x").
 * The root's `metadata` is ObjectMeta's (its keys checked by `unknownMeta`); `status` is not read (the
 * simulation's controllers write it in-process; a client's is stored as sent).
 */
export function prune(schema: Schema | undefined, value: unknown, at = ""): string[] {
    if (!schema || value === null || typeof value !== "object") return [];
    if (Array.isArray(value)) return value.flatMap((v, i) => prune(schema.items, v, `${at}[${i}]`));
    const obj = value as Record<string, unknown>;
    const out: string[] = [];
    for (const k of Object.keys(obj)) {
        const path = at ? `${at}.${k}` : k;
        if (!at && (k === "metadata" || k === "status" || k === "apiVersion" || k === "kind")) continue;
        const sub = schema.properties?.[k] ?? (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
        if (sub) out.push(...prune(sub, obj[k], path));
        else if (!schema.additionalProperties && !schema["x-kubernetes-preserve-unknown-fields"]) {
            out.push(path);
            delete obj[k];
        }
    }
    return out;
}

/** ObjectMeta's fields (apimachinery's types.go): any other key under a custom resource's metadata is unknown. */
const OBJECT_META = new Set([
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
]);

/** The keys under the root's metadata that ObjectMeta does not have (dropped, as the decoder drops them). */
function unknownMeta(obj: unknown): string[] {
    const meta = (obj as { metadata?: Record<string, unknown> } | null)?.metadata;
    if (!meta || typeof meta !== "object") return [];
    const out = Object.keys(meta).filter((k) => !OBJECT_META.has(k));
    for (const k of out) delete meta[k];
    return out.map((k) => `metadata.${k}`);
}

/** The stored version's schema of a custom resource of `crds`, the CRDs the cluster serves (undefined for any other kind). */
function schemaOf(crds: Crd[], kind: string, group: string): { schema?: Schema; version?: string } {
    const crd = crds.find((c) => c.spec.names.kind === kind && c.spec.group === group);
    const version = crd?.spec.versions?.find((v) => v.storage) ?? crd?.spec.versions?.[0];
    return { schema: version?.schema?.openAPIV3Schema, version: version?.name };
}

/**
 * A client's custom resource as the API server decodes it under `fieldValidation` (kubectl sends
 * Strict; a client that sends none gets Warn): its undeclared fields pruned; under Strict the 400 the
 * API server answers instead (transformDecodeError over a strict decoding error); under Warn their
 * warnings, for the response's Warning headers.
 */
export function decodeStrictly<T extends object>(
    crds: Crd[],
    kind: string,
    group: string,
    obj: T,
    fieldValidation: string | null,
    patched = false,
): { obj: T; warnings: string[] } {
    const { schema, version } = schemaOf(crds, kind, group);
    if (!schema) return { obj, warnings: [] };
    const pruned = structuredClone(obj);
    const unknown = [...unknownMeta(pruned), ...prune(schema, pruned)].sort().map((p) => `unknown field "${p}"`);
    if (unknown.length && fieldValidation === "Strict")
        // a patched object is refused as the patch handler words it (422, the patched object as its value); a sent one as the decoder does
        throw patched
            ? new HttpError(
                  422,
                  "Invalid",
                  `patch: Invalid value: ${JSON.stringify(JSON.stringify(obj))}: strict decoding error: ${unknown.join(", ")}`,
              )
            : new HttpError(
                  400,
                  "BadRequest",
                  `${kind} in version "${version}" cannot be handled as a ${kind}: strict decoding error: ${unknown.join(", ")}`,
              );
    return { obj: pruned, warnings: fieldValidation === "Ignore" ? [] : unknown };
}

/**
 * A server-side apply's patch of a custom resource with a field its schema does not declare: the field
 * manager cannot type it, and the API server answers 500 (structuredmerge.go's plain error, whatever
 * fieldValidation says).
 */
export function checkApplyPatch(crds: Crd[], kind: string, group: string, ns: string | undefined, name: string, patch: unknown): void {
    const { schema, version } = schemaOf(crds, kind, group);
    if (!schema || !patch || typeof patch !== "object") return;
    const unknown = prune(schema, structuredClone(patch)).sort();
    if (unknown.length)
        // a plain error, not a Status: answered 500 with no reason (kubectl prints "Error from server: ...")
        throw new HttpError(
            500,
            "",
            `failed to create typed patch object (${ns ? `${ns}/` : ""}${name}; ${group}/${version}, Kind=${kind}): .${unknown[0]}: field not declared in schema`,
        );
}

/** The API server's check of a custom resource's name (NameIsDNSSubdomain): the 422 it answers, or undefined. */
export function nameInvalid(kind: string, group: string, name: string): string | undefined {
    const why = nameError(name);
    return why && `${kind}.${group} "${name}" is invalid: ${why}`;
}

/**
 * The name check of a kind's create (ValidateObjectMeta's): a Namespace's name is a DNS label (ValidateNamespaceName,
 * NameIsDNSLabel), every other kind's here a DNS subdomain. Its field error, or undefined.
 */
export function createNameError(kind: string, name: string): string | undefined {
    if (kind !== "Namespace") return nameError(name);
    if (/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) && name.length <= 63) return undefined;
    const why =
        name.length > 63
            ? "must be no more than 63 characters"
            : /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name)
              ? "must not contain dots"
              : "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    return `metadata.name: Invalid value: "${name}": ${why}`;
}

/** NameIsDNSSubdomain's field error for `name`, or undefined. */
function nameError(name: string): string | undefined {
    const re = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
    if (name.length <= 253 && re.test(name)) return undefined;
    const why =
        name.length > 253
            ? "must be no more than 253 characters"
            : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    return `metadata.name: Invalid value: "${name}": ${why}`;
}
