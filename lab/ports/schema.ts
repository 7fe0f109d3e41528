/**
 * What every result file's schema gives: its fields (key, what it must be, whether it is a SHA) and
 * a parse that names the wrong field. The labs' results.ts define the schemas; the scenarios write
 * with them, the graders check with them.
 */
import { z } from "zod";

/** A full 40-hex commit SHA. */
export const sha = z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .describe("a full 40-hex SHA");

export interface SchemaField {
    key: string;
    what: string;
    isSha: boolean;
    check: (v: unknown) => boolean;
    /**
     * The first thing wrong inside a value that is not what it must be: where (list indexes and keys), zod's
     * code and message, and the keys an object has that it does not take (said first: an object copied whole
     * from somewhere else is that mistake, not its first missing key).
     */
    issue: (v: unknown) => { path: (string | number)[]; code: string; message: string; keys?: string[] } | undefined;
}

/** The keys of an object schema and what each must be ("a full 40-hex SHA", "an integer", ...). */
export function fieldsOfSchema(schema: z.ZodObject<z.ZodRawShape>): SchemaField[] {
    return Object.entries(schema.shape).map(([key, t]) => ({
        key,
        what: (t as z.ZodType).description ?? "valid",
        isSha: t === sha,
        check: (v: unknown) => (t as z.ZodType).safeParse(v).success,
        issue: (v: unknown) => {
            const r = (t as z.ZodType).safeParse(v);
            const issues = r.success ? [] : r.error.issues;
            const at = (p: PropertyKey[]) => p.reduce<unknown>((o, k) => (o as Record<PropertyKey, unknown> | undefined)?.[k], v);
            const squash = (k: PropertyKey) => String(k).replace(/[-_]/g, "").toLowerCase();
            // a key missing that an extra key spells another way (healthyAt for healthy_at) is said as that, first
            const missing = issues
                .filter((i) => i.path.length > 0 && at(i.path) === undefined)
                .map((i) => squash(i.path[i.path.length - 1]));
            const extra = issues.find((i) => i.code === "unrecognized_keys" && !i.keys.some((k) => missing.includes(squash(k))));
            const first = extra ?? issues[0];
            return (
                first && {
                    path: first.path.filter((p): p is string | number => typeof p !== "symbol"),
                    code: first.code,
                    message: first.message,
                    keys: first.code === "unrecognized_keys" ? first.keys : undefined,
                }
            );
        },
    }));
}

/** The value if it matches the schema, else an error that says which field is wrong and how. */
export function parseWithSchema<T>(schema: z.ZodType<T>, name: string, value: unknown, where: string): T {
    const r = schema.safeParse(value);
    if (r.success) return r.data;
    const issues = r.error.issues.map((i) => `${i.path.join(".") || "(the object)"}: ${i.message}`).join("; ");
    throw new Error(`${where} is not a valid ${name} result (${issues})`);
}
