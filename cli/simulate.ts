/**
 * npm run simulate -- --root DIR [--through N] [--realistic]
 *
 * The whole lab on this machine with the cluster simulated: the real repository under
 * DIR/srv/bare/shop-envs.git and DIR/root/cnpa-env/, a real git daemon on 127.0.0.1, and a
 * loopback fake Kubernetes API with an Argo CD v3.5.1 simulation in place of k3s and Argo CD.
 * Steps 1-N run through the same code `pulumi up` runs. A second run on the same DIR resumes
 * (the simulated cluster is kept in DIR/simulated-cluster.json).
 */
import * as path from "path";
import { REALISTIC } from "../sim/appController";
import { solveSimulatedLab, startSimulatedLab } from "../sim/simulatedLab";

const USAGE = "usage: npm run simulate -- --root DIR [--through N] [--realistic]";

function parseArgs(argv: string[]): { root: string; through: number; realistic: boolean } {
    let root: string | undefined;
    let through = 8;
    let realistic = false;
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === "--root") root = argv[++i];
        else if (a === "--through") {
            const v = argv[++i];
            through = Number(v);
            if (!/^\d$/.test(v ?? "") || through > 8) throw new Error(`--through takes a step number from 0 to 8, got "${v ?? ""}"`);
        } else if (a === "--realistic") realistic = true;
        else throw new Error(`unknown argument "${a}"\n${USAGE}`);
    }
    if (!root) throw new Error(`--root DIR is required\n${USAGE}`);
    return { root: path.resolve(root), through, realistic };
}

async function main(): Promise<number> {
    const args = parseArgs(process.argv.slice(2));
    const say = (l: string) => console.log(l);
    say("SIMULATED CLUSTER: no Kubernetes and no Argo CD run here. A loopback fake Kubernetes API with an");
    say("Argo CD v3.5.1 simulation (test/sim/) stands in for k3s and Argo CD; git, git daemon and kustomize are real.");
    say(`root: ${args.root}; through step ${args.through}; Argo CD timings: ${args.realistic ? "realistic" : "fast"}`);
    const lab = await startSimulatedLab(args.root, { persist: true, timings: args.realistic ? REALISTIC : undefined });
    try {
        const run = await solveSimulatedLab(lab, args.through, { log: say });
        if (args.through >= 8) say(`report.json:\n${JSON.stringify(run.results.report, null, 2)}`);
        say(`results in ${lab.layout.workDir} (the cluster was simulated)`);
        return 0;
    } finally {
        await lab.stop();
    }
}

main().then(
    (code) => process.exit(code),
    (e) => {
        console.error(`simulate: ${e?.message ?? e}`);
        process.exit(1);
    },
);
