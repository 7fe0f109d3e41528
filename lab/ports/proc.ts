/** A process's state and parent from Linux's /proc (undefined when the process is gone or there is no /proc). */
import * as fs from "fs";

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
