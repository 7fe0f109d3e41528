import { run } from "../../lab/ports/exec";

/** git in a folder (or the current one), its output trimmed: the tests' one git. */
export const git = async (args: string[], cwd?: string) => (await run("git", args, { cwd })).stdout.trim();
