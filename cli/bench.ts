/**
 * gitops-lab bench: the simulated lab once, fresh, and per step the wall time and the part of it
 * spent waiting on (simulated) Argo CD. "Overhead" is ours: wall time minus waiting. Not a test:
 * it prints figures for the README.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { StepTiming } from "../lab/shop/scenario";
import { solveSimulatedLab, startSimulatedLab } from "../sim/simulatedLab";
import { Command, EXIT } from "./command";

export const bench: Command = {
    name: "bench",
    summary: "time each step of the lab against the simulated cluster (figures for the README)",
    usage: "bench",
    details: [],
    options: {},
    async run() {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "bench-"));
        const lab = await startSimulatedLab(root);
        const rows: StepTiming[] = [];
        try {
            const run = await solveSimulatedLab(lab, 8);
            rows.push(...run.setup, ...run.timings);
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
        return EXIT.OK;
    },
};
