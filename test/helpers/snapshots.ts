/**
 * Lab states built once per test run and kept as snapshots (the files and the simulated cluster):
 * the state at step N is built from the nearest smaller one already built, by the product's own
 * code, and every state passed on the way is kept too. labAt (the shop lab) and tenantsAt (the
 * tenants lab) restore fresh copies of them.
 *
 * The snapshots are shared by the run's mocha workers through the run's temporary folder
 * (test/setup.ts): a worker that needs one no other has built takes its lock (the lock file of
 * lab/ports/lock.ts, holding the builder's PID) and publishes it by a rename; the others wait for it,
 * and take over a lock whose builder is gone. A worker that needs a state above one another worker
 * is building waits for that one and builds on it, rather than build it a second time. A test
 * file run alone builds what it needs itself.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pollUntil } from "../../lab/ports/wait";
import { acquireLockFile } from "../../lab/ports/lock";
import { LabSnapshot, restoreLab, SimulatedLab, snapshotLab, startSimulatedLab } from "../../sim/simulatedLab";

/** How long a worker waits for another's build of a snapshot before it gives up. */
const WAIT_FOR_OTHER_MS = 600_000;

/** `snapshotAt(step)` for a lab that `solve(lab, step)` carries out from `first` on; `name` names the snapshots. */
export function snapshotCache(
    name: string,
    solve: (lab: SimulatedLab, step: number) => Promise<unknown>,
    first = 0,
): (step: number) => Promise<LabSnapshot> {
    const base = path.join(process.env.GITOPS_LAB_TEST_TMP ?? os.tmpdir(), "snapshots");
    fs.mkdirSync(base, { recursive: true });
    const dirOf = (step: number) => path.join(base, `${name}-${step}`);
    const clusterOf = (step: number) => `${dirOf(step)}.cluster.json`;
    const lockOf = (step: number) => `${dirOf(step)}.lock`;
    /** This process holds the lock of that step's snapshot. */
    const heldHere = (step: number): boolean => {
        try {
            return fs.readFileSync(lockOf(step), "utf8").split("\n")[0].trim() === String(process.pid);
        } catch {
            return false;
        }
    };
    /** A published snapshot: its folder is renamed into place last, after its cluster file. */
    const published = (step: number): LabSnapshot | undefined =>
        fs.existsSync(dirOf(step)) ? { dir: dirOf(step), cluster: fs.readFileSync(clusterOf(step), "utf8") } : undefined;

    /** Takes the lock of a step's snapshot (true), or says another live worker holds it (false); a dead holder's lock is taken over (lab/ports/lock.ts). */
    const lock = (step: number): boolean => {
        try {
            const held = acquireLockFile(lockOf(step), (holder) => `held by PID ${holder}`, `the ${name} lab's snapshot at step ${step}`);
            // kept past this worker's exit (a published snapshot's lock is never taken again): no exit listener a snapshot
            process.off("exit", held.release);
            return true;
        } catch (e: any) {
            if (/^held by PID/.test(e.message)) return false;
            throw e;
        }
    };

    const publish = async (lab: SimulatedLab, step: number): Promise<LabSnapshot> => {
        const tmp = fs.mkdtempSync(path.join(base, `.${name}-${step}-`));
        const snap = await snapshotLab(lab, path.join(tmp, "dir"));
        fs.writeFileSync(clusterOf(step), snap.cluster);
        fs.renameSync(snap.dir, dirOf(step));
        fs.rmSync(tmp, { recursive: true, force: true });
        return { dir: dirOf(step), cluster: snap.cluster };
    };

    /** Builds the snapshot at `step` (its lock held) from the nearest one below, published or being built by another worker (then awaited), keeping the states passed on the way. */
    const build = async (step: number): Promise<LabSnapshot> => {
        // the nearest state below that is published, or that another worker is building (then wait for it rather than
        // build it a second time); a state below whose lock this worker takes is built here, on the way
        let below = step - 1;
        for (; below >= first; below--) {
            if (published(below)) break;
            if (!lock(below)) {
                await snapshotAt(below);
                break;
            }
        }
        const root = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-build-${step}-`));
        const lab = below < first ? await startSimulatedLab(root) : await restoreLab(published(below)!, root);
        try {
            for (let s = Math.max(below + 1, first); s < step; s++) {
                await solve(lab, s);
                if (!published(s) && lock(s)) await publish(lab, s);
            }
            await solve(lab, step);
            return await publish(lab, step); // awaited here: the lab is stopped and its root removed only after the copy
        } finally {
            await lab.stop();
            fs.rmSync(root, { recursive: true, force: true });
        }
    };

    /** Builds it here, the lock held; a failed build gives back every lock it took (of this state and those below it), so no other worker waits for them in vain. */
    const buildHeld = async (step: number): Promise<LabSnapshot> => {
        try {
            return published(step) ?? (await build(step));
        } catch (e) {
            for (let s = first; s <= step; s++) if (!published(s) && heldHere(s)) fs.rmSync(lockOf(s), { force: true });
            throw e;
        }
    };

    const inWorker = new Map<number, Promise<LabSnapshot>>();
    const snapshotAt = (step: number): Promise<LabSnapshot> => {
        let snap = inWorker.get(step);
        if (!snap) {
            snap = (async () => {
                const done = published(step);
                if (done) return done;
                if (lock(step)) return buildHeld(step);
                // another worker builds it: wait until it is published, or its builder is gone (then build it here)
                const got = await pollUntil<LabSnapshot | "mine">(async () => published(step) ?? (lock(step) ? "mine" : undefined), {
                    timeoutMs: WAIT_FOR_OTHER_MS,
                    intervalMs: 100,
                    describe: () => `the ${name} lab's snapshot at step ${step}, built by another mocha worker`,
                });
                return got === "mine" ? buildHeld(step) : got;
            })();
            inWorker.set(step, snap);
        }
        return snap;
    };
    return snapshotAt;
}
