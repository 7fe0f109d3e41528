/**
 * Builds the Pulumi CLI and the kubernetes resource provider from Go modules (versions.ts, PULUMI) into
 * a cache beside the plane's — `${XDG_CACHE_HOME:-~/.cache}/gitops-lab/pulumi/<pins>/bin` — once; later
 * runs reuse it. The CLI comes from a scratch module importing `pkg/v3/cmd/pulumi` with pkg's own
 * replace directives; the provider from a copy of its module with the two things a module download
 * lacks: the generated `schema-embed.json` (upstream's `generate.go`, run as upstream does) and a
 * published `sdk/v4` in place of `replace ... => ../sdk`.
 */
import * as fs from "fs";
import * as path from "path";
import { buildStep, copiedReplaces, pinnedCacheDir, go, goModOf, makeWritable, moduleDir, scratch } from "./build";
import { PULUMI } from "./versions";

export const PULUMI_BINARIES = ["pulumi", "pulumi-resource-kubernetes"] as const;
export type PulumiBinary = (typeof PULUMI_BINARIES)[number];

export function pulumiCacheDir(pins: Record<keyof typeof PULUMI, string> = PULUMI): string {
    return pinnedCacheDir("pulumi", `${pins.cli}-kubernetes-${pins.kubernetes}`, pins);
}

export const pulumiBinPath = (name: PulumiBinary, dir = pulumiCacheDir()) => path.join(dir, "bin", name);

/** True when both binaries are in the cache. */
export const pulumiBuilt = (dir = pulumiCacheDir()) => PULUMI_BINARIES.every((b) => fs.existsSync(pulumiBinPath(b, dir)));

/** Builds what is missing; `log` hears what is built and how long it took. */
export async function buildPulumi(log: (line: string) => void = () => {}, dir = pulumiCacheDir()): Promise<Record<PulumiBinary, string>> {
    const P = PULUMI;
    const bin = path.join(dir, "bin");
    const src = path.join(dir, "src");
    fs.mkdirSync(bin, { recursive: true });
    const out = (name: string) => path.join(bin, `.${name}.partial`);
    const done = (name: string) => fs.renameSync(out(name), path.join(bin, name)); // never a half-written binary
    const step = (name: PulumiBinary, what: string, minutes: number, f: () => Promise<void>) =>
        fs.existsSync(path.join(bin, name)) ? Promise.resolve() : buildStep(`${what} (${name})`, minutes, log, f);

    await step("pulumi", `the Pulumi CLI ${P.cli}`, 17, async () => {
        const d = path.join(src, "pulumi");
        fs.mkdirSync(d, { recursive: true });
        const pkgMod = await goModOf(`github.com/pulumi/pulumi/pkg/v3@${P.cli}`, d);
        const goVersion = /^go\s+(\S+)/m.exec(pkgMod)?.[1] ?? "1.24";
        const replaces = copiedReplaces(pkgMod, { "github.com/pulumi/pulumi/sdk/v3": P.cli });
        await scratch(
            d,
            "gitops-lab/pulumi/cli",
            goVersion,
            [`github.com/pulumi/pulumi/pkg/v3 ${P.cli}`, `github.com/pulumi/pulumi/sdk/v3 ${P.cli}`],
            replaces,
            ["github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"],
        );
        const ldflags = `-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=${P.cli}`;
        await go(["build", "-ldflags", ldflags, "-o", out("pulumi"), "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"], d);
        done("pulumi");
    });

    await step("pulumi-resource-kubernetes", `the kubernetes provider ${P.kubernetes}`, 25, async () => {
        const mod = "github.com/pulumi/pulumi-kubernetes/provider/v4";
        const d = path.join(src, "pulumi-kubernetes-provider");
        fs.rmSync(d, { recursive: true, force: true }); // a copy left by an interrupted build is redone
        fs.cpSync(await moduleDir(`${mod}@${P.kubernetesModule}`), d, { recursive: true });
        makeWritable(d); // the module cache's files are read-only
        await go(
            [
                "mod",
                "edit",
                "-dropreplace=github.com/pulumi/pulumi-kubernetes/sdk/v4",
                `-require=github.com/pulumi/pulumi-kubernetes/sdk/v4@${P.kubernetesSdk}`,
            ],
            d,
        );
        await go(["mod", "tidy", "-e"], d);
        const cmd = path.join(d, "cmd", "pulumi-resource-kubernetes");
        await go(["run", "./generate.go"], cmd, { VERSION: P.kubernetes });
        await go(
            [
                "build",
                "-ldflags",
                `-s -w -X ${mod}/pkg/version.Version=${P.kubernetes}`,
                "-o",
                out("pulumi-resource-kubernetes"),
                "./cmd/pulumi-resource-kubernetes",
            ],
            d,
        );
        done("pulumi-resource-kubernetes");
    });
    return { pulumi: pulumiBinPath("pulumi", dir), "pulumi-resource-kubernetes": pulumiBinPath("pulumi-resource-kubernetes", dir) };
}
