/**
 * gitops-lab simulate --root DIR [--lab shop|tenants|both] [--through N] [--tenants-through N] [--realistic] [--serve] [--reset]
 *
 * The whole lab on this machine with the cluster simulated: the real repository under
 * DIR/srv/bare/shop-envs.git and DIR/root/cnpa-env/, a real git daemon on 127.0.0.1, and a
 * loopback fake Kubernetes API with an Argo CD v3.5.1 simulation (sim/) in place of k3s and
 * Argo CD. Steps 1-N run through the same code `pulumi up` runs. The simulated cluster is saved
 * as etcd keeps a cluster (FakeKube.persistTo), so a run stopped at any instant resumes on the same DIR.
 */
import * as path from "path";
import { writeFileAtomic } from "../lab/ports/files";
import { labLayout } from "../lab/shop/layout";
import { shopLabProgress } from "../lab/shop/solve";
import { tenantsLayout } from "../lab/tenants/layout";
import { tenantsLabProgress } from "../lab/tenants/solve";
import { REALISTIC } from "../sim/profiles";
import { resetSimulatedLab, SimulatedLab, solveSimulatedLab, solveSimulatedTenants, startSimulatedLab } from "../sim/simulatedLab";
import { checkRoot, checkRootReachableByNobody, Command, EXIT, intOption, stringOption, UsageError } from "./command";

/** Whether this run is on the real control plane (for the signal's line). */
let real = false;

/** Exit codes of a run stopped by a signal (128 + the signal's number), as shells report them. */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Stops the lab cleanly on SIGINT or SIGTERM: one line, the daemon stopped (the simulated
 * cluster is already saved), exit 130 or 143. Returns a promise that settles when a signal came.
 */
function onSignal(lab: () => { stop(): Promise<void> } | undefined, say: (l: string) => void): { stopped: Promise<number>; signalled(): boolean; dispose(): void } {
    let came = false;
    let resolve!: (code: number) => void;
    const stopped = new Promise<number>((r) => (resolve = r));
    const handlers = (Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[]).map((sig) => {
        const h = () => {
            came = true;
            say(`simulate: ${sig}: stopping${real ? " the real control plane" : "; the simulated cluster is saved, run again on the same --root to resume"}`);
            Promise.resolve(lab()?.stop())
                .catch(() => undefined)
                .then(() => process.exit(SIGNAL_EXIT[sig]));
            resolve(SIGNAL_EXIT[sig]);
        };
        process.on(sig, h);
        return [sig, h] as const;
    });
    return { stopped, signalled: () => came, dispose: () => handlers.forEach(([sig, h]) => process.off(sig, h)) };
}

/** Where the served instructions clone the labs' repositories, under the root. */
export const CLONES_DIR = "clones";

/**
 * How to use a served lab, for the labs it holds: the kubeconfig, each lab's repository (as Argo CD
 * reads it, and the lab's clone that pushes to it) and verify for that lab. Every line is a command
 * that works as printed, from this project's directory (a test runs them). The clones go under
 * DIR/clones/, which --reset removes with the rest.
 */
export function serveInstructions(lab: { root: string; url(repo: string): string }, kubeconfigFile: string, labs: { shop?: number; tenants?: number }): string[] {
    const lines = ["", "SERVING the simulated lab until Ctrl-C (or SIGTERM):", `  export KUBECONFIG=${kubeconfigFile}`, "  kubectl get applications -n argocd"];
    const through = (n: number, all: number) => (n === all ? "" : ` --through ${n}`);
    if (labs.shop !== undefined) {
        const l = labLayout(lab.root);
        lines.push(`  git clone ${lab.url(path.basename(l.bareRepo))} ${path.join(lab.root, CLONES_DIR, "shop-envs")}`);
        if (labs.shop >= 1) lines.push(`  git -C ${l.clone} push origin main`);
        lines.push(`  npx gitops-lab verify --root ${lab.root} --kubeconfig ${kubeconfigFile}${through(labs.shop, 8)}`);
    }
    if (labs.tenants !== undefined) {
        const l = tenantsLayout(lab.root);
        lines.push(`  git clone ${lab.url(path.basename(l.bareRepo))} ${path.join(lab.root, CLONES_DIR, "platform")}`);
        lines.push(`  git -C ${l.clone} push origin main`);
        lines.push(`  kubectl get pods -n mandant-b`);
        lines.push(`  npx gitops-lab verify --lab tenants --root ${lab.root} --kubeconfig ${kubeconfigFile}${through(labs.tenants, 3)}`);
    }
    return lines;
}

/** The labs on the real control plane: a fresh plane per run (nothing of it is kept between runs). */
async function runOnRealPlane(root: string, labs: { shop?: number; tenants?: number }, serve: boolean, say: (l: string) => void, signals: { stopped: Promise<number> }, started: (lab: { stop(): Promise<void> }) => void): Promise<number> {
    if (shopLabProgress(labLayout(root)) > 0 || tenantsLabProgress(tenantsLayout(root)) > 0) throw new Error(`${root} already holds a lab; the real plane starts empty each run: use a new --root`);
    say("REAL CONTROL PLANE: a real Kubernetes API (nodes simulated by KWOK) and the real Argo CD v3.5.1 controllers, on this machine.");
    if (labs.tenants !== undefined) say("The tenants lab's hook Pods run for real (their script by /bin/sh as nobody); every other Pod is KWOK's.");
    const { startRealLab } = await import("../realplane/realLab");
    const lab = await startRealLab(root, say);
    started(lab);
    try {
        const cluster = new (await import("../lab/ports/cluster")).KubeCluster(lab.kubeconfig);
        if (labs.shop !== undefined) {
            const run = await (await import("../lab/shop/solve")).solveShopLab({ layout: lab.layout, cluster, log: say }, labs.shop);
            if (labs.shop >= 8) say(`report.json:\n${JSON.stringify(run.results.report, null, 2)}`);
            say(`results in ${lab.layout.workDir} (real control plane, fake nodes)`);
        }
        if (labs.tenants !== undefined) {
            const r = await (await import("../lab/tenants/solve")).solveTenantsLab({ layout: tenantsLayout(root), cluster, log: say }, labs.tenants);
            if (r.stall) say(`stall.json:\n${JSON.stringify(r.stall, null, 2)}`);
            if (r.recovery) say(`recovery.json:\n${JSON.stringify(r.recovery, null, 2)}`);
            say(`results in ${tenantsLayout(root).workDir} (real control plane, fake nodes, the hook Pods run for real)`);
        }
        if (!serve) return EXIT.OK;
        const kubeconfigFile = path.join(root, "kubeconfig");
        writeFileAtomic(kubeconfigFile, lab.kubeconfig);
        say(`SERVING the real control plane until Ctrl-C (or SIGTERM): export KUBECONFIG=${kubeconfigFile}`);
        return await signals.stopped;
    } finally {
        await lab.stop();
    }
}

export const simulate: Command = {
    name: "simulate",
    summary: "run the lab against a simulated cluster (no Kubernetes, no Argo CD needed)",
    usage: "simulate --root DIR [--lab shop|tenants|both] [--through N] [--tenants-through N] [--realistic] [--serve] [--reset] [--cluster sim|real]",
    details: [
        "--root DIR          where the labs' host paths go (DIR/srv/bare, DIR/root/cnpa-env, DIR/root/tenants-lab); required",
        "--lab LAB           shop (Part 1, the default), tenants (Part 2: the stalled RollingSync rollout) or both",
        "--through N         carry the lab out through step N (shop 0-8, default 8; tenants 1-3, default 3); a later run resumes",
        "--tenants-through N with --lab both: the tenants lab's step (1-3, default 3); --through is then the shop lab's",
        "--realistic         the simulated Argo CD at its v3.5.1 defaults (on the real clock) instead of the fast profile",
        "--serve             then keep the simulated cluster and the git daemon running for kubectl and git, until Ctrl-C",
        "--reset             take the lab down as `pulumi destroy` does (same code, same order), leaving nothing behind",
        "--cluster real      a real Kubernetes API (KWOK's fake nodes) and the real Argo CD v3.5.1 instead of the simulation; needs root, Go (first build ~25 min, cached), redis-server; the tenants lab's hook Pods run for real",
    ],
    options: { root: { type: "string" }, lab: { type: "string" }, through: { type: "string" }, "tenants-through": { type: "string" }, realistic: { type: "boolean" }, serve: { type: "boolean" }, reset: { type: "boolean" }, cluster: { type: "string" } },
    async run(values) {
        const rootArg = stringOption(values, "root");
        if (!rootArg) throw new UsageError("--root DIR is required (see gitops-lab simulate --help)");
        const root = checkRoot(rootArg);
        if (process.getuid?.() === 0) checkRootReachableByNobody(root, rootArg);
        const which = stringOption(values, "lab") ?? "shop";
        if (!["shop", "tenants", "both"].includes(which)) throw new UsageError(`--lab takes shop, tenants or both, got "${which}"`);
        const shop = which !== "tenants";
        const tenants = which !== "shop";
        if (values["tenants-through"] !== undefined && which !== "both") throw new UsageError("--tenants-through goes with --lab both (with --lab tenants, use --through)");
        const through = which === "tenants" ? 0 : intOption(values, "through", { min: 0, max: 8, default: 8 });
        const tenantsThrough = which === "tenants" ? intOption(values, "through", { min: 1, max: 3, default: 3 }) : which === "both" ? intOption(values, "tenants-through", { min: 1, max: 3, default: 3 }) : 0;
        if (values.reset && (values.serve || values.through !== undefined || values.lab !== undefined || values["tenants-through"] !== undefined)) throw new UsageError("--reset goes alone (with --root): it takes down every lab under the root");
        const say = (l: string) => console.log(l);
        let lab: SimulatedLab | undefined;
        let realLab: { stop(): Promise<void> } | undefined;
        const signals = onSignal(() => lab ?? realLab, say);
        try {
            if (values.reset) {
                say(`SIMULATED CLUSTER: resetting ${root} through the product's destroy path`);
                const left = await resetSimulatedLab(root, say);
                if (left.length) throw new Error(`the reset left ${left.join(", ")}`);
                say(`reset: nothing of the lab is left under ${root}; gitops-lab simulate --root ${root} builds it again`);
                return EXIT.OK;
            }
            const clusterKind = stringOption(values, "cluster") ?? "sim";
            if (clusterKind !== "sim" && clusterKind !== "real") throw new UsageError(`--cluster takes sim or real, got "${clusterKind}"`);
            if (clusterKind === "real") {
                real = true;
                return await runOnRealPlane(root, { shop: shop ? through : undefined, tenants: tenants ? tenantsThrough : undefined }, !!values.serve, say, signals, (l) => (realLab = l));
            }
            const done = shopLabProgress(labLayout(root));
            if (shop && through < done) {
                throw new Error(`the lab under ${root} is at step ${done} already and steps cannot be undone (--through ${through} asked); run without --through to go on, or start over with --reset`);
            }
            const tenantsDone = tenantsLabProgress(tenantsLayout(root));
            if (tenants && tenantsThrough < tenantsDone) {
                throw new Error(`the tenants lab under ${root} is at step ${tenantsDone} already and steps cannot be undone (through ${tenantsThrough} asked); run without it to go on, or start over with --reset`);
            }
            say("SIMULATED CLUSTER: no Kubernetes and no Argo CD run here. A loopback fake Kubernetes API with an");
            say("Argo CD v3.5.1 simulation (sim/) stands in for k3s and Argo CD; git, git daemon and kustomize are real.");
            say(`root: ${root}; ${[shop ? `shop lab through step ${through}` : "", tenants ? `tenants lab through step ${tenantsThrough}` : ""].filter(Boolean).join(", ")}; simulated Argo CD: ${values.realistic ? "v3.5.1-defaults" : "fast"} profile`);
            lab = await startSimulatedLab(root, { persist: true, timings: values.realistic ? REALISTIC : undefined, log: say });
            if (shop) {
                const run = await solveSimulatedLab(lab, through, { log: say });
                if (through >= 8) say(`report.json:\n${JSON.stringify(run.results.report, null, 2)}`);
                say(`results in ${lab.layout.workDir} (the cluster was simulated)`);
            }
            if (tenants) {
                const r = await solveSimulatedTenants(lab, tenantsThrough, { log: say });
                if (r.stall) say(`stall.json:\n${JSON.stringify(r.stall, null, 2)}`);
                if (r.recovery) say(`recovery.json:\n${JSON.stringify(r.recovery, null, 2)}`);
                say(`results in ${tenantsLayout(root).workDir} (the cluster was simulated)`);
            }
            if (!values.serve) return EXIT.OK;
            const kubeconfigFile = path.join(root, "kubeconfig");
            writeFileAtomic(kubeconfigFile, lab.kubeconfig);
            for (const l of serveInstructions({ root, url: (r) => lab!.daemon.url(r) }, kubeconfigFile, { shop: shop ? through : undefined, tenants: tenants ? tenantsThrough : undefined })) say(l);
            return await signals.stopped; // the handler stops the lab and exits
        } catch (e) {
            // the run broke because a signal stopped the lab under it: the handler's exit code, not this error
            if (signals.signalled()) return await new Promise<number>(() => {});
            throw e;
        } finally {
            signals.dispose();
            await lab?.stop();
        }
    },
};
