/** How the tenants lab's result values are written: what each of stall.json's keys is, and a release as the lab writes it. */
import { RELEASES, TENANTS } from "./layout";

/** What each of stall.json's keys is, for a hint that names a wrong one (docs/tenants-lab.md has the whole text). */
export const STALL_FIELDS: Record<string, string> = {
    appset: "the ApplicationSet as namespace/name",
    release: "the release the stalled rollout brings",
    step: "the step the rollout is stuck at (1-based, as the RolloutProgressing condition says)",
    steps: "how many steps the rollout has",
    blocking: "the blocked Application's name (metadata.name, no namespace)",
    hook_job: "its failed hook Job as namespace/name",
    passed: "the Applications of the steps before the stuck one, by step",
    waiting: "the Applications of the steps after it that still wait, in step order",
    auto_sync_disabled_by_rollingsync:
        "whether RollingSync wrote automated.enabled: false into the Applications: look, don't guess (kubectl -n argocd get applications -o custom-columns=NAME:.metadata.name,ENABLED:.spec.syncPolicy.automated.enabled shows what each holds)",
};

/** stall.hook_job's slips, as the hint for its key: one of the Job's Pods, or the Job in another namespace than the tenant's. */
export function hookJobSlip(v: unknown): { hook_job?: string } {
    if (typeof v !== "string") return {};
    // one of the hook Job's Pods (site-setup-x7k2p, from kubectl get pods) for the Job
    if (/^mandant-b\/site-setup-[a-z0-9]{5}$/.test(v))
        return { hook_job: `${v} is one of the hook Job's Pods: write the Job itself, namespace/name (kubectl get jobs -n mandant-b)` };
    // kubectl's TYPE/NAME (kubectl get jobs -o name: job.batch/site-setup) for namespace/name
    const typed = /^(?:([a-z0-9-]+)\/)?jobs?(?:\.batch)?\/([\w.-]+)$/.exec(v);
    if (typed)
        return {
            hook_job: `${v} holds kubectl's type prefix (${v.split("/").slice(-2, -1)[0]}/, as -o name prints it), not a namespace: write namespace/name, the Job in the tenant's namespace (kubectl get jobs -n mandant-b)`,
        };
    // the Application (argocd/mandant-b, from kubectl get applications -n argocd) for its hook Job
    if ((TENANTS as readonly string[]).includes(v.split("/").pop() ?? ""))
        return {
            hook_job: `${v} names the Application, not its hook Job: write the Job the PreSync hook made, namespace/name, in the tenant's namespace (kubectl get jobs -n mandant-b)`,
        };
    // the Job's name without its namespace
    if (v === "site-setup") return { hook_job: `${v} has no namespace: write it as namespace/name (kubectl get jobs -n mandant-b)` };
    // the Job's name right, its namespace Argo CD's: a hook runs where its Application deploys, the tenant's namespace
    const [ns, name] = v.split("/");
    if (name === "site-setup" && ns !== "mandant-b")
        return {
            hook_job: `${v} names namespace ${ns}: a hook Job runs in its Application's destination namespace, the tenant's (kubectl get jobs -n mandant-b)`,
        };
    return {};
}

/** A release written with a v or its folder (v1.2.1, releases/1.2.1) in these values: the hint, as the tenant files write it. */
export function releaseSlip(...values: unknown[]): string | undefined {
    const strings = values.flatMap((v) =>
        typeof v === "string" ? [v] : v && typeof v === "object" ? Object.values(v).filter((x): x is string => typeof x === "string") : [],
    );
    // releases/1.2.1, v1.2.1, or the site's image (registry.lab.internal/tenants/site:1.2.1)
    const bare = (v: string) => v.trim().replace(/^(?:releases\/|\S*\/site:)?v?/i, "");
    const slip = strings.find((v) => bare(v) !== v && (Object.values(RELEASES) as string[]).includes(bare(v)));
    return slip === undefined
        ? undefined
        : `${JSON.stringify(slip)} is not how the lab writes a release: write ${JSON.stringify(bare(slip))}, as the tenant files (tenants/<tenant>.yaml) have it`;
}

/** A check's outcome with the release-spelling hint when that is what is wrong. */
export function withReleaseSlip<T extends { ok: boolean; hint?: string }>(outcome: T, ...values: unknown[]): T {
    const hint = outcome.ok ? undefined : (releaseSlip(...values) ?? tenantsLeftOut(values));
    return hint ? { ...outcome, hint } : outcome;
}

/** A map of tenants (running) that leaves one out: named. */
function tenantsLeftOut(values: unknown[]): string | undefined {
    const map = values.find((v): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v));
    // (keys of its own, a namespace/name, are another slip, which the check says)
    const lacks =
        map && Object.keys(map).every((k) => (TENANTS as readonly string[]).includes(k)) ? TENANTS.filter((t) => !(t in map)) : [];
    return lacks.length ? `running lacks ${lacks.join(", ")}: list all four tenants, each with the release its site runs` : undefined;
}
