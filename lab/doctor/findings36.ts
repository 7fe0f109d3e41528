/**
 * The doctor's findings on what only Argo CD 3.6 writes (applicationset/progressivesync/ and
 * applicationset_controller.go at v3.6.2): its reconcile gate, its refusal of a RollingSync with no
 * steps; and that RollingSync on 3.5, which runs no rollout at all. findings.ts gathers them with the rest.
 */
import { REFRESH_ANNOTATION } from "../argo/application";
import { PENDING_CHANGE_MESSAGES, REFRESH_GRACE_SECONDS, writtenBy36 } from "../argo/rollingSync";
import type { Entry, Evidence, Finding, FindingsInput } from "./finding";
import { PROGRESSIVE_SYNC_APP_STATUS, type ProgressiveSyncCount } from "../argo/appsetMetrics";
import type { Application, ApplicationSet } from "../argo/types";
import { appRef, setRef, stepsOf } from "./finding";

/** What Argo CD 3.6's reconcile gate waits for (ensureApplicationsReconciled), read from the objects; null when it holds nothing. */
export interface Gate {
    /** The newest transition of an entry Waiting on a change: every Application must be reconciled since. */
    since: string;
    /** Still within the grace period, when the ApplicationSet controller only waits. */
    inGrace: boolean;
    /** The Applications not reconciled since, each with its entry's step. */
    behind: (Entry & { app: Application })[];
}

/**
 * v3.6's gate as the objects show it: an ApplicationSet written by 3.6 (its InvalidRolloutConfig
 * condition), an entry Waiting on a change, and an Application whose `status.reconciledAt` is before
 * that change (or missing). v3.5 has no gate: null.
 */
export function gateOf(appset: ApplicationSet, entries: Entry[], now: Date): Gate | null {
    if (!writtenBy36(appset)) return null;
    let since: string | null = null;
    for (const e of entries) {
        const st = e.status;
        if (st?.status !== "Waiting" || !st.lastTransitionTime || !PENDING_CHANGE_MESSAGES.includes(st.message ?? "")) continue;
        if (since === null || Date.parse(st.lastTransitionTime) > Date.parse(since)) since = st.lastTransitionTime;
    }
    if (since === null) return null;
    const inGrace = now.getTime() - Date.parse(since) < REFRESH_GRACE_SECONDS * 1000;
    const changedAt = since;
    const behind = entries.filter(
        (e): e is Entry & { app: Application } =>
            !!e.app && (!e.app.status?.reconciledAt || Date.parse(e.app.status.reconciledAt) < Date.parse(changedAt)),
    );
    if (!inGrace && !behind.length) return null;
    return { since, inGrace, behind };
}

/**
 * The gate as findings: one per Application it waits for once its grace period is over (within it,
 * the wait is what follows every change, and no finding: the rollout's line says it waits).
 */
export function gateFindings(input: FindingsInput): Finding[] {
    const gate = gateOf(input.appset, input.entries, input.now);
    if (!gate || gate.inGrace) return [];
    const set = input.appset;
    return gate.behind.map((e) => {
        const at: string | undefined = e.app.status?.reconciledAt;
        const refresh: string | undefined = e.app.metadata?.annotations?.[REFRESH_ANNOTATION];
        const asked = refresh ? `; the refresh it was asked for (${REFRESH_ANNOTATION}: ${refresh}) is not done yet` : "";
        return {
            kind: "ReconcileGate" as const,
            application: e.name,
            step: e.step,
            message: `Argo CD 3.6's reconcile gate holds every step: ${e.name} has not been reconciled since the change at ${gate.since} (last reconciled ${at ?? "never"})${asked}`,
            evidence: [
                {
                    object: setRef(set),
                    field: "status.applicationStatus[Waiting].lastTransitionTime",
                    value: gate.since,
                    time: gate.since,
                },
                { object: appRef(e.app), field: "status.reconciledAt", value: at ?? "(none)", time: at },
                { object: appRef(e.app), field: `metadata.annotations[${REFRESH_ANNOTATION}]`, value: refresh ?? "(none)" },
            ],
            todo: `the application controller must compare ${e.name} again: is it running and is its queue moving (kubectl -n argocd logs statefulset/argocd-application-controller)? kubectl -n ${e.app.metadata?.namespace} annotate application ${e.name} ${REFRESH_ANNOTATION}=normal asks for it`,
        };
    });
}

/** Argo CD 3.6's ErrorOccurred condition with reason ApplicationSetRolloutError: the controller refused the rollout and generated nothing. */
export function rolloutErrorFindings(appset: ApplicationSet): Finding[] {
    return (appset.status?.conditions ?? [])
        .filter((c) => c.type === "ErrorOccurred" && c.status === "True" && c.reason === "ApplicationSetRolloutError")
        .map((c) => ({
            kind: "RolloutError" as const,
            application: null,
            step: null,
            message: `Argo CD refuses the rollout (its ErrorOccurred condition, reason ApplicationSetRolloutError, Argo CD 3.6 and later): ${c.message}; until it is fixed no Application of the ApplicationSet is generated or updated`,
            evidence: [
                { object: setRef(appset), field: "status.conditions[ErrorOccurred]", value: String(c.message), time: c.lastTransitionTime },
            ],
            todo:
                stepsOf(appset).length === 0
                    ? "give spec.strategy.rollingSync its steps (matchExpressions on the Applications' labels), or drop the strategy"
                    : "fix spec.strategy as the condition says",
        }));
}

/** A RollingSync with no steps where Argo CD does not refuse it (3.5): no rollout runs at all. */
export function noStepsFinding(appset: ApplicationSet): Finding {
    return {
        kind: "NoSteps",
        application: null,
        step: null,
        message:
            "spec.strategy.rollingSync has no steps: Argo CD 3.5 runs no rollout (the ApplicationSet writes no rollout status, and each Application syncs by its own syncPolicy); Argo CD 3.6 refuses it with ErrorOccurred",
        evidence: [{ object: setRef(appset), field: "spec.strategy.rollingSync.steps", value: "[]" }],
        todo: "give spec.strategy.rollingSync its steps (matchExpressions on the Applications' labels), or drop the strategy",
    };
}

/**
 * Argo CD 3.6's own count of a step's Applications per RollingSync status (its metric), as evidence;
 * null where the controller's metrics were not read (3.5, a dump, a role without services/proxy).
 */
export function stepMetricEvidence(counts: ProgressiveSyncCount[] | undefined, appset: ApplicationSet, step: number): Evidence | null {
    const mine = (counts ?? []).filter(
        (c) => c.namespace === appset.metadata?.namespace && c.name === appset.metadata?.name && c.step === String(step) && c.count > 0,
    );
    if (!mine.length) return null;
    return {
        object: `Argo CD 3.6's metric ${PROGRESSIVE_SYNC_APP_STATUS}{namespace="${appset.metadata?.namespace}",name="${appset.metadata?.name}",step="${step}"}`,
        field: "progressiveStatus",
        value: mine.map((c) => `${c.status} ${c.count}`).join(", "),
    };
}
