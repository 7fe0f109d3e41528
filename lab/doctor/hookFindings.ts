/**
 * The rollout doctor's findings of a sync that waits for a hook that will not end it: a hook Job that
 * has finished while the operation still shows it Running, one gone from the cluster (deleted while it
 * ran), one whose Pod has not started.
 */
import { isoOf, type Application } from "../argo/types";
import { ageSeconds, appRef, type Entry, type Finding, type FindingsInput, stepText } from "./finding";

export function hookFindings(app: Application, e: Entry, input: FindingsInput): Finding[] {
    const { now, stuckAfterSeconds } = input;
    const op = app.status?.operationState;
    const out: Finding[] = [];
    // a hook Job gone (deleted by hand while it ran): the operation waits for it until someone ends the operation
    const gone = input.goneHook(app);
    if (gone)
        out.push({
            kind: "HookLeftRunning",
            application: e.name,
            step: e.step,
            message: `${e.name}${stepText(e)}: its sync waits for hook Job ${gone.namespace}/${gone.job}, which is gone from the cluster (deleted while it ran?): Argo CD waits for it until the operation is ended, and a new commit does not end it`,
            evidence: [{ object: appRef(app), field: "status.operationState.message", value: String(op?.message), time: op?.startedAt }],
            todo: `end the operation (argocd app terminate-op ${e.name}); RollingSync then syncs it again at the next commit (or sync it by hand: argocd app sync ${e.name})`,
        });
    // a hook the operation still shows Running while its Job has finished
    if (op?.phase === "Running") {
        for (const r of op.syncResult?.resources ?? []) {
            if (!r.hookType || r.hookPhase !== "Running" || r.kind !== "Job") continue;
            const ns = r.namespace || app.spec?.destination?.namespace || "";
            const job = input.job(ns, r.name);
            const done = (job?.status?.conditions ?? []).find((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True");
            // the controller sees a finished hook at its next round: only one ended longer than --stuck-after ago
            if (!done || !(ageSeconds(done.lastTransitionTime ?? job?.status?.completionTime, now) > stuckAfterSeconds)) continue;
            out.push({
                kind: "HookLeftRunning",
                application: e.name,
                step: e.step,
                message: `${e.name}${stepText(e)}: its ${r.hookType} hook Job ${ns}/${r.name} is ${done.type === "Complete" ? "complete" : "failed"}, but the sync operation still shows it Running: the operation waits for a hook that has ended`,
                evidence: [
                    {
                        object: appRef(app),
                        field: `status.operationState.syncResult.resources[Job ${ns}/${r.name}].hookPhase`,
                        value: "Running",
                        time: op.startedAt,
                    },
                    {
                        object: `Job ${ns}/${r.name}`,
                        field: `status.conditions[${done.type}]`,
                        value: "True",
                        time: isoOf(done.lastTransitionTime),
                    },
                ],
                todo: `end the operation (argocd app terminate-op ${e.name}) and sync again; check the hook's finalizers and hook-delete-policy`,
            });
        }
    }
    // a hook whose Pod has not started (a ConfigMap volume missing, an image not pulled): the operation waits for it
    const waiting = input.waitingHook(app);
    if (waiting && ageSeconds(waiting.since, now) > stuckAfterSeconds)
        out.push({
            kind: "HookNotStarted",
            application: e.name,
            step: e.step,
            message: `${e.name}${stepText(e)}: its sync waits for hook Job ${waiting.namespace}/${waiting.job}, whose Pod ${waiting.pod} has not started (${waiting.reason}): the kubelet waits for something the Pod needs (a ConfigMap or Secret volume not there, an image it cannot pull)`,
            evidence: [
                { object: appRef(app), field: "status.operationState.message", value: String(op?.message), time: op?.startedAt },
                {
                    object: `Pod ${waiting.namespace}/${waiting.pod}`,
                    field: "status.containerStatuses[0].state.waiting.reason",
                    value: waiting.reason,
                    time: waiting.since,
                },
            ],
            todo: `kubectl -n ${waiting.namespace} describe pod ${waiting.pod} (its Events say what it waits for); make that, or fix the hook in Git`,
        });
    return out;
}
