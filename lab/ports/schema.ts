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
    /** The first thing wrong inside a value that is not what it must be: where (list indexes and keys) and zod's message. */
    issue: (v: unknown) => { path: (string | number)[]; message: string } | undefined;
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
            const first = r.success ? undefined : r.error.issues[0];
            return first && { path: first.path.filter((p): p is string | number => typeof p !== "symbol"), message: first.message };
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
