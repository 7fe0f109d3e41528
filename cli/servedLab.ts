/**
 * A kubeconfig of a served simulated lab whose cluster cannot answer: its `simulate --serve` has stopped, or
 * is suspended (Ctrl-Z). Said at once by the commands that read a cluster (verify, doctor), not after a
 * request's timeout.
 */
import * as fs from "fs";
import { goneHolder, liveHolder, lockFile } from "../lab/ports/lock";
import { servedLabOf } from "../sim/servedFiles";

/** Why the served lab whose kubeconfig `file` is cannot answer (`command` is what to run again), or undefined. */
export function servedLabSilent(file: string, command: string): string | undefined {
    const root = servedLabOf(file);
    if (!root) return undefined;
    if (!fs.existsSync(lockFile(root)) || goneHolder(lockFile(root)) !== undefined)
        return `${file} is the served lab's under ${root}, and nothing serves it now (its simulate --serve has stopped); serve it again: gitops-lab simulate --root ${root} --serve`;
    const server = liveHolder(lockFile(root));
    if (server?.state === "T")
        return `the served lab under ${root} is suspended (PID ${server.pid}, Ctrl-Z?), so its cluster does not answer: fg it in its terminal (or kill -CONT ${server.pid}), then ${command} again`;
    return undefined;
}
