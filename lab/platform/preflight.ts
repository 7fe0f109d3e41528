/**
 * Host checks before anything is installed: one line per check, PASS / WARN / FAIL. `gitops-lab
 * preflight` prints them and `gitops-lab up` runs them first, stopping before any change when one
 * fails. The checks read the host through a small probe, so tests can give them any host.
 */
import { execFile } from "child_process";
import * as fs from "fs";
import * as net from "net";
import * as os from "os";
import * as path from "path";
import { KubeCluster } from "../ports/cluster";
import { GIT_OPTS } from "../ports/exec";
import { redactedUrl, registryUrlProblem } from "./images";

export type Verdict = "PASS" | "WARN" | "FAIL";

export interface PreflightResult {
    check: string;
    verdict: Verdict;
    detail: string;
}

/** What the checks need to know about a host. */
export interface HostProbe {
    uid(): number;
    nodeVersion(): string;
    /** NODE_OPTIONS as this process runs with it (a flag there can take back what the version gives). */
    nodeOptions?(): string;
    /** The path of a program on PATH, or null. */
    which(program: string): Promise<string | null>;
    /** Free bytes on the filesystem that holds `dir` (its nearest existing ancestor). */
    freeBytes(dir: string): number;
    totalMemoryBytes(): number;
    /** Whether something listens on this TCP port of this host. */
    portInUse(port: number): Promise<boolean>;
    umask(): number;
    exists(p: string): boolean;
    /** git config `key` of the repository at `gitDir`, or null. */
    gitConfig(gitDir: string, key: string): Promise<string | null>;
    /** How many commits the repository at `gitDir` holds (every branch), 0 for none or no repository. */
    commits?(gitDir: string): Promise<number>;
    /** Why the cluster of the kubeconfig at this path does not answer a request (one line), or null when it does. */
    clusterAnswers?(kubeconfigPath: string): Promise<string | null>;
    /** Why the registry at this URL does not answer its API's /v2/ (one line), or null when it does. */
    registryAnswers?(url: string): Promise<string | null>;
}

export interface PreflightOptions {
    /** Install k3s (false when adopting a cluster through kubeconfigPath, or when k3s is already there). */
    installK3s: boolean;
    /** kubeconfigPath of the stack, when adopting a cluster. */
    kubeconfigPath?: string;
    /** Host paths the lab will create: whatever is there must be the lab's own (git config `key` of `gitDir` is `value`). */
    repos: { path: string; gitDir: string; key: string; value: string }[];
    /** Where k3s keeps images and data (/var/lib/rancher). */
    dataDir?: string;
    /** Ask the adopted cluster whether it answers (default true; false when its kubeconfig is refused by a check of its own). */
    askCluster?: boolean;
    /** imageRegistry of the stack, when the tenants lab pushes its release images there. */
    imageRegistry?: string;
}

/** How long the cluster or the registry gets to answer the preflight's one request. */
export const ANSWER_TIMEOUT_MS = 5_000;

/**
 * Resource figures (ours, not upstream's): k3s documents 2 GB of memory for a server node as
 * recommended; Argo CD's non-HA install runs five Pods (application controller, repo-server,
 * ApplicationSet controller, server, Redis, dex) that together use about 1 GiB at rest. The images
 * of k3s's add-ons, Argo CD and the git daemon come to about 1.5 GiB on disk.
 */
export const NEEDS = {
    memoryFailBytes: 2 * 2 ** 30,
    memoryWarnBytes: 4 * 2 ** 30,
    diskFailBytes: 4 * 2 ** 30,
    diskWarnBytes: 10 * 2 ** 30,
    nodeMin: [20, 19] as const,
};

const gib = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`;

function nodeOk(version: string): boolean {
    const [maj, min] = version.replace(/^v/, "").split(".").map(Number);
    if (maj === 20) return min >= NEEDS.nodeMin[1];
    return maj >= 22;
}

export async function preflightChecks(probe: HostProbe, opts: PreflightOptions): Promise<PreflightResult[]> {
    const out: PreflightResult[] = [];
    const add = (check: string, verdict: Verdict, detail: string) => out.push({ check, verdict, detail });

    add(
        "running as root",
        probe.uid() === 0 ? "PASS" : "FAIL",
        probe.uid() === 0 ? "uid 0" : `uid ${probe.uid()}: the lab installs k3s and writes /srv/bare and /root; run it with sudo`,
    );
    const node = probe.nodeVersion();
    // the version can load ES modules with require(), but a flag turns that off
    const noRequireEsm = /--no-experimental-require-module/.test(probe.nodeOptions?.() ?? "");
    add(
        "Node.js 20.19+ (or 22+)",
        nodeOk(node) && !noRequireEsm ? "PASS" : "FAIL",
        nodeOk(node) && noRequireEsm
            ? `${node}, but run with --no-experimental-require-module (NODE_OPTIONS holds it?), which keeps it from loading @kubernetes/client-node, an ES module: unset NODE_OPTIONS (or take that flag out)`
            : nodeOk(node)
              ? node
              : `${node}: @kubernetes/client-node needs require() of ES modules (Node 20.19 or 22); Debian 12 and Ubuntu 24.04 ship 18: install Node 20 or 22 from nodejs.org or NodeSource`,
    );
    const git = await probe.which("git");
    add("git", git ? "PASS" : "FAIL", git ?? "not on PATH: apt-get install git");
    if (opts.installK3s) {
        const curl = await probe.which("curl");
        add("curl (the k3s installer is fetched with it)", curl ? "PASS" : "FAIL", curl ?? "not on PATH: apt-get install curl");
        const systemctl = await probe.which("systemctl");
        add(
            "systemd (k3s runs as a systemd service)",
            systemctl && probe.exists("/run/systemd/system") ? "PASS" : "FAIL",
            systemctl && probe.exists("/run/systemd/system")
                ? "running"
                : "no running systemd (/run/systemd/system): k3s's installer needs it; use a VM or host with systemd, adopt a cluster with kubeconfigPath, or try the labs here without a cluster: npx gitops-lab simulate --root /tmp/gitops-lab",
        );
        const busy = await probe.portInUse(6443);
        add(
            "port 6443 free (the Kubernetes API of k3s)",
            busy ? "FAIL" : "PASS",
            busy ? "something listens on 6443: stop it, or adopt that cluster with kubeconfigPath" : "free",
        );
        const dataDir = opts.dataDir ?? "/var/lib/rancher";
        const free = probe.freeBytes(dataDir);
        add(
            `free disk for k3s and images (${dataDir})`,
            free < NEEDS.diskFailBytes ? "FAIL" : free < NEEDS.diskWarnBytes ? "WARN" : "PASS",
            `${gib(free)} free; needs ${gib(NEEDS.diskFailBytes)}, ${gib(NEEDS.diskWarnBytes)} recommended`,
        );
        const mem = probe.totalMemoryBytes();
        add(
            "memory for k3s and Argo CD",
            mem < NEEDS.memoryFailBytes ? "FAIL" : mem < NEEDS.memoryWarnBytes ? "WARN" : "PASS",
            `${gib(mem)}; needs ${gib(NEEDS.memoryFailBytes)}, ${gib(NEEDS.memoryWarnBytes)} recommended`,
        );
    } else {
        // the lab runs kubectl kustomize on the host (step 1, verify): on an adopted cluster nothing installs it
        const kubectl = await probe.which("kubectl");
        add(
            "kubectl on PATH (step 1 and verify run kubectl kustomize)",
            kubectl ? "PASS" : "FAIL",
            kubectl ?? "not on PATH: install kubectl (or use a host where k3s installed it)",
        );
        if (opts.kubeconfigPath) {
            const ok = probe.exists(opts.kubeconfigPath);
            add(
                "kubeconfigPath readable",
                ok ? "PASS" : "FAIL",
                ok
                    ? opts.kubeconfigPath
                    : `${opts.kubeconfigPath} does not exist: point kubeconfigPath at the cluster's kubeconfig, or unset it to install k3s`,
            );
            // up's first request goes there: a cluster that does not answer (or refuses the credentials) is said now
            const ask = ok && opts.askCluster !== false && probe.clusterAnswers;
            const why = ask ? await probe.clusterAnswers!(opts.kubeconfigPath) : null;
            if (ask)
                add(
                    "the adopted cluster answers",
                    why ? "FAIL" : "PASS",
                    why ? `${why} (kubeconfigPath ${opts.kubeconfigPath})` : `its API server answered within ${ANSWER_TIMEOUT_MS / 1000} s`,
                );
        }
    }
    // the release images are pushed from this host, after Argo CD is installed: a registry that does not answer is said now
    if (opts.imageRegistry && probe.registryAnswers) {
        const why = await probe.registryAnswers(opts.imageRegistry);
        add(
            "imageRegistry answers (the tenants lab pushes its images there)",
            why ? "FAIL" : "PASS",
            why ?? `its /v2/ answered within ${ANSWER_TIMEOUT_MS / 1000} s`,
        );
    }
    for (const r of opts.repos) {
        if (!probe.exists(r.path)) {
            add(`nothing foreign at ${r.path}`, "PASS", "free");
            continue;
        }
        const owner = await probe.gitConfig(r.gitDir, r.key);
        // the lab's clone while its repository is gone: one a reset or destroy kept for its work, which up refuses to
        // build on (more than the lab's first commit: an interrupted run's first commit alone, up pushes)
        if (owner === r.value && r.gitDir !== r.path && !probe.exists(r.value) && ((await probe.commits?.(r.gitDir)) ?? 2) > 1) {
            add(
                `nothing foreign at ${r.path}`,
                "FAIL",
                `a clone of the lab's repository ${r.value}, which is gone (kept by a reset or destroy for its work?): up builds no lab on it; move it away (copy out what you need first)`,
            );
            continue;
        }
        add(
            `nothing foreign at ${r.path}`,
            owner === r.value ? "PASS" : "FAIL",
            owner === r.value
                ? "the lab's own repository"
                : `a repository (or directory) the lab did not create is there: move it away, or set the stack's root to another prefix`,
        );
    }
    const umask = probe.umask();
    add(
        "umask (info)",
        "PASS",
        `${umask.toString(8).padStart(4, "0")}${umask & 0o005 ? ": the lab's bare repository sets core.sharedRepository, so the git daemon (nobody) can read every later push" : ""}`,
    );
    return out;
}

export function formatPreflight(rs: PreflightResult[]): string {
    return rs.map((r) => `${r.verdict.padEnd(4)}  ${r.check}: ${r.detail}`).join("\n");
}

/** The real host. */
export const realHost: HostProbe = {
    uid: () => (process.getuid ? process.getuid() : -1),
    nodeVersion: () => process.version,
    nodeOptions: () => `${process.env.NODE_OPTIONS ?? ""} ${process.execArgv.join(" ")}`.trim(),
    which: (program) =>
        new Promise((resolve) => {
            for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
                const p = path.join(dir, program);
                try {
                    fs.accessSync(p, fs.constants.X_OK);
                    return resolve(p);
                } catch {
                    /* next */
                }
            }
            resolve(null);
        }),
    freeBytes: (dir) => {
        let d = path.resolve(dir);
        while (!fs.existsSync(d)) d = path.dirname(d);
        const st = fs.statfsSync(d);
        return st.bavail * st.bsize;
    },
    totalMemoryBytes: () => os.totalmem(),
    portInUse: (port) =>
        new Promise((resolve) => {
            const sock = net.connect({ port, host: "127.0.0.1" });
            sock.setTimeout(1_000);
            sock.on("connect", () => {
                sock.destroy();
                resolve(true);
            });
            sock.on("timeout", () => {
                sock.destroy();
                resolve(false);
            });
            sock.on("error", () => resolve(false));
        }),
    umask: () => {
        const m = process.umask(0o022);
        process.umask(m);
        return m;
    },
    exists: (p) => fs.existsSync(p),
    gitConfig: (gitDir, key) =>
        new Promise((resolve) => {
            execFile("git", ["--git-dir", gitDir, "config", "--get", key], { timeout: 10_000, ...GIT_OPTS() }, (err, stdout) =>
                resolve(err ? null : String(stdout).trim()),
            );
        }),
    clusterAnswers: async (kubeconfigPath) => {
        try {
            const text = fs.readFileSync(kubeconfigPath, "utf8");
            await new KubeCluster(text, { callTimeoutMs: ANSWER_TIMEOUT_MS }).hasCrd("applications.argoproj.io");
            return null;
        } catch (e) {
            // a user that may not read CRDs (a namespace's kubeconfig): the cluster answered, but up installs Argo CD's
            if ((e as { code?: unknown }).code === 403)
                return "the cluster answered, but the kubeconfig's user may not read CustomResourceDefinitions (403): up installs Argo CD's, so give the cluster's admin kubeconfig";
            // the request's name and the CLI's --kubeconfig hint are the lab's own, not the stack's: said by the check
            const said = String((e as Error)?.message ?? e)
                .split("\n")[0]
                .replace(/^get customresourcedefinitions\/[^:]*: /, "")
                .replace(/ \(--kubeconfig FILE[^)]*\)/, "");
            return /no answer from the Kubernetes API/.test(said)
                ? `${said}: is the cluster up, and its API server reachable from this host?`
                : said;
        }
    },
    registryAnswers: async (url) => {
        const problem = registryUrlProblem(url);
        if (problem) return problem;
        const base = url.replace(/\/$/, "");
        try {
            const r = await fetch(`${base}/v2/`, { signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) });
            // a registry's API answers 200 there, or 401 when it asks for a login (which the lab does not send)
            if (r.status === 200) return null;
            const at = `${redactedUrl(base)}/v2/ answered HTTP ${r.status}`;
            if (r.status === 401)
                return `${at} (it asks for a login; the lab pushes without one): give a registry that takes pushes without a login`;
            if (r.status === 404) return `${at}: no registry API there; is imageRegistry a registry's address (http://host:port)?`;
            return `${at}: is the registry healthy?`;
        } catch (e) {
            const cause = (e as { cause?: { code?: string; message?: string } }).cause;
            const said =
                (e as Error)?.name === "TimeoutError"
                    ? `no answer within ${ANSWER_TIMEOUT_MS / 1000} s`
                    : (cause?.code ?? cause?.message ?? String(e));
            return `${redactedUrl(base)} did not answer GET /v2/ (${said}): is the registry running, and is imageRegistry its address?`;
        }
    },
    commits: (gitDir) =>
        new Promise((resolve) => {
            execFile("git", ["--git-dir", gitDir, "rev-list", "--count", "--all"], { timeout: 10_000, ...GIT_OPTS() }, (err, stdout) =>
                resolve(err ? 0 : Number(String(stdout).trim()) || 0),
            );
        }),
};
