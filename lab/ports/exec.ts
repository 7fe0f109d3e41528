/** Runs programs with argument arrays (never a shell string) and turns failures into readable errors. */
import { execFile } from "child_process";

export interface RunResult {
    stdout: string;
    stderr: string;
}

export function run(file: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
    return new Promise((resolve, reject) => {
        execFile(file, args, { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
            if (err) {
                const what = `${file} ${args.join(" ")}`;
                const code = (err as any).code === "ENOENT" ? `${file} is not installed or not on PATH` : `exit ${(err as any).code ?? "?"}`;
                const e = new Error(`${what} failed (${code}): ${String(stderr || err.message).trim()}`);
                (e as any).stderr = String(stderr);
                (e as any).exitCode = (err as any).code;
                (e as any).code = (err as any).code === "ENOENT" ? "ENOENT" : undefined;
                return reject(e);
            }
            resolve({ stdout: String(stdout), stderr: String(stderr) });
        });
    });
}
