/** The command-line tools as a lab author runs them: exit codes, what they print, what they leave. */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { labLayout } from "../lab/shop/layout";
import { RESULT_FILES } from "../lab/shop/results";

import { runCli } from "./helpers/cli";

describe("npm run simulate", function () {
    this.timeout(180_000);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "simulate-"));
    const layout = labLayout(root);

    it("--through 3 stops after the incident, says plainly the cluster was simulated, exits 0", () => {
        const r = runCli("simulate.ts", ["--root", root, "--through", "3"]);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.out, /SIMULATED CLUSTER: no Kubernetes and no Argo CD run here/);
        assert.match(r.out, /the cluster was simulated/);
        assert.ok(fs.existsSync(path.join(layout.bareRepo, "HEAD")));
        assert.ok(fs.existsSync(layout.resultFile("incident")));
        assert.ok(!fs.existsSync(layout.resultFile("pin")));
    });

    it("a second run on the same root resumes and writes all six files, printing the report", () => {
        const incident = fs.readFileSync(layout.resultFile("incident"), "utf8");
        const r = runCli("simulate.ts", ["--root", root]);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.out, /\[step 3 incident\] already done/);
        assert.strictEqual(fs.readFileSync(layout.resultFile("incident"), "utf8"), incident);
        for (const f of RESULT_FILES) assert.ok(fs.existsSync(layout.resultFile(f)), f);
        assert.match(r.out, /report\.json:\n\{\n {2}"dev_tracks": "main"/);
        assert.match(r.out, /"bad_commit_reached_prod": false/);
    });

    it("bad input exits 1 with one clear line and no stack trace", () => {
        const r = runCli("simulate.ts", ["--root", root, "--through", "12"]);
        assert.strictEqual(r.code, 1);
        assert.match(r.stderr, /^simulate: --through takes a step number from 0 to 8, got "12"\n$/);
        const r2 = runCli("simulate.ts", []);
        assert.strictEqual(r2.code, 1);
        assert.match(r2.stderr, /--root DIR is required/);
        assert.ok(!/\n\s+at /.test(r2.stderr), "no stack trace");
    });

    it("a failure during the scenario exits 1 and names it", () => {
        // someone else's repository at the path: step 1 refuses
        const other = fs.mkdtempSync(path.join(os.tmpdir(), "simulate-foreign-"));
        fs.mkdirSync(path.join(other, "srv", "bare", "shop-envs.git"), { recursive: true });
        spawnSync("git", ["init", "--quiet", "--bare", path.join(other, "srv", "bare", "shop-envs.git")]);
        const r = runCli("simulate.ts", ["--root", other]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stderr, /simulate: .*already exists and was not created by this lab/);
    });
});
