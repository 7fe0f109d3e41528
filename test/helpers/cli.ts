/** Runs the command line (bin/gitops-lab <command> ...) as a lab author would, in a child process. */
import { ChildProcess, spawn, spawnSync } from "child_process";
import * as path from "path";

const PROJECT = path.join(__dirname, "..", "..");
export const BIN = path.join(PROJECT, "bin", "gitops-lab");

export interface CliResult {
    code: number | null;
    /** stdout and stderr together */
    out: string;
    stdout: string;
    stderr: string;
}

export function runCli(command: string, args: string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): CliResult {
    const r = spawnSync(process.execPath, [BIN, command, ...args], { cwd: PROJECT, encoding: "utf8", timeout: opts.timeoutMs ?? 120_000, env: opts.env ?? process.env });
    return { code: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout, stderr: r.stderr };
}

/** The same without blocking this process (needed when the command talks to a server running in it). */
export function runCliAsync(command: string, args: string[], timeoutMs = 120_000): Promise<CliResult> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, command, ...args], { cwd: PROJECT });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        const timer = setTimeout(() => {
            child.kill("SIGKILL");
            reject(new Error(`gitops-lab ${command} did not finish within ${timeoutMs} ms:\n${stdout}${stderr}`));
        }, timeoutMs);
        child.on("exit", (code) => {
            clearTimeout(timer);
            resolve({ code, out: stdout + stderr, stdout, stderr });
        });
    });
}

/** Starts a long-running command (e.g. doctor --watch); the caller stops it. */
export function startCli(command: string, args: string[]): ChildProcess {
    return spawn(process.execPath, [BIN, command, ...args], { cwd: PROJECT, stdio: "ignore" });
}
