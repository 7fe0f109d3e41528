// A stand-in for the engine's dynamic provider process: plain Node (no ts-node registered),
// the provider revived from its serialized text with require-from-string, exactly as
// @pulumi/pulumi/cmd/dynamic-provider does (requireFromString(text).handler()).
// Usage: node providerHost.js <request.json> <result.json>
const fs = require("fs");
const requireFromString = require("require-from-string");

(async () => {
    const req = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
    let out;
    try {
        const provider = requireFromString(req.text).handler();
        const fn = provider[req.method];
        if (typeof fn !== "function") throw new Error(`the provider has no ${req.method}`);
        out = { ok: true, result: (await fn.apply(provider, req.args)) ?? null };
    } catch (e) {
        out = { ok: false, error: String((e && e.message) || e) };
    }
    fs.writeFileSync(process.argv[3], JSON.stringify(out));
    process.exit(0);
})();
