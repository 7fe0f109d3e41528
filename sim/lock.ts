/**
 * One run per root: `simulate` (and `--serve`) holds a lock file in the simulated host's root. A
 * second run on a root in use refuses at once, naming the PID that holds it; a lock left by a
 * process that is gone is taken over, with a note. The real plane holds one per host the same way
 * (acquireLockFile).
 */
import * as fs from "fs";
import * as path from "path";
import { procStat } from "../lab/ports/proc";

export const lockFile = (root: string) => path.join(root, ".gitops-lab-simulate.lock");

/** A process that still runs: a zombie (killed, not yet reaped by its parent) is gone too. */
export function isAlive(pid: number): boolean {
    try {
        process.kill(pid, 0);
    } catch (e: any) {
        return e.code === "EPERM";
    }
    return procStat(pid)?.state !== "Z"; // no /proc: kill(pid, 0) alone decides
}

export interface RootLock {
    /** Set when a stale lock (a dead process's) was taken over. */
    note?: string;
    release(): void;
}

export function acquireRootLock(root: string): RootLock {
    fs.mkdirSync(root, { recursive: true });
    return acquireLockFile(lockFile(root), (holder) => `${root} is in use by another gitops-lab simulate (PID ${holder}); wait for it to end or stop it, then run again`);
}

/**
 * A lock file holding this process's PID (and, on its second line, what holds it). `inUse` words
 * the refusal when a live process holds it, from its PID and that second line.
 */
export function acquireLockFile(file: string, inUse: (holder: number, what: string) => string, what = ""): RootLock {
    let note: string | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
        try {
            fs.writeFileSync(file, `${process.pid}\n${what}\n`, { flag: "wx" });
            return {
                note,
                release: () => {
                    try {
                        if (fs.readFileSync(file, "utf8").split("\n")[0].trim() === String(process.pid)) fs.rmSync(file, { force: true });
                    } catch {
                        /* already gone */
                    }
                },
            };
        } catch (e: any) {
            if (e.code !== "EEXIST") throw new Error(`cannot write the lock ${file} (${e.code ?? e.message}): is ${path.dirname(file)} writable?`);
            const [first, second] = fs.readFileSync(file, "utf8").split("\n");
            const holder = Number(first.trim());
            if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) throw new Error(inUse(holder, (second ?? "").trim()));
            note = `took over the lock of PID ${Number.isInteger(holder) ? holder : "?"}, which is gone`;
            // a rename is atomic: of two runs taking over at once, one moves it away, the other's rename fails,
            // and only one then creates the lock (wx)
            try {
                fs.renameSync(file, `${file}.stale-${process.pid}`);
                fs.rmSync(`${file}.stale-${process.pid}`, { force: true });
            } catch (err: any) {
                if (err.code !== "ENOENT") throw err;
            }
        }
    }
    throw new Error(`cannot take the lock ${file}`);
}
