/**
 * The shop lab's six result files, each defined once. The scenario's types, the stack outputs'
 * types, the check made before a file is written, and the grader's key and type checks all come
 * from these schemas.
 */
import { z } from "zod";
import { resultSet } from "../kit/results";
import { SchemaField, sha } from "../ports/schema";

export { sha };

const text = z.string().describe("a string");
const integer = z.number().int().describe("an integer");
const boolean = z.boolean().describe("a boolean");
/** A Kubernetes object's metadata.uid (a UUID), as the API server assigns it. */
const uid = z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    .describe("a Kubernetes uid (a UUID, as metadata.uid)");

export const SHOP_RESULTS = {
    /** Step 3: the base change reached both environments. */
    incident: z.strictObject({ commit: sha, dev_value: text, prod_value: text }),
    /** Step 4: prod bound to release/prod at the incident's parent. */
    pin: z.strictObject({ release_prod_initial: sha, prod_value_after_pin: text }),
    /** Step 5: a hand edit in prod, and how long selfHeal took to undo it. */
    drift: z.strictObject({ uid, edited: text, restored: text, seconds: integer }),
    /** Step 6: release/prod fast-forwarded. */
    promote: z.strictObject({ from: sha, to: sha }),
    /** Step 7: a commit dev cannot render, and its revert. */
    revert: z.strictObject({ bad_commit: sha, revert_commit: sha, dev_error: text, prod_revision_during: sha }),
    /** Step 8: what each environment tracks, and what reached prod. */
    report: z.strictObject({
        dev_tracks: text,
        prod_tracks: text,
        promoted_commit: sha,
        drift_seconds: integer,
        bad_commit_reached_prod: boolean,
        rollback: z.enum(["revert", "reset"]).describe('"revert" or "reset"'),
    }),
};

export type ShopResultName = keyof typeof SHOP_RESULTS;
/** The six result files with the step that writes each. */
export const SHOP_RESULT_SET = resultSet(SHOP_RESULTS, { incident: 3, pin: 4, drift: 5, promote: 6, revert: 7, report: 8 });
/** The six result files, in step order. */
export const SHOP_RESULT_FILES: ShopResultName[] = SHOP_RESULT_SET.names;
/** The step that writes each file. */
export const SHOP_RESULT_STEP: Record<ShopResultName, number> = SHOP_RESULT_SET.stepOf;

export type Incident = z.infer<typeof SHOP_RESULTS.incident>;
export type Pin = z.infer<typeof SHOP_RESULTS.pin>;
export type Drift = z.infer<typeof SHOP_RESULTS.drift>;
export type Promote = z.infer<typeof SHOP_RESULTS.promote>;
export type Revert = z.infer<typeof SHOP_RESULTS.revert>;
export type Report = z.infer<typeof SHOP_RESULTS.report>;
export type ShopResults = { [K in ShopResultName]?: z.infer<(typeof SHOP_RESULTS)[K]> };

/** The keys of a result file and what each must be ("a full 40-hex SHA", "an integer", ...). */
export function shopFieldsOf(name: ShopResultName): SchemaField[] {
    return SHOP_RESULT_SET.fieldsOf(name);
}
