/**
 * The lab's file writes (lab/ports/files.ts): whole or not at all, and a failure named with the file and why.
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const PROJECT = path.join(__dirname, "..");

describe("a file written by the lab", function () {
    this.timeout(60_000);

    it("given a file-size limit it passes (ulimit -f), then one line names the file and the limit, and no temporary file is left", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "write-limit-"));
        try {
            const file = path.join(dir, "simulated-cluster.json");
            // node ignores SIGXFSZ: the write fails with EFBIG, as a run under a low limit meets it
            const script = `require("./lab/ports/files").writeFileAtomic(${JSON.stringify(file)}, "x".repeat(64 * 1024))`;
            const r = spawnSync("bash", ["-c", `ulimit -f 8; exec "${process.execPath}" -r ./loader/register.js -e '${script}'`], {
                cwd: PROJECT,
                encoding: "utf8",
            });
            assert.notStrictEqual(r.status, 0, r.stdout + r.stderr);
            assert.match(
                r.stderr,
                new RegExp(
                    `Error: cannot write ${file.replace(/[.]/g, "\\.")} \\(file too large for this process's file-size limit, ulimit -f: raise it\\)`,
                ),
            );
            assert.deepStrictEqual(fs.readdirSync(dir), [], "nothing half-written");
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
