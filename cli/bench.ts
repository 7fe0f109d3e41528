/**
 * npm run bench: the simulated scenario once, fresh, and per step the wall time and the part of
 * it spent waiting on (simulated) Argo CD. "Overhead" is ours: wall time minus waiting.
 * Not a test: it prints figures for the README.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { KubeCluster } from "../lab/cluster";
import { CloneGit } from "../lab/git";
import { shopApplicationSet } from "../lab/manifests";
import { readRepoFiles } from "../lab/repoFiles";
import { runScenario, StepTiming } from "../lab/scenario";
import { applyShopAppSet } from "../lab/shopAppSet";
import { createShopRepo } from "../lab/shopRepo";
import { SIM_TIMEOUTS, startSimulatedLab } from "../test/sim/simulatedLab";

async function main() {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "bench-"));
    const lab = await startSimulatedLab(root);
    const rows: StepTiming[] = [];
    try {
        let t0 = Date.now();
        await createShopRepo(lab.layout, readRepoFiles());
        rows.push({ step: 1, name: "repo", ms: Date.now() - t0, waitMs: 0, skipped: false });
        const cluster = new KubeCluster(lab.kubeconfig);
        t0 = Date.now();
        await applyShopAppSet(cluster, lab.layout, shopApplicationSet());
        rows.push({ step: 2, name: "appset", ms: Date.now() - t0, waitMs: 0, skipped: false });
        const run = await runScenario({ layout: lab.layout, git: new CloneGit(lab.layout.clone), cluster, log: () => {}, timeouts: SIM_TIMEOUTS }, 8);
        rows.push(...run.timings);
    } finally {
        await lab.stop();
        fs.rmSync(root, { recursive: true, force: true });
    }
    const f = (ms: number) => (ms / 1000).toFixed(2).padStart(7);
    console.log("step           wall s   waiting s  overhead s");
    for (const r of rows) console.log(`${`${r.step} ${r.name}`.padEnd(13)} ${f(r.ms)}   ${f(r.waitMs)}    ${f(r.ms - r.waitMs)}`);
    const total = rows.reduce((a, r) => a + r.ms, 0);
    const waiting = rows.reduce((a, r) => a + r.waitMs, 0);
    console.log(`${"total".padEnd(13)} ${f(total)}   ${f(waiting)}    ${f(total - waiting)}`);
    console.log(`(simulated cluster, fast Argo CD timings; node ${process.version}, ${os.cpus().length} cores)`);
}

main().catch((e) => {
    console.error(`bench: ${e?.message ?? e}`);
    process.exit(1);
});
