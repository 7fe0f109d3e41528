/**
 * A kubeconfig of a served simulated lab whose cluster cannot answer: its `simulate --serve` has stopped, or
 * is suspended (Ctrl-Z). Said at once by the commands that read a cluster (verify, doctor), not after a
 * request's timeout.
 */
import * as fs from "fs";
import { goneHolder, liveHolder, lockFile, SERVING } from "../lab/ports/lock";
import { servedKubeconfig, servedLabOf } from "../sim/servedFiles";

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

/**
 * Why a lab served now has no kubeconfig to read: the learner removed the one its run wrote (the run writes it once,
 * as it starts). Undefined when the lab is not served now, or its kubeconfig is there.
 */
export function servedKubeconfigGone(root: string): string | undefined {
    const file = servedKubeconfig(root);
    const server = liveHolder(lockFile(root));
    if (fs.existsSync(file) || server?.what !== SERVING) return undefined;
    return `the lab under ${root} is served (PID ${server.pid}), but its kubeconfig ${file} is gone (removed?): its run writes it as it starts, so stop it (Ctrl-C, or kill ${server.pid}) and serve it again (gitops-lab simulate --root ${root} --serve), which writes it anew`;
}
