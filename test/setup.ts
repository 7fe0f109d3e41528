/**
 * Loaded by mocha before any test file (.mocharc.json "require"). Every temporary directory a test
 * (or a process it starts) makes goes under one folder of this run, removed when the run ends, so
 * `npm test` leaves nothing behind in the machine's temp directory: os.tmpdir() reads TMPDIR on
 * each call, and child processes inherit it.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const runDir = fs.mkdtempSync(path.join(os.tmpdir(), "gitops-lab-test-"));
// traversable by others: tests run a git daemon as nobody over repositories below it
fs.chmodSync(runDir, 0o755);
process.env.TMPDIR = runDir;

export const mochaHooks = {
    afterAll() {
        fs.rmSync(runDir, { recursive: true, force: true });
    },
};
