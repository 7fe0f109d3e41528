/** Runs one of the command-line tools (cli/*.ts) as a lab author would, in a child process. */
import { spawnSync } from "child_process";
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
