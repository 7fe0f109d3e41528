/**
 * "Given a lab at step N": a simulated lab host solved through step N by the product's own code.
 * Each state is built once per test run and kept as a snapshot (the files and the simulated
 * cluster); every `labAt` restores a fresh copy of it, so tests never share a lab and never depend
 * on each other, and `npm test` does not rebuild the lab for every test.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { snapshotCache } from "./snapshots";
import { KubeCluster } from "../../lab/ports/cluster";
import { CloneGit } from "../../lab/ports/git";
import { runShopScenario, ShopScenarioContext, ShopScenarioRun, ShopScenarioTimeouts } from "../../lab/shop/scenario";
import { ArgoTimings } from "../../sim/profiles";
import { clusterStateFile, restoreLab, SimulatedLab, SIM_TIMEOUTS, solveSimulatedLab, startSimulatedLab } from "../../sim/simulatedLab";

export interface LabAt {
    lab: SimulatedLab;
    /** Every line the scenario printed (from this lab's own runs). */
    lines: string[];
    cluster: KubeCluster;
    ctx(timeouts?: Partial<ShopScenarioTimeouts>): ShopScenarioContext;
    solve(through: number, timeouts?: Partial<ShopScenarioTimeouts>): Promise<ShopScenarioRun>;
    stop(): Promise<void>;
}

/** The snapshot of a lab solved through `step`, built from the nearest smaller one. */
const snapshotAt = snapshotCache("lab", (lab, step) => solveSimulatedLab(lab, step));

/** A lab at step N, with the simulated Argo CD at the given timings (default FAST). */
export async function labAt(step: number, opts: { timings?: Partial<ArgoTimings> } = {}): Promise<LabAt> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "lab-at-"));
    const lines: string[] = [];
    const log = (l: string) => lines.push(l);
    let lab: SimulatedLab;
    if (step === 0) {
        lab = await startSimulatedLab(root, { timings: opts.timings });
        try {
            await solveSimulatedLab(lab, step, { log });
        } catch (e) {
            await lab.stop().catch(() => undefined);
            throw e;
        }
    } else {
        // the snapshot is the files and the cluster; the simulated Argo CD restored on them may have other timings
        lab = await restoreLab(await snapshotAt(step), root, { timings: opts.timings });
    }
    const cluster = new KubeCluster(lab.kubeconfig);
    const ctx = (timeouts: Partial<ShopScenarioTimeouts> = {}): ShopScenarioContext => ({
        layout: lab.layout,
        git: new CloneGit(lab.layout.clone),
        cluster,
        log,
        timeouts: { ...SIM_TIMEOUTS, ...timeouts },
    });
    return {
        lab,
        lines,
        cluster,
        ctx,
        solve: (through, timeouts) => runShopScenario(ctx(timeouts), through),
        stop: async () => {
            await lab.stop();
            fs.rmSync(root, { recursive: true, force: true });
        },
    };
}

/**
 * A root as `gitops-lab simulate --root DIR --through N` leaves it — the lab's files and the saved
 * simulated cluster, nothing running — from the snapshot at step N, for tests of what a later run
 * (or a reset) does with it. The run's temporary folder takes it away.
 */
export async function rootAt(step: number): Promise<string> {
    const at = await labAt(step);
    fs.writeFileSync(clusterStateFile(at.lab.layout.root), at.lab.kube.dump());
    await at.lab.stop();
    return at.lab.layout.root;
}

/** The lab's kubeconfig written where a served lab writes it (ROOT/kubeconfig), for kubectl and verify run as a learner runs them. */
export function kubeconfigAt(at: { lab: { layout: { root: string }; kubeconfig: string } }): string {
    const file = path.join(at.lab.layout.root, "kubeconfig");
    fs.writeFileSync(file, at.lab.kubeconfig);
    return file;
}
