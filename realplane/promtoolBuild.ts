/**
 * Builds Prometheus's `promtool` from its Go module (versions.ts, PROMETHEUS) into a cache beside the
 * plane's — `${XDG_CACHE_HOME:-~/.cache}/gitops-lab/prometheus/<pins>/bin/promtool` — once. The
 * module has no replace directives, so `go install` builds it directly.
 */
import * as fs from "fs";
import * as path from "path";
import { buildStep, go, pinnedCacheDir } from "./build";
import { PROMETHEUS } from "./versions";

export function promtoolCacheDir(pins: Record<keyof typeof PROMETHEUS, string> = PROMETHEUS): string {
    return pinnedCacheDir("prometheus", `promtool-${pins.version}`, pins);
}

export const promtoolPath = (dir = promtoolCacheDir()) => path.join(dir, "bin", "promtool");

export const promtoolBuilt = (dir = promtoolCacheDir()) => fs.existsSync(promtoolPath(dir));

/** Builds promtool if it is missing; `log` hears what is built and how long it took. */
export async function buildPromtool(log: (line: string) => void = () => {}, dir = promtoolCacheDir()): Promise<string> {
    if (promtoolBuilt(dir)) return promtoolPath(dir);
    const P = PROMETHEUS;
    await buildStep(`promtool (Prometheus ${P.version})`, 12, log, async () => {
        fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
        const gobin = fs.mkdtempSync(path.join(dir, ".gobin-")); // never a half-written binary in bin/
        const ldflags = `-s -w -X github.com/prometheus/common/version.Version=${P.version}`;
        await go(["install", "-ldflags", ldflags, `github.com/prometheus/prometheus/cmd/promtool@${P.module}`], dir, { GOBIN: gobin });
        fs.renameSync(path.join(gobin, "promtool"), promtoolPath(dir));
        fs.rmSync(gobin, { recursive: true, force: true });
    });
    return promtoolPath(dir);
}
