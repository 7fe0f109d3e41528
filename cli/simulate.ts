/**
 * gitops-lab simulate --root DIR [--through N] [--realistic]
 *
 * The whole lab on this machine with the cluster simulated: the real repository under
 * DIR/srv/bare/shop-envs.git and DIR/root/cnpa-env/, a real git daemon on 127.0.0.1, and a
 * loopback fake Kubernetes API with an Argo CD v3.5.1 simulation (sim/) in place of k3s and
 * Argo CD. Steps 1-N run through the same code `pulumi up` runs. A second run on the same DIR
 * resumes (the simulated cluster is kept in DIR/simulated-cluster.json).
 */
import * as path from "path";
import { REALISTIC } from "../sim/appController";
import { resetSimulatedLab, solveSimulatedLab, startSimulatedLab } from "../sim/simulatedLab";
import { Command, EXIT, intOption, stringOption, UsageError } from "./command";

export const simulate: Command = {
    name: "simulate",
    summary: "run the lab against a simulated cluster (no Kubernetes, no Argo CD needed)",
    usage: "simulate --root DIR [--through N] [--realistic] [--reset]",
    details: [
        "--root DIR          where the lab's host paths go (DIR/srv/bare, DIR/root/cnpa-env); required",
        "--through N         carry the lab out through step N (0-8, default 8); a later run resumes",
        "--realistic         Argo CD-like timings (selfHeal after 1.5 s, 0.5 s per refresh) instead of fast ones",
        "--reset             take the lab down as `pulumi destroy` does (same code, same order), leaving nothing behind",
    ],
    options: { root: { type: "string" }, through: { type: "string" }, realistic: { type: "boolean" }, reset: { type: "boolean" } },
    async run(values) {
        const rootArg = stringOption(values, "root");
        if (!rootArg) throw new UsageError("--root DIR is required (see gitops-lab simulate --help)");
        const root = path.resolve(rootArg);
        const through = intOption(values, "through", { min: 0, max: 8, default: 8 });
        const say = (l: string) => console.log(l);
        if (values.reset) {
            say(`SIMULATED CLUSTER: resetting ${root} through the product's destroy path`);
            const left = await resetSimulatedLab(root, say);
            if (left.length) throw new Error(`the reset left ${left.join(", ")}`);
            say(`reset: nothing of the lab is left under ${root}; gitops-lab simulate --root ${root} builds it again`);
            return EXIT.OK;
        }
        say("SIMULATED CLUSTER: no Kubernetes and no Argo CD run here. A loopback fake Kubernetes API with an");
        say("Argo CD v3.5.1 simulation (sim/) stands in for k3s and Argo CD; git, git daemon and kustomize are real.");
        say(`root: ${root}; through step ${through}; Argo CD timings: ${values.realistic ? "realistic" : "fast"}`);
        const lab = await startSimulatedLab(root, { persist: true, timings: values.realistic ? REALISTIC : undefined });
        try {
            const run = await solveSimulatedLab(lab, through, { log: say });
            if (through >= 8) say(`report.json:\n${JSON.stringify(run.results.report, null, 2)}`);
            say(`results in ${lab.layout.workDir} (the cluster was simulated)`);
            return EXIT.OK;
        } finally {
            await lab.stop();
        }
    },
};
