/**
 * Loaded by mocha before any test file (test/mocharc.js "require"), in the main process and in each
 * parallel worker. Every temporary directory a test (or a process it starts) makes goes under one
 * folder of this run, removed when the run ends, so `npm test` leaves nothing behind in the
 * machine's temp directory: os.tmpdir() reads TMPDIR on each call, and child processes (the
 * workers among them) inherit it.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const KEY = "GITOPS_LAB_TEST_TMP";
if (!process.env[KEY]) {
    const runDir = fs.mkdtempSync(path.join(os.tmpdir(), "gitops-lab-test-"));
    // traversable by others: tests run a git daemon as nobody over repositories below it
    fs.chmodSync(runDir, 0o755);
    process.env[KEY] = runDir;
}
process.env.TMPDIR = process.env[KEY];
// kustomize's output per commit and path, shared by the run's workers (sim/repoServer.ts, kustomizeBuild)
process.env.GITOPS_LAB_RENDER_MEMO = path.join(process.env[KEY]!, "renders");

/** Once, in the main process, after every test of the run. */
export function mochaGlobalTeardown() {
    fs.rmSync(process.env[KEY]!, { recursive: true, force: true });
}
