/**
 * The dynamic providers' process leaves when the engine that started it is killed
 * (program/providerProcess.ts, installed by labModule()). The engine and the provider host are
 * stand-ins (test/fixtures/providerProcess): the engine starts the host as Pulumi's does, through
 * `sh`, in a process group of its own, reading its output; the host has Pulumi's own handler for
 * uncaught errors. The real engine's case is in test/real/pulumi.real.ts (up killed with SIGKILL).
 */
import * as assert from "assert";
import { ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parentOf } from "../program/providerProcess";
import { procStat } from "../lab/ports/proc";
import { expect, expectConsistently, holds } from "./helpers/expect";

const FIXTURES = path.join(__dirname, "fixtures", "providerProcess");

/** Running: in /proc and not a zombie. */
function running(pid: number): boolean {
    const state = procStat(pid)?.state;
    return state !== undefined && state !== "Z";
}

describe("the dynamic providers' process and a killed engine", function () {
    this.timeout(60_000);
    const started: number[] = [];
    afterEach(() => {
        // what a failed test left: the stand-in engine, its sh, the provider host
        for (const pid of started.splice(0).reverse()) {
            try {
                process.kill(pid, "SIGKILL"); // a provider this test failed to see leave
            } catch {
                /* gone, as it should be */
            }
        }
    });

    /** Starts the stand-in engine, and returns it with its provider host's PID once the host has called labModule(). */
    async function engineWithProvider(
        mode: "logs" | "quiet" | "logs-epipe-only",
    ): Promise<{ engine: ChildProcess; provider: number; sh: number }> {
        const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "provider-process-")), "pid");
        const engine = spawn(process.execPath, [path.join(FIXTURES, "engine.js"), pidFile, mode], { stdio: "ignore" });
        started.push(engine.pid!);
        let provider = 0;
        await expect(
            holds(
                "the provider host has started",
                () => fs.existsSync(pidFile) && (provider = Number(fs.readFileSync(pidFile, "utf8"))) > 0,
            ),
            { timeoutMs: 30_000 },
        );
        const sh = parentOf(provider)!;
        started.push(sh, provider);
        assert.strictEqual(parentOf(sh), engine.pid, "the host runs under sh, under the engine, as the engine's plugin does");
        return { engine, provider, sh };
    }

    for (const mode of ["logs", "quiet", "logs-epipe-only"] as const) {
        const doing = {
            logs: "in the middle of a scenario that logs (its writes then fail with EPIPE)",
            quiet: "idle, writing nothing (its parents tell)",
            "logs-epipe-only": "that logs, its check of its parents made too rare to act (the failed write alone tells)",
        }[mode];
        it(`given a provider host ${doing}, then it stays while the engine lives, and when the engine is killed with SIGKILL it leaves, and so does its sh`, async () => {
            const { engine, provider, sh } = await engineWithProvider(mode);
            await expectConsistently(
                holds("the provider host runs while its engine lives", () => running(provider)),
                { forMs: 2_500 },
            );
            engine.kill("SIGKILL");
            await expect(
                holds("the provider host has left", () => !running(provider)),
                { timeoutMs: 20_000 },
            );
            await expect(
                holds("its sh has left", () => !running(sh)),
                { timeoutMs: 20_000 },
            );
        });
    }
});
