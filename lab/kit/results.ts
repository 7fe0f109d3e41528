/**
 * A lab's result files, each defined once by its schema (zod) and the step that writes it: the
 * scenario's types, the stack outputs' types, the check made before a file is written, the grader's
 * key and type checks, and the reading of a checkpoint all come from here.
 */
import * as fs from "fs";
import * as path from "path";
import { z } from "zod";
import { readJsonIfExists } from "../ports/files";
import { fieldsOfSchema, parseWithSchema, SchemaField } from "../ports/schema";
import { codeOf, messageOf } from "../ports/errors";

export type Schemas = Record<string, z.ZodObject<z.ZodRawShape>>;
/** The results of a lab: each file's value, where it has one. */
export type ResultsOf<S extends Schemas> = { [K in keyof S]?: z.infer<S[K]> };

export interface ResultSet<S extends Schemas> {
    readonly schemas: S;
    /** The files' names, in step order. */
    readonly names: (keyof S & string)[];
    /** The step that writes each file. */
    readonly stepOf: Record<keyof S & string, number>;
    /** The keys of a result file and what each must be ("a full 40-hex SHA", "an integer", ...). */
    fieldsOf(name: keyof S & string): SchemaField[];
    /** The value if it is a valid `name` result, else an error that says which field is wrong and how. */
    parse<K extends keyof S & string>(name: K, value: unknown, where: string): z.infer<S[K]>;
    /**
     * The results already on disk (the checkpoint), in step order, each checked against its schema;
     * a file after a missing one is refused (the checkpoint is inconsistent).
     */
    read(fileOf: (name: keyof S & string) => string): ResultsOf<S>;
    /**
     * The step of the last result file of the unbroken run from the first (0: none), from the files
     * alone (never parsed: a read changes nothing): a later file written before an earlier one (a
     * learner's recovery.json before the stall's) does not move the lab past the missing step.
     */
    progress(fileOf: (name: keyof S & string) => string): number;
}

export function resultSet<S extends Schemas>(schemas: S, stepOf: Record<keyof S & string, number>): ResultSet<S> {
    const names = (Object.keys(schemas) as (keyof S & string)[]).sort((a, b) => stepOf[a] - stepOf[b]);
    const parse = <K extends keyof S & string>(name: K, value: unknown, where: string): z.infer<S[K]> =>
        parseWithSchema(schemas[name] as unknown as z.ZodType<z.infer<S[K]>>, name, value, where);
    return {
        schemas,
        names,
        stepOf,
        fieldsOf: (name) => fieldsOfSchema(schemas[name]),
        parse,
        read(fileOf) {
            const r: ResultsOf<S> = {};
            let gap: (keyof S & string) | null = null;
            // a step's file is run again only with every later one: those that are there, named
            const andLater = (name: keyof S & string) => {
                const later = names.filter((n) => stepOf[n] > stepOf[name] && fs.existsSync(fileOf(n))).map(fileOf);
                return later.length ? ` together with the later ${later.join(", ")}` : "";
            };
            for (const name of names) {
                const file = fileOf(name);
                let v: unknown;
                try {
                    v = readJsonIfExists<unknown>(file);
                } catch (e) {
                    // a file this user cannot read is made readable; one that is not JSON is moved away with the later ones
                    if (!/is not valid JSON/.test(messageOf(e)))
                        throw new Error(`${file} cannot be read (${codeOf(e) ?? messageOf(e)}): make it readable by this user`);
                    throw new Error(
                        `${messageOf(e).replace(/; delete it to let the step run again$/, "")}; move it away${andLater(name)} to let step ${stepOf[name]} run again`,
                    );
                }
                if (v === undefined) {
                    gap = gap ?? name;
                    continue;
                }
                if (gap)
                    throw new Error(
                        `${file} exists but ${fileOf(gap)} does not: the checkpoint is inconsistent. If ${path.basename(fileOf(gap))} was deleted or moved, put it back (step ${stepOf[gap]} does not run again on a lab the later steps have changed); if ${path.basename(file)} was written ahead of its step, move it away${andLater(name)}; else start the lab over`,
                    );
                try {
                    r[name] = parse(name, v, file);
                } catch (e) {
                    throw new Error(`${messageOf(e)}; move it away${andLater(name)} to let step ${stepOf[name]} run again`);
                }
            }
            return r;
        },
        progress(fileOf) {
            let step = 0;
            for (const n of names) {
                if (!fs.existsSync(fileOf(n))) break;
                step = stepOf[n];
            }
            return step;
        },
    };
}

/**
 * A reset's removal of a lab's result files (and its notes to itself): a folder at a result file's
 * path is no file the lab wrote (made by hand, holding the learner's files): kept, and said.
 */
export function removeResultFiles(files: string[], log: (line: string) => void): void {
    for (const f of files) {
        if (fs.lstatSync(f, { throwIfNoEntry: false })?.isDirectory())
            log(`kept ${f}: a folder where the lab writes a result file, so not the lab's (yours?); move it away if it is not`);
        else fs.rmSync(f, { force: true });
    }
}
