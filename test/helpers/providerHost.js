// A stand-in for the engine's dynamic provider plugin (pulumi-resource-pulumi-nodejs): one plain
// Node process (no TypeScript loader registered) serving the calls of an update in turn, each provider revived
// from its serialized text with require-from-string, exactly as @pulumi/pulumi/cmd/dynamic-provider
// does (requireFromString(text).handler()).
// Usage: node providerHost.js   — one JSON request per line on stdin ({ text, method, args }), one
// JSON answer per line on fd 3 ({ ok, result | error, output }), where output is what the call
// printed (console.log reaches `pulumi up`'s output).
const fs = require("fs");
const readline = require("readline");
const requireFromString = require("require-from-string");

const answers = fs.createWriteStream(null, { fd: 3 });
let queue = Promise.resolve();

async function serve(line) {
    const req = JSON.parse(line);
    let output = "";
    const writes = { out: process.stdout.write, err: process.stderr.write };
    const capture = (chunk, encoding, cb) => {
        output += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
        (typeof encoding === "function" ? encoding : cb)?.();
        return true;
    };
    process.stdout.write = capture;
    process.stderr.write = capture;
    let out;
    try {
        const provider = requireFromString(req.text).handler();
        const fn = provider[req.method];
        if (typeof fn !== "function") throw new Error(`the provider has no ${req.method}`);
        out = { ok: true, result: (await fn.apply(provider, req.args)) ?? null };
    } catch (e) {
        out = { ok: false, error: String((e && e.message) || e) };
    } finally {
        process.stdout.write = writes.out;
        process.stderr.write = writes.err;
    }
    answers.write(JSON.stringify({ ...out, output }) + "\n");
}

readline.createInterface({ input: process.stdin }).on("line", (line) => (queue = queue.then(() => serve(line))));
process.stdin.on("end", () => queue.then(() => answers.end(() => process.exit(0))));
