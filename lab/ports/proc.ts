/** Processes as Linux's /proc shows them: whether one still runs, its state and parent. */
import * as fs from "fs";
import { codeOf } from "./errors";

/** A process that still runs: a zombie (killed, not yet reaped by its parent) is gone too. */
export function isAlive(pid: number): boolean {
    try {
        process.kill(pid, 0);
    } catch (e) {
        return codeOf(e) === "EPERM";
    }
    return procStat(pid)?.state !== "Z"; // no /proc: kill(pid, 0) alone decides
}

/** A process's state and parent (undefined when the process is gone or there is no /proc). */

export function procStat(pid: number): { state: string; ppid: number; startTime: number } | undefined {
    try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')';
        // starttime (field 22, in clock ticks since boot) tells a process from a later one given its PID
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return { state: fields[0], ppid: Number(fields[1]), startTime: Number(fields[19]) };
    } catch {
        return undefined;
    }
}

/** A process's command line as /proc shows it (its title, when it set one: npm's is "npm exec ..."); "" when gone. */
export function commandLine(pid: number): string {
    try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
        return "";
    }
}

/** Whether a command line is npm's or npx's (`npm exec`, `npx`, `npm run`): a launcher whose child is the real program. */
export const isNpmLauncher = (cmdline: string) => /(^|[\s/])(npm|npx)(-cli\.js)?(\s|$)/.test(cmdline);

/** A shell running one command (`sh -c CMD`), as npm runs a package's bin: it stays between npm and the program. */
const isShellOfOne = (cmdline: string) => /^(\S*\/)?(sh|bash|dash)\s+-c\s/.test(cmdline);

/**
 * The npm or npx that started a process, directly or through the shell npm runs it with (`npm exec` runs
 * `sh -c 'gitops-lab ...'`): its pid and start time, or undefined when the process was not started so.
 */
export function npmLauncherOf(pid: number): { pid: number; startTime: number } | undefined {
    let p = procStat(pid)?.ppid;
    for (let hops = 0; p !== undefined && p > 1 && hops < 3; hops++) {
        const cmd = commandLine(p);
        const stat = procStat(p);
        if (!stat) return undefined;
        if (isNpmLauncher(cmd)) return { pid: p, startTime: stat.startTime };
        if (!isShellOfOne(cmd)) return undefined;
        p = stat.ppid;
    }
    return undefined;
}

/** Whether a launcher found by npmLauncherOf still runs (not a later process given its pid). */
export const launcherRuns = (l: { pid: number; startTime: number }) => isAlive(l.pid) && procStat(l.pid)?.startTime === l.startTime;
