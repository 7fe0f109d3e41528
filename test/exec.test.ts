/**
 * run() (lab/ports/exec.ts): programs started by the small helper process behave as if this
 * process had started them: their output and exit status, the environment, working directory and
 * umask of the moment, a timeout; and the helper neither keeps its parent alive nor outlives it.
 */
import * as assert from "assert";
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { run } from "../lab/ports/exec";
import { stderrOf } from "../lab/ports/errors";
import { expect, holds } from "./helpers/expect";

const HELPER = "spawnHelper.js";
/** PIDs of the helper processes whose parent is `ppid`. */
function helpersOf(ppid: number): number[] {
    let out = "";
    try {
        out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(ppid)], { encoding: "utf8" });
    } catch {
        // ps exits 1 when the process has no children
    }
    return out
        .split("\n")
        .filter((l) => l.includes(HELPER))
        .map((l) => Number(l.trim().split(/\s+/)[0]));
}
const alive = (pid: number) => {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
};

describe("run(): programs started by the helper process", function () {
    this.timeout(60_000);

    it("given a program that prints and one that fails, then stdout comes back, and a failure carries its exit status and stderr in one error", async () => {
        assert.strictEqual((await run("sh", ["-c", "echo out; echo err >&2"])).stdout, "out\n");
        const e = await run("sh", ["-c", "echo broken >&2; exit 3"]).then(
            () => undefined,
            (x) => x,
        );
        assert.strictEqual(e?.exitCode, 3);
        assert.strictEqual(e?.stderr, "broken\n");
        assert.match(e?.message, /^sh -c echo broken >&2; exit 3 failed \(exit 3\): broken$/);
        const missing = await run("gitops-lab-no-such-program", []).then(
            () => undefined,
            (x) => x,
        );
        assert.strictEqual(missing?.code, "ENOENT");
        assert.match(missing?.message, /gitops-lab-no-such-program is not installed or not on PATH/);
    });

    it("given a program that outlives its timeout, then it is ended and the run fails", async () => {
        const e = await run("sleep", ["30"], { timeoutMs: 200 }).then(
            () => undefined,
            (x) => x,
        );
        assert.ok(e instanceof Error && /^sleep 30 failed/.test(e.message), String(e));
    });

    it("given the environment, working directory and umask changed after the helper started, then the program gets them as they are at the call", async () => {
        await run("true", []); // the helper is running
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "exec-cwd-"));
        const savedCwd = process.cwd();
        const savedUmask = process.umask(0o027);
        process.env.GITOPS_LAB_EXEC_PROBE = "seen";
        try {
            process.chdir(dir);
            const out = (await run("sh", ["-c", 'echo "$GITOPS_LAB_EXEC_PROBE $(pwd) $(umask)"'])).stdout.trim();
            assert.strictEqual(out, `seen ${fs.realpathSync(dir)} 0027`);
        } finally {
            process.chdir(savedCwd);
            process.umask(savedUmask);
            delete process.env.GITOPS_LAB_EXEC_PROBE;
        }
        assert.strictEqual((await run("sh", ["-c", "umask"])).stdout.trim(), `0${savedUmask.toString(8).padStart(3, "0")}`);
    });

    it("given the helper killed while a program runs, then that run fails saying so, and the next run starts a new helper", async () => {
        await run("true", []);
        const [pid] = helpersOf(process.pid);
        assert.ok(pid, "a helper process of this one");
        const running = run("sleep", ["5"]).then(
            () => undefined,
            (x) => x,
        );
        process.kill(pid, "SIGKILL");
        const e = await running;
        assert.match(String(e?.message), /exited; run the command again/);
        assert.strictEqual((await run("echo", ["again"])).stdout, "again\n");
        assert.ok(!helpersOf(process.pid).includes(pid));
    });

    it("given a process that ran a program, then it exits on its own; killed while one runs, then its helper goes too", async () => {
        const script = `require(${JSON.stringify(path.join(__dirname, "..", "lab", "ports", "exec.ts"))}).run(process.argv[1], process.argv.slice(2)).then((r) => console.log(r.stdout.trim()))`;
        const node = (args: string[]) =>
            spawn(process.execPath, ["-r", path.join(__dirname, "..", "loader", "register.js"), "-e", script, ...args], {
                stdio: ["ignore", "pipe", "inherit"],
            });
        // exits by itself, with the output: the idle helper holds nothing open
        const once = node(["echo", "done"]);
        let out = "";
        once.stdout!.on("data", (d) => (out += d));
        const code = await new Promise<number | null>((r) => once.on("exit", r));
        assert.strictEqual(code, 0);
        assert.strictEqual(out.trim(), "done");
        // killed with SIGKILL while its program runs: the helper sees its stdin close and exits
        const busy = node(["sleep", "30"]);
        let helper = 0;
        await expect(
            holds(
                "the helper running for the busy process",
                () => !!(helper = helpersOf(busy.pid!)[0]),
                () => "no helper yet",
            ),
            { timeoutMs: 30_000 },
        );
        busy.kill("SIGKILL");
        await expect(
            holds(
                "the helper gone after its parent was killed",
                () => !alive(helper),
                () => `PID ${helper} still running`,
            ),
            { timeoutMs: 10_000 },
        );
    });
});

describe("a caught error's output (stderrOf)", () => {
    it("a program run with execFileSync that timed out: its stderr (a Buffer), not spawnSync's ETIMEDOUT", () => {
        const e = Object.assign(new Error("spawnSync kubectl ETIMEDOUT"), {
            code: "ETIMEDOUT",
            stderr: Buffer.from("Unable to connect to the server: dial tcp 127.0.0.1:6443: i/o timeout\n"),
        });
        assert.strictEqual(stderrOf(e), "Unable to connect to the server: dial tcp 127.0.0.1:6443: i/o timeout\n");
    });

    it("a RunError's stderr, and a message where there is no output", async () => {
        const failed = await run("sh", ["-c", "echo oops >&2; exit 3"]).catch((e: unknown) => e);
        assert.strictEqual(stderrOf(failed), "oops\n");
        assert.strictEqual(stderrOf(new Error("no output")), "no output");
    });
});
