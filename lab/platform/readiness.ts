/** Waiting until workloads are ready (used for Argo CD's controllers), with a deadline. */
import { ClusterPort } from "../ports/cluster";
import { pollUntil } from "../ports/wait";

export interface WorkloadRef {
    kind: "Deployment" | "StatefulSet";
    name: string;
}

/** Why a Deployment or StatefulSet is not ready yet, or null when it is. */
export function notReadyBecause(obj: any): string | null {
    if (!obj) return "does not exist yet";
    const want = obj.spec?.replicas ?? 1;
    const st = obj.status ?? {};
    if ((st.observedGeneration ?? 0) < (obj.metadata?.generation ?? 0)) return "rollout not yet observed";
    if ((st.updatedReplicas ?? 0) < want) return `${st.updatedReplicas ?? 0}/${want} replicas updated`;
    if ((st.readyReplicas ?? 0) < want) return `${st.readyReplicas ?? 0}/${want} replicas ready`;
    return null;
}

export async function waitWorkloadsReady(cluster: ClusterPort, namespace: string, workloads: readonly WorkloadRef[], timeoutMs: number, log: (l: string) => void = () => {}, intervalMs = 2_000): Promise<void> {
    const start = Date.now();
    let why: string[] = [];
    log(`waiting for ${workloads.map((w) => `${w.kind}/${w.name}`).join(", ")} in ${namespace} to be ready (deadline ${timeoutMs / 1000} s)`);
    await pollUntil(
        async () => {
            why = [];
            for (const w of workloads) {
                const reason = notReadyBecause(await cluster.getWorkload(w.kind, namespace, w.name));
                if (reason) why.push(`${w.kind}/${w.name}: ${reason}`);
            }
            return why.length ? undefined : true;
        },
        { timeoutMs, intervalMs, describe: () => `timed out after ${timeoutMs / 1000} s waiting for workloads in ${namespace}: ${why.join("; ")}` },
    );
    log(`ready after ${((Date.now() - start) / 1000).toFixed(1)} s`);
}
