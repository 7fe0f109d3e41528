/**
 * One run per root: `simulate` (and `--serve`) holds a lock file in the simulated host's root. A
 * second run on a root in use refuses at once, naming the PID that holds it; a lock left by a
 * process that is gone is taken over, with a note.
 */
import * as fs from "fs";
import * as path from "path";

export const lockFile = (root: string) => path.join(root, ".gitops-lab-simulate.lock");

export function isAlive(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch (e: any) {
        return e.code === "EPERM";
    }
}

export interface RootLock {
    /** Set when a stale lock (a dead process's) was taken over. */
    note?: string;
    release(): void;
}

export function acquireRootLock(root: string): RootLock {
    fs.mkdirSync(root, { recursive: true });
    const file = lockFile(root);
    let note: string | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
        try {
            fs.writeFileSync(file, `${process.pid}\n`, { flag: "wx" });
            return {
                note,
                release: () => {
                    try {
                        if (fs.readFileSync(file, "utf8").trim() === String(process.pid)) fs.rmSync(file, { force: true });
                    } catch {
                        /* already gone */
                    }
                },
            };
        } catch (e: any) {
            if (e.code !== "EEXIST") throw new Error(`cannot write the lock ${file} (${e.code ?? e.message}): is ${root} writable?`);
            const holder = Number(fs.readFileSync(file, "utf8").trim());
            if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
                throw new Error(`${root} is in use by another gitops-lab simulate (PID ${holder}); wait for it to end or stop it, then run again`);
            }
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
