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

export interface RootLock {
    /** Set when a stale lock (a dead process's) was taken over. */
    note?: string;
    /** Says what the holder does now (the lock's second line: "serving" once a served lab is up). */
    say(what: string): void;
    release(): void;
}

export function acquireRootLock(root: string): RootLock {
    fs.mkdirSync(root, { recursive: true });
    return acquireLockFile(lockFile(root), (holder) =>
        // a run suspended (Ctrl-Z) holds it and does not end by waiting
        procStat(holder)?.state === "T"
            ? `${root} is in use by a gitops-lab simulate that is suspended (PID ${holder}, Ctrl-Z?): fg it in its terminal, or kill ${holder}, then run again`
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
    const content = (w: string) => `${process.pid}\n${w}\n${procStat(process.pid)?.startTime ?? ""}\n`;
    const release = () => {
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
                // rewritten whole (a file of its own renamed over it), and only while this process holds it
                const say = (w: string) => {
                    if (holderOf(file) !== process.pid) return;
                    fs.writeFileSync(mine, content(w));
                    fs.renameSync(mine, file);
                };
                return { note, release, say };
            } catch (e) {
                if (codeOf(e) !== "EEXIST")
                    throw new Error(`cannot write the lock ${file} (${codeOf(e) ?? messageOf(e)}): is ${path.dirname(file)} writable?`);
            }
            const holder = holderOf(file);
            if (holder !== undefined && holder !== process.pid && holds(file, holder)) throw new Error(inUse(holder, whatOf(file)));
            note = `took over the lock of PID ${holder ?? "?"}, which is gone${holder !== undefined && isAlive(holder) ? " (its PID now another process's)" : ""}`;
            // moved aside, then checked: two processes taking over at once may both have judged the same dead
            // holder's lock, and the second's rename may move the first's new lock; that one is put back
            const stale = `${file}.stale-${process.pid}`;
            try {
                fs.renameSync(file, stale);
            } catch (err) {
                if (codeOf(err) !== "ENOENT") throw err;
                continue;
            }
            const moved = holderOf(stale);
            if (moved !== undefined && moved !== holder && moved !== process.pid && holds(stale, moved)) {
                const movedWhat = whatOf(stale);
                try {
                    fs.linkSync(stale, file);
                } catch {
                    /* a third process has taken it meanwhile: it holds it */
                }
                fs.rmSync(stale, { force: true });
                throw new Error(inUse(moved, movedWhat));
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
    const holder = holderOf(file);
    return holder !== undefined && !holds(file, holder) ? holder : undefined;
}

/** The live holder of a lock: its PID, what it says it does, and its state (T: suspended); undefined when none. */
export function liveHolder(file: string): { pid: number; what: string; state?: string } | undefined {
    const pid = holderOf(file);
    return pid !== undefined && holds(file, pid) ? { pid, what: whatOf(file), state: procStat(pid)?.state } : undefined;
}

/**
 * Whether the process the lock names still holds it: alive, and started when the lock says (a PID is
 * given again after its process ends, after a restart most of all); a lock without a start time, by PID alone.
 */
function holds(file: string, pid: number): boolean {
    if (!isAlive(pid)) return false;
    const recorded = lineOf(file, 2);
    const now = procStat(pid)?.startTime;
    return !/^\d+$/.test(recorded) || now === undefined || now === Number(recorded);
}

/** The PID a lock file names, or undefined (gone, empty, not a PID). */
function holderOf(file: string): number | undefined {
    try {
        const holder = Number(fs.readFileSync(file, "utf8").split("\n")[0].trim());
        return Number.isInteger(holder) && holder > 0 ? holder : undefined;
    } catch {
        return undefined;
    }
}

/** What a lock file says holds it (its second line). */
const whatOf = (file: string) => lineOf(file, 1);

function lineOf(file: string, n: number): string {
    try {
        return (fs.readFileSync(file, "utf8").split("\n")[n] ?? "").trim();
    } catch {
        return "";
    }
}
