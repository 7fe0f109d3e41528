/**
 * A whole simulated lab host under one directory: the real bare repository and clone (built by
 * the product's own step 1), a real git daemon on 127.0.0.1, the fake Kubernetes API with the
 * Argo CD simulation, and a kubeconfig for the product's client. Used by the tests,
 * `npm run simulate` and `npm run bench`.
 */
import * as fs from "fs";
import * as path from "path";
import { resetLabObjects } from "../lab/argo/reset";
import { GITD_ENV, GITD_URL_PREFIX, inClusterGitUrl } from "../lab/platform/gitDaemon";
import { labRepoBegun } from "../lab/platform/labRepo";
import { KubeCluster } from "../lab/ports/cluster";
import { run } from "../lab/ports/exec";
import { SHOP_NAMESPACES } from "../lab/shop/appset";
import { shopLayout, ShopLayout, REPO_URL } from "../lab/shop/layout";
import { ShopScenarioTimeouts } from "../lab/shop/scenario";
import { shopLabProgress, ShopLabRun, solveShopLab } from "../lab/shop/solve";
import { teardownShopLab } from "../lab/shop/teardown";
import { TENANTS, tenantsLayout } from "../lab/tenants/layout";
import { TenantsResults } from "../lab/tenants/results";
import { TenantsTimeouts } from "../lab/tenants/scenario";
import { solveTenantsLab, tenantsLabProgress } from "../lab/tenants/solve";
import { loadSiteImages } from "../lab/tenants/siteImages";
import { teardownTenantsLab } from "../lab/tenants/teardown";
import { argoCdCmdParams, ArgoCdVersion, DEFAULT_ARGOCD_VERSION } from "../lab/platform/argocd";
import { acceptedCrds, ARGOCD_CRD_NAMES, installCrds } from "./argoCrds";
import { ArgoSim, CMD_PARAMS_CM } from "./argocd";
import { SimClock, VirtualClock } from "./clock";
import { ArgoTimings } from "./profiles";
import { FakeKube } from "./fakeApi";
import { reapGitDaemon, RunningDaemon, startGitDaemon } from "./gitDaemon";
import { acquireRootLock } from "../lab/ports/lock";
import {
    foldersToMake,
    keptNotMade,
    madeDirs,
    madeRecordFile,
    madeRecordReadable,
    prepareHostRoot,
    recordRootMade,
    removeRootMade,
} from "../lab/kit/layout";
import { codeOf, messageOf } from "../lab/ports/errors";
import { clusterStateFile, removeServedFiles, servedClusterName, servedFiles } from "./servedFiles";
import { labBeside } from "./hostRoot";

export interface SimulatedLab {
    layout: ShopLayout;
    kube: FakeKube;
    argo: ArgoSim;
    daemon: RunningDaemon;
    kubeconfig: string;
    /** The simulated API's address; without `persist`, its node's registry answers at its /v2/ (sim/nodeImages.ts). */
    url: string;
    /** Stops everything (the simulated cluster is already saved, with `persist`); a second call does nothing. */
    stop(): Promise<void>;
    /** With `persist`: says in the root's lock what the run does now ("serving": verify then grades what it serves). */
    say(what: string): void;
}

/** Scenario timeouts against the simulation: the same waits, shorter deadlines and polls. */
export const SIM_TIMEOUTS: ShopScenarioTimeouts = {
    syncMs: 30_000,
    driftMs: 20_000,
    errorMs: 30_000,
    pollMs: 50,
    driftPollMs: 250,
    refreshEveryMs: 3_000,
};

/** Where `gitops-lab simulate` keeps the simulated cluster (FakeKube.persistTo says when it is saved). */
export { clusterStateFile };
/** The git daemon's PID, for the next run to reap if this one is killed. */
const daemonPidFile = (root: string) => path.join(root, ".gitops-lab-git-daemon.pid");
/** Where the simulated kubelet lays out Pods' volumes (under the root, which nobody may traverse). */
const podDir = (root: string) => path.join(root, ".gitops-lab-pods");
/** The in-cluster git daemon's URL prefix (lab/platform/gitDaemon.ts's Service). */
const IN_CLUSTER_GIT = REPO_URL.slice(0, REPO_URL.lastIndexOf("/") + 1);
/** The simulated repo-server's working directory (emptied on start, removed on stop). */
const repoCacheDir = (root: string) => path.join(root, ".gitops-lab-repo-cache");

export interface StartOptions {
    timings?: Partial<ArgoTimings>;
    /** The Argo CD version the simulation behaves as (default DEFAULT_ARGOCD_VERSION). */
    argocdVersion?: ArgoCdVersion;
    /** The simulation's clock (default: the real one). */
    clock?: SimClock;
    /**
     * The product's way (`gitops-lab simulate`): one run per root (a lock), the simulated cluster
     * read from DIR/simulated-cluster.json and saved there as etcd would keep it (FakeKube.persistTo),
     * a git daemon left by a killed run reaped, the repo-server's files kept under DIR.
     */
    persist?: boolean;
    /** Start from this simulated cluster (a FakeKube dump) instead of an empty one. */
    cluster?: string;
    /** A line for what the start did on its own (a lock taken over, a daemon reaped). */
    log?: (line: string) => void;
    /** With `persist`: a missing saved cluster is fine even when the files say the lab went further (the reset). */
    missingClusterIsFine?: boolean;
    /** Runs the saved cluster as the Argo CD version it was simulated as, whatever `argocdVersion` says (the reset). */
    asSaved?: boolean;
}

/** Reads the saved simulated cluster before anything starts; one clear error when it cannot be used. */
function readSavedCluster(root: string, missingIsFine = false): string | undefined {
    const file = clusterStateFile(root);
    let text: string;
    try {
        text = fs.readFileSync(file, "utf8");
    } catch (e) {
        if (codeOf(e) === "ENOENT") {
            const through = shopLabProgress(shopLayout(root));
            if ((through >= 2 || tenantsLabProgress(tenantsLayout(root)) >= 1) && !missingIsFine) {
                throw new Error(
                    `${root} holds the lab through step ${through}, but its simulated cluster (${file}) is gone and cannot be rebuilt; start over with gitops-lab simulate --root ${root} --reset`,
                );
            }
            return undefined;
        }
        // a folder where the file goes: not the lab's, and nothing of the lab (a reset neither) may remove it
        if (codeOf(e) === "EISDIR")
            throw new Error(
                `${file} is a folder, where the lab keeps its saved cluster (a file): it is not the lab's; move it away (mv ${file} ${file}.mine), then run again`,
            );
        throw new Error(
            `${file} cannot be read (${codeOf(e) ?? messageOf(e)}); start over with gitops-lab simulate --root ${root} --reset`,
        );
    }
    try {
        new FakeKube().load(text);
    } catch (e) {
        throw new Error(
            `${file} is not a simulated cluster this tool saved (${messageOf(e)}); move it away, or start over with gitops-lab simulate --root ${root} --reset`,
        );
    }
    return text;
}

export async function startSimulatedLab(root: string, opts: StartOptions = {}): Promise<SimulatedLab> {
    const layout = shopLayout(root);
    const log = opts.log ?? (() => {});
    // nothing starts before the saved state is known to be usable, and no second run shares the root
    const made = opts.persist ? foldersToMake(layout.root) : [];
    const lock = opts.persist ? acquireRootLock(layout.root) : undefined;
    recordRootMade(layout.root, made);
    const started: { daemon?: RunningDaemon; kube?: FakeKube; argo?: ArgoSim } = {};
    try {
        if (lock?.note) log(`simulate: ${lock.note}`);
        const saved = opts.cluster ?? (opts.persist ? readSavedCluster(layout.root, opts.missingClusterIsFine) : undefined);
        prepareHostRoot(layout, [layout.workDir, tenantsLayout(layout.root).workDir]);
        if (opts.persist) {
            const reaped = reapGitDaemon(daemonPidFile(layout.root), layout.bareDir);
            if (reaped) log(`simulate: ${reaped}`);
        }
        // as the Pod does: nobody, reading repositories owned by root (when we are root; else as ourselves)
        const daemon = await startGitDaemon(layout.bareDir, {
            asNobody: process.getuid?.() === 0,
            env: GITD_ENV,
            pidFile: opts.persist ? daemonPidFile(layout.root) : undefined,
        });
        started.daemon = daemon;
        const kube = new FakeKube();
        started.kube = kube;
        if (opts.clock instanceof VirtualClock) opts.clock.addExternal(() => kube.inFlight);
        if (saved) kube.load(saved);
        // a cluster's own namespaces (as kube-apiserver makes them), Argo CD's and the git daemon's
        for (const ns of ["default", "kube-system", "kube-public", "kube-node-lease", "argocd", "gitsrv"]) {
            if (!kube.get("Namespace", undefined, ns))
                kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }, "installer");
        }
        kube.namespaceLifecycle = true;
        // the install's patch (lab/platform/argocd.ts): progressive syncs on, read when the ApplicationSet controller starts
        if (!kube.get("ConfigMap", "argocd", CMD_PARAMS_CM)) kube.put(argoCdCmdParams(), "installer");
        // the version the cluster was simulated as, kept with it: resuming as another would mix two releases' states
        const params = kube.get("ConfigMap", "argocd", CMD_PARAMS_CM);
        const was = params!.metadata.annotations?.[SIMULATED_VERSION];
        const version: ArgoCdVersion = (opts.asSaved && (was as ArgoCdVersion)) || opts.argocdVersion || DEFAULT_ARGOCD_VERSION;
        if (was && was !== version)
            throw new Error(
                `${layout.root} was simulated as Argo CD ${was}, and every lab under a root runs on its one cluster: give --argocd-version ${was} (to resume it, or to build another lab beside it), or another --root for a lab as ${version} (--reset takes down every lab under ${layout.root})`,
            );
        if (!was)
            kube.put(
                {
                    ...params,
                    metadata: { ...params!.metadata, annotations: { ...params!.metadata.annotations, [SIMULATED_VERSION]: version } },
                },
                "installer",
            );
        // Argo CD's CRDs, as the version's install leaves them (built when first read: kubectl get crd), and what the API
        // server checks its custom resources against
        kube.provide("CustomResourceDefinition", ARGOCD_CRD_NAMES, acceptedCrds(version));
        kube.crds = () => installCrds(version);
        if (opts.persist) kube.persistTo(clusterStateFile(layout.root));
        // the product's way serves the cluster to its starter alone: TLS and a token of this run (FakeKube.start)
        const url = await kube.start({ secure: opts.persist });
        const argo = new ArgoSim(kube, {
            ...(opts.timings ?? {}),
            argocdVersion: version,
            clock: opts.clock,
            // every repository the in-cluster git daemon serves (shop-envs.git, platform.git), from the loopback one
            // (by any name of its Service, with or without its default port)
            urlFor: (u) => {
                const url = inClusterGitUrl(u);
                return url.startsWith(IN_CLUSTER_GIT) ? daemon.url(url.slice(IN_CLUSTER_GIT.length)) : u;
            },
            podDir: podDir(layout.root),
            cacheDir: opts.persist ? repoCacheDir(layout.root) : undefined,
        });
        started.argo = argo;
        argo.start();
        let stopping: Promise<void> | undefined;
        return {
            layout,
            kube,
            argo,
            daemon,
            kubeconfig: kube.kubeconfig(url, servedClusterName(layout.root)),
            url,
            say: (what) => lock?.say(what),
            // every caller waits for the same stop (a signal's and the run's own)
            stop: () =>
                (stopping ??= (async () => {
                    try {
                        await argo.stop();
                    } finally {
                        await kube.stop();
                        await daemon.stop();
                        lock?.release();
                    }
                })()),
        };
    } catch (e) {
        await started.argo?.stop().catch(() => undefined);
        await started.kube?.stop();
        await started.daemon?.stop();
        lock?.release();
        throw e;
    }
}

/** Steps 1..through on a simulated host, through the product's own code and order (lab/shop/solve.ts). */
export async function solveSimulatedLab(
    lab: SimulatedLab,
    through: number,
    opts: { log?: (line: string) => void; timeouts?: Partial<ShopScenarioTimeouts>; productDefaults?: boolean; refresh?: boolean } = {},
): Promise<ShopLabRun> {
    // on the simulation's clock; productDefaults: the scenario's own deadlines and polls, as on a host
    return solveShopLab(
        {
            layout: lab.layout,
            cluster: new KubeCluster(lab.kubeconfig),
            log: opts.log,
            timeouts: { ...(opts.productDefaults ? {} : SIM_TIMEOUTS), ...(opts.timeouts ?? {}) },
            clock: lab.argo.clock,
            refresh: opts.refresh,
        },
        through,
    );
}

/** The tenants lab's scenario against the simulation: the same waits, shorter deadlines and polls. */
export const SIM_TENANTS_TIMEOUTS: TenantsTimeouts = {
    rolloutMs: 60_000,
    stallMs: 60_000,
    recoveryMs: 90_000,
    pollMs: 50,
    refreshEveryMs: 3_000,
};

/** Steps 1..through of the tenants lab on a simulated host, through the product's own code (lab/tenants/solve.ts). */
export async function solveSimulatedTenants(
    lab: SimulatedLab,
    through: number,
    opts: { log?: (line: string) => void; timeouts?: Partial<TenantsTimeouts>; productDefaults?: boolean } = {},
): Promise<TenantsResults> {
    return solveTenantsLab(
        {
            layout: tenantsLayout(lab.layout.root),
            cluster: new KubeCluster(lab.kubeconfig),
            images: lab.kube.images,
            log: opts.log,
            timeouts: { ...(opts.productDefaults ? {} : SIM_TENANTS_TIMEOUTS), ...(opts.timeouts ?? {}) },
            clock: lab.argo.clock,
            leaveApplied: true,
        },
        through,
    );
}

/** A whole simulated host at one moment: its files (repository, clone, results) and its simulated cluster. */
export interface LabSnapshot {
    /** A copy of the lab's root directory. */
    dir: string;
    /** The simulated cluster (a FakeKube dump). */
    cluster: string;
}

/**
 * A copy of the folder `from` at `to` (created, or filled if it exists), but for the top-level entries
 * named in `skip`: modes, links and times kept. By `cp -a`, not Node's fs.cpSync, which does in
 * JavaScript what cp does in C: a lab's root of about 150 files took it about 125 ms of CPU, cp 25, and
 * the tests restore dozens of labs a run.
 */
async function copyTree(from: string, to: string, skip: string[] = []): Promise<void> {
    if (skip.length === 0) {
        await run("cp", ["-a", "--", `${from}/.`, to]);
        return;
    }
    fs.mkdirSync(to, { recursive: true });
    const entries = fs.readdirSync(from).filter((e) => !skip.includes(e));
    if (entries.length > 0) await run("cp", ["-a", "--", ...entries.map((e) => path.join(from, e)), to]);
}

/**
 * Copies a running lab's root into `dir` and dumps its cluster (call it when the lab is idle). The
 * controllers go on while cp runs (a stalled tenant's hook Pods keep retrying), so the cluster is
 * dumped first, at once, and what they create and remove as they go is left out: the hook Pods' work
 * folders and the repo-server's cache (a restored lab starts its repo-server cold, and runs its Pods anew).
 */
export async function snapshotLab(lab: SimulatedLab, dir: string): Promise<LabSnapshot> {
    const cluster = lab.kube.dump();
    await copyTree(lab.layout.root, dir, [path.basename(podDir(lab.layout.root)), path.basename(repoCacheDir(lab.layout.root))]);
    return { dir, cluster };
}

/**
 * Starts a lab at `root` as the snapshot left it: the files copied back (the clone pointed at its
 * new bare repository), the simulated cluster loaded, the simulated Argo CD started on it.
 */
export async function restoreLab(snap: LabSnapshot, root: string, opts: Omit<StartOptions, "cluster"> = {}): Promise<SimulatedLab> {
    await copyTree(snap.dir, root);
    const layout = shopLayout(root);
    // every lab's clone, pointed at its new bare repository
    for (const site of [layout, tenantsLayout(root)]) {
        if (fs.existsSync(path.join(site.clone, ".git")))
            await run("git", ["-C", site.clone, "remote", "set-url", "origin", site.bareRepo]);
    }
    const lab = await startSimulatedLab(root, { ...opts, cluster: snap.cluster });
    // the node's images are not in the snapshot (a real node keeps its own): the tenants lab's, loaded again
    if (tenantsLabProgress(tenantsLayout(root)) >= 1) await loadSiteImages(lab.kube.images);
    // a (re)started controller looks at every Application once: let that settle, as the snapshot was
    await lab.argo.apps.idle();
    return lab;
}

/** The annotation on argocd-cmd-params-cm that keeps the Argo CD version a saved cluster was simulated as. */
const SIMULATED_VERSION = "gitops-lab.dev/simulated-argocd-version";

/** Written when a reset begins and removed when it ends: there, a reset was interrupted and the next run finishes it. */
export const resetMarkerFile = (root: string) => path.join(root, ".gitops-lab-resetting");

/** Everything a lab on this root may have left: if none of it exists, the root holds no lab. */
function labTraces(root: string): string[] {
    const shop = shopLayout(root);
    const tenants = tenantsLayout(root);
    return [
        clusterStateFile(root),
        shop.bareRepo,
        shop.workDir,
        tenants.bareRepo,
        tenants.workDir,
        podDir(root),
        repoCacheDir(root),
        daemonPidFile(root),
        ...servedFiles(root),
        resetMarkerFile(root),
        // a run that stopped before it built anything (git not on PATH) leaves only the folders it recorded as made
        madeRecordFile(root),
    ].filter((p) => fs.existsSync(p));
}

/**
 * `simulate --reset`: the product's own destroy path against the simulated host, in the engine's
 * order (each lab's result files, its ApplicationSet waiting for Argo CD's finalizer, its repository;
 * then Argo CD; then the simulated k3s, whose saved cluster is removed), taking down what is there
 * and saying only what it did. A root that holds no lab is left as it is (not even created). A saved cluster that cannot be
 * read is removed, said so, and the lab's files go without it. Returns what is left (nothing, when
 * it worked) and what it kept on purpose: the learner's work and files, each said in its line.
 */
export async function resetSimulatedLab(
    root: string,
    log: (line: string) => void,
    opts: { timeoutMs?: number } = {},
): Promise<{ left: string[]; kept: string[]; below?: number; absent?: boolean }> {
    if (!fs.existsSync(root)) {
        // a folder that is not there: nothing to reset (a lab beside it, its name mistyped, named)
        const near = labBeside(root, (d) => labTraces(d).length > 0);
        log(`nothing to reset: ${root} does not exist${near ? `; a lab is at ${near}: gitops-lab simulate --root ${near} --reset` : ""}`);
        // (a root a reset removed before is reset again without a complaint: that is no typo)
        if (!near) removeRootMade(root, log);
        return { left: [], kept: [], below: near ? 1 : 0, absent: true };
    }
    if (labTraces(root).length === 0) {
        // a folder of labs given for one of them: named, nothing of theirs touched
        const below =
            fs.existsSync(root) && fs.statSync(root).isDirectory()
                ? fs.readdirSync(root).filter((d) => labTraces(path.join(root, d)).length)
                : [];
        log(
            below.length
                ? `nothing to reset: ${root} holds no lab itself, but ${below.length === 1 ? "a lab is" : "labs are"} under it (${below
                      .slice(0, 5)
                      .map((d) => path.join(root, d))
                      .join(", ")}${below.length > 5 ? ", ..." : ""}): give one as --root`
                : `nothing to reset: ${root} holds no lab`,
        );
        // a reset before that kept the learner's files, since removed: the root it made goes now
        if (!below.length) removeRootMade(root, log);
        return { left: [], kept: [], below: below.length };
    }
    const stateFile = clusterStateFile(root);
    const hadCluster = fs.existsSync(stateFile);
    // what each run recorded as made, as the reset found it (the run below records again)
    const recordGone = madeRecordReadable(root) ? undefined : madeRecordFile(root);
    try {
        readSavedCluster(root, true);
    } catch (e) {
        if (fs.statSync(stateFile, { throwIfNoEntry: false })?.isDirectory()) throw e; // a folder of someone's: said, kept
        fs.rmSync(stateFile, { force: true });
        log(`[k3s] the saved simulated cluster cannot be used (${messageOf(e).split(";")[0]}): removed, and with it everything it held`);
    }
    const lab = await startSimulatedLab(root, { persist: true, missingClusterIsFine: true, asSaved: true, log });
    // said once the root is this run's (its lock taken): a reset refused for a run holding it says nothing of resetting
    log(`SIMULATED CLUSTER: resetting ${root} through the product's destroy path`);
    // the root is this run's now (a served lab holding it refused it above): a reset stopped from here on leaves a lab no
    // run can build on (result files gone, the ApplicationSet still there), which the next run finishes
    fs.writeFileSync(resetMarkerFile(root), `${new Date().toISOString()}\n`);
    await lab.argo.apps.idle(); // the restarted controller's first look at every Application
    // kept on purpose: the learner's (their work, their files); a reset that keeps only these has done its work. The
    // served lab's clones first, while the repositories they are compared with are still there
    const kept: string[] = await removeServedFiles(root, log, recordGone);
    const leftovers: string[] = [];
    const shop = lab.layout;
    const tenants = tenantsLayout(root);
    try {
        const cluster = new KubeCluster(lab.kubeconfig);
        const appset = (name: string) => !!lab.kube.get("ApplicationSet", "argocd", name);
        // each lab only if it is there: a reset says only what it did
        // (a half-built repository an interrupted step 1 left counts: the lab's own by its name)
        if (tenantsLabProgress(tenants) > 0 || labRepoBegun(tenants) || appset("tenants")) {
            await teardownTenantsLab(tenants, cluster, log, { timeoutMs: opts.timeoutMs ?? 30_000, pollMs: 100 });
        }
        if (shopLabProgress(shop) > 0 || labRepoBegun(shop) || appset("shop")) {
            await teardownShopLab(shop, cluster, log, { timeoutMs: opts.timeoutMs ?? 30_000, pollMs: 100 });
        }
        // what the labs' own deletes do not know of: a learner's ApplicationSets and Applications, as destroy's LabReset
        const scope = { namespaces: [...SHOP_NAMESPACES, ...TENANTS], kept: [], repoPrefix: GITD_URL_PREFIX, argocdGoes: true };
        await resetLabObjects(cluster, scope, (l) => log(`[lab-reset] ${l}`), { timeoutMs: opts.timeoutMs ?? 30_000, pollMs: 100 });
        await lab.argo.stop();
        if (fs.existsSync(stateFile) && hadCluster) {
            lab.kube.remove("Namespace", undefined, "argocd", "installer");
            log("[argocd] uninstalled (simulated): controllers stopped, namespace argocd deleted");
        }
        for (const kind of ["ApplicationSet", "Application"])
            for (const o of lab.kube.list(kind)) leftovers.push(`${kind} ${o.metadata.namespace}/${o.metadata.name}`);
        for (const n of lab.kube.list("Namespace"))
            if (n.metadata.name.startsWith("shop-") || n.metadata.name.startsWith("mandant-"))
                leftovers.push(`Namespace ${n.metadata.name}`);
        for (const o of lab.kube.terminating())
            leftovers.push(`${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name} (Terminating)`);
    } finally {
        await lab.stop();
    }
    if (hadCluster && fs.existsSync(stateFile)) log("[k3s] uninstalled (simulated): the saved cluster is removed");
    fs.rmSync(stateFile, { force: true });
    fs.rmSync(repoCacheDir(root), { recursive: true, force: true });
    fs.rmSync(podDir(root), { recursive: true, force: true });
    // only the folders a run recorded as made; one that was there before the lab stays, and the reset says so
    const made = new Set(madeDirs(root));
    for (const dir of [path.join(root, "srv", "bare"), path.join(root, "srv"), shop.workDir, tenants.workDir, path.join(root, "root")]) {
        if (!fs.existsSync(dir)) continue;
        const held = fs.readdirSync(dir);
        if (held.length > 0) {
            // the lab's own files went above: what a folder of the lab's still holds is the learner's (a repository of
            // theirs beside the lab's, their notes), kept and said; a folder that holds only what is kept already is not said again
            const theirs = held.filter((n) => !kept.includes(path.join(dir, n)));
            if (theirs.length) {
                log(
                    `kept ${dir}: it holds ${theirs.slice(0, 5).join(", ")}${theirs.length > 5 ? ` and ${theirs.length - 5} more` : ""}, which the lab did not make or kept for you`,
                );
                kept.push(dir);
            }
            continue;
        }
        if (made.has(dir)) fs.rmdirSync(dir);
        else {
            kept.push(dir);
            log(keptNotMade(dir, recordGone));
        }
    }
    if ([...made].every((d) => !fs.existsSync(d))) fs.rmSync(madeRecordFile(root), { force: true });
    // a trace inside a folder kept for the learner (a bare repository they made again by hand) is theirs too
    const keptHolds = (p: string) => kept.some((k) => p === k || p.startsWith(k + path.sep));
    // (the record of what was made stays while a folder it names is kept: it still says that folder was the lab's)
    leftovers.push(...labTraces(root).filter((p) => !keptHolds(p) && p !== resetMarkerFile(root) && p !== madeRecordFile(root)));
    if (!leftovers.length) fs.rmSync(resetMarkerFile(root), { force: true });
    if (!leftovers.length && !kept.length) removeRootMade(root, log);
    return { left: [...new Set(leftovers)], kept };
}
