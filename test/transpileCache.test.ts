/**
 * ts-node's output kept on disk (cli/transpileCache.js): a file transpiled once is read back from the
 * cache by the next process, and a changed file is transpiled anew.
 */
import * as assert from "assert";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const PROJECT = path.join(__dirname, "..");

describe("the transpile cache of ts-node's output", function () {
    this.timeout(60_000);

    it("given a file transpiled once, then the next process takes it from the cache; given the file changed, then it is transpiled anew", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "transpile-cache-"));
        const cache = path.join(dir, "cache");
        const file = path.join(dir, "answer.ts");
        const env = { ...process.env, GITOPS_LAB_TRANSPILE_CACHE: cache, TS_NODE_PROJECT: path.join(PROJECT, "tsconfig.json") };
        // a process of its own, as each gitops-lab command is: ts-node with the project's configuration
        const answer = () => execFileSync(process.execPath, ["-r", "ts-node/register", "-e", `console.log(require(${JSON.stringify(file)}).answer)`], { cwd: PROJECT, env, encoding: "utf8" }).trim();
        const entries = () => (fs.existsSync(cache) ? fs.readdirSync(cache, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".json")) : []);

        fs.writeFileSync(file, "export const answer: string = 'from the source';\n");
        assert.strictEqual(answer(), "from the source");
        const written = entries();
        assert.strictEqual(written.length, 1, `one entry: ${written}`);
        const entry = path.join(cache, written[0]);
        assert.match(fs.readFileSync(entry, "utf8"), /from the source/);

        // the entry, not the source, is what the next process runs
        fs.writeFileSync(entry, fs.readFileSync(entry, "utf8").replace("from the source", "from the cache"));
        assert.strictEqual(answer(), "from the cache");

        fs.writeFileSync(file, "export const answer: string = 'changed';\n");
        assert.strictEqual(answer(), "changed");
        assert.strictEqual(entries().length, 2);
    });
});
