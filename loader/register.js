// The project's loader for its TypeScript files: requiring this file makes the process load the
// project's .ts files (bin/gitops-lab; the test workers: test/mocharc.js; the dynamic providers'
// process: program/labModule.ts; a worker thread: test/helpers/fakeKubeThread.ts). Each file is
// transpiled by loader/swc.js (ts-node's swc options, kept on disk); stack traces are mapped back to the
// TypeScript by source-map-support (the fork ts-node uses), fed only these files' maps. Not Node's own
// source maps (process.setSourceMapsEnabled): with them on, Node reads the map of every module that
// names one as it loads, @kubernetes/client-node's 967 among them (about 0.1 s of CPU a process).
//
// Why not ts-node's register (still what plain `pulumi up` uses, through tsconfig.json's "ts-node"
// section and loader/transpileCache.js): even with transpileOnly, ts-node loads the TypeScript compiler
// to read tsconfig.json (about 0.2 s of CPU in each process; a test run starts about 40) and maps
// every stack trace through source-map-support.
"use strict";
const fs = require("fs");
const path = require("path");
const { transpile } = require("./swc");

const PROJECT = path.join(__dirname, "..");

const REGISTERED = Symbol.for("gitops-lab.register");
if (!require.extensions[".ts"] && !globalThis[REGISTERED]) {
    globalThis[REGISTERED] = true;
    /** The source map of each file loaded here, by its path: all that stack traces are mapped with. */
    const maps = new Map();
    require("@cspotcode/source-map-support").install({
        environment: "node",
        handleUncaughtExceptions: false,
        hookRequire: false,
        redirectConflictingLibrary: false,
        overrideRetrieveSourceMap: true,
        retrieveSourceMap: (source) => (maps.has(source) ? { url: source, map: maps.get(source) } : null),
    });
    require.extensions[".ts"] = function (module, fileName) {
        // a package's own TypeScript is its business (ts-node skips node_modules too); the project's own path may hold one
        if (path.relative(PROJECT, fileName).split(path.sep).includes("node_modules"))
            throw new Error(`loader/register.js loads no TypeScript from node_modules: ${fileName}`);
        const { code, map } = transpile(fs.readFileSync(fileName, "utf8"), fileName);
        maps.set(fileName, map);
        module._compile(code, fileName);
    };
}
