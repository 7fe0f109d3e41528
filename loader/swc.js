// The project's TypeScript transpiled to JavaScript by swc, kept on disk: what loader/register.js (the
// project's own loader) and loader/transpileCache.js (ts-node's "transpiler", for anyone who runs ts-node
// on the project: plain `pulumi up`) both use, so both give the same output from the same cache.
// No side effects: requiring it registers nothing.
//
// swc's options are those ts-node 10.9.2 derives from this project's tsconfig.json
// (dist/transpilers/swc.js, createSwcOptions), written out for what the project uses: es2022 and
// commonjs. A tsconfig.json asking for anything else is refused with a line saying so, never silently
// ignored. Types are not checked here: that is `npm run typecheck` (and test/typecheck.test.ts).
//
// The output is kept under node_modules/.cache/gitops-lab-swc (or the folder
// GITOPS_LAB_TRANSPILE_CACHE names), keyed by the file's name and text, swc's version and the options,
// so a process whose files are all cached never loads swc (its native binding's load and the
// transpiling were about 0.25 s of CPU a process). An entry is written to a temporary file and renamed
// into place, so processes running side by side never read half an entry; an unreadable entry is
// transpiled again; a cache that cannot be written (a read-only project) only costs time.
"use strict";
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");

const PROJECT = path.join(__dirname, "..");
const CACHE = process.env.GITOPS_LAB_TRANSPILE_CACHE || path.join(PROJECT, "node_modules", ".cache", "gitops-lab-swc");

/** swc's options for this project's compilerOptions, as ts-node 10.9.2 derives them (createSwcOptions). */
function swcOptions() {
    const file = path.join(PROJECT, "tsconfig.json");
    let tsconfig;
    try {
        tsconfig = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (e) {
        // plain JSON: TypeScript's comments and trailing commas are not read here
        throw new Error(`cannot read ${file} as JSON (${e.message}); loader/swc.js reads it without comments or trailing commas`);
    }
    const o = tsconfig.compilerOptions || {};
    const lower = (v) => String(v || "").toLowerCase();
    const refuse = (what) => {
        throw new Error(
            `tsconfig.json sets ${what}, for which loader/swc.js derives no swc options: extend swcOptions() there, after ts-node's createSwcOptions`,
        );
    };
    if ("extends" in tsconfig) refuse(`"extends"`);
    if (lower(o.module) !== "commonjs") refuse(`module "${o.module}" (commonjs expected)`);
    if (lower(o.target) !== "es2022") refuse(`target "${o.target}" (es2022 expected)`);
    for (const k of [
        "experimentalDecorators",
        "emitDecoratorMetadata",
        "importHelpers",
        "jsx",
        "useDefineForClassFields",
        "alwaysStrict",
        "noImplicitUseStrict",
    ])
        if (k in o) refuse(k);
    return {
        sourceMaps: true,
        module: { type: "commonjs", noInterop: !o.esModuleInterop, strictMode: true, ignoreDynamic: false },
        swcrc: false,
        jsc: {
            parser: { syntax: "typescript", tsx: false, decorators: false, dynamicImport: true, importAssertions: true },
            target: "es2022",
            // TypeScript's default for es2022 and later
            transform: { legacyDecorator: true, useDefineForClassFields: true },
            keepClassNames: true,
            experimental: { keepImportAttributes: true, emitAssertForImportAttributes: true },
        },
    };
}

let optionsKey;
let options;
let swc;

/** `{ code, map }` for the TypeScript `text` of `fileName`: from the cache, or from swc (then kept). */
function transpile(text, fileName) {
    options = options || swcOptions();
    optionsKey = optionsKey || JSON.stringify([require("@swc/core/package.json").version, options]);
    const key = crypto.createHash("sha256").update(optionsKey).update("\0").update(fileName).update("\0").update(text).digest("hex");
    const file = path.join(CACHE, key.slice(0, 2), `${key}.json`);
    try {
        return JSON.parse(fs.readFileSync(file, "utf8"));
    } catch {
        // not cached yet (or unreadable): transpile, then keep it
    }
    swc = swc || require("@swc/core");
    const { code, map } = swc.transformSync(text, { ...options, filename: fileName });
    try {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        const tmp = `${file}.${process.pid}.${require("worker_threads").threadId}.${crypto.randomBytes(4).toString("hex")}.tmp`;
        fs.writeFileSync(tmp, JSON.stringify({ code, map }));
        fs.renameSync(tmp, file);
    } catch {
        // a read-only project: no cache
    }
    return { code, map };
}

module.exports = { transpile, CACHE };
