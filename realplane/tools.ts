/**
 * What the real tiers need on the host besides the node's own tools (realnode/node.ts): the lab's
 * git, kubectl and setpriv, and Go when something must be built; and whether the plane's binaries
 * (realplane/build.ts) are in the cache.
 */
import * as fs from "fs";
import { realHost } from "../lab/platform/preflight";
import { BINARIES, binPath } from "./build";

/** The programs the real tiers run, and how to get each on Debian or Ubuntu. */
const PLANE_TOOLS: Record<string, string> = {
    kubectl: "install kubectl 1.33 or later (it carries kustomize)",
    git: "apt-get install git",
    setpriv: "apt-get install util-linux",
};

/** What is missing to run (and, when `build`, to build) the real tiers: one entry per tool, with how to install it. */
export async function missingPlaneTools(build: boolean): Promise<string[]> {
    const tools: Record<string, string> = {
        ...PLANE_TOOLS,
        ...(build ? { go: "Go 1.24 or later on PATH (the first build takes about 40 minutes)" } : {}),
    };
    const missing: string[] = [];
    for (const [tool, how] of Object.entries(tools)) {
        if (!(await realHost.which(tool))) missing.push(`${tool} (${how})`);
    }
    return missing;
}

/** Refuses at once, in one line, when a tool is missing. */
export async function checkPlaneTools(build: boolean): Promise<void> {
    const missing = await missingPlaneTools(build);
    if (missing.length) throw new Error(`the real tiers need ${missing.join(", ")}; nothing was started`);
}

/** Whether every plane binary is in the cache. */
export const planeBuilt = () => BINARIES.every((b) => fs.existsSync(binPath(b)));
