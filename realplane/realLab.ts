/**
 * The labs on the real control plane (`gitops-lab simulate --cluster real`): the same host layout
 * under a root, the git daemon on 127.0.0.1:9418 (as nobody, when root) serving the bare
 * repositories at the in-cluster URL, the real Kubernetes API and the real Argo CD v3.5.1, the tenants lab's hook
 * Pods run for real (realplane/hookPods.ts).
 */
import { GITD_ENV, GITD_PORT } from "../lab/platform/gitDaemon";
import { labLayout, LabLayout } from "../lab/shop/layout";
import { HOOK_JOB } from "../lab/tenants/layout";
import { RunningDaemon, startGitDaemon } from "../sim/gitDaemon";
import { prepareHostRoot } from "../sim/simulatedLab";
import { acquirePlaneLock, checkPlaneTools, RealPlane, startRealPlane } from "./plane";

export interface RealLab {
    layout: LabLayout;
    plane: RealPlane;
    daemon: RunningDaemon;
    kubeconfig: string;
    stop(): Promise<void>;
}

export async function startRealLab(root: string, log: (line: string) => void = () => {}): Promise<RealLab> {
    const layout = labLayout(root);
    await checkPlaneTools(false);
    // the plane's lock covers its git daemon too: port 9418 is the host's
    const lock = acquirePlaneLock();
    let daemon: RunningDaemon;
    try {
        prepareHostRoot(layout);
        daemon = await startGitDaemon(layout.bareDir, { asNobody: process.getuid?.() === 0, env: GITD_ENV, port: GITD_PORT }).catch((e) => {
            throw new Error(`the git daemon could not listen on 127.0.0.1:${GITD_PORT}, the port of the in-cluster URL (${e.message}); is another git daemon running?`);
        });
    } catch (e) {
        lock.release();
        throw e;
    }
    try {
        // the tenants lab's hook script is what stalls its rollout: its Pods run for real, not on KWOK's stages
        const plane = await startRealPlane({ log, lock, hookJobs: [HOOK_JOB] });
        return {
            layout,
            plane,
            daemon,
            kubeconfig: plane.kubeconfig,
            stop: (() => {
                let stopping: Promise<void> | undefined;
                return () =>
                    (stopping ??= (async () => {
                        await plane.stop();
                        await daemon.stop();
                        lock.release();
                    })());
            })(),
        };
    } catch (e) {
        await daemon.stop();
        lock.release();
        throw e;
    }
}
