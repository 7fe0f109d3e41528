/**
 * Builds what the real node runs beside the plane's Kubernetes binaries, from Go modules and Debian's
 * compiler, into a cache named by the pins (`${XDG_CACHE_HOME:-~/.cache}/gitops-lab/real-node/<pins>/bin`),
 * once: containerd, its runc shim and its client ctr (to import an image archive into the node's
 * containerd, as `k3s ctr` does on a k3s host), CoreDNS with only the plugins a cluster's DNS needs, crane (to
 * assemble and push the images), and the pause program of the sandbox image. kubelet, kube-proxy and
 * kubeadm come from the plane's own Kubernetes build (realplane/build.ts), which builds them once for
 * every tier.
 */
import * as fs from "fs";
import * as path from "path";
import { run } from "../lab/ports/exec";
import { buildStep, go, makeWritable, moduleDir, pinnedCacheDir } from "../realplane/build";
import { REAL_NODE, REAL_PLANE } from "../realplane/versions";

export const NODE_BINARIES = ["containerd", "containerd-shim-runc-v2", "ctr", "coredns", "crane", "pause"] as const;
export type NodeBinary = (typeof NODE_BINARIES)[number];

export function nodeCacheDir(pins: Record<keyof typeof REAL_NODE, string> = REAL_NODE): string {
    return pinnedCacheDir("real-node", `containerd-${pins.containerd}-coredns-${pins.coredns}`, pins);
}

export const nodeBinPath = (name: NodeBinary, dir = nodeCacheDir()) => path.join(dir, "bin", name);

/** CoreDNS's plugins the node's DNS uses (its Corefile: realnode/manifests/coredns.yaml), in CoreDNS's own order. */
export const COREDNS_PLUGINS = ["errors", "log", "health", "ready", "kubernetes", "cache", "reload", "loadbalance"] as const;

/**
 * CoreDNS's main as upstream's coredns.go writes it, importing only COREDNS_PLUGINS instead of
 * core/plugin (every plugin, with clients for clouds the node never talks to): a smaller, faster build.
 */
export function corednsMain(plugins: readonly string[] = COREDNS_PLUGINS): string {
    return [
        "package main",
        "",
        "import (",
        '\t"github.com/coredns/coredns/coremain"',
        ...plugins.map((p) => `\t_ "github.com/coredns/coredns/plugin/${p}"`),
        ")",
        "",
        "func main() {",
        "\tcoremain.Run()",
        "}",
        "",
    ].join("\n");
}

/** Minutes each build takes from cold caches on 2 cores (with another build beside it). */
const BUILD_MINUTES: Record<NodeBinary, number> = { containerd: 6, "containerd-shim-runc-v2": 6, ctr: 6, coredns: 3, crane: 2, pause: 1 };

/** Builds what is missing; `log` hears what is built and how long it took. */
export async function buildRealNode(log: (line: string) => void = () => {}, dir = nodeCacheDir()): Promise<Record<NodeBinary, string>> {
    const P = REAL_NODE;
    const bin = path.join(dir, "bin");
    const src = path.join(dir, "src");
    fs.mkdirSync(bin, { recursive: true });
    const missing = (names: readonly NodeBinary[]) => names.filter((n) => !fs.existsSync(path.join(bin, n)));
    const step = (names: readonly NodeBinary[], what: string, f: () => Promise<void>) =>
        missing(names).length ? buildStep(`${what} (${missing(names).join(", ")})`, BUILD_MINUTES[names[0]], log, f) : Promise.resolve();
    // go install into a folder of its own, then a rename: never a half-written binary in bin/
    const install = async (pkgs: string[], env: NodeJS.ProcessEnv, ldflags: string) => {
        const gobin = fs.mkdtempSync(path.join(dir, ".gobin-"));
        try {
            await go(["install", "-ldflags", ldflags, ...pkgs], dir, { GOBIN: gobin, ...env });
            for (const p of pkgs) {
                const name = p.replace(/@.*$/, "").split("/").pop()!;
                fs.renameSync(path.join(gobin, name), path.join(bin, name));
            }
        } finally {
            fs.rmSync(gobin, { recursive: true, force: true });
        }
    };

    await step(["containerd", "containerd-shim-runc-v2", "ctr"], `containerd ${P.containerd}`, async () => {
        // built in a copy of its module: its go.mod excludes two versions, which go install refuses and a scratch
        // module would not apply (-mod=mod: the download has a vendor folder without the code); as its Makefile builds the static release: no cgo (so no btrfs snapshotter), its tags
        const d = path.join(src, "containerd");
        fs.rmSync(d, { recursive: true, force: true }); // a copy left by an interrupted build is redone
        fs.cpSync(await moduleDir(`github.com/containerd/containerd/v2@${P.containerd}`), d, { recursive: true });
        makeWritable(d);
        const v = "github.com/containerd/containerd/v2/version";
        const ldflags = `-s -w -X ${v}.Version=${P.containerd} -X ${v}.Package=github.com/containerd/containerd/v2`;
        for (const c of missing(["containerd", "containerd-shim-runc-v2", "ctr"])) {
            const out = path.join(bin, `.${c}.partial`);
            await go(
                [
                    "build",
                    "-mod=mod",
                    "-tags",
                    "urfave_cli_no_docs,osusergo,netgo,static_build",
                    "-ldflags",
                    ldflags,
                    "-o",
                    out,
                    `./cmd/${c}`,
                ],
                d,
                { CGO_ENABLED: "0" },
            );
            fs.renameSync(out, path.join(bin, c));
        }
    });
    await step(["coredns"], `CoreDNS ${P.coredns}`, async () => {
        const d = path.join(src, "coredns");
        fs.mkdirSync(d, { recursive: true });
        fs.writeFileSync(
            path.join(d, "go.mod"),
            `module gitops-lab/real-node/coredns\n\ngo 1.23.0\n\nrequire github.com/coredns/coredns ${P.coredns}\n`,
        );
        fs.writeFileSync(path.join(d, "main.go"), corednsMain());
        await go(["mod", "tidy", "-e"], d);
        const out = path.join(bin, ".coredns.partial");
        await go(["build", "-ldflags", `-s -w -X github.com/coredns/coredns/coremain.GitCommit=${P.coredns}`, "-o", out, "."], d, {
            CGO_ENABLED: "0",
        });
        fs.renameSync(out, path.join(bin, "coredns"));
    });
    await step(["crane"], `crane ${P.crane}`, () =>
        install([`github.com/google/go-containerregistry/cmd/crane@${P.crane}`], { CGO_ENABLED: "0" }, "-s -w"),
    );
    await step(["pause"], `pause ${P.pause}`, async () => {
        // the sandbox's one process, from the Kubernetes module's build/pause/linux/pause.c, static as upstream's image has it
        const source = path.join(await moduleDir(`k8s.io/kubernetes@${REAL_PLANE.kubernetes}`), "build", "pause", "linux", "pause.c");
        const out = path.join(bin, ".pause.partial");
        await run("gcc", ["-Os", "-Wall", "-Werror", "-static", `-DVERSION=v${P.pause}`, "-o", out, source], { timeoutMs: 120_000 });
        await run("strip", [out]);
        fs.renameSync(out, path.join(bin, "pause"));
    });
    return Object.fromEntries(NODE_BINARIES.map((b) => [b, nodeBinPath(b, dir)])) as Record<NodeBinary, string>;
}
