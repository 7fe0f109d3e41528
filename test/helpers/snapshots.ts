/**
 * Lab states built once per test run and kept as snapshots (the files and the simulated cluster):
 * the state at step N is built from the nearest smaller one already built, by the product's own
 * code. labAt (the shop lab) and tenantsAt (the tenants lab) restore fresh copies of them.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { LabSnapshot, restoreLab, SimulatedLab, snapshotLab, startSimulatedLab } from "../../sim/simulatedLab";

/** `snapshotAt(step)` for a lab that `solve(lab, step)` carries out; `name` prefixes the temporary folders. */
export function snapshotCache(name: string, solve: (lab: SimulatedLab, step: number) => Promise<unknown>): (step: number) => Promise<LabSnapshot> {
    const snapshots = new Map<number, Promise<LabSnapshot>>();
    const snapshotAt = (step: number): Promise<LabSnapshot> => {
        let snap = snapshots.get(step);
        if (!snap) {
            snap = (async () => {
                const below = [...snapshots.keys()].filter((k) => k < step).sort((a, b) => b - a)[0];
                const root = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-build-${step}-`));
                const lab = below === undefined ? await startSimulatedLab(root) : await restoreLab(await snapshotAt(below), root);
                try {
                    await solve(lab, step);
                    return snapshotLab(lab, fs.mkdtempSync(path.join(os.tmpdir(), `${name}-snapshot-${step}-`)));
                } finally {
                    await lab.stop();
                    fs.rmSync(root, { recursive: true, force: true });
                }
            })();
            snapshots.set(step, snap);
        }
        return snap;
    };
    return snapshotAt;
}
