/**
 * Dumps shaped like Argo CD v3.5.1 for the rollout doctor: a RollingSync ApplicationSet with one
 * step per tenant (docs/tenants-lab.md), its Applications, PreSync hook Jobs (status from the
 * upstream job-failed.yaml) and their Pods. Tests validate these objects against the CRD schemas.
 */
import { readFixture } from "./upstream";

export const NOW = new Date("2026-05-29T15:00:00Z");
export const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();
const REV_OLD = "1".repeat(40);
const REV_NEW = "2".repeat(40);

export interface TenantSpec {
    name: string;
    step: number;
    /** The ApplicationSet's per-app status. */
    status: "Waiting" | "Pending" | "Progressing" | "Healthy";
    since?: number; // minutes ago
    app?: any; // overrides of the Application's status
}

export function appSet(
    name: string,
    tenants: TenantSpec[],
    opts: { rolloutStep?: number | null; strategy?: boolean; since?: number } = {},
): any {
    const steps = [...new Set(tenants.map((t) => t.step))].sort((a, b) => a - b);
    const conditions: any[] = [
        {
            type: "ParametersGenerated",
            status: "True",
            reason: "ParametersGenerated",
            message: "Successfully generated parameters for all Applications",
            lastTransitionTime: minutesAgo(300),
        },
        {
            type: "ResourcesUpToDate",
            status: "True",
            reason: "ApplicationSetUpToDate",
            message: "All applications have been generated successfully",
            lastTransitionTime: minutesAgo(300),
        },
    ];
    if (opts.strategy !== false) {
        conditions.push(
            opts.rolloutStep
                ? {
                      type: "RolloutProgressing",
                      status: "True",
                      reason: "ApplicationSetModified",
                      message: `ApplicationSet is performing rollout of step ${opts.rolloutStep}`,
                      lastTransitionTime: minutesAgo(opts.since ?? 60),
                  }
                : {
                      type: "RolloutProgressing",
                      status: "False",
                      reason: "ApplicationSetRolloutComplete",
                      message: "ApplicationSet Rollout has completed",
                      lastTransitionTime: minutesAgo(opts.since ?? 10),
                  },
        );
    }
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "ApplicationSet",
        metadata: { name, namespace: "argocd", uid: `uid-${name}` },
        spec: {
            goTemplate: true,
            generators: [
                { git: { repoURL: "https://git.example.org/platform/tenants.git", revision: "main", files: [{ path: "tenants/*.yaml" }] } },
            ],
            ...(opts.strategy === false
                ? {}
                : {
                      strategy: {
                          type: "RollingSync",
                          rollingSync: {
                              steps: steps.map((s) => ({
                                  matchExpressions: [
                                      {
                                          key: "example.org/tenant",
                                          operator: "In",
                                          values: tenants.filter((t) => t.step === s).map((t) => t.name),
                                      },
                                  ],
                              })),
                          },
                      },
                  }),
            template: {
                metadata: { name: "{{.tenant}}", labels: { "example.org/tenant": "{{.tenant}}" } },
                spec: {
                    project: "default",
                    source: { repoURL: "https://git.example.org/platform/sites.git", targetRevision: "main", path: "tenants/{{.tenant}}" },
                    destination: { server: "https://kubernetes.default.svc", namespace: "{{.tenant}}" },
                    syncPolicy: { automated: { prune: true, selfHeal: true } },
                },
            },
        },
        status: {
            conditions,
            ...(opts.strategy === false
                ? {}
                : {
                      applicationStatus: tenants.map((t) => ({
                          application: t.name,
                          status: t.status,
                          step: String(t.step),
                          targetRevisions: [REV_NEW],
                          lastTransitionTime: minutesAgo(t.since ?? 60),
                          message:
                              t.status === "Healthy"
                                  ? "Application resource is already Healthy, updating status from Waiting to Healthy."
                                  : t.status === "Progressing"
                                    ? "Application resource became Progressing, updating status from Pending to Progressing."
                                    : t.status === "Pending"
                                      ? "Application moved to Pending status, watching for the Application resource to start Progressing."
                                      : "Application is out of date with the current AppSet generation, setting status to Waiting.",
                      })),
                  }),
        },
    };
}

export function application(appset: any, t: TenantSpec, rolling = true): any {
    const healthy = t.status === "Healthy";
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: {
            name: t.name,
            namespace: "argocd",
            labels: { "example.org/tenant": t.name },
            ownerReferences: [
                {
                    apiVersion: "argoproj.io/v1alpha1",
                    kind: "ApplicationSet",
                    name: appset.metadata.name,
                    uid: appset.metadata.uid,
                    controller: true,
                    blockOwnerDeletion: true,
                },
            ],
        },
        spec: {
            project: "default",
            source: { repoURL: "https://git.example.org/platform/sites.git", targetRevision: "main", path: `tenants/${t.name}` },
            destination: { server: "https://kubernetes.default.svc", namespace: t.name },
            // under RollingSync the ApplicationSet controller writes enabled: false into every Application
            syncPolicy: { automated: { ...(rolling ? { enabled: false } : {}), prune: true, selfHeal: true } },
        },
        status: {
            sync: { status: healthy ? "Synced" : "OutOfSync", revision: healthy ? REV_NEW : REV_OLD },
            health: { status: "Healthy" },
            // written at every reconcile (every few minutes at rest): the dump's time, near enough
            reconciledAt: minutesAgo(0),
            ...(healthy
                ? {
                      operationState: {
                          phase: "Succeeded",
                          message: "successfully synced (all tasks run)",
                          startedAt: minutesAgo(90),
                          finishedAt: minutesAgo(89),
                          operation: { sync: { revision: REV_NEW } },
                          syncResult: { revision: REV_NEW, resources: [] },
                      },
                  }
                : {}),
            ...(t.app ?? {}),
        },
    };
}

/** The field report's hook failure: the sync's PreSync Job failed; `retrying` while Argo CD still retries. */
export function failedPreSync(job: string, ns: string, retrying: boolean): any {
    return {
        sync: { status: "OutOfSync", revision: REV_NEW },
        health: { status: "Healthy" },
        operationState: {
            phase: retrying ? "Running" : "Failed",
            message: retrying
                ? "one or more synchronization tasks completed unsuccessfully. Retrying attempt #2 at 2:03PM."
                : "one or more synchronization tasks completed unsuccessfully (retried 5 times).",
            retryCount: retrying ? 2 : 5,
            startedAt: minutesAgo(62),
            ...(retrying ? {} : { finishedAt: minutesAgo(58) }),
            operation: {
                sync: { revision: REV_NEW },
                initiatedBy: { username: "applicationset-controller", automated: true },
                retry: { limit: 5 },
            },
            syncResult: {
                revision: REV_NEW,
                resources: [
                    {
                        group: "batch",
                        version: "v1",
                        kind: "Job",
                        namespace: ns,
                        name: job,
                        hookType: "PreSync",
                        hookPhase: "Failed",
                        message: "Job has reached the specified backoff limit",
                        syncPhase: "PreSync",
                    },
                ],
            },
        },
    };
}

/**
 * A PreSync hook Job of Application `app` (default: the one named like its namespace), tracked as Argo
 * CD v3 tracks what it applies (the tracking-id annotation); failed ones carry the upstream
 * job-failed.yaml status.
 */
export function hookJob(
    ns: string,
    name: string,
    state: "failed" | "running" | "complete",
    opts: { app?: string; minutesOld?: number } = {},
): any {
    const upstream = readFixture("job-failed.yaml")[0];
    const annotations = {
        "argocd.argoproj.io/hook": "PreSync",
        "argocd.argoproj.io/tracking-id": `${opts.app ?? ns}:batch/Job:${ns}/${name}`,
    };
    return {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name, namespace: ns, uid: `job-${ns}-${name}`, annotations, creationTimestamp: minutesAgo(opts.minutesOld ?? 62) },
        spec: {
            backoffLimit: 2,
            template: {
                spec: {
                    restartPolicy: "Never",
                    containers: [
                        { name: "setup", image: "registry.example.org/sites/typo3:1.1.0", command: ["vendor/bin/typo3", "setup"] },
                    ],
                },
            },
        },
        status:
            state === "failed"
                ? { ...upstream.status, failed: 3, startTime: minutesAgo(62) }
                : state === "running"
                  ? { active: 1, failed: 1, startTime: minutesAgo(2) }
                  : {
                        succeeded: 1,
                        startTime: minutesAgo(80),
                        completionTime: minutesAgo(79),
                        conditions: [{ type: "Complete", status: "True", lastTransitionTime: minutesAgo(79) }],
                    },
    };
}

export function hookPod(ns: string, job: string, suffix: string, message: string, minutesOld: number): any {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
            name: `${job}-${suffix}`,
            namespace: ns,
            creationTimestamp: minutesAgo(minutesOld),
            labels: { "job-name": job, "batch.kubernetes.io/job-name": job },
            ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name: job, uid: `job-${ns}-${job}` }],
        },
        status: {
            phase: "Failed",
            containerStatuses: [
                {
                    name: "setup",
                    ready: false,
                    restartCount: 0,
                    image: "registry.example.org/sites/typo3:1.1.0",
                    state: { terminated: { exitCode: 1, reason: "Error", message } },
                },
            ],
        },
    };
}

export const TYPO3_ERROR = "In ConfigurationManager.php line 387:\n\n  config/system/settings.php is not writable\n";

/** As a support bundle: the v1 List kubectl prints. */
export function list(...items: any[]): any {
    return { apiVersion: "v1", kind: "List", metadata: { resourceVersion: "" }, items };
}

/** The field report: four tenants, one step each; step 2's PreSync hook failed; c and d wait. */
export function fieldReport(opts: { retrying?: boolean } = {}): any {
    const tenants: TenantSpec[] = [
        { name: "mandant-a", step: 1, status: "Healthy", since: 70 },
        { name: "mandant-b", step: 2, status: "Progressing", since: 58, app: failedPreSync("site-setup", "mandant-b", !!opts.retrying) },
        { name: "mandant-c", step: 3, status: "Waiting", since: 75 },
        { name: "mandant-d", step: 4, status: "Waiting", since: 75 },
    ];
    const set = appSet("tenants", tenants, { rolloutStep: 2, since: 58 });
    return list(
        set,
        ...tenants.map((t) => application(set, t)),
        hookJob("mandant-b", "site-setup", opts.retrying ? "running" : "failed"),
        hookPod("mandant-b", "site-setup", "7kq2x", TYPO3_ERROR, 61),
        hookPod("mandant-b", "site-setup", "m4n8d", TYPO3_ERROR, 59),
        hookJob("mandant-a", "site-setup", "complete"),
    );
}

/** The newcomer's run at the tenants stall: mandant-c raced ahead into step 3 and its own hook failed (a race v3.5.1 allows). */
export function raced(): any {
    const tenants: TenantSpec[] = [
        { name: "mandant-a", step: 1, status: "Healthy", since: 70 },
        { name: "mandant-b", step: 2, status: "Progressing", since: 58, app: failedPreSync("site-setup", "mandant-b", false) },
        { name: "mandant-c", step: 3, status: "Progressing", since: 57, app: failedPreSync("site-setup", "mandant-c", false) },
        { name: "mandant-d", step: 4, status: "Waiting", since: 75 },
    ];
    const set = appSet("tenants", tenants, { rolloutStep: 2, since: 58 });
    return list(
        set,
        ...tenants.map((t) => application(set, t)),
        hookJob("mandant-b", "site-setup", "failed"),
        hookJob("mandant-c", "site-setup", "failed"),
    );
}
