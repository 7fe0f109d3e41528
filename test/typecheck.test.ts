/**
 * The whole project type-checks (`tsc --noEmit -p .`, as `npm run typecheck`). A test rather than a
 * step before mocha: it runs in a worker beside the other files instead of on one core ahead of them.
 * Its errors are the failure's message. Incremental: tsc keeps what it learnt in
 * node_modules/.cache/gitops-lab-tsc, so a run after a small change re-checks only what the change
 * touches (a fresh clone, as in CI, checks everything).
 */
import * as assert from "assert";
import { execFile } from "child_process";
import * as path from "path";

const PROJECT = path.join(__dirname, "..");

describe("the project type-checks", function () {
    this.timeout(300_000);

    it("tsc --noEmit -p . (incremental) reports no error", async () => {
        const tsc = require.resolve("typescript/bin/tsc", { paths: [PROJECT] });
        const out = await new Promise<{ code: number; text: string }>((resolve) =>
            execFile(
                process.execPath,
                [
                    tsc,
                    "--noEmit",
                    "-p",
                    PROJECT,
                    "--incremental",
                    "--tsBuildInfoFile",
                    path.join(PROJECT, "node_modules", ".cache", "gitops-lab-tsc", "tsbuildinfo"),
                ],
                { cwd: PROJECT, maxBuffer: 16 * 1024 * 1024, timeout: 290_000 },
                (err, stdout, stderr) => resolve({ code: err ? Number((err as any).code ?? 1) : 0, text: `${stdout}${stderr}` }),
            ),
        );
        assert.strictEqual(out.code, 0, `tsc found errors:\n${out.text}`);
    });
});
