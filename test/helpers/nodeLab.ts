/**
 * "Given the real node with Argo CD and the git daemon": the lab's root and the node's own root in
 * fresh temporary folders (the root readable by the git daemon's nobody), the node's progress printed.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ArgoCdVersion } from "../../lab/platform/argocd";
import { NodeLab, startNodeLab } from "../../realnode/lab";

/** `argocdVersion`: the release installed (default: the real tier's, REAL_ARGOCD_DEFAULT). */
export async function startNodeLabIn(name: string, argocdVersion?: ArgoCdVersion): Promise<{ root: string; lab: NodeLab }> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
    fs.chmodSync(root, 0o755);
    const lab = await startNodeLab(root, {
        nodeRoot: fs.mkdtempSync(path.join(os.tmpdir(), `${name}-node-`)),
        log: (l) => console.log(`  ${l}`),
        argocdVersion,
    });
    return { root, lab };
}
