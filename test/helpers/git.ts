import { run } from "../../lab/ports/exec";

/** git in a folder (or the current one), its output trimmed: the tests' one git; `env` adds to this process's environment. */
export const git = async (args: string[], cwd?: string, env?: NodeJS.ProcessEnv) =>
    (await run("git", args, { cwd, env: env && { ...process.env, ...env } })).stdout.trim();
