/**
 * Why one Application of a rollout is not Healthy: a failed hook (hooks.ts), a failed or retrying
 * sync, an error condition, a Degraded resource; and the evidence of an Application's own failed sync.
 */
import { ERROR_CONDITION_TYPES, FAILED_PHASES, HOOK_ANNOTATION } from "../argo/application";
import { isoOf, type Application, type ApplicationSetApplicationStatus } from "../argo/types";
import type { Dump } from "./dump";
import { ageSeconds, type Evidence, type Finding } from "./finding";
import { clipBytes } from "./errorLine";
import { failedHook, goneHookJob, HookInfo, hookType, jobFailed, logCommand, retryingHook, waitingHookPod } from "./hooks";

export interface Cause {
    reason: string;
    message: string;
    hook: HookInfo | null;
    /** A cause that makes the rollout stuck by itself (failed, erroring, retrying, degraded). */
    fatal: boolean;
}

/** How long a hook's Pod may wait to start before the line names it (a minute: scheduling and a container's start take seconds). */
const HOOK_POD_GRACE_SECONDS = 60;

/** The one namespace every object of the dump is in, when it is not `other`'s (a dump made with -n); else undefined. */
function oneNamespace(dump: Dump, other: string): string | undefined {
    const ns = new Set([...dump.applicationSets, ...dump.applications].map((o) => o.metadata?.namespace));
    const [only] = [...ns];
    return ns.size === 1 && only && only !== other ? only : undefined;
}

/** Why one Application of the current step is not Healthy yet. */
export function causeOf(
    dump: Dump,
    app: Application | undefined,
    appStatus: ApplicationSetApplicationStatus | undefined,
    /** The diagnosis's time and patience: a hook Job gone is judged only with them. */
    timing?: { now: Date; stuckAfterSeconds: number },
): Cause {
    if (!app) return { reason: "Missing", message: "the Application does not exist", hook: null, fatal: true };
    const op = app.status?.operationState;
    const hook = failedHook(dump, app);
    const retries = Number(op?.retryCount ?? 0);
    const errs = (app.status?.conditions ?? []).filter((c) => ERROR_CONDITION_TYPES.includes(c.type));
    if (hook) {
        const type = hookType(dump, app, hook);
        const retrying = op?.phase === "Running" && retries > 0;
        const where = hook.log
            ? `: "${hook.log}"`
            : hook.jobGone && dump.fromFile && !dump.jobs.length
              ? // a dump without Jobs says nothing of whether the Job is gone: it was not asked for (or not in its namespace)
                ` (the dump holds no Jobs${dump.pods.length ? "" : " or Pods"}: dump them too, kubectl get ...,jobs,pods -A -o json${oneNamespace(dump, hook.namespace) ? ` (with -A: its objects are all in ${oneNamespace(dump, hook.namespace)}, and the hook's Job is in ${hook.namespace})` : ""}, to read the hook's error; or ${logCommand(hook.namespace, hook.job)})`
              : hook.jobGone
                ? ` (the Job is gone from the cluster, and its Pods' logs with it: ${retrying ? "the next sync attempt runs" : "a new sync runs"} the hook again, whose log then says why)`
                : (!dump.fromFile || dump.pods.length > 0) &&
                    !dump.pods.some((p) => p.metadata?.namespace === hook.namespace && p.metadata?.labels?.["job-name"] === hook.job)
                  ? // read live, or a dump that holds Pods, and no Pod of the Job left (deleted by hand): kubectl logs would
                    // wait for one and fail
                    ` (its Pods are gone, deleted?, and their logs with them: ${retrying ? "the next sync attempt runs" : "a new sync runs"} the hook again, whose log then says why)`
                  : ` (its error is in its Pod's log: ${logCommand(hook.namespace, hook.job)})`;
        const base = `${type ? `${type} hook` : "hook"} Job ${hook.namespace}/${hook.job} failed (${hook.reason}: ${hook.message})${where}`;
        return {
            reason: `${type || "Sync"}HookFailed`,
            message: retrying ? `${base}; the sync is being retried (attempt ${retries} of ${op?.operation?.retry?.limit ?? 5})` : base,
            hook,
            fatal: true,
        };
    }
    if (op?.phase && FAILED_PHASES.includes(op.phase))
        return { reason: `Sync${op.phase}`, message: op.message ?? `the sync ended ${op.phase}`, hook: null, fatal: true };
    // the hook Job the operation waits for is gone (deleted while it ran): it waits until the operation is ended
    const gone = timing ? goneHookJob(dump, app, timing.now, timing.stuckAfterSeconds) : null;
    if (gone)
        return {
            reason: "HookJobGone",
            message: `${retries > 0 ? `retry ${retries} of ${op?.operation?.retry?.limit ?? 5} ` : "its sync "}waits for hook Job ${gone.namespace}/${gone.job}, which is gone from the cluster (deleted while it ran?): it waits until the operation is ended (argocd app terminate-op ${app.metadata?.name})`,
            hook: null,
            fatal: true,
        };
    if (op?.phase === "Running" && retries > 0) {
        // the retry's hook Job is running again and its Pods fail as before: their error, not only "waiting for completion"
        const again = retryingHook(dump, app);
        const type = again
            ? dump.jobs.find((j) => j.metadata?.name === again.job && j.metadata?.namespace === again.namespace)?.metadata?.annotations?.[
                  HOOK_ANNOTATION
              ]
            : undefined;
        const message = again
            ? `${type ? `${type} hook` : "hook"} Job ${again.namespace}/${again.job}: ${again.failed} of its Pods failed so far (the Job makes new ones)${again.log ? `: "${again.log}"` : ` (its error is in its Pods' log: ${logCommand(again.namespace, again.job)})`}; the sync is being retried (attempt ${retries} of ${op?.operation?.retry?.limit ?? 5})`
            : // an earlier attempt failed; the message is the attempt now running's (waiting for a hook's deletion, most often)
              `retry ${retries} of ${op?.operation?.retry?.limit ?? 5} is running${op.message ? `: ${op.message}` : ""}`;
        // the retry's hook Job named (doctor --json's hook), its Pods' failures so far as its reason: it has not failed yet
        const retryHook: HookInfo | null = again
            ? {
                  namespace: again.namespace,
                  job: again.job,
                  reason: "PodsFailing",
                  message: `${again.failed} of its Pods failed so far; the Job makes new ones`,
                  log: again.log,
              }
            : null;
        return { reason: "SyncRetrying", message, hook: retryHook, fatal: true };
    }
    if (errs.length) {
        // one Argo CD cannot compare: said as its finding says it (a source path Git does not have named as such)
        const compare = COMPARE_ERRORS.includes(errs[0].type) ? cannotCompare(app, "")?.message.replace(/^: /, "") : undefined;
        return { reason: errs[0].type, message: compare ?? errs[0].message ?? "", hook: null, fatal: true };
    }
    if (app.status?.health?.status === "Degraded") {
        const degraded = (app.status?.resources ?? [])
            .filter((r) => r.health?.status === "Degraded")
            .map((r) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}${r.health?.message ? `: ${r.health.message}` : ""}`);
        return {
            reason: "Degraded",
            message: degraded.length ? degraded.join("; ") : (app.status.health.message ?? "the Application is Degraded"),
            hook: null,
            fatal: true,
        };
    }
    // its sync waits for a hook whose Pod has not started (a volume's ConfigMap missing, an image not pulled): said while it
    // waits, not "in progress" alone (HookNotStarted, a finding, once it has waited longer than --stuck-after)
    // (after a minute: a Pod being scheduled, or its container made, is not worth a line)
    const notStarted = waitingHookPod(dump, app);
    if (notStarted && timing && ageSeconds(notStarted.since, timing.now) > HOOK_POD_GRACE_SECONDS)
        return {
            reason: "HookNotStarted",
            message: `its sync waits for hook Job ${notStarted.namespace}/${notStarted.job}, whose Pod ${notStarted.pod} has not started yet (${notStarted.reason}${notStarted.since ? ` since ${notStarted.since}` : ""}): kubectl -n ${notStarted.namespace} describe pod ${notStarted.pod} (its Events say what it waits for)`,
            hook: null,
            fatal: false,
        };
    const health = app.status?.health?.status ?? "Unknown";
    const sync = app.status?.sync?.status ?? "Unknown";
    return {
        reason: appStatus?.status ?? health,
        message: `${appStatus?.message ? `${appStatus.message} ` : ""}(sync ${sync}, health ${health})`.trim(),
        hook: null,
        fatal: false,
    };
}

/** Why an Application's own sync failed (a failed hook, a failed or erroring operation, retries after failures), with the evidence; null when it did not. */
export function syncFailure(dump: Dump, app: Application): { reason: string; message: string; evidence: Evidence[] } | null {
    // a failed operation of an earlier revision, the Application now Synced at a later one (a rollback reached what runs): past
    const last = app.status?.operationState;
    const tried = last?.syncResult?.revision ?? last?.operation?.sync?.revision;
    const synced = app.status?.sync?.status === "Synced" ? app.status.sync.revision : undefined;
    if (last?.phase && FAILED_PHASES.includes(last.phase) && tried && synced && tried !== synced) return null;
    const c = causeOf(dump, app, undefined);
    if (!c.hook && !["SyncFailed", "SyncError", "SyncRetrying"].includes(c.reason)) return null;
    const op = app.status?.operationState ?? {};
    const ref = `Application ${app.metadata?.namespace}/${app.metadata?.name}`;
    const evidence: Evidence[] = [
        { object: ref, field: "status.operationState.phase", value: String(op.phase), time: op.finishedAt ?? op.startedAt },
        { object: ref, field: "status.operationState.message", value: String(op.message ?? "") },
    ];
    // (a retry's hook Job still running has no failure of its own to show: the operation's message says it)
    if (c.hook && c.reason !== "SyncRetrying") {
        const hook: HookInfo = c.hook;
        const job = dump.jobs.find((j) => j.metadata?.namespace === hook.namespace && j.metadata?.name === hook.job);
        const failed = jobFailed(job);
        // the Job's own condition where the Job was read; else what the sync result says of the hook (never one as the other)
        evidence.push(
            failed
                ? {
                      object: `Job ${c.hook.namespace}/${c.hook.job}`,
                      field: "status.conditions[Failed].reason",
                      value: String(failed.reason ?? ""),
                      time: isoOf(failed.lastTransitionTime),
                  }
                : { object: ref, field: `status.operationState.syncResult.resources[Job ${c.hook.job}].hookPhase`, value: c.hook.reason },
        );
    }
    return { reason: c.reason, message: c.message, evidence };
}

/** The conditions of an Application Argo CD cannot compare (controller/state.go, appcontroller.go refreshAppConditions). */
const COMPARE_ERRORS = ["ComparisonError", "InvalidSpecError"];

/**
 * An Application Argo CD cannot compare (a source that does not render), as a finding without its
 * place (`who` names it); a source path with a `{{key}}` left in it names the key the generator did not fill.
 */
export function cannotCompare(app: Application, who: string): Omit<Finding, "application" | "step"> | null {
    const cannot = (app.status?.conditions ?? []).find((c) => COMPARE_ERRORS.includes(c.type));
    if (!cannot) return null;
    const ref = `Application ${app.metadata?.namespace}/${app.metadata?.name}`;
    const sourcePath = app.spec?.source?.path ?? "";
    const templated = /\{\{[^}]*\}\}/.exec(sourcePath);
    // the source path not in the repository at its revision (a release that has no folder: releases/1.2): kustomize's
    // "no such file or directory" or the repo-server's evalsymlink failure, said as that
    // (kustomize's "must build at directory" is of the path itself; a resource it lists missing, missing.yaml, is not)
    const named =
        /must build at directory: not a valid directory: evalsymlink failure on '<path to cached source>\/([^']+)'/.exec(
            cannot.message ?? "",
        )?.[1] ?? (/app path does not exist/i.test(cannot.message ?? "") ? sourcePath : "");
    const trimmed = sourcePath.replace(/^\.\/|\/+$/g, "");
    // a path under the source path is a resource its kustomization.yaml lists (envs/dev/missing.yaml), not the source path
    const inside = named && trimmed && named.startsWith(`${trimmed}/`) ? named.slice(trimmed.length + 1) : "";
    const missing = inside ? "" : named;
    const revision = app.spec?.source?.targetRevision ?? "its revision";
    const noPath =
        !templated && inside
            ? `${trimmed}/kustomization.yaml lists ${inside}, which is not in the repository at ${revision} (a file added to resources: and never committed, or a typo)`
            : !templated && missing
              ? `its source path ${missing} is not in the repository at ${revision} (the file or element it was generated from names a folder Git does not have: a typo?)`
              : undefined;
    return {
        kind: "CannotCompare",
        message: `${who}: Argo CD cannot compare it (${cannot.type}): ${templated ? `its source path ${sourcePath} holds ${templated[0]}, which the generator did not fill: the file or element it was generated from has no such key (a typo?)` : (noPath ?? clipBytes(cannot.message ?? "", 300))}`,
        evidence: [
            {
                object: ref,
                field: `status.conditions[${cannot.type}]`,
                value: String(cannot.message ?? ""),
                time: cannot.lastTransitionTime,
            },
            ...(templated || noPath ? [{ object: ref, field: "spec.source.path", value: sourcePath }] : []),
        ],
        todo: templated
            ? "fix the key in the file the Application was generated from, commit and push: the ApplicationSet generates it anew"
            : `fix the source in Git and push (kubectl get application -n ${app.metadata?.namespace} ${app.metadata?.name} -o jsonpath={.status.conditions} shows the whole error)`,
    };
}
