/**
 * A kubeconfig of a served simulated lab whose cluster cannot answer: its `simulate --serve` has stopped, or
 * is suspended (Ctrl-Z). Said at once by the commands that read a cluster (verify, doctor), not after a
 * request's timeout.
 */
import * as fs from "fs";
import { goneHolder, liveHolder, lockFile, SERVING } from "../lab/ports/lock";
import { clusterStateFile, servedKubeconfig, servedLabOf } from "../sim/servedFiles";
import { shellWord } from "../lab/ports/shellWord";
import { shopLayout } from "../lab/shop/layout";
import { shopLabProgress } from "../lab/shop/solve";
import { tenantsLayout } from "../lab/tenants/layout";
import { tenantsLabProgress } from "../lab/tenants/solve";

/** The command that serves the labs under `root` again: with the --lab they are (simulate takes the shop lab without one). */
function serveAgain(root: string): string {
    const shop = shopLabProgress(shopLayout(root)) > 0;
    const tenants = tenantsLabProgress(tenantsLayout(root)) > 0;
    const lab = tenants ? (shop ? " --lab both" : " --lab tenants") : "";
    return `gitops-lab simulate --root ${shellWord(root)}${lab} --serve`;
}

/** Why the served lab whose kubeconfig `file` is cannot answer (`command` is what to run again), or undefined. */
export function servedLabSilent(file: string, command: string): string | undefined {
    const root = servedLabOf(file);
    if (!root) return undefined;
    if (!fs.existsSync(lockFile(root)) || goneHolder(lockFile(root)) !== undefined)
        return `${file} is the served lab's under ${root}, and nothing serves it now (its simulate --serve has stopped); serve it again: ${serveAgain(root)}`;
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
    return `the lab under ${root} is served (PID ${server.pid}), but its kubeconfig ${file} is gone (removed?): its run writes it as it starts, so stop it (Ctrl-C, or kill ${server.pid}) and serve it again (${serveAgain(root)}), which writes it anew`;
}

/**
 * Why a simulated lab (its cluster saved in simulated-cluster.json) has no cluster to read when no kubeconfig was
 * given: nothing serves it now. Undefined for a lab host's root, or a lab served now.
 */
export function simulatedNotServed(root: string, command: string): string | undefined {
    if (!fs.existsSync(clusterStateFile(root)) || liveHolder(lockFile(root))?.what === SERVING) return undefined;
    return `the lab under ${root} is simulated (its cluster is ${clusterStateFile(root)}) and nothing serves it now: serve it (${serveAgain(root)}) and ${command} with the kubeconfig it prints`;
}
