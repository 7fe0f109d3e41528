/** `kubectl kustomize` (kustomize built into kubectl), the renderer the labs check their overlays with. */
import { parseAllDocuments } from "yaml";
import { run } from "./exec";

/** The objects `kubectl kustomize <dir>` renders. */
export async function kustomizeBuild(dir: string, kubectl = "kubectl"): Promise<any[]> {
    const { stdout } = await run(kubectl, ["kustomize", dir]);
    return parseAllDocuments(stdout).map((d) => d.toJSON()).filter(Boolean);
}
