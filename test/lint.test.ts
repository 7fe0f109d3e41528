/**
 * The layout and the lint: `prettier --check`, eslint (lint/eslint.config.js) and knip's unused code
 * (lint/knip.json), as `npm run lint`.
 * Tests rather than a step before mocha, for the type check's reason (test/typecheck.test.ts): each
 * runs in a worker beside the other files instead of on one core ahead of them. Their reports are
 * the failure's message; `npm run format` applies prettier's layout.
 */
import * as assert from "assert";
import { execFile } from "child_process";
import * as path from "path";

const PROJECT = path.join(__dirname, "..");
const CACHE = path.join(PROJECT, "node_modules", ".cache");

/** Runs a tool's bin with node in the project; its exit code and everything it printed. */
function tool(pkg: string, bin: string, args: string[]): Promise<{ code: number; text: string }> {
    const file = path.join(PROJECT, "node_modules", pkg, bin); // (a package's exports may not list its package.json)
    return new Promise((resolve) =>
        execFile(
            process.execPath,
            [file, ...args],
            { cwd: PROJECT, maxBuffer: 16 * 1024 * 1024, timeout: 290_000 },
            (err, stdout, stderr) => resolve({ code: err ? Number((err as any).code ?? 1) : 0, text: `${stdout}${stderr}` }),
        ),
    );
}

describe("the code's layout and lint", function () {
    this.timeout(300_000);

    it("prettier --check finds every .ts and .js file formatted", async () => {
        const args = [
            "--check",
            "--cache",
            "--cache-location",
            path.join(CACHE, "prettier", ".cache"),
            "--log-level",
            "warn",
            "**/*.{ts,js}",
        ];
        const r = await tool("prettier", "bin/prettier.cjs", args);
        assert.strictEqual(r.code, 0, `prettier: these files are not formatted (npm run format formats them):\n${r.text}`);
    });

    it("eslint (typescript-eslint's recommended rules) reports nothing", async () => {
        const args = [
            "--config",
            "lint/eslint.config.js",
            "--cache",
            "--cache-location",
            path.join(CACHE, "eslint") + "/",
            "--max-warnings",
            "0",
            ".",
        ];
        const r = await tool("eslint", "bin/eslint.js", args);
        assert.strictEqual(r.code, 0, `eslint:\n${r.text}`);
    });

    // no unused file, export, type or dependency: an export that code Pulumi states hold requires by name carries @public
    it("knip finds no unused file, export or dependency", async () => {
        const r = await tool("knip", "bin/knip.js", ["--config", "lint/knip.json", "--no-progress"]);
        assert.strictEqual(r.code, 0, `knip (remove what it names, or mark an export required from outside the code @public):\n${r.text}`);
    });
});
