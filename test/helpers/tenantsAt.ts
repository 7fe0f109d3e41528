/**
 * "Given the tenants lab at step N": a simulated host with the tenants lab solved through step N
 * by the product's own code, built once per test run and kept as a snapshot; every `tenantsAt`
 * restores a fresh copy of it (as labAt does for the shop lab).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { KubeCluster } from "../../lab/ports/cluster";
import { tenantsLayout, TenantsLayout } from "../../lab/tenants/layout";
import { TenantsResults } from "../../lab/tenants/results";
import { TenantsTimeouts } from "../../lab/tenants/scenario";
import { LabSnapshot, restoreLab, SimulatedLab, snapshotLab, solveSimulatedTenants, startSimulatedLab } from "../../sim/simulatedLab";

export interface TenantsAt {
    lab: SimulatedLab;
    layout: TenantsLayout;
    lines: string[];
    cluster: KubeCluster;
    solve(through: number, timeouts?: Partial<TenantsTimeouts>): Promise<TenantsResults>;
    stop(): Promise<void>;
}

const snapshots = new Map<number, Promise<LabSnapshot>>();

function snapshotAt(step: number): Promise<LabSnapshot> {
    let snap = snapshots.get(step);
    if (!snap) {
        snap = (async () => {
            const below = [...snapshots.keys()].filter((k) => k < step).sort((a, b) => b - a)[0];
            const root = fs.mkdtempSync(path.join(os.tmpdir(), `tenants-build-${step}-`));
            const lab = below === undefined ? await startSimulatedLab(root) : await restoreLab(await snapshotAt(below), root);
            try {
                await solveSimulatedTenants(lab, step);
                return snapshotLab(lab, fs.mkdtempSync(path.join(os.tmpdir(), `tenants-snapshot-${step}-`)));
            } finally {
                await lab.stop();
                fs.rmSync(root, { recursive: true, force: true });
            }
        })();
        snapshots.set(step, snap);
    }
    return snap;
}

/** The tenants lab at step N (1-3) on a fresh simulated host. */
export async function tenantsAt(step: number): Promise<TenantsAt> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "tenants-at-"));
    const lab = await restoreLab(await snapshotAt(step), root);
    const layout = tenantsLayout(root);
    const lines: string[] = [];
    const cluster = new KubeCluster(lab.kubeconfig);
    return {
        lab,
        layout,
        lines,
        cluster,
        solve: (through, timeouts) => solveSimulatedTenants(lab, through, { log: (l) => lines.push(l), timeouts }),
        stop: async () => {
            await lab.stop();
            fs.rmSync(root, { recursive: true, force: true });
        },
    };
}
