/**
 * A command whose reader is gone ends (cli/closedOutput.ts, installed by bin/gitops-lab): a process
 * that writes to stdout, with an uncaught-error handler that writes the error out again (as the Pulumi
 * SDK's does with `up`'s inline program), given its stdout and stderr closed by their reader.
 */
import * as assert from "assert";
import { ChildProcess, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { procStat } from "../lab/ports/proc";
import { expect, expectConsistently, holds } from "./helpers/expect";
import { BIN } from "./helpers/cli";

const PROJECT = path.join(__dirname, "..");
const running = (pid: number) => {
    const state = procStat(pid)?.state;
    return state !== undefined && state !== "Z";
};
/** The Pulumi SDK's way with an uncaught error: it writes it out. */
const SDK_HANDLER = `process.on("uncaughtException", (e) => process.stderr.write("uncaught: " + e.message + "\\n"));`;

/** Starts `script` under node; resolves once it has written its first output, with its reader's ends then closed. */
async function withItsReaderGone(script: string, args: string[], children: ChildProcess[]): Promise<ChildProcess> {
    const child = spawn(process.execPath, ["-r", path.join(PROJECT, "loader", "register.js"), "-e", script, "--", ...args], {
        stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
        child.stdout!.once("data", () => resolve());
        child.once("exit", (c) => reject(new Error(`it exited with ${c} before writing`)));
    });
    child.stdout!.destroy();
    child.stderr!.destroy();
    return child;
}

describe("a command whose output's reader is gone", function () {
    this.timeout(60_000);
    const children: ChildProcess[] = [];
    afterEach(() => {
        for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    });

    const writer = (guarded: boolean) =>
        [
            guarded ? `require(${JSON.stringify(path.join(PROJECT, "cli", "closedOutput.ts"))}).exitOnClosedOutput(1);` : "",
            SDK_HANDLER,
            `setInterval(() => process.stdout.write("a line of progress\\n"), 20);`,
        ].join("\n");

    it("given its stdout and stderr closed by their reader, then it ends instead of writing its failure to them for ever", async () => {
        const child = await withItsReaderGone(writer(true), [], children);
        await expect(
            holds("the writer has ended", () => !running(child.pid!)),
            { timeoutMs: 20_000 },
        );
    });

    it("given its stdout closed and stderr still read, then it says on stderr why it stopped", async () => {
        const child = spawn(process.execPath, ["-r", path.join(PROJECT, "loader", "register.js"), "-e", writer(true)], {
            stdio: ["ignore", "pipe", "pipe"],
        });
        children.push(child);
        let err = "";
        child.stderr!.on("data", (d) => (err += String(d)));
        await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
        child.stdout!.destroy();
        const code = await new Promise<number | null>((resolve) =>
            child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (c) => resolve(c)),
        );
        assert.strictEqual(code, 1);
        assert.match(err, /^gitops-lab: stopped: its standard output was closed \(the reader of a pipe, \| head or less, ended\)/m);
    });

    it("given its stdout a file that cannot take it (a full disk), then it ends with that said, not as a reader gone", () => {
        const full = fs.openSync("/dev/full", "w");
        try {
            const r = spawnSync(process.execPath, [BIN, "--version"], { stdio: ["ignore", full, "pipe"], encoding: "utf8" });
            assert.strictEqual(r.status, 1, r.stderr);
            assert.match(
                r.stderr,
                /^gitops-lab: stopped: writing its standard output failed \(ENOSPC: no space left on device\): its output is not whole/m,
            );
        } finally {
            fs.closeSync(full);
        }
    });

    it("and without the guard it would not (the control: the same writer goes on)", async () => {
        const child = await withItsReaderGone(writer(false), [], children);
        await expectConsistently(
            holds("the unguarded writer still runs", () => running(child.pid!)),
            { forMs: 2_000 },
        );
        assert.ok(running(child.pid!));
    });

    // given gitops-lab simulate (the bin, as a user runs it) under that handler, when its reader goes, then it ends
    // with 1 at its next line of progress
    it("simulate ends when its reader goes", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "closed-output-"));
        fs.chmodSync(root, 0o755);
        const bin = path.join(PROJECT, "bin", "gitops-lab");
        // node -e's arguments start at process.argv[1]: the bin reads from [2], so a placeholder first
        const script = `${SDK_HANDLER}\nprocess.argv.splice(1, 1, ${JSON.stringify(bin)});\nrequire(${JSON.stringify(bin)});`;
        const child = await withItsReaderGone(script, ["x", "simulate", "--root", root], children);
        const code = await new Promise<number | null>((resolve) =>
            child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (c) => resolve(c)),
        );
        assert.strictEqual(code, 1);
    });
});
