/**
 * gitops-lab simulate --root DIR [--lab shop|tenants|both] [--through N] [--tenants-through N] [--realistic] [--serve] [--reset]
 *
 * The whole lab on this machine with the cluster simulated: the real repository under
 * DIR/srv/bare/shop-envs.git and DIR/root/cnpa-env/, a real git daemon on 127.0.0.1, and a
 * loopback fake Kubernetes API with an Argo CD v3.5.1 simulation (sim/) in place of k3s and
 * Argo CD. Steps 1-N run through the same code `pulumi up` runs. The simulated cluster is saved
 * as etcd keeps a cluster (FakeKube.persistTo), so a run stopped at any instant resumes on the same DIR.
 */
import * as fs from "fs";
import * as path from "path";
import { writeFileAtomic } from "../lab/ports/files";
import { messageOf } from "../lab/ports/errors";
import { launcherRuns, npmLauncherOf } from "../lab/ports/proc";
import { liveHolder, lockFile, SERVING, STOPPING } from "../lab/ports/lock";
import { foreignKubeconfig, recordServed, servedKubeconfig, servedKubeconfigText } from "../sim/servedFiles";
import { refuseLowerStep } from "../lab/kit/steps";
import { shopLayout } from "../lab/shop/layout";
import { filesSolverRewrites, shopLabProgress } from "../lab/shop/solve";
import { tenantsLayout } from "../lab/tenants/layout";
import { tenantsLabProgress } from "../lab/tenants/solve";
import { loadSiteImages } from "../lab/tenants/siteImages";
import { REALISTIC } from "../sim/profiles";
import { ArgoCdVersion, ARGOCD_VERSIONS, DEFAULT_ARGOCD_VERSION, isArgoCdVersion } from "../lab/platform/argocd";
import { REAL_ARGOCD_DEFAULT } from "../realplane/versions";
import { hostRootProblem } from "../sim/hostRoot";
import {
    resetMarkerFile,
    resetSimulatedLab,
    SimulatedLab,
    solveSimulatedLab,
    solveSimulatedTenants,
    startSimulatedLab,
    clusterStateFile,
} from "../sim/simulatedLab";
import { checkNodeVisible } from "./node";
import { refuseUnbuildable, refuseWithoutKubectl } from "./labState";
import { GITOPS_LAB, gradingLines, serveInstructions } from "./serveInstructions";
import { shellWord } from "../lab/ports/shellWord";
import { firstStepNotDone, notDoneLine } from "./stepsGraded";
import {
    checkRoot,
    checkRootReachableByNobody,
    checkRootWritable,
    Command,
    EXIT,
    intOption,
    stringOption,
    UsageError,
    Values,
} from "./command";

/** Whether this run is on the real node (for the signal's line). */
let real = false;

/** Exit codes of a run stopped by a signal (128 + the signal's number), as shells report them. */
/** The signals that stop a run cleanly, and its exit code for each (SIGHUP: the terminal closed). */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129, SIGQUIT: 131 } as const;
/** The exit code when the npm or npx that started it is gone (as a hang-up). */
const LAUNCHER_GONE_EXIT = 129;

/**
 * Stops the lab cleanly on SIGINT, SIGTERM, SIGHUP or SIGQUIT (Ctrl-\\): one line, the daemon stopped (the
 * simulated cluster is already saved), exit 130, 143, 129 or 131. Returns a promise that settles when a signal came.
 */
function onSignal(
    lab: () => { stop(): Promise<void>; say?(what: string): void } | undefined,
    say: (l: string) => void,
    /** What the next run does about it, said after "stopping". */
    next: () => string,
): { stopped: Promise<number>; signalled(): boolean; dispose(): void } {
    let came = false;
    let resolve!: (code: number) => void;
    const stopped = new Promise<number>((r) => (resolve = r));
    const stop = (why: string, code: number) => {
        if (came) return;
        came = true;
        say(`simulate: ${why}: stopping${next()}`);
        // a run started on the root meanwhile is told this one is ending, not busy (its lock's second line)
        lab()?.say?.(STOPPING);
        Promise.resolve(lab()?.stop())
            .catch(() => undefined)
            .then(() => process.exit(code));
        resolve(code);
    };
    const handlers = (Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[]).map((sig) => {
        const h = () => stop(sig, SIGNAL_EXIT[sig]);
        process.on(sig, h);
        return [sig, h] as const;
    });
    // started through npm or npx (directly, or through the sh -c npm runs a bin with): a kill of that launcher (its
    // children are not signalled) must end the lab too, or its server runs on with the root's lock held
    const launcher = npmLauncherOf(process.pid);
    const watch = launcher
        ? setInterval(() => !launcherRuns(launcher) && stop("the npm or npx that started it is gone", LAUNCHER_GONE_EXIT), 1_000)
        : undefined;
    watch?.unref();
    return {
        stopped,
        signalled: () => came,
        dispose: () => {
            handlers.forEach(([sig, h]) => process.off(sig, h));
            if (watch) clearInterval(watch);
        },
    };
}

export { gradingLines, serveInstructions, shellWord };

/** The labs on the real node (realnode/): a fresh node per run, nothing of it kept between runs. */
async function runOnRealNode(
    root: string,
    labs: { shop?: number; tenants?: number },
    serve: boolean,
    say: (l: string) => void,
    signals: { stopped: Promise<number> },
    started: (lab: { stop(): Promise<void> }) => void,
    argocdVersion: ArgoCdVersion,
): Promise<number> {
    if (shopLabProgress(shopLayout(root)) > 0 || tenantsLabProgress(tenantsLayout(root)) > 0)
        throw new Error(`${root} already holds a lab; the real node starts empty each run: use a new --root`);
    say(
        `REAL NODE: a real Kubernetes cluster on this machine (kubelet, containerd, runc, CNI, kube-proxy, CoreDNS), Argo CD ${argocdVersion} installed on it from the pinned manifest, the git daemon a Pod; every Pod a container.`,
    );
    const { startNodeLab, nodeArgoCdInstallDir } = await import("../realnode/lab");
    nodeArgoCdInstallDir(argocdVersion); // a version the node has no images of is refused before the node starts
    // a signal while the node starts stops what has started (the node's own stop, from its ledger), not only a started lab
    const lab = await startNodeLab(root, { log: say, argocdVersion, onStop: (stop) => started({ stop }) });
    started(lab);
    try {
        const cluster = new (await import("../lab/ports/cluster")).KubeCluster(lab.kubeconfig);
        if (labs.shop !== undefined) {
            const run = await (await import("../lab/shop/solve")).solveShopLab({ layout: lab.layout, cluster, log: say }, labs.shop);
            if (labs.shop >= 8) say(`report.json:\n${JSON.stringify(run.results.report, null, 2)}`);
            say(`results in ${lab.layout.workDir} (real node)`);
        }
        if (labs.tenants !== undefined) {
            const r = await (
                await import("../lab/tenants/solve")
            ).solveTenantsLab(
                {
                    layout: tenantsLayout(root),
                    cluster,
                    images: (await import("../lab/platform/images")).registryImages(`http://${lab.node.registry}`),
                    log: say,
                },
                labs.tenants,
            );
            if (r.stall) say(`stall.json:\n${JSON.stringify(r.stall, null, 2)}`);
            if (r.recovery) say(`recovery.json:\n${JSON.stringify(r.recovery, null, 2)}`);
            say(`results in ${tenantsLayout(root).workDir} (real node)`);
        }
        if (!serve) {
            for (const l of gradingLines(root, labs)) say(l);
            return EXIT.OK;
        }
        say(`SERVING the real node until Ctrl-C (or SIGTERM): export KUBECONFIG=${lab.kubeconfigFile}`);
        return await signals.stopped;
    } finally {
        await lab.stop();
    }
}

/** The command that resumes this run: its root and the options that choose the lab, its steps and how it runs. */
export function sameCommand(root: string, values: Values): string {
    const kept = ["lab", "through", "tenants-through", "argocd-version", "cluster"].flatMap((o) =>
        typeof values[o] === "string" ? [`--${o} ${shellWord(String(values[o]))}`] : [],
    );
    const flags = ["realistic", "serve"].filter((o) => values[o] === true).map((o) => `--${o}`);
    return [`${GITOPS_LAB} simulate --root ${shellWord(root)}`, ...kept, ...flags].join(" ");
}

/**
 * How the solver waits: on the fast profile, the simulation's short deadlines; with --realistic (Argo CD's
 * defaults on the real clock: a hook's retries take minutes) the product's own, as on a host.
 */
export const solveOptions = (values: Values, log: (line: string) => void) => ({ log, productDefaults: values.realistic === true });

export const simulate: Command = {
    name: "simulate",
    summary: "run the lab against a simulated cluster (no Kubernetes, no Argo CD needed)",
    usage: "simulate --root DIR [--lab shop|tenants|both] [--through N] [--tenants-through N] [--realistic] [--argocd-version V] [--serve] [--reset] [--cluster sim|real]",
    details: [
        "--root DIR          where the labs' host paths go (DIR/srv/bare, DIR/root/cnpa-env, DIR/root/tenants-lab); required",
        "--lab LAB           shop (Part 1, the default), tenants (Part 2: the stalled RollingSync rollout) or both",
        "--through N         carry the lab out through step N (shop 0-8, default 8; tenants 1-3, default 3); a later run resumes",
        "--tenants-through N with --lab both: the tenants lab's step (1-3, default 3); --through is then the shop lab's",
        "--realistic         the simulated Argo CD at its defaults (on the real clock) instead of the fast profile",
        `--argocd-version V  the Argo CD the simulation behaves as: ${ARGOCD_VERSIONS.join(", ")} (default ${DEFAULT_ARGOCD_VERSION}); 3.6 adds its reconcile gate and rollout conditions`,
        "--serve             then keep the simulated cluster and the git daemon running for kubectl and git, until Ctrl-C",
        "--reset             take the lab down as `pulumi destroy` does (same code, same order), leaving nothing behind",
        "--cluster real      the real node (gitops-lab node) with Argo CD v3.5.1 (or --argocd-version v3.6.2) installed on it instead of the simulation: every Pod a container; needs root, Go (first build ~40 min, cached) and the node's Debian packages",
    ],
    options: {
        root: { type: "string" },
        lab: { type: "string" },
        through: { type: "string" },
        "tenants-through": { type: "string" },
        realistic: { type: "boolean" },
        "argocd-version": { type: "string" },
        serve: { type: "boolean" },
        reset: { type: "boolean" },
        cluster: { type: "string" },
    },
    // a lab's name given as an option: --lab names it
    misread: {
        "--tenants": "the lab is chosen with --lab tenants",
        "--shop": "the lab is chosen with --lab shop (the default)",
        "--step": "simulate solves the steps through N with --through N (verify --step N grades one)",
        "--version": "the Argo CD release is chosen with --argocd-version (gitops-lab --version prints the kit's)",
        "--destroy": "a simulated lab is taken down with --reset",
        // a served lab in the background: its lock names the PID that serves it
        "--stop":
            "a served lab stops with Ctrl-C in its terminal, or kill PID (gitops-lab simulate --root DIR, run while it serves, names its PID); its lab stays, and --reset takes it down",
        "--config-file":
            "simulate reads no stack file: its counterparts are options (root: --root, solveThrough: --through N, tenantsLab and tenantsSolveThrough: --lab both --tenants-through N, argocdVersion: --argocd-version); preflight --config-file F checks a stack file",
    },
    async run(values) {
        const rootArg = stringOption(values, "root", { required: true });
        if (!rootArg) throw new UsageError("--root DIR is required (see gitops-lab simulate --help)");
        // a line break or another control character splits the printed commands and comments into lines that are neither
        if ([...rootArg].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f) && !values.reset)
            throw new UsageError(
                `--root ${JSON.stringify(rootArg)} holds a line break or another control character, which splits the commands the lab prints: choose a folder without one`,
            );
        // a URL for the folder (file:///tmp/lab, copied from a browser): the path is what follows file://
        if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rootArg))
            throw new UsageError(
                `--root ${rootArg} is a URL; --root takes a folder's path${/^file:\/\//i.test(rootArg) ? `: --root ${rootArg.replace(/^file:\/\//i, "") || "/"}` : ""}`,
            );
        const root = checkRoot(rootArg);
        checkRootWritable(root, rootArg);
        if (process.getuid?.() === 0) checkRootReachableByNobody(root, rootArg);
        const which = stringOption(values, "lab") ?? "shop";
        if (!["shop", "tenants", "both"].includes(which)) throw new UsageError(`--lab takes shop, tenants or both, got "${which}"`);
        const shop = which !== "tenants";
        const tenants = which !== "shop";
        if (values["tenants-through"] !== undefined && which !== "both")
            throw new UsageError("--tenants-through goes with --lab both (with --lab tenants, use --through)");
        const askedThrough = which === "tenants" ? 0 : intOption(values, "through", { min: 0, max: 8, default: 8 });
        const askedTenantsThrough =
            which === "tenants"
                ? intOption(values, "through", { min: 1, max: 3, default: 3 })
                : which === "both"
                  ? intOption(values, "tenants-through", { min: 1, max: 3, default: 3 })
                  : 0;
        if (
            values.reset &&
            (values.serve ||
                values.realistic ||
                values.through !== undefined ||
                values.lab !== undefined ||
                values["tenants-through"] !== undefined ||
                values["argocd-version"] !== undefined ||
                values.cluster !== undefined)
        )
            throw new UsageError("--reset goes alone (with --root): it takes down every lab under the root");
        const argocdVersion = stringOption(values, "argocd-version") ?? DEFAULT_ARGOCD_VERSION;
        if (!isArgoCdVersion(argocdVersion))
            throw new UsageError(`--argocd-version takes ${ARGOCD_VERSIONS.join(", ")}, got "${argocdVersion}"`);
        // KUBECONFIG is a list split at ':': the served kubeconfig under such a root could not be exported as printed
        if (root.includes(":") && !values.reset)
            throw new UsageError(
                `--root ${root} holds a ':', which KUBECONFIG reads as a list separator, so the served lab's kubeconfig under it could not be used as printed: choose a folder without ':'`,
            );
        const rootProblem = hostRootProblem(root, { reset: !!values.reset }) ?? (values.serve ? foreignKubeconfig(root) : undefined);
        if (rootProblem) throw new UsageError(rootProblem);
        const say = (l: string) => console.log(l);
        // a relative root is taken from the current folder: said, so it is never a surprise folder inside the project
        if (!path.isAbsolute(rootArg)) say(`simulate: --root ${rootArg} is relative: the lab goes under ${root}`);
        let lab: SimulatedLab | undefined;
        let failedBecause: (e: unknown) => string | undefined = () => undefined;
        let realLab: { stop(): Promise<void> } | undefined;
        const signals = onSignal(
            () => lab ?? realLab,
            say,
            () =>
                values.reset
                    ? `; the reset is not finished: gitops-lab simulate --root ${shellWord(root)} --reset again takes down what is left`
                    : real
                      ? " the real node"
                      : !fs.existsSync(root)
                        ? `; the lab's folder ${root} is gone (deleted while it ran), and nothing of it is saved: ${sameCommand(root, values)} builds it again`
                        : !fs.existsSync(clusterStateFile(root))
                          ? `; nothing of the lab was built yet: ${sameCommand(root, values)} starts it`
                          : `; the simulated cluster is saved: ${sameCommand(root, values)} resumes it`,
        );
        try {
            if (values.reset) {
                const { left, kept, below, absent } = await resetSimulatedLab(root, say);
                if (left.length) throw new Error(`the reset left ${left.join(", ")} (the lines above say why each was kept)`);
                if (below) return EXIT.USAGE; // labs under (or beside) the folder given: the line above names them, nothing was reset
                if (absent) return EXIT.OK; // nothing there: the line above says so
                say(
                    kept.length
                        ? `reset: the lab is taken down under ${root}, but for what is yours (kept: ${kept.join(", ")}); gitops-lab simulate --root ${root} builds it again`
                        : `reset: nothing of the lab is left under ${root}; gitops-lab simulate --root ${root} builds it again`,
                );
                return EXIT.OK;
            }
            const clusterKind = stringOption(values, "cluster") ?? "sim";
            if (clusterKind !== "sim" && clusterKind !== "real") throw new UsageError(`--cluster takes sim or real, got "${clusterKind}"`);
            if (clusterKind === "sim" && fs.existsSync(resetMarkerFile(root))) {
                // asked for and not finished: finished now, so nothing is built on a lab half taken down
                say(`simulate: a reset of ${root} was interrupted: finishing it first`);
                const { left } = await resetSimulatedLab(root, say);
                if (left.length) throw new Error(`the reset left ${left.join(", ")} (the lines above say why each was kept)`);
            }
            if (clusterKind === "real") {
                checkNodeVisible(root, rootArg);
                real = true;
                return await runOnRealNode(
                    root,
                    { shop: shop ? askedThrough : undefined, tenants: tenants ? askedTenantsThrough : undefined },
                    !!values.serve,
                    say,
                    signals,
                    (l) => (realLab = l),
                    values["argocd-version"] === undefined ? REAL_ARGOCD_DEFAULT : argocdVersion,
                );
            }
            await refuseWithoutKubectl();
            // a served lab started again where its learner has taken it (to --through or past it) is served as it stands:
            // nothing of it is solved or waited for again (steps cannot be undone, and the learner's work is the learner's)
            const shopDone = shop ? shopLabProgress(shopLayout(root)) : 0;
            const tenantsDone = tenants ? tenantsLabProgress(tenantsLayout(root)) : 0;
            // --serve without a --through on a lab begun: served where it stands (the solver goes on only when asked: --through 8)
            // (each lab by its own option: with --lab both, --through is the shop lab's and --tenants-through the tenants lab's)
            const keepShop = !!values.serve && values.through === undefined;
            const keepTenants = !!values.serve && (which === "tenants" ? values.through : values["tenants-through"]) === undefined;
            const through = keepShop && shopDone > 0 ? shopDone : askedThrough;
            const tenantsThrough = keepTenants && tenantsDone > 0 ? tenantsDone : askedTenantsThrough;
            // --lab left out where the tenants lab was begun (a tenants run resumed without its --lab): nothing is built
            // for a shop lab not begun (--lab shop asks for it); one begun goes on, said
            const tenantsHere = values.lab === undefined && fs.existsSync(tenantsLayout(root).bareRepo);
            if (tenantsHere && shopDone === 0 && !fs.existsSync(shopLayout(root).bareRepo))
                throw new UsageError(
                    `the tenants lab is under ${root} (at step ${tenantsLabProgress(tenantsLayout(root))}), and --lab was left out, which means the shop lab: to go on with the tenants lab, ${sameCommand(root, { ...values, lab: "tenants", through: undefined })}; to build the shop lab beside it, ${sameCommand(root, { ...values, lab: "shop" })} (or --lab both)`,
                );
            if (tenantsHere)
                say(
                    `simulate: the tenants lab is here too (at step ${tenantsLabProgress(tenantsLayout(root))}); this run is the shop lab's (--lab left out): ${sameCommand(root, { ...values, lab: "tenants", through: undefined })} goes on with it`,
                );
            await refuseUnbuildable(root, {
                shop: shop ? { through, done: shopDone } : undefined,
                tenants: tenants ? { done: tenantsDone } : undefined,
            });
            const tenantsFlag = which === "both" ? "--tenants-through" : "--through";
            // at the step asked for already (or past it, served): nothing to solve, so nothing of the lab is touched (a lab done by
            // hand holds the learner's own repository, which the solver's step 1 would refuse as not the lab's)
            const shopAsItStands = shop && shopDone > 0 && (values.serve ? through <= shopDone : through === shopDone);
            const tenantsAsItStands =
                tenants && tenantsDone > 0 && (values.serve ? tenantsThrough <= tenantsDone : tenantsThrough === tenantsDone);
            const stands = values.serve ? "served as it stands" : "nothing to solve";
            const where = (done: number, asked: number, flag: string) =>
                (flag === "--through" && which !== "tenants" ? keepShop : keepTenants)
                    ? `at step ${done} (no ${flag} given: ${flag} ${flag === "--through" && which !== "tenants" ? 8 : 3} has the solver do the rest)`
                    : `at step ${done}, ${asked < done ? `past ${flag} ${asked}` : `the step ${flag} ${asked} asks for`}`;
            // the root served now by another run: every way on meets its lock, so that is what is said
            const server = liveHolder(lockFile(root));
            const servedNow =
                server?.what === SERVING
                    ? `It is served now (PID ${server.pid}; its kubeconfig: ${servedKubeconfig(root)}): go on by hand there, or stop it (Ctrl-C in its terminal, or kill ${server.pid}) before running anything else on it`
                    : undefined;
            if (shop && !values.serve) {
                refuseLowerStep({
                    lab: `the lab under ${root}`,
                    done: shopDone,
                    through,
                    asked: "--through",
                    fix: (done) =>
                        servedNow ??
                        `Run with --through ${done} to leave it as it stands${which === "both" ? " (and build the tenants lab beside it)" : ""}, without --through to have the solver go on, add --serve to serve it as it stands, or start over with --reset`,
                });
            }
            if (tenants && !values.serve) {
                refuseLowerStep({
                    lab: `the tenants lab under ${root}`,
                    done: tenantsDone,
                    through: tenantsThrough,
                    asked: tenantsFlag,
                    fix: (done) =>
                        servedNow ??
                        `Run with ${tenantsFlag} ${done} to leave it as it stands${which === "both" ? " (and build the shop lab beside it)" : ""}, without ${tenantsFlag} to have the solver go on, add --serve to serve it as it stands, or start over with --reset`,
                });
            }
            say("SIMULATED CLUSTER: no Kubernetes and no Argo CD run here. A loopback fake Kubernetes API with an");
            say(`Argo CD ${argocdVersion} simulation (sim/) stands in for k3s and Argo CD; git, git daemon and kustomize are real.`);
            say(
                `root: ${root}; ${[shop ? `shop lab through step ${through}` : "", tenants ? `tenants lab through step ${tenantsThrough}` : ""].filter(Boolean).join(", ")}; simulated Argo CD ${argocdVersion}: ${values.realistic ? "defaults" : "fast"} profile`,
            );
            lab = await startSimulatedLab(root, {
                persist: true,
                timings: values.realistic ? REALISTIC : undefined,
                argocdVersion,
                log: say,
            });
            // the git daemon killed under a run (by hand, the OOM killer): the failure that follows is Argo CD's, its cause said first
            let daemonGone: string | undefined;
            const daemonPort = lab.daemon.port;
            lab.daemon.onExit((how) => (daemonGone ??= how));
            failedBecause = (e) =>
                daemonGone &&
                `the lab's git daemon (port ${daemonPort}) ended (${daemonGone}) during the run, so Argo CD and git could not read the repositories: run the same command again, which resumes (what failed then: ${messageOf(e).trim().split("\n")[0]})`;
            // a learner's step written but wrong: said when served as it stands, and never built on by the solver
            const shopNotDone = shop ? await firstStepNotDone(root, "shop", shopDone) : undefined;
            const tenantsNotDone = tenants ? await firstStepNotDone(root, "tenants", tenantsDone) : undefined;
            if (shopNotDone && !shopAsItStands && through > shopDone)
                throw new Error(
                    `${notDoneLine(shellWord(root), "shop", shopDone, shopNotDone)}; the solver does not build on it: mend it, or start over (gitops-lab simulate --reset --root ${shellWord(root)})`,
                );
            if (tenantsNotDone && !tenantsAsItStands && tenantsThrough > tenantsDone)
                throw new Error(
                    `${notDoneLine(shellWord(root), "tenants", tenantsDone, tenantsNotDone)}; the solver does not build on it: mend it, or start over (gitops-lab simulate --reset --root ${shellWord(root)})`,
                );
            if (shopAsItStands) say(`the shop lab is ${where(shopDone, through, "--through")}: ${stands}, nothing of it solved`);
            if (shopAsItStands && shopNotDone) say(notDoneLine(shellWord(root), "shop", shopDone, shopNotDone));
            if (tenantsAsItStands) {
                say(`the tenants lab is ${where(tenantsDone, tenantsThrough, tenantsFlag)}: ${stands}, nothing of it solved`);
                if (tenantsNotDone) say(notDoneLine(shellWord(root), "tenants", tenantsDone, tenantsNotDone));
                // the simulated node's images are not saved with the simulated cluster (a real node keeps its own): loaded again
                await loadSiteImages(lab.kube.images, say);
            }
            // --lab both served with one lab begun and the other not: the new one is solved as a new lab is, said before it is
            if (values.serve && which === "both" && tenantsDone === 0 && shopDone > 0 && values["tenants-through"] === undefined)
                say(
                    `simulate: the tenants lab is not begun: the solver builds it through step ${tenantsThrough} (--tenants-through's default) before serving; --tenants-through 1 builds its step 1 alone and leaves steps 2-3 to you`,
                );
            if (values.serve && which === "both" && shopDone === 0 && tenantsDone > 0 && values.through === undefined)
                say(
                    `simulate: the shop lab is not begun: the solver builds it through step ${through} (--through's default) before serving; --through 0 leaves every step to you`,
                );
            if (shop && !shopAsItStands) {
                for (const f of filesSolverRewrites(shopLayout(root), shopDone, through))
                    say(
                        `simulate: --through ${through} asks the solver for step 4, which rewrites ${f} from the live ApplicationSet (your changes to it are replaced)`,
                    );
                const run = await solveSimulatedLab(lab, through, solveOptions(values, say));
                if (through >= 8) say(`report.json:\n${JSON.stringify(run.results.report, null, 2)}`);
                say(`results in ${lab.layout.workDir} (the cluster was simulated)`);
            }
            if (tenants && !tenantsAsItStands) {
                const r = await solveSimulatedTenants(lab, tenantsThrough, solveOptions(values, say));
                if (r.stall) say(`stall.json:\n${JSON.stringify(r.stall, null, 2)}`);
                if (r.recovery) say(`recovery.json:\n${JSON.stringify(r.recovery, null, 2)}`);
                say(`results in ${tenantsLayout(root).workDir} (the cluster was simulated)`);
            }
            if (!values.serve) {
                for (const l of gradingLines(root, { shop: shop ? through : undefined, tenants: tenants ? tenantsThrough : undefined }))
                    say(l);
                return EXIT.OK;
            }
            // a signal that came as the solving ended: the run stops (its lock says so), it does not go on to serve
            if (signals.signalled()) return await signals.stopped;
            const kubeconfigFile = servedKubeconfig(root);
            recordServed(root); // what was not there before, so that a reset removes only that
            const kubeconfig = servedKubeconfigText(root, lab.kubeconfig);
            writeFileAtomic(kubeconfigFile, kubeconfig.text, 0o600); // the served cluster's, for its starter alone
            lab.say(SERVING); // a verify meanwhile grades the lab as served, not a run half-way
            // the git daemon killed under it (by hand, or the OOM killer): clone and Argo CD fail from then on, said once.
            // A stop signal sent to the whole process group (a terminal's Ctrl-C, systemd, a container's stop) reaches the
            // daemon too, maybe first: its end is then this run's stop, not a fault, and said only if this run goes on
            const port = lab.daemon.port;
            const said = (how: string) =>
                signals.signalled() ||
                say(
                    `simulate: the lab's git daemon (port ${port}) has ended (${how}): git clone and Argo CD cannot read the repositories now; stop this run (Ctrl-C) and run the same command again, which starts it anew`,
                );
            lab.daemon.onExit((how) => (/SIG(INT|TERM|HUP|QUIT)$/.test(how) ? setTimeout(() => said(how), 1_000).unref() : said(how)));
            // ended already, after the solver's last use of it: said now, as it would be while serving
            if (daemonGone) said(daemonGone);
            if (kubeconfig.namespace || kubeconfig.others)
                say(
                    `simulate: ${kubeconfigFile} is written again for this run; ${[kubeconfig.namespace ? `its context keeps your namespace ${kubeconfig.namespace}` : "", kubeconfig.others ? `the entries you added stay (${kubeconfig.others.join(", ")}), and its current context is the lab's` : ""].filter(Boolean).join("; ")}`,
                );
            for (const l of serveInstructions(
                { root, url: (r) => lab!.daemon.url(r) },
                kubeconfigFile,
                {
                    shop: shop ? Math.max(through, shopDone) : undefined,
                    tenants: tenants ? Math.max(tenantsThrough, tenantsDone) : undefined,
                },
                { shop: shopAsItStands ? shopNotDone?.step : undefined, tenants: tenantsAsItStands ? tenantsNotDone?.step : undefined },
            ))
                say(l);
            return await signals.stopped; // the handler stops the lab and exits
        } catch (e) {
            // the run broke because a signal stopped the lab under it: the handler's exit code, not this error
            if (signals.signalled()) return await new Promise<number>(() => {});
            const because = failedBecause(e);
            throw because ? new Error(because) : e;
        } finally {
            signals.dispose();
            await lab?.stop();
        }
    },
};
