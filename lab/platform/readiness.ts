/**
 * Waiting until workloads are ready (Argo CD's controllers, the git daemon), with one deadline that
 * holds (the install's own awaits are off), progress as it goes, and an early end, naming the Pod,
 * the image and the reason, when a Pod cannot start and will not by itself.
 */
import { ClusterPort } from "../ports/cluster";
import { pollUntil } from "../ports/wait";
import type { Pod, Workload } from "../argo/types";

export interface WorkloadRef {
    kind: "Deployment" | "StatefulSet";
    name: string;
}

/** Container states that do not clear by themselves within a deploy (a rate-limited registry, a bad image, a crash loop). */
export const HOPELESS_REASONS = ["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CrashLoopBackOff", "CreateContainerConfigError"];

/**
 * A pull the registry answered with "no such image" (containerd's `code = NotFound ... not found`, a
 * registry's `manifest unknown`): the image will not appear by itself, so the wait ends at once, not
 * after the grace a rate limit or a flaky network gets.
 */
export const IMAGE_NOT_FOUND = /code = NotFound|: not found\b|manifest unknown|repository does not exist/i;

export interface ReadinessOptions {
    /** The deadline. */
    timeoutMs: number;
    /** Time between two looks (default 2 s). */
    intervalMs?: number;
    /** How long a Pod may stay in one of HOPELESS_REASONS before the wait gives up on it (default 90 s). */
    hopelessAfterMs?: number;
    /** A progress line (what is ready, what is waited for). */
    log?: (line: string) => void;
    /** Print progress at most this often when nothing changes (default 15 s). */
    progressEveryMs?: number;
    /**
     * A container's waiting reason is said only once it has lasted this long (default 20 s): while an
     * install starts, a Secret not yet made (CreateContainerConfigError) clears in seconds, and saying
     * it reads as a failure.
     */
    sayAfterMs?: number;
}

/** Why a Deployment or StatefulSet is not ready yet, or null when it is. */
export function notReadyBecause(obj: Workload | null): string | null {
    if (!obj) return "does not exist yet";
    const want = obj.spec?.replicas ?? 1;
    const st = obj.status ?? {};
    if ((st.observedGeneration ?? 0) < (obj.metadata?.generation ?? 0)) return "rollout not yet observed";
    if ((st.updatedReplicas ?? 0) < want) return `${st.updatedReplicas ?? 0}/${want} replicas updated`;
    if ((st.readyReplicas ?? 0) < want) return `${st.readyReplicas ?? 0}/${want} replicas ready`;
    return null;
}

/** Every container of the namespace's Pods that waits for a hopeless reason: `{key, line}`. */
export function hopelessContainers(pods: Pod[]): { key: string; line: string; missingImage: boolean }[] {
    const out: { key: string; line: string; missingImage: boolean }[] = [];
    for (const p of pods) {
        const images = new Map<string, string>(
            [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])].map((c) => [c.name, c.image ?? ""]),
        );
        for (const cs of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
            const w = cs.state?.waiting;
            if (!w || !w.reason || !HOPELESS_REASONS.includes(w.reason)) continue;
            const image = cs.image || images.get(cs.name) || "?";
            out.push({
                key: `${p.metadata?.namespace}/${p.metadata?.name}/${cs.name}/${w.reason}`,
                line: `Pod ${p.metadata?.namespace}/${p.metadata?.name}, container ${cs.name}, image ${image}: ${w.reason}${w.message ? ` (${w.message})` : ""}`,
                missingImage: /ErrImagePull|ImagePullBackOff/.test(w.reason) && IMAGE_NOT_FOUND.test(w.message ?? ""),
            });
        }
    }
    return out;
}

export async function waitWorkloadsReady(
    cluster: ClusterPort,
    namespace: string,
    workloads: readonly WorkloadRef[],
    opts: ReadinessOptions,
): Promise<void> {
    const log = opts.log ?? (() => {});
    const hopelessAfterMs = opts.hopelessAfterMs ?? 90_000;
    const progressEveryMs = opts.progressEveryMs ?? 15_000;
    const sayAfterMs = opts.sayAfterMs ?? 20_000;
    const start = Date.now();
    const firstSeen = new Map<string, number>();
    let why: string[] = [];
    let lastLine = "";
    let lastLogAt = 0;
    log(
        `waiting for ${workloads.map((w) => `${w.kind}/${w.name}`).join(", ")} in ${namespace} to be ready (deadline ${opts.timeoutMs / 1000} s)`,
    );
    await pollUntil(
        async () => {
            why = [];
            const ready: string[] = [];
            for (const w of workloads) {
                const reason = notReadyBecause(await cluster.getWorkload(w.kind, namespace, w.name));
                if (reason) why.push(`${w.kind}/${w.name}: ${reason}`);
                else ready.push(w.name);
            }
            if (!why.length) return true;
            const now = Date.now();
            // only the Pods of the workloads waited for (<deployment>-<hash>-<id>, <statefulset>-<n>)
            const ours = (await cluster.listPods(namespace)).filter((p) =>
                workloads.some((w) => String(p.metadata?.name ?? "").startsWith(`${w.name}-`)),
            );
            const bad = hopelessContainers(ours);
            for (const k of [...firstSeen.keys()]) if (!bad.some((b) => b.key === k)) firstSeen.delete(k); // recovered meanwhile
            for (const b of bad) {
                const since = firstSeen.get(b.key) ?? now;
                firstSeen.set(b.key, since);
                if (b.missingImage) {
                    throw new Error(
                        `${b.line}: the registry has no such image, which does not appear by itself. Check the image's name and tag (kubectl -n ${namespace} describe pod), then run again`,
                    );
                }
                if (now - since >= hopelessAfterMs) {
                    throw new Error(
                        `${b.line} for ${Math.round((now - since) / 1000)} s; this does not clear by itself (a registry's rate limit, such as Docker Hub's, is a common cause). ` +
                            `Fix the cause (kubectl -n ${namespace} describe pod), then run again`,
                    );
                }
            }
            const lasting = bad.filter((b) => now - firstSeen.get(b.key)! >= sayAfterMs);
            const line = `ready: ${ready.length ? ready.join(", ") : "none"}; waiting for ${why.join("; ")}${lasting.length ? `; ${lasting.map((b) => b.line).join("; ")}` : ""}`;
            if (line !== lastLine || now - lastLogAt >= progressEveryMs) {
                log(`${line} (${((now - start) / 1000).toFixed(0)} s)`);
                lastLine = line;
                lastLogAt = now;
            }
            return undefined;
        },
        {
            timeoutMs: opts.timeoutMs,
            intervalMs: opts.intervalMs ?? 2_000,
            describe: () => `timed out after ${opts.timeoutMs / 1000} s waiting for workloads in ${namespace}: ${why.join("; ")}`,
        },
    );
    log(`ready after ${((Date.now() - start) / 1000).toFixed(1)} s`);
}
