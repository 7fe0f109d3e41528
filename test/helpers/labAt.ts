/** "Given a lab at step N": a simulated lab host, built and solved through step N by the product's own code. */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { KubeCluster } from "../../lab/ports/cluster";
import { CloneGit } from "../../lab/ports/git";
import { runScenario, ScenarioContext, ScenarioRun, ScenarioTimeouts } from "../../lab/shop/scenario";
import { AppControllerOptions } from "../../sim/appController";
import { SimulatedLab, SIM_TIMEOUTS, solveSimulatedLab, startSimulatedLab } from "../../sim/simulatedLab";

export interface LabAt {
    lab: SimulatedLab;
    /** Every line the scenario printed. */
    lines: string[];
    ctx(timeouts?: Partial<ScenarioTimeouts>): ScenarioContext;
    solve(through: number, timeouts?: Partial<ScenarioTimeouts>): Promise<ScenarioRun>;
    stop(): Promise<void>;
}

export async function labAt(step: number, opts: { root?: string; timings?: Partial<AppControllerOptions> & { generateDelayMs?: number } } = {}): Promise<LabAt> {
    const root = opts.root ?? fs.mkdtempSync(path.join(os.tmpdir(), "lab-at-"));
    const lab = await startSimulatedLab(root, { timings: opts.timings });
    const lines: string[] = [];
    const log = (l: string) => lines.push(l);
    const cluster = new KubeCluster(lab.kubeconfig);
    const ctx = (timeouts: Partial<ScenarioTimeouts> = {}): ScenarioContext => ({
        layout: lab.layout,
        git: new CloneGit(lab.layout.clone),
        cluster,
        log,
        timeouts: { ...SIM_TIMEOUTS, ...timeouts },
    });
    const at: LabAt = {
        lab,
        lines,
        ctx,
        solve: (through, timeouts) => runScenario(ctx(timeouts), through),
        stop: () => lab.stop(),
    };
    try {
        await solveSimulatedLab(lab, step, { log });
    } catch (e) {
        await lab.stop().catch(() => undefined);
        throw e;
    }
    return at;
}
