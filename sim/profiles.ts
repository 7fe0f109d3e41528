/**
 * How fast the simulated Argo CD is. Every delay of the simulation comes from one of these
 * profiles, on the simulation's clock (sim/clock.ts).
 */

export interface ArgoTimings {
    /** The ApplicationSet controller (re)generating Applications after a change. */
    generateDelayMs: number;
    /** From a trigger (refresh annotation, watch event, poll) to the comparison's status write (queue + compare + render). */
    reconcileDelayMs: number;
    /** From a status write that set `operation` to the operation starting (phase Running). */
    operationDelayMs: number;
    /** An operation's run: Running until it finishes (apply, wait for health). */
    operationDurationMs: number;
    /** Git polling without a refresh: every interval plus up to `pollJitterMs` (argocd-cm timeout.reconciliation). */
    pollIntervalMs: number;
    pollJitterMs: number;
    /** The repo-server's branch -> SHA cache (--revision-cache-expiration). */
    revisionCacheMs: number;
    /** A comparison that is not forced ignores repo errors this long (--repo-error-grace-period-seconds). */
    repoErrorGraceMs: number;
    /** selfHeal backoff: base, factor, cap (--self-heal-backoff-timeout-seconds, -factor, -cap-seconds). */
    selfHealBackoffMs: number;
    selfHealBackoffFactor: number;
    selfHealBackoffCapMs: number;
    /** A failed sync's retry backoff: base, factor, cap (the Application's retry.backoff defaults). */
    retryBackoffMs: number;
    retryBackoffFactor: number;
    retryBackoffCapMs: number;
    /** Kubernetes, for the tenants lab: a Pod's run (pull, start, the script), the Job controller's Pod failure backoff base, a Deployment's rollout. */
    podRunMs: number;
    jobBackoffMs: number;
    rolloutMs: number;
    /**
     * Timestamps in whole seconds, as upstream writes them (metav1.Time): a RollingSync entry then
     * stays Pending for a sync started within the second it went Pending, and is synced again. The
     * fast profile keeps milliseconds (its work takes a few milliseconds, so every sync would be).
     */
    wholeSecondTimes: boolean;
    /**
     * v3.6's reconcile gate: how long after a change the ApplicationSet controller waits before it asks
     * for a refresh of the Applications not reconciled since (`--refresh-grace-period-seconds`). v3.5 has
     * no gate and never reads it.
     */
    refreshGraceMs: number;
}

/**
 * Argo CD v3.5.1 at its defaults. Sources (upstream, tag v3.5.1):
 * - poll: argocd-cm `timeout.reconciliation` 120 s, `timeout.reconciliation.jitter` 60 s
 *   (controller/appcontroller.go, util/settings);
 * - revision cache: `--revision-cache-expiration` 3 min (reposerver/cache/cache.go);
 * - repo-error grace: `--repo-error-grace-period-seconds` 180 (controller/state.go);
 * - selfHeal: `--self-heal-backoff-timeout-seconds` 2, `--self-heal-backoff-factor` 3,
 *   `--self-heal-backoff-cap-seconds` 300 (cmd/argocd-application-controller);
 * - sync retry: backoff 5 s, factor 2, max 3 min (pkg/apis/application/v1alpha1 DefaultSyncRetry*).
 * The durations of work are our estimates for one small kustomize app on a single-node k3s, not
 * measurements: 1 s from a trigger to a comparison written (a git fetch and a kustomize build),
 * 0.5 s for the ApplicationSet controller to generate, 0.2 s for an operation to start and 1.5 s
 * for it to apply and assess health. Kubernetes: the Job controller's Pod failure backoff is 10 s,
 * doubling (pkg/controller/job); a hook Pod's run (busybox, cached) about 2 s and a one-replica
 * Deployment's rollout about 5 s are our estimates.
 */
export const V351_DEFAULTS: ArgoTimings = {
    generateDelayMs: 500,
    reconcileDelayMs: 1_000,
    operationDelayMs: 200,
    operationDurationMs: 1_500,
    pollIntervalMs: 120_000,
    pollJitterMs: 60_000,
    revisionCacheMs: 180_000,
    repoErrorGraceMs: 180_000,
    selfHealBackoffMs: 2_000,
    selfHealBackoffFactor: 3,
    selfHealBackoffCapMs: 300_000,
    retryBackoffMs: 5_000,
    retryBackoffFactor: 2,
    retryBackoffCapMs: 180_000,
    podRunMs: 2_000,
    jobBackoffMs: 10_000,
    rolloutMs: 5_000,
    wholeSecondTimes: true,
    // v3.6.2's default (cmd/argocd-applicationset-controller: ARGOCD_APPLICATIONSET_CONTROLLER_REFRESH_GRACE_PERIOD_SECONDS, 30)
    refreshGraceMs: 30_000,
};

/**
 * The same behaviour in short delays, for tests on the real clock: the caches, the grace period
 * and the poll keep Argo CD's lengths (the scenario refreshes, so it never waits for them), the
 * work and the backoffs are short.
 */
export const FAST: ArgoTimings = {
    ...V351_DEFAULTS,
    generateDelayMs: 150,
    reconcileDelayMs: 50,
    operationDelayMs: 20,
    operationDurationMs: 120,
    pollIntervalMs: 180_000,
    pollJitterMs: 0,
    selfHealBackoffMs: 400,
    selfHealBackoffCapMs: 5_000,
    retryBackoffMs: 100,
    retryBackoffCapMs: 1_000,
    podRunMs: 30,
    jobBackoffMs: 60,
    rolloutMs: 100,
    wholeSecondTimes: false,
    // the gate holds every rollout of a change this long, whatever refreshes the scenario makes: short here
    refreshGraceMs: 300,
};

/** `simulate --realistic`: the defaults' work durations on the real clock (the long waits stay long). */
export const REALISTIC: ArgoTimings = { ...V351_DEFAULTS };
