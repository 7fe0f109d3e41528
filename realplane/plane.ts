/**
 * The real control plane, started on this machine: a real Kubernetes API (kube-apiserver, etcd,
 * controller-manager, scheduler) assembled by `kwokctl --runtime binary` from the binaries
 * build.ts made, nodes simulated by KWOK, and the real Argo CD v3.5.1 controllers (application
 * controller, repo-server, ApplicationSet controller) as local processes the way Argo CD's own
 * Procfile runs them (ARGOCD_FAKE_IN_CLUSTER, ARGOCD_BINARY_NAME, --redis, --repo-server), with
 * Redis from Debian and kustomize 5.8.1 on the repo-server's PATH. The upstream install.yaml's CRDs,
 * ConfigMaps and Secret are applied (from the Argo CD module), progressive syncs on.
 *
 * The in-cluster repository URL git://gitd.gitsrv.svc.cluster.local:9418/... reaches a git daemon
 * on 127.0.0.1:9418 through an /etc/hosts line the plane adds and removes (the repo-server's
 * ls-remote is go-git, which ignores git's url.insteadOf). So one plane runs per host, as root: it
 * holds PLANE_LOCK from before its git daemon starts until the /etc/hosts line is gone, and a second
 * plane refuses at once, naming the holder. Every tool it runs is checked before anything starts.
 */
import { ChildProcess, spawn } from "child_process";
import { randomBytes } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseAllDocuments, stringify } from "yaml";
import { PROGRESSIVE_SYNCS_KEY } from "../lab/platform/argocd";
import { realHost } from "../lab/platform/preflight";
import { run } from "../lab/ports/exec";
import { pollUntil } from "../lab/ports/wait";
import { freePort } from "../sim/gitDaemon";
import { acquireLockFile, isAlive, RootLock } from "../sim/lock";
import { BINARIES, binPath, buildRealPlane, moduleDir } from "./build";
import { HookPodRunner, kwokStages, reapHookPodWork, startHookPodRunner } from "./hookPods";
import { REAL_PLANE } from "./versions";

export const GITD_HOST = "gitd.gitsrv.svc.cluster.local";
/** One real plane per host: it owns the /etc/hosts line of GITD_HOST and port 9418. */
export const PLANE_LOCK = process.env.GITOPS_LAB_PLANE_LOCK ?? "/run/gitops-lab-real-plane.lock";

/** The programs the plane runs, and how to get each on Debian or Ubuntu. */
const PLANE_TOOLS: Record<string, string> = {
    "redis-server": "apt-get install redis-server (Argo CD's cache)",
    kubectl: "install kubectl 1.33 or later (it carries kustomize)",
    git: "apt-get install git",
    setpriv: "apt-get install util-linux",
};

/** What is missing to run (and, when `build`, to build) the plane: one entry per tool, with how to install it. */
export async function missingPlaneTools(build: boolean): Promise<string[]> {
    const tools: Record<string, string> = { ...PLANE_TOOLS, ...(build ? { go: "Go 1.24 or later on PATH (the first build takes about 25 minutes)" } : {}) };
    const missing: string[] = [];
    for (const [tool, how] of Object.entries(tools)) {
        if (!(await realHost.which(tool))) missing.push(`${tool} (${how})`);
    }
    return missing;
}

/** Refuses at once, in one line, when a tool the plane needs is missing. */
export async function checkPlaneTools(build: boolean): Promise<void> {
    const missing = await missingPlaneTools(build);
    if (missing.length) throw new Error(`the real plane needs ${missing.join(", ")}; nothing was started`);
}

/** Takes the host's plane lock, or refuses with one line naming the plane that holds it. */
export function acquirePlaneLock(): RootLock {
    const what = `${path.basename(process.argv[1] ?? "node")} ${process.argv.slice(2).join(" ")}`.trim();
    return acquireLockFile(
        PLANE_LOCK,
        (pid, holder) => `a real plane already runs on this host (PID ${pid}${holder ? `: ${holder}` : ""}); one plane per host (it owns ${GITD_HOST} in /etc/hosts and port 9418): stop it, then run again`,
        what,
    );
}
const HOSTS_MARK = "# gitops-lab real plane";

export interface RealPlane {
    kubeconfigFile: string;
    kubeconfig: string;
    /** The directory of the plane's files and logs. */
    dir: string;
    /** What the hook Pod runner ran so far (`namespace/pod exit N`), when the plane runs hook Pods. */
    hookRuns(): string[];
    stop(): Promise<void>;
}

/** Runs a process for the plane's lifetime, its output in `log`, dying with this process. */
function daemon(cmd: string, args: string[], env: NodeJS.ProcessEnv, log: string): ChildProcess {
    const out = fs.openSync(log, "a");
    return spawn("setpriv", ["--pdeathsig", "KILL", cmd, ...args], { env, stdio: ["ignore", out, out] });
}

async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
    if (input !== undefined) {
        const file = path.join(os.tmpdir(), `real-plane-${process.pid}-${Date.now()}.yaml`);
        fs.writeFileSync(file, input);
        try {
            return (await run("kubectl", ["--kubeconfig", kubeconfig, ...args, "-f", file], { timeoutMs: 120_000 })).stdout;
        } finally {
            fs.rmSync(file, { force: true });
        }
    }
    return (await run("kubectl", ["--kubeconfig", kubeconfig, ...args], { timeoutMs: 120_000 })).stdout;
}

function addHostsLine(): void {
    const hosts = fs.readFileSync("/etc/hosts", "utf8");
    if (hosts.includes(HOSTS_MARK)) return;
    fs.appendFileSync("/etc/hosts", `127.0.0.1 ${GITD_HOST} ${HOSTS_MARK}\n`);
}

function removeHostsLine(): void {
    const hosts = fs.readFileSync("/etc/hosts", "utf8");
    if (!hosts.includes(HOSTS_MARK)) return;
    fs.writeFileSync("/etc/hosts", hosts.split("\n").filter((l) => !l.includes(HOSTS_MARK)).join("\n"));
}

/** Argo CD's own objects the controllers need: CRDs, ConfigMaps, the Secret (from upstream's install.yaml), the default project. */
async function argoObjects(): Promise<{ crds: string; config: string }> {
    const dir = await moduleDir(`github.com/argoproj/argo-cd/v3@${REAL_PLANE.argocd}`);
    const docs = parseAllDocuments(fs.readFileSync(path.join(dir, "manifests", "install.yaml"), "utf8")).map((d) => d.toJSON()).filter(Boolean);
    const crds = docs.filter((d) => d.kind === "CustomResourceDefinition");
    const config = docs
        .filter((d) => d.kind === "ConfigMap" || d.kind === "Secret")
        .map((d) => {
            const o = { ...d, metadata: { ...d.metadata, namespace: "argocd" } };
            if (o.kind === "ConfigMap" && o.metadata.name === "argocd-cmd-params-cm") o.data = { ...(o.data ?? {}), [PROGRESSIVE_SYNCS_KEY]: "true" };
            // argocd-server writes the secret key on its first start; it does not run here
            if (o.kind === "Secret" && o.metadata.name === "argocd-secret") o.stringData = { "server.secretkey": randomBytes(32).toString("base64") };
            return o;
        });
    // what argocd-server would create on its first start (it does not run here)
    config.push({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "AppProject",
        metadata: { name: "default", namespace: "argocd" },
        spec: { sourceRepos: ["*"], destinations: [{ server: "*", namespace: "*" }], clusterResourceWhitelist: [{ group: "*", kind: "*" }] },
    });
    return { crds: crds.map((c) => stringify(c)).join("---\n"), config: config.map((c) => stringify(c)).join("---\n") };
}

/** Whether every plane binary is in the cache. */
export const planeBuilt = () => BINARIES.every((b) => fs.existsSync(binPath(b)));

/** One place for every plane's KWOK clusters, so a plane whose process was killed is found and taken down. */
const KWOK_WORKDIR = path.join(path.dirname(path.dirname(binPath("kwokctl"))), "kwok");

/** Takes down what a killed plane left (its KWOK cluster, the /etc/hosts line) and says so. */
export async function reapRealPlanes(log: (line: string) => void = () => {}): Promise<void> {
    const clusters = path.join(KWOK_WORKDIR, "clusters");
    const names = fs.existsSync(clusters) ? fs.readdirSync(clusters).filter((n) => /^gitops-lab-\d+$/.test(n)) : [];
    let live = false;
    for (const n of names) {
        if (isAlive(Number(n.split("-").pop()))) {
            live = true;
            continue;
        }
        await run(binPath("kwokctl"), ["--name", n, "delete", "cluster"], { env: { ...process.env, KWOK_WORKDIR }, timeoutMs: 120_000 }).catch(() => undefined);
        fs.rmSync(path.join(clusters, n), { recursive: true, force: true });
        log(`took down the real plane ${n}, whose process is gone`);
    }
    if (!live) removeHostsLine();
    for (const p of reapHookPodWork(isAlive)) log(`removed ${p}, the hook Pods' work folder of a process that is gone`);
}

/** Starts the plane; `log` hears what it waits for and how long it took. */
export async function startRealPlane(opts: { log?: (line: string) => void; dir?: string; lock?: RootLock; hookJobs?: readonly string[] } = {}): Promise<RealPlane> {
    const log = opts.log ?? (() => {});
    if (process.getuid?.() !== 0) throw new Error("the real plane maps the in-cluster git URL in /etc/hosts: run it as root");
    const t0 = Date.now();
    await checkPlaneTools(!planeBuilt());
    // a lock passed in is its owner's to release (startRealLab holds it for its git daemon too)
    const lock = opts.lock ?? acquirePlaneLock();
    const release = () => opts.lock || lock.release();
    try {
        await buildRealPlane(log);
        await reapRealPlanes(log);
    } catch (e) {
        release();
        throw e;
    }
    const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "real-plane-"));
    const name = `gitops-lab-${process.pid}`;
    const kwokEnv = { ...process.env, KWOK_WORKDIR: KWOK_WORKDIR, KWOK_KUBE_VERSION: REAL_PLANE.kubernetes };
    const config = path.join(dir, "kwokctl.yaml");
    const hookJobs = opts.hookJobs ?? [];
    // KWOK's own stages, pod-complete not for the hook Jobs' Pods (hookPods.ts runs them); its Logs CRD serves their output
    fs.writeFileSync(
        config,
        `apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokctlConfiguration\noptions:\n  bindAddress: 127.0.0.1\n  enableCRDs: [Logs]\n---\n${await kwokStages(hookJobs)}`,
    );
    const procs: ChildProcess[] = [];
    let created = false;
    let hookPods: HookPodRunner | undefined;
    const stop = async () => {
        await hookPods?.stop();
        for (const p of procs) if (p.exitCode === null) p.kill("SIGTERM");
        if (created) await run(binPath("kwokctl"), ["--name", name, "delete", "cluster"], { env: kwokEnv, timeoutMs: 120_000 }).catch(() => undefined);
        removeHostsLine();
        release();
    };
    try {
        log(`starting Kubernetes ${REAL_PLANE.kubernetes} (kwokctl, binary runtime, 127.0.0.1) ...`);
        await run(
            binPath("kwokctl"),
            ["-c", config, "--name", name, "create", "cluster", "--runtime", "binary", "--wait", "3m",
                "--kube-apiserver-binary", binPath("kube-apiserver"), "--kube-controller-manager-binary", binPath("kube-controller-manager"),
                "--kube-scheduler-binary", binPath("kube-scheduler"), "--etcd-binary", binPath("etcd"), "--kwok-controller-binary", binPath("kwok")],
            { env: kwokEnv, timeoutMs: 300_000 },
        );
        created = true;
        const kubeconfigFile = path.join(KWOK_WORKDIR, "clusters", name, "kubeconfig.yaml");
        await run(binPath("kwokctl"), ["--name", name, "scale", "node", "--replicas", "1"], { env: kwokEnv, timeoutMs: 120_000 });
        log(`Kubernetes up after ${((Date.now() - t0) / 1000).toFixed(1)} s; applying Argo CD ${REAL_PLANE.argocd}'s CRDs and configuration`);
        const objs = await argoObjects();
        await kubectl(kubeconfigFile, ["create", "namespace", "argocd"]);
        await kubectl(kubeconfigFile, ["apply", "--server-side"], objs.crds);
        for (const crd of ["applications.argoproj.io", "applicationsets.argoproj.io", "appprojects.argoproj.io"]) {
            await pollUntil(
                async () => ((JSON.parse(await kubectl(kubeconfigFile, ["get", "crd", crd, "-o", "json"])).status?.conditions ?? []).some((c: any) => c.type === "Established" && c.status === "True") ? true : undefined),
                { timeoutMs: 60_000, intervalMs: 200, describe: () => `the CRD ${crd} was not Established within 60 s` },
            );
        }
        await kubectl(kubeconfigFile, ["apply", "--server-side"], objs.config);

        const redisPort = await freePort();
        procs.push(daemon("redis-server", ["--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], process.env, path.join(dir, "redis.log")));
        addHostsLine();
        const repoPort = await freePort();
        const data = path.join(dir, "argocd");
        for (const d of ["tls", "ssh", "gpg/keys", "gpg/source", "bin"]) fs.mkdirSync(path.join(data, d), { recursive: true });
        // the image puts upstream's hack/git-verify-wrapper.sh on the repo-server's PATH (Dockerfile); the module
        // cache keeps it without its execute bit, so it is copied, executable, for this plane's run
        const argoDir = await moduleDir(`github.com/argoproj/argo-cd/v3@${REAL_PLANE.argocd}`);
        fs.copyFileSync(path.join(argoDir, "hack", "git-verify-wrapper.sh"), path.join(data, "bin", "git-verify-wrapper.sh"));
        fs.chmodSync(path.join(data, "bin", "git-verify-wrapper.sh"), 0o755);
        const argo = (binary: string, args: string[], extra: NodeJS.ProcessEnv = {}) =>
            daemon(binPath("argocd"), binary === "argocd-repo-server" ? args : [...args, "--namespace", "argocd"], {
                ...process.env,
                KUBECONFIG: kubeconfigFile,
                ARGOCD_FAKE_IN_CLUSTER: "true",
                ARGOCD_BINARY_NAME: binary,
                ARGOCD_TLS_DATA_PATH: path.join(data, "tls"),
                ARGOCD_SSH_DATA_PATH: path.join(data, "ssh"),
                ARGOCD_GNUPGHOME: path.join(data, "gpg/keys"),
                ARGOCD_GPG_DATA_PATH: path.join(data, "gpg/source"),
                ARGOCD_GPG_ENABLED: "false",
                // kustomize 5.8.1, as the v3.5.1 image bundles it, first on the repo-server's PATH
                PATH: [path.dirname(binPath("kustomize")), path.join(data, "bin"), process.env.PATH ?? ""].join(path.delimiter),
                ...extra,
            }, path.join(dir, `${binary}.log`));
        procs.push(argo("argocd-repo-server", ["--port", String(repoPort), "--metrics-port", String(await freePort()), "--redis", `127.0.0.1:${redisPort}`]));
        procs.push(argo("argocd-application-controller", ["--redis", `127.0.0.1:${redisPort}`, "--repo-server", `127.0.0.1:${repoPort}`, "--metrics-port", String(await freePort())]));
        procs.push(
            argo("argocd-applicationset-controller", ["--argocd-repo-server", `127.0.0.1:${repoPort}`, "--metrics-addr", `127.0.0.1:${await freePort()}`, "--probe-addr", `127.0.0.1:${await freePort()}`, "--webhook-addr", `127.0.0.1:${await freePort()}`], {
                ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_PROGRESSIVE_SYNCS: "true",
            }),
        );
        if (hookJobs.length) {
            hookPods = await startHookPodRunner(fs.readFileSync(kubeconfigFile, "utf8"), hookJobs, dir, log);
            log(`the Pods of the Jobs ${hookJobs.join(", ")} are run for real (their command by /bin/sh as nobody), the rest by KWOK's stages`);
        }
        log(`Argo CD ${REAL_PLANE.argocd} controllers started (logs in ${dir}); plane up after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        return { kubeconfigFile, kubeconfig: fs.readFileSync(kubeconfigFile, "utf8"), dir, hookRuns: () => hookPods?.runs ?? [], stop };
    } catch (e) {
        await stop();
        throw e;
    }
}
