/**
 * The labs on the real node without Pulumi, for the tests that drive the labs' own code and watch the
 * real Argo CD (the trace comparisons, the kubectl tables): the node, then what the stack installs on
 * it, applied the way the stack applies it — argocd-cmd-params-cm first, the pinned install
 * (components/argocd-install) server-side, the git daemon Pod serving the root's srv/bare from its
 * hostPath — and the same readiness wait. Nothing runs on the host but the node: the in-cluster git
 * URL is the git daemon Pod's Service, the hook Pods are containers.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";
import { run } from "../lab/ports/exec";
import { KubeCluster } from "../lab/ports/cluster";
import { argoCdCmdParams, argoCdInstallDir, ArgoCdVersion, ARGOCD_WORKLOADS } from "../lab/platform/argocd";
import { REAL_ARGOCD_DEFAULT, REAL_ARGOCD_VERSIONS } from "../realplane/versions";
import { gitDaemonDeployment, gitDaemonService, GITD_NAME, GITSRV_NAMESPACE } from "../lab/platform/gitDaemon";
import { waitWorkloadsReady } from "../lab/platform/readiness";
import { shopLayout, ShopLayout } from "../lab/shop/layout";
import { prepareHostRoot } from "../lab/kit/layout";
import { checkPlaneTools } from "../realplane/tools";
import { RealNode, startRealNode } from "./node";

/** The Argo CD releases the node has images of: those realplane/versions.ts builds. */
export const NODE_ARGOCD_VERSIONS: ArgoCdVersion[] = REAL_ARGOCD_VERSIONS;

/** The install the real tier applies for a version (default: REAL_ARGOCD_DEFAULT); one the node has no images of is refused. */
export function nodeArgoCdInstallDir(version: ArgoCdVersion = REAL_ARGOCD_DEFAULT): string {
    if (!NODE_ARGOCD_VERSIONS.includes(version))
        throw new Error(`the real node has no images of Argo CD ${version}: it runs ${NODE_ARGOCD_VERSIONS.join(" or ")}`);
    return argoCdInstallDir(version);
}

export interface NodeLab {
    layout: ShopLayout;
    node: RealNode;
    kubeconfig: string;
    kubeconfigFile: string;
    stop(): Promise<void>;
}

/** Applies objects server-side, as the stack's provider does. */
async function applyObjects(kubeconfigFile: string, objs: object[]): Promise<void> {
    const file = path.join(os.tmpdir(), `node-lab-${process.pid}-${Date.now()}.yaml`);
    fs.writeFileSync(file, objs.map((o) => stringify(o)).join("---\n"));
    try {
        await run("kubectl", ["--kubeconfig", kubeconfigFile, "apply", "--server-side", "-f", file], { timeoutMs: 120_000 });
    } finally {
        fs.rmSync(file, { force: true });
    }
}

/** Argo CD on a cluster as the stack installs it (argocd-cmd-params-cm first, then the pinned install), waited for. */
export async function installArgoCd(
    kubeconfigFile: string,
    log: (line: string) => void = () => {},
    version: ArgoCdVersion = REAL_ARGOCD_DEFAULT,
): Promise<void> {
    const params = argoCdCmdParams();
    await applyObjects(kubeconfigFile, [{ apiVersion: "v1", kind: "Namespace", metadata: { name: params.metadata.namespace } }, params]);
    await run("kubectl", ["--kubeconfig", kubeconfigFile, "apply", "--server-side", "-k", nodeArgoCdInstallDir(version)], {
        timeoutMs: 300_000,
    });
    await waitWorkloadsReady(new KubeCluster(fs.readFileSync(kubeconfigFile, "utf8")), params.metadata.namespace, ARGOCD_WORKLOADS, {
        timeoutMs: 600_000,
        log: (l) => log(`[argocd] ${l}`),
    });
}

/** Removes what installArgoCd applied, waiting until it is gone. */
export async function uninstallArgoCd(kubeconfigFile: string, version: ArgoCdVersion = REAL_ARGOCD_DEFAULT): Promise<void> {
    await run(
        "kubectl",
        [
            "--kubeconfig",
            kubeconfigFile,
            "delete",
            "--wait",
            "--timeout",
            "300s",
            "-k",
            nodeArgoCdInstallDir(version),
            "--ignore-not-found",
        ],
        { timeoutMs: 330_000 },
    );
    await run(
        "kubectl",
        [
            "--kubeconfig",
            kubeconfigFile,
            "delete",
            "namespace",
            argoCdCmdParams().metadata.namespace,
            "--wait",
            "--timeout",
            "300s",
            "--ignore-not-found",
        ],
        { timeoutMs: 330_000 },
    );
}

/** Argo CD and the git daemon (serving the lab's bare repositories from the host) on a bare cluster, as the stack installs them, waited for. */
export async function installPlatform(
    kubeconfigFile: string,
    layout: ShopLayout,
    log: (line: string) => void = () => {},
    version: ArgoCdVersion = REAL_ARGOCD_DEFAULT,
): Promise<void> {
    const t0 = Date.now();
    prepareHostRoot(layout);
    await applyObjects(kubeconfigFile, [
        { apiVersion: "v1", kind: "Namespace", metadata: { name: GITSRV_NAMESPACE } },
        gitDaemonDeployment({ hostPath: layout.bareDir }),
        gitDaemonService(),
    ]);
    await installArgoCd(kubeconfigFile, log, version);
    await waitWorkloadsReady(
        new KubeCluster(fs.readFileSync(kubeconfigFile, "utf8")),
        GITSRV_NAMESPACE,
        [{ kind: "Deployment", name: GITD_NAME }],
        { timeoutMs: 300_000, log: (l) => log(`[gitd] ${l}`) },
    );
    log(`Argo CD and the git daemon run on the node after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** Starts the node under `nodeRoot` (default: root) and installs Argo CD and the git daemon on it for the lab under `root`. */
export async function startNodeLab(
    root: string,
    opts: {
        nodeRoot?: string;
        log?: (line: string) => void;
        argocdVersion?: ArgoCdVersion;
        /** Given the node's stop as soon as it starts (see startRealNode). */
        onStop?: (stop: () => Promise<void>) => void;
    } = {},
): Promise<NodeLab> {
    const log = opts.log ?? (() => {});
    const layout = shopLayout(root);
    await checkPlaneTools(false); // the lab's own git, kubectl and setpriv, before the node starts
    const node = await startRealNode({ root: opts.nodeRoot ?? root, log, onStop: opts.onStop });
    try {
        await installPlatform(node.kubeconfigFile, layout, log, opts.argocdVersion);
    } catch (e) {
        await node.stop();
        throw e;
    }
    return { layout, node, kubeconfig: node.kubeconfig, kubeconfigFile: node.kubeconfigFile, stop: () => node.stop() };
}
