// A ts-node transpiler (its "transpiler" option: github.com/TypeStrong/ts-node, transpilers/types.d.ts)
// that keeps ts-node's own swc transpiler's output on disk, under node_modules/.cache/gitops-lab-swc
// (or GITOPS_LAB_TRANSPILE_CACHE), keyed by the file's name and text and the compiler options.
// ts-node 10 has no cache of its own, and every gitops-lab process (and test worker) transpiled every
// file it loaded anew: about 0.25 s of CPU a process, with the native swc binding's load, which a
// process whose files are all cached never does. Plain JavaScript: it is loaded before ts-node can
// load TypeScript. An entry is written to a temporary file and renamed into place, so processes
// running side by side never read half an entry; an unreadable entry is transpiled again.
"use strict";
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");

const CACHE = process.env.GITOPS_LAB_TRANSPILE_CACHE || path.join(__dirname, "..", "node_modules", ".cache", "gitops-lab-swc");
const VERSION = `${require("@swc/core/package.json").version} ${require("ts-node/package.json").version} 1`;

exports.create = (createOptions) => {
    let inner;
    const swc = () => (inner = inner || require("ts-node/transpilers/swc").create(createOptions));
    const options = JSON.stringify([VERSION, createOptions.service.config.options, createOptions.nodeModuleEmitKind]);
    return {
        transpile(input, opts) {
            const key = crypto.createHash("sha256").update(options).update("\0").update(opts.fileName).update("\0").update(input).digest("hex");
            const file = path.join(CACHE, key.slice(0, 2), `${key}.json`);
            try {
                return JSON.parse(fs.readFileSync(file, "utf8"));
            } catch {
                // not cached yet (or unreadable): transpile, then keep it
            }
            const out = swc().transpile(input, opts);
            if (!out.diagnostics || out.diagnostics.length === 0) {
                try {
                    fs.mkdirSync(path.dirname(file), { recursive: true });
                    const tmp = `${file}.${process.pid}.${require("worker_threads").threadId}.${crypto.randomBytes(4).toString("hex")}.tmp`;
                    fs.writeFileSync(tmp, JSON.stringify({ outputText: out.outputText, sourceMapText: out.sourceMapText }));
                    fs.renameSync(tmp, file);
                } catch {
                    // a read-only project: no cache, as before
                }
            }
            return out;
        },
    };
};
