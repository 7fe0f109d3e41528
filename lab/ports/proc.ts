/** A process's state and parent from Linux's /proc (undefined when the process is gone or there is no /proc). */
import * as fs from "fs";

export function procStat(pid: number): { state: string; ppid: number } | undefined {
    try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'
        const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return { state, ppid: Number(ppid) };
    } catch {
        return undefined;
    }
}
