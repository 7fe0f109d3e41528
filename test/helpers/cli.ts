/**
 * Runs the command line (bin/gitops-lab <command> ...) as a lab author would: in a child process
 * (`runCli`, `runCliAsync`, `startCli`) where the process boundary is what a test is about — exit
 * codes through the bin, signals, SIGKILL, locks held by a PID, umask — and otherwise in this process
 * (`runMain`: the same `main()` the bin calls, its output captured), which costs no Node start.
 */
import { ChildProcess, spawn, spawnSync } from "child_process";
import * as path from "path";
import { main } from "../../cli/main";

const PROJECT = path.join(__dirname, "..", "..");
export const BIN = path.join(PROJECT, "bin", "gitops-lab");

export interface CliResult {
    code: number | null;
    /** stdout and stderr together */
    out: string;
    stdout: string;
    stderr: string;
}

export function runCli(
    command: string,
    args: string[],
    opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string; uid?: number } = {},
): CliResult {
    const r = spawnSync(process.execPath, [BIN, command, ...args], {
        cwd: opts.cwd ?? PROJECT,
        ...(opts.uid === undefined ? {} : { uid: opts.uid, gid: opts.uid }),
        encoding: "utf8",
        timeout: opts.timeoutMs ?? 120_000,
        env: opts.env ?? process.env,
    });
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
export function startCli(command: string, args: string[], opts: { stdout?: "pipe" } = {}): ChildProcess {
    return spawn(process.execPath, [BIN, command, ...args], { cwd: PROJECT, stdio: ["ignore", opts.stdout ?? "ignore", "ignore"] });
}

/**
 * The command in this process: `main(argv)` as bin/gitops-lab calls it, with what it writes to
 * stdout and stderr captured. An error
 * escaping main becomes the bin's line and exit 1. One at a time (a test file runs its tests in turn).
 */
export async function runMain(command: string, args: string[]): Promise<CliResult> {
    let stdout = "";
    let stderr = "";
    const writes = { out: process.stdout.write, err: process.stderr.write };
    const capture = (to: "stdout" | "stderr") =>
        ((chunk: any, encoding?: any, cb?: any) => {
            const text =
                typeof chunk === "string"
                    ? chunk
                    : Buffer.from(chunk).toString(typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
            if (to === "stdout") stdout += text;
            else stderr += text;
            (typeof encoding === "function" ? encoding : cb)?.();
            return true;
        }) as typeof process.stdout.write;
    let code: number;
    process.stdout.write = capture("stdout");
    process.stderr.write = capture("stderr");
    try {
        code = await main([command, ...args]);
    } catch (e: any) {
        stderr += `gitops-lab: ${e?.message ?? e}\n`;
        code = 1;
    } finally {
        process.stdout.write = writes.out;
        process.stderr.write = writes.err;
    }
    return { code, out: `${stdout}${stderr}`, stdout, stderr };
}

/**
 * A family of inputs of one kind (bad usage, unreadable input): the first through the bin in a
 * process of its own — the exit code and the stderr a shell sees — and the rest in this process, each
 * input's result still returned for its own checks.
 */
export async function runFamily(command: string, inputs: string[][]): Promise<CliResult[]> {
    const out: CliResult[] = [];
    for (const [i, args] of inputs.entries()) out.push(i === 0 ? await runCliAsync(command, args) : await runMain(command, args));
    return out;
}
