/**
 * One run per root: `simulate` (and `--serve`) holds a lock file in the simulated host's root. A
 * second run on a root in use refuses at once, naming the PID that holds it; a lock left by a
 * process that is gone is taken over, with a note. The real plane holds one per host the same way
 * (acquireLockFile).
 */
import * as fs from "fs";
import * as path from "path";
import { isAlive, procStat } from "./proc";
import { codeOf, messageOf } from "./errors";

export const lockFile = (root: string) => path.join(root, ".gitops-lab-simulate.lock");
/** What a served lab's run says in its lock once it serves (before: solving, or starting). */
export const SERVING = "serving";
/** What a run says in its lock once a signal (or its launcher's end) stops it. */
export const STOPPING = "stopping";

export interface RootLock {
    /** Set when a stale lock (a dead process's) was taken over. */
    note?: string;
    /** Says what the holder does now (the lock's second line: "serving" once a served lab is up). */
    say(what: string): void;
    release(): void;
}

export function acquireRootLock(root: string): RootLock {
    fs.mkdirSync(root, { recursive: true });
    return acquireLockFile(lockFile(root), (holder, what) =>
        // a run suspended (Ctrl-Z) holds it and does not end by waiting; nor does a served lab, which runs until stopped
        procStat(holder)?.state === "T"
            ? `${root} is in use by a gitops-lab simulate that is suspended (PID ${holder}, Ctrl-Z?): fg it in its terminal, or kill ${holder}, then run again`
            : what === STOPPING
              ? `${root} is in use by a gitops-lab simulate that is stopping (PID ${holder}; it saves the simulated cluster and ends): run again in a few seconds, once it has ended`
              : what === SERVING
                ? `${root} is in use by a served lab (gitops-lab simulate --serve, PID ${holder}), which runs until it is stopped: Ctrl-C in its terminal, or kill ${holder}, then run again`
                : `${root} is in use by another gitops-lab simulate (PID ${holder}); wait for it to end or stop it, then run again`,
    );
}

/**
 * A lock file holding this process's PID (and, on its second line, what holds it; on its third, the
 * process's start time, so that a later process given the same PID is not taken for it). `inUse`
 * words the refusal when a live process holds it, from its PID and that second line.
 */
export function acquireLockFile(file: string, inUse: (holder: number, what: string) => string, what = ""): RootLock {
    let note: string | undefined;
    // the lock appears whole or not at all: written to a file of this process's own, then linked into place
    // (link fails if the lock exists). Written in place (open with wx, then write), another process could read
    // it empty in between, judge it stale and take it over, and both would hold it.
    const mine = `${file}.${process.pid}.new`;
    // its fourth line, the folder it is in (device and inode): a lock copied with its folder (cp -a of a served root) names another
    const content = (w: string) => `${process.pid}\n${w}\n${procStat(process.pid)?.startTime ?? ""}\n${realDir(file)}\n`;
    const release = () => {
        process.off("exit", release);
        try {
            if (fs.readFileSync(file, "utf8").split("\n")[0].trim() === String(process.pid)) fs.rmSync(file, { force: true });
        } catch {
            /* already gone */
        }
    };
    try {
        fs.writeFileSync(mine, content(what));
    } catch (e) {
        throw new Error(`cannot write the lock ${file} (${codeOf(e) ?? messageOf(e)}): is ${path.dirname(file)} writable?`);
    }
    try {
        for (let attempt = 0; attempt < 2; attempt++) {
            try {
                fs.linkSync(mine, file);
                // a holder that exits before it releases the lock (a signal's exit while it starts) releases it then
                process.once("exit", release);
                // rewritten whole (a file of its own renamed over it), and only while this process holds it; what it says
                // is for a reader's note, so a failure to say it (a full disk) never stops the run that holds it
                const say = (w: string) => {
                    try {
                        if (holderOf(file) !== process.pid) return;
                        fs.writeFileSync(mine, content(w));
                        fs.renameSync(mine, file);
                    } catch {
                        fs.rmSync(mine, { force: true });
                    }
                };
                return { note, release, say };
            } catch (e) {
                if (codeOf(e) !== "EEXIST")
                    throw new Error(`cannot write the lock ${file} (${codeOf(e) ?? messageOf(e)}): is ${path.dirname(file)} writable?`);
            }
            const found = readLock(file);
            const holder = found?.pid;
            if (found && holder !== process.pid && holds(found)) throw new Error(inUse(found.pid, found.what));
            note = found?.copiedFrom
                ? `took over the lock copied here with this folder from another (PID ${holder} holds that one's, not this)`
                : `took over the lock of PID ${holder ?? "?"}, which is gone${holder !== undefined && isAlive(holder) ? " (its PID now another process's)" : ""}`;
            // moved aside, then checked: two processes taking over at once may both have judged the same dead
            // holder's lock, and the second's rename may move the first's new lock; that one is put back
            const stale = `${file}.stale-${process.pid}`;
            try {
                fs.renameSync(file, stale);
            } catch (err) {
                if (codeOf(err) !== "ENOENT") throw err;
                continue;
            }
            const movedLock = readLock(stale);
            const moved = movedLock?.pid;
            if (movedLock && moved !== holder && moved !== process.pid && holds(movedLock)) {
                const movedWhat = movedLock.what;
                try {
                    fs.linkSync(stale, file);
                } catch {
                    /* a third process has taken it meanwhile: it holds it */
                }
                fs.rmSync(stale, { force: true });
                throw new Error(inUse(movedLock.pid, movedWhat));
            }
            fs.rmSync(stale, { force: true });
        }
        throw new Error(`cannot take the lock ${file}`);
    } finally {
        fs.rmSync(mine, { force: true });
    }
}

/** The PID of a lock's holder that is gone (its run stopped half-way: killed, or the host restarted); undefined otherwise. */
export function goneHolder(file: string): number | undefined {
    const lock = readLock(file);
    return lock && !holds(lock) ? lock.pid : undefined;
}

/** The live holder of a lock: its PID, what it says it does, and its state (T: suspended); undefined when none. */
export function liveHolder(file: string): { pid: number; what: string; state?: string } | undefined {
    const lock = readLock(file);
    return lock && holds(lock) ? { pid: lock.pid, what: lock.what, state: procStat(lock.pid)?.state } : undefined;
}

interface LockRecord {
    pid: number;
    what: string;
    /** The holder's start time (clock ticks since boot), where the lock records it. */
    start?: number;
    /** When the lock file was written (ms). */
    writtenMs: number;
    /** The folder the lock was written in, where that is not the folder it is in now (copied with its folder). */
    copiedFrom?: string;
}

/**
 * The folder a file is in, as its device and inode: a copy (cp -a) is another folder, a move (mv) the same one; its
 * path where it cannot be read.
 */
function realDir(file: string): string {
    try {
        const st = fs.statSync(path.dirname(file));
        return `${st.dev}:${st.ino}`;
    } catch {
        return path.resolve(path.dirname(file));
    }
}

/** A lock file read once (its PID, what, start time and when it was written); undefined when gone, empty, or no PID. */
function readLock(file: string): LockRecord | undefined {
    try {
        const fd = fs.openSync(file, "r");
        try {
            const [pid, what = "", start = "", dir = ""] = fs
                .readFileSync(fd, "utf8")
                .split("\n")
                .map((l) => l.trim());
            const n = Number(pid);
            if (!Number.isInteger(n) || n <= 0) return undefined;
            return {
                pid: n,
                what,
                start: /^\d+$/.test(start) ? Number(start) : undefined,
                writtenMs: fs.fstatSync(fd).mtimeMs,
                ...(dir && dir !== realDir(file) ? { copiedFrom: dir } : {}),
            };
        } finally {
            fs.closeSync(fd);
        }
    } catch {
        return undefined;
    }
}

/**
 * Whether the process the lock names still holds it: alive, and started when the lock says (a PID is
 * given again after its process ends, after a restart most of all), and the lock is where it wrote it. A lock without a start time: a
 * process that started after the lock was written is not its holder.
 */
function holds(lock: LockRecord): boolean {
    if (lock.copiedFrom !== undefined || !isAlive(lock.pid)) return false;
    const now = procStat(lock.pid)?.startTime;
    if (now === undefined) return true; // no /proc: kill(pid, 0) alone decides
    if (lock.start !== undefined) return now === lock.start;
    const started = bootTimeMs() + (now * 1000) / CLOCK_TICKS;
    return !(started > lock.writtenMs + 2_000);
}

/** USER_HZ, the unit of /proc's start times: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS = 100;

/** When the host booted (ms since the epoch), from /proc/stat's btime; NaN without it. */
function bootTimeMs(): number {
    try {
        return Number(/^btime (\d+)$/m.exec(fs.readFileSync("/proc/stat", "utf8"))?.[1]) * 1000;
    } catch {
        return NaN;
    }
}

/** The PID a lock file names, or undefined (gone, empty, not a PID). */
const holderOf = (file: string) => readLock(file)?.pid;
