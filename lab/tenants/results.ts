/**
 * The tenants lab's two result files, each defined once (as lab/shop/results.ts does for the shop
 * lab): the scenario's types, the stack outputs' types, the check before writing and the grader's
 * key and type checks all come from these schemas.
 */
import { z } from "zod";
import { resultSet } from "../kit/results";
import { SchemaField, sha } from "../ports/schema";

const text = z.string().describe("a string");
const integer = z.number().int().nonnegative().describe("a non-negative integer");
const names = z.array(z.string()).describe("a list of Application names");
const releases = z.record(z.string(), z.string()).describe("an object: tenant -> release");
/** RFC 3339 with a zone (what Kubernetes writes); a time in any other form is answered with that form. */
const RFC3339_FIX = "write the time as Kubernetes writes it, RFC 3339 with a T and a zone";
/** The fix with the value written so where it says its own instant (seconds since 1970, a date with its zone); else an example. */
const rfc3339Fix = (input: unknown) => {
    // null: no time to write yet, the file written while the rollout was still under way
    if (input === null)
        return "no time yet: recovery.json written before the rollout had completed? write it once RolloutProgressing says the rollout has completed, each healthy_at its tenant's Healthy entry's lastTransitionTime";
    // lower-case t or z (RFC 3339 allows them; Go's time.Parse, which reads Kubernetes' times, does not): the time itself
    if (typeof input === "string" && /^\d{4}-\d{2}-\d{2}t\d{2}:\d{2}:\d{2}(\.\d+)?(z|[+-]\d{2}:\d{2})$/i.test(input) && /[tz]/.test(input))
        return `write it with an upper-case T and Z, as Kubernetes writes and reads it: ${input.replace(/^(.{10})t/, "$1T").replace(/z$/, "Z")}`;
    const zoned = typeof input === "string" && /(Z|GMT|UTC|[+-]\d{2}:?\d{2})\b/.test(input) ? Date.parse(input) : NaN;
    const ms = typeof input === "number" ? (input > 1e11 ? input : input * 1000) : zoned;
    const as = Number.isFinite(ms) ? new Date(ms).toISOString().replace(".000Z", "Z") : "";
    return `${RFC3339_FIX} (${as ? `${typeof input === "number" ? `${input} ${input > 1e11 ? "ms" : "seconds"} since 1970 is ` : ""}${as}` : "2026-12-06T00:14:06Z"})`;
};
const rfc3339 = z
    .string({ error: (iss) => rfc3339Fix(iss.input) })
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/, { error: (iss) => rfc3339Fix(iss.input) })
    .describe("an RFC 3339 time");

export const TENANTS_RESULTS = {
    /** Step 2: the faulty release stalled the rollout; the doctor's diagnosis, field by field. */
    stall: z.strictObject({
        appset: text,
        commit: sha,
        release: text,
        step: z.number().int().positive().describe("a step number (1-based)"),
        steps: z.number().int().positive().describe("a step count"),
        blocking: text,
        hook_job: text,
        hook_error: text,
        waiting: names,
        passed: names,
        running: releases,
        auto_sync_disabled_by_rollingsync: z.boolean().describe("a boolean"),
        detected_after_seconds: integer,
    }),
    /** Step 3: the fixed release rolled out, step by step. */
    recovery: z.strictObject({
        commit: sha,
        release: text,
        order: z
            .array(
                z.strictObject({
                    application: text,
                    step: z
                        .number()
                        .int()
                        .positive({ error: "steps are numbered from 1, as the ApplicationSet's status.applicationStatus[].step says" }),
                    healthy_at: rfc3339,
                }),
            )
            .describe("a list of {application, step, healthy_at}"),
        running: releases,
        seconds: integer,
    }),
};

export type TenantsResultName = keyof typeof TENANTS_RESULTS;
/** The two result files with the step that writes each. */
export const TENANTS_RESULT_SET = resultSet(TENANTS_RESULTS, { stall: 2, recovery: 3 });
export const TENANTS_RESULT_FILES: TenantsResultName[] = TENANTS_RESULT_SET.names;
export const TENANTS_RESULT_STEP: Record<TenantsResultName, number> = TENANTS_RESULT_SET.stepOf;

export type Stall = z.infer<typeof TENANTS_RESULTS.stall>;
export type Recovery = z.infer<typeof TENANTS_RESULTS.recovery>;
export type TenantsResults = { [K in TenantsResultName]?: z.infer<(typeof TENANTS_RESULTS)[K]> };

/** The keys of a result file and what each must be. */
export function tenantsFieldsOf(name: TenantsResultName): SchemaField[] {
    return TENANTS_RESULT_SET.fieldsOf(name);
}
