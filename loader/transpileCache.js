// ts-node's "transpiler" for this project (tsconfig.json's "ts-node" section: github.com/TypeStrong/ts-node,
// transpilers/types.d.ts), for anyone who runs ts-node on it: plain `pulumi up` does. It hands
// ts-node loader/swc.js's output, the same (and from the same disk cache) as the project's own loader,
// loader/register.js, gives the gitops-lab command and the tests. Plain JavaScript: it is loaded before
// ts-node can load TypeScript.
"use strict";
const { transpile } = require("./swc");

exports.create = () => ({
    transpile(input, opts) {
        const { code, map } = transpile(input, opts.fileName);
        return { outputText: code, sourceMapText: map };
    },
});
