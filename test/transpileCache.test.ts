/**
 * The project's TypeScript loader (loader/register.js) and ts-node's transpiler for the project
 * (loader/transpileCache.js, what plain `pulumi up` uses) share one disk cache of swc's output
 * (loader/swc.js): a file transpiled once is read back by the next process, through either; a changed
 * file is transpiled anew; a stack trace names the TypeScript file's own line.
 */
import * as assert from "assert";
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const PROJECT = path.join(__dirname, "..");

describe("the project's TypeScript loader and its transpile cache", function () {
    this.timeout(60_000);
    let dir: string;
    let cache: string;
    let env: NodeJS.ProcessEnv;
    beforeEach(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "transpile-cache-"));
        cache = path.join(dir, "cache");
        env = { ...process.env, GITOPS_LAB_TRANSPILE_CACHE: cache, TS_NODE_PROJECT: path.join(PROJECT, "tsconfig.json") };
    });
    const entries = () =>
        fs.existsSync(cache) ? fs.readdirSync(cache, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".json")) : [];
    /** A process of its own, as each gitops-lab command is, loading `file` through the project's loader or through ts-node. */
    const load = (loader: "register" | "ts-node" | "cli/register.js", file: string, expr = "answer") =>
        execFileSync(
            process.execPath,
            [
                "-r",
                loader === "register"
                    ? path.join(PROJECT, "loader", "register.js")
                    : loader === "ts-node"
                      ? "ts-node/register"
                      : path.join(PROJECT, "cli", "register.js"),
                "-e",
                `console.log(require(${JSON.stringify(file)}).${expr})`,
            ],
            { cwd: PROJECT, env, encoding: "utf8" },
        ).trim();

    // given a file transpiled once, then the next process takes it from the cache, through the loader or ts-node; given
    // the file changed, then it is transpiled anew
    it("the transpile cache serves a file until it changes", () => {
        const file = path.join(dir, "answer.ts");
        fs.writeFileSync(file, "export const answer: string = 'from the source';\n");
        assert.strictEqual(load("register", file), "from the source");
        const written = entries();
        assert.strictEqual(written.length, 1, `one entry: ${written}`);
        const entry = path.join(cache, written[0]);
        assert.match(fs.readFileSync(entry, "utf8"), /from the source/);

        // the entry, not the source, is what the next process runs, whichever loads it
        fs.writeFileSync(entry, fs.readFileSync(entry, "utf8").replace("from the source", "from the cache"));
        assert.strictEqual(load("register", file), "from the cache");
        assert.strictEqual(load("ts-node", file), "from the cache");
        assert.strictEqual(entries().length, 1, "ts-node found the loader's entry");

        fs.writeFileSync(file, "export const answer: string = 'changed';\n");
        assert.strictEqual(load("register", file), "changed");
        assert.strictEqual(entries().length, 2);
    });

    it("given the path the providers' code in a Pulumi state requires (cli/register.js), then it is the same loader", () => {
        const file = path.join(dir, "answer.ts");
        fs.writeFileSync(file, "export const answer: number = 6 * 7;\n");
        assert.strictEqual(load("cli/register.js", file), "42");
        assert.strictEqual(entries().length, 1, "through the same cache");
    });

    it("given a TypeScript file that throws, then the stack trace names its own line, not the JavaScript's", () => {
        const file = path.join(dir, "thrower.ts");
        // types and blank lines that vanish from the JavaScript put the throw on another line there
        fs.writeFileSync(
            file,
            [
                "interface A {",
                "    a: string;",
                "}",
                "",
                "type B = A & { b: number };",
                "",
                "export function fail(x: B): never {",
                "    throw new Error(`failed ${x.a}`);",
                "}",
                "",
            ].join("\n"),
        );
        const r = spawnSync(
            process.execPath,
            ["-r", path.join(PROJECT, "loader", "register.js"), "-e", `require(${JSON.stringify(file)}).fail({ a: "here", b: 1 })`],
            { cwd: PROJECT, env, encoding: "utf8" },
        );
        assert.notStrictEqual(r.status, 0);
        assert.match(r.stderr, /Error: failed here/);
        assert.match(r.stderr, /thrower\.ts:8:\d+/, r.stderr);
    });

    it("given a tsconfig.json it derives no swc options for, then it refuses in one line naming the setting", () => {
        // a copy of the project's loader beside a tsconfig.json asking for ES modules
        const project = path.join(dir, "project");
        fs.mkdirSync(path.join(project, "loader"), { recursive: true });
        for (const f of ["swc.js", "register.js"]) fs.copyFileSync(path.join(PROJECT, "loader", f), path.join(project, "loader", f));
        fs.symlinkSync(path.join(PROJECT, "node_modules"), path.join(project, "node_modules"));
        fs.writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "es2022", module: "esnext" } }));
        fs.writeFileSync(path.join(project, "x.ts"), "export const x = 1;\n");
        const r = spawnSync(
            process.execPath,
            [
                "-e",
                `require(${JSON.stringify(path.join(project, "loader", "register.js"))}); require(${JSON.stringify(path.join(project, "x.ts"))})`,
            ],
            { env, encoding: "utf8" },
        );
        assert.notStrictEqual(r.status, 0);
        assert.match(
            r.stderr,
            /tsconfig\.json sets module "esnext" \(commonjs expected\), for which loader\/swc\.js derives no swc options/,
        );
    });
});
