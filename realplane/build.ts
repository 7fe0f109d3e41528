/**
 * Builds the real control plane's binaries from Go modules (versions.ts) into a cache outside the
 * clone — `${XDG_CACHE_HOME:-~/.cache}/gitops-lab/real-plane/<pins>/bin` — so the first build
 * costs minutes (see BUILD_MINUTES) and later ones nothing. Each
 * component is built in a scratch module the build writes itself: Kubernetes with its staging
 * modules replaced by their published versions, Argo CD with its own replace directives copied
 * from its go.mod (the in-tree gitops-engine pointed at the proxy's version, see versions.ts).
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { run } from "../lab/ports/exec";
import { REAL_ARGOCD, RealArgoCd, REAL_PLANE } from "./versions";

/** The Kubernetes commands built from k8s.io/kubernetes: the control plane, and the real node's kubelet, kube-proxy and kubeadm (its PKI). */
export const KUBERNETES_COMMANDS = [
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "kube-proxy",
    "kubeadm",
] as const;
export const BINARIES = [...KUBERNETES_COMMANDS, "etcd"] as const;
export type Binary = (typeof BINARIES)[number];

/** `${XDG_CACHE_HOME:-~/.cache}/gitops-lab/<kind>/<name>-<hash of the pins>`: one folder per set of pins. */
export function pinnedCacheDir(kind: string, name: string, pins: Record<string, string>): string {
    const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
    const key = createHash("sha256").update(JSON.stringify(pins)).digest("hex").slice(0, 12);
    return path.join(base, "gitops-lab", kind, `${name}-${key}`);
}

/** Where the binaries of these pins live. */
export function cacheDir(pins: Record<keyof typeof REAL_PLANE, string> = REAL_PLANE): string {
    return pinnedCacheDir("real-plane", `kubernetes-${pins.kubernetes}`, pins);
}

export const binPath = (name: Binary, dir = cacheDir()) => path.join(dir, "bin", name);

/** The `replace` directives of a go.mod, as `[from, to]` (a block or single lines; comments skipped). */
export function replacesOf(goMod: string): [string, string][] {
    const out: [string, string][] = [];
    let inBlock = false;
    for (const raw of goMod.split("\n")) {
        const line = raw.replace(/\/\/.*$/, "").trim();
        if (!line) continue;
        if (/^replace\s*\($/.test(line)) {
            inBlock = true;
            continue;
        }
        if (inBlock && line === ")") {
            inBlock = false;
            continue;
        }
        const body = inBlock ? line : /^replace\s+(.*)$/.exec(line)?.[1];
        if (!body) continue;
        const [from, to] = body.split("=>").map((x) => x.trim());
        if (from && to) out.push([from, to]);
    }
    return out;
}

/** Kubernetes' staging modules (replaced by `./staging/src/...` in its go.mod), each at its published version. */
export function stagingReplaces(kubernetesGoMod: string, version: string): string[] {
    return replacesOf(kubernetesGoMod)
        .filter(([, to]) => to.startsWith("./staging/"))
        .map(([from]) => `${from.split(/\s+/)[0]} => ${from.split(/\s+/)[0]} ${version}`);
}

/** A module's own replace directives, local ones (`./…`) swapped for `local` or dropped. */
export function copiedReplaces(goMod: string, local: Record<string, string>): string[] {
    return replacesOf(goMod).flatMap(([from, to]) => {
        const mod = from.split(/\s+/)[0];
        if (!to.startsWith(".")) return [`${from} => ${to}`];
        return local[mod] ? [`${mod} => ${mod} ${local[mod]}`] : [];
    });
}

export function goModFile(module: string, goVersion: string, requires: string[], replaces: string[]): string {
    const block = (word: string, lines: string[]) => (lines.length ? [`${word} (`, ...lines.map((r) => `\t${r}`), ")", ""] : []);
    return [`module ${module}`, "", `go ${goVersion}`, "", ...block("require", requires), ...block("replace", replaces)].join("\n");
}

function toolsFile(imports: string[]): string {
    return ["//go:build tools", "", "package tools", "", "import (", ...imports.map((i) => `\t_ "${i}"`), ")", ""].join("\n");
}

export async function go(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
    return (
        await run("go", args, {
            cwd,
            env: { ...process.env, GOFLAGS: "-buildvcs=false -trimpath", GOTOOLCHAIN: "local", ...env },
            timeoutMs: 3_600_000,
        })
    ).stdout;
}

/** The go.mod of a module version, from the module cache (downloaded through the proxy if needed). */
export async function goModOf(modVersion: string, cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
    const info = JSON.parse(await go(["mod", "download", "-json", modVersion], cwd, env));
    return fs.readFileSync(info.GoMod, "utf8");
}

/** A directory of the downloaded module (e.g. Argo CD's manifests/install.yaml). */
export async function moduleDir(modVersion: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "gomod-"));
    try {
        return JSON.parse(await go(["mod", "download", "-json", modVersion], tmp, env)).Dir;
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

/** Makes a copy of a module's files writable (the module cache's are read-only), so it can be built in place. */
export function makeWritable(dir: string): void {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        fs.chmodSync(p, e.isDirectory() ? 0o755 : 0o644);
        if (e.isDirectory()) makeWritable(p);
    }
}

/** A scratch module that imports `packages`, tidied. */
export async function scratch(
    dir: string,
    module: string,
    goVersion: string,
    requires: string[],
    replaces: string[],
    packages: string[],
    env: NodeJS.ProcessEnv = {},
): Promise<void> {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "go.mod"), goModFile(module, goVersion, requires, replaces));
    fs.writeFileSync(path.join(dir, "tools.go"), toolsFile(packages));
    await go(["mod", "tidy", "-e"], dir, env);
}

/** Minutes each build takes from cold caches on 2 cores (with another build beside it). */
const BUILD_MINUTES: Record<Binary | "argocd" | "kustomize", number> = {
    "kube-apiserver": 22,
    "kube-controller-manager": 22,
    "kube-scheduler": 22,
    kubelet: 22,
    "kube-proxy": 22,
    kubeadm: 22,
    etcd: 3,
    kustomize: 2,
    argocd: 12,
};

/**
 * One build with its progress: what it builds and about how long it takes, then a line a minute
 * while it runs, then how long it took.
 */
export async function buildStep(what: string, minutes: number, log: (line: string) => void, f: () => Promise<void>): Promise<void> {
    const t0 = Date.now();
    const elapsed = () => `${Math.round((Date.now() - t0) / 60_000)} min`;
    log(`building ${what}: about ${minutes} min from cold caches on 2 cores ...`);
    const tick = setInterval(() => log(`still building ${what}: ${elapsed()} so far, about ${minutes} min in all`), 60_000);
    try {
        await f();
    } finally {
        clearInterval(tick);
    }
    log(`built ${what} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

/** Builds what is missing of the plane (Kubernetes and etcd); `log` hears what is built and how long it took. */
export async function buildRealPlane(log: (line: string) => void = () => {}, dir = cacheDir()): Promise<Record<Binary, string>> {
    const P = REAL_PLANE;
    const bin = path.join(dir, "bin");
    const src = path.join(dir, "src");
    fs.mkdirSync(bin, { recursive: true });
    const missing = (names: readonly Binary[]) => names.filter((n) => !fs.existsSync(path.join(bin, n)));
    const step = (names: readonly Binary[], what: string, f: () => Promise<void>) =>
        missing(names).length ? buildStep(`${what} (${missing(names).join(", ")})`, BUILD_MINUTES[names[0]], log, f) : Promise.resolve();
    const out = (name: string) => path.join(bin, `.${name}.partial`);
    const done = (name: string) => fs.renameSync(out(name), path.join(bin, name)); // never a half-written binary

    await step(KUBERNETES_COMMANDS, `Kubernetes ${P.kubernetes}`, async () => {
        const d = path.join(src, "kubernetes");
        fs.mkdirSync(d, { recursive: true });
        const staging = stagingReplaces(await goModOf(`k8s.io/kubernetes@${P.kubernetes}`, d), P.kubernetesStaging);
        const cmds = KUBERNETES_COMMANDS;
        await scratch(
            d,
            "gitops-lab/real-plane/kubernetes",
            "1.24.0",
            [`k8s.io/kubernetes ${P.kubernetes}`],
            staging,
            cmds.map((c) => `k8s.io/kubernetes/cmd/${c}`),
        );
        const [major, minor] = P.kubernetes.slice(1).split(".");
        const ldflags = `-s -w -X k8s.io/component-base/version.gitVersion=${P.kubernetes} -X k8s.io/component-base/version.gitMajor=${major} -X k8s.io/component-base/version.gitMinor=${minor}`;
        for (const c of missing(cmds)) {
            await go(["build", "-ldflags", ldflags, "-o", out(c), `k8s.io/kubernetes/cmd/${c}`], d);
            done(c);
        }
    });
    await step(["etcd"], `etcd ${P.etcd}`, async () => {
        // go install refuses a module whose go.mod has replace directives: build it from a scratch module
        const d = path.join(src, "etcd");
        await scratch(
            d,
            "gitops-lab/real-plane/etcd",
            "1.23.0",
            [`go.etcd.io/etcd/server/v3 ${P.etcd}`],
            [],
            ["go.etcd.io/etcd/server/v3"],
        );
        await go(["build", "-ldflags", "-s -w", "-o", out("etcd"), "go.etcd.io/etcd/server/v3"], d);
        done("etcd");
    });
    return Object.fromEntries(BINARIES.map((b) => [b, path.join(bin, b)])) as Record<Binary, string>;
}

/**
 * The argocd multi-call binary of one release, in a scratch module with Argo CD's own replace
 * directives, its in-tree gitops-engine pointed at `engine` (a module download has no nested module).
 * A go.mod asking for a newer Go than this one is built with `toolchain` (GOTOOLCHAIN).
 */
async function buildArgoCdBinary(
    d: string,
    outFile: string,
    o: { version: string; commit?: string; engine: { module: string; version: string }; toolchain?: string },
): Promise<void> {
    const env = o.toolchain ? { GOTOOLCHAIN: o.toolchain } : {};
    fs.mkdirSync(d, { recursive: true });
    const argoMod = await goModOf(`github.com/argoproj/argo-cd/v3@${o.version}`, d, env);
    const goVersion = /^go\s+(\S+)/m.exec(argoMod)?.[1] ?? "1.26";
    const replaces = copiedReplaces(argoMod, { [o.engine.module]: o.engine.version });
    await scratch(
        d,
        "gitops-lab/real-plane/argocd",
        goVersion,
        [`github.com/argoproj/argo-cd/v3 ${o.version}`],
        replaces,
        ["github.com/argoproj/argo-cd/v3/cmd"],
        env,
    );
    const v = "github.com/argoproj/argo-cd/v3/common";
    const commit = o.commit ? ` -X ${v}.gitCommit=${o.commit}` : "";
    const ldflags = `-s -w -X ${v}.version=${o.version.slice(1)}${commit} -X ${v}.gitTag=${o.version} -X ${v}.gitTreeState=clean`;
    await go(["build", "-ldflags", ldflags, "-o", outFile, "github.com/argoproj/argo-cd/v3/cmd"], d, env);
}

/** Where an Argo CD release's argocd and kustomize are built (one folder per release and its pins). */
export const argoCdBuildDir = (version: RealArgoCd) => {
    const pins: { kustomize: string; gitopsEngine: { module: string; version: string }; goToolchain?: string; commit?: string } =
        REAL_ARGOCD[version];
    return pinnedCacheDir("argocd", `argocd-${version}`, {
        version,
        kustomize: pins.kustomize,
        engine: `${pins.gitopsEngine.module}@${pins.gitopsEngine.version}`,
        ...(pins.goToolchain ? { toolchain: pins.goToolchain } : {}),
        ...(pins.commit ? { commit: pins.commit } : {}),
    });
};

/** Builds what is missing of an Argo CD release the real tier runs (REAL_ARGOCD): its argocd binary and the kustomize its image bundles. */
export async function buildArgoCd(
    version: RealArgoCd,
    log: (line: string) => void = () => {},
    dir = argoCdBuildDir(version),
): Promise<void> {
    const pins: { kustomize: string; gitopsEngine: { module: string; version: string }; goToolchain?: string; commit?: string } =
        REAL_ARGOCD[version];
    const bin = path.join(dir, "bin");
    fs.mkdirSync(bin, { recursive: true });
    const out = (name: string) => path.join(bin, `.${name}.partial`);
    const done = (name: string) => fs.renameSync(out(name), path.join(bin, name)); // never a half-written binary
    const withGo = pins.goToolchain ? `, with Go ${pins.goToolchain.slice(2)}` : "";
    if (!fs.existsSync(path.join(bin, "argocd")))
        await buildStep(`Argo CD ${version} (argocd${withGo})`, BUILD_MINUTES.argocd, log, async () => {
            await buildArgoCdBinary(path.join(dir, "src", "argocd"), out("argocd"), {
                version,
                commit: pins.commit,
                engine: pins.gitopsEngine,
                toolchain: pins.goToolchain,
            });
            done("argocd");
        });
    if (!fs.existsSync(path.join(bin, "kustomize")))
        await buildStep(`kustomize ${pins.kustomize} (for Argo CD ${version})`, BUILD_MINUTES.kustomize, log, async () => {
            const gobin = fs.mkdtempSync(path.join(dir, ".gobin-kustomize-"));
            try {
                await go(["install", "-ldflags", "-s -w", `sigs.k8s.io/kustomize/kustomize/v5@${pins.kustomize}`], dir, { GOBIN: gobin });
                fs.renameSync(path.join(gobin, "kustomize"), path.join(bin, "kustomize"));
            } finally {
                fs.rmSync(gobin, { recursive: true, force: true });
            }
        });
}
