/**
 * What apiextensions-apiserver refuses of a custom resource before storing it: a field its CRD's
 * schema requires that the object lacks (`spec.template.spec.project: Required value`), answered
 * 422 Invalid as the API server answers it. The simulation checks required fields only (not types
 * or formats), and not `status` (its controllers write it in-process, as Argo CD's write it).
 */
import { HttpError } from "./apiTypes";
import { installCrds } from "./argoCrds";
import type { Schema } from "./objects";

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

/** Throws the API server's 422 when `obj` of `kind` (a custom resource of the shipped CRDs) lacks a required field. */
export function checkRequired(kind: string, group: string, obj: { metadata?: { name?: string } }): void {
    const crd = installCrds().find((c) => c.spec.names.kind === kind && c.spec.group === group);
    const version = crd?.spec.versions?.find((v) => v.storage) ?? crd?.spec.versions?.[0];
    const missing = missingRequired(version?.schema?.openAPIV3Schema, obj).map((p) => `${p}: Required value`);
    if (!missing.length) return;
    // errors.NewInvalid: one error as it is, several in brackets
    const why = missing.length === 1 ? missing[0] : `[${missing.join(", ")}]`;
    throw new HttpError(422, "Invalid", `${kind}.${group} "${obj.metadata?.name ?? ""}" is invalid: ${why}`);
}
