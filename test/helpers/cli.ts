/** Runs one of the command-line tools (cli/*.ts) as a lab author would, in a child process. */
import { spawn, spawnSync } from "child_process";
import * as path from "path";

const PROJECT = path.join(__dirname, "..", "..");
const TS_NODE = path.join(PROJECT, "node_modules", "ts-node", "dist", "bin.js");

export function runCli(script: string, args: string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}) {
    const r = spawnSync(process.execPath, [TS_NODE, "--transpile-only", path.join(PROJECT, "cli", script), ...args], {
        cwd: PROJECT,
        encoding: "utf8",
        timeout: opts.timeoutMs ?? 120_000,
        env: opts.env ?? process.env,
    });
    return { code: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout, stderr: r.stderr };
}

/** The same without blocking this process (needed when the tool talks to a server running in it). */
export function runCliAsync(script: string, args: string[], timeoutMs = 120_000): Promise<{ code: number | null; out: string; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [TS_NODE, "--transpile-only", path.join(PROJECT, "cli", script), ...args], { cwd: PROJECT });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        const timer = setTimeout(() => {
            child.kill("SIGKILL");
            reject(new Error(`${script} did not finish within ${timeoutMs} ms:\n${stdout}${stderr}`));
        }, timeoutMs);
        child.on("exit", (code) => {
            clearTimeout(timer);
            resolve({ code, out: stdout + stderr, stdout, stderr });
        });
    });
}
