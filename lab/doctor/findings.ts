/**
 * The rollout doctor's named findings: every known way a RollingSync rollout of Argo CD v3.5.1 stops
 * moving or leaves an Application behind (applicationset/progressivesync/ and the upstream issues
 * each kind names), each with what is stuck, why, the evidence (object, field, value, time) and one
 * line on what to do. diagnose.ts finds the stuck step; this file looks at every Application of the
 * ApplicationSet, at any step, and at the rollout's own configuration. Pure functions over objects.
 */
import { maxUpdateLimit, ROLLING_SYNC_OPERATORS, stepSelects } from "../argo/rollingSync";
import { gateFindings } from "./findings36";
import { cannotCompare } from "./cause";
import { hookFindings } from "./hookFindings";
import { ageSeconds, appRef, setRef, stepsOf, stepText, type Entry, type Finding, type FindingsInput } from "./finding";
import { SYNC_WINDOW_BLOCKED, windowsBlocking } from "../argo/syncWindows";
import type { Application, ApplicationSet } from "../argo/types";
import { APPSET_REFRESH_ANNOTATION } from "../argo/application";
import { closest, distance } from "fastest-levenshtein";

/** The rollout's configuration: steps, operators, maxUpdate, what each Application is selected by. */
function configFindings(input: FindingsInput): Finding[] {
    const { appset, entries } = input;
    const steps = stepsOf(appset);
    const out: Finding[] = [];
    // which steps select each Application, worked out once (steps x Applications: thousands of each at scale)
    const withApp = entries.filter((e) => e.app);
    const selectedBy = new Map(
        withApp.map((e) => {
            const labels = e.app?.metadata?.labels ?? {};
            return [e, steps.map((s, i) => (stepSelects(s, labels) ? i + 1 : 0)).filter(Boolean)] as const;
        }),
    );
    const selectedIn = steps.map(() => 0);
    for (const by of selectedBy.values()) for (const n of by) selectedIn[n - 1]++;
    steps.forEach((step, i) => {
        const n = i + 1;
        const field = `spec.strategy.rollingSync.steps[${i}]`;
        for (const [j, expr] of (step.matchExpressions ?? []).entries()) {
            if (ROLLING_SYNC_OPERATORS.includes(expr.operator)) continue;
            out.push({
                kind: "InvalidOperator",
                application: null,
                step: n,
                message: `step ${n} uses the operator "${expr.operator}" on ${expr.key}: RollingSync understands only In and NotIn (Argo CD 3.5 and 3.6), so this step selects exactly the Applications without the label ${expr.key}`,
                evidence: [{ object: setRef(appset), field: `${field}.matchExpressions[${j}].operator`, value: String(expr.operator) }],
                todo: `write it with In or NotIn and the values it means (Exists/DoesNotExist are not supported by RollingSync)`,
            });
        }
        const selected = selectedIn[i];
        if (!(step.matchExpressions ?? []).length)
            out.push({
                kind: "EmptyStep",
                application: null,
                step: n,
                message: `step ${n} has no matchExpressions: it selects every Application (${selected}), so every one no earlier step selects goes in this step`,
                evidence: [{ object: setRef(appset), field: `${field}.matchExpressions`, value: "[]" }],
                todo: `give step ${n} the matchExpressions of the Applications it is meant for, or remove it`,
            });
        // (a step with an operator RollingSync does not know: InvalidOperator above says why it selects none)
        else if (
            withApp.length &&
            !selected &&
            !entries.some((e) => !e.app && String(e.status?.step) === String(n)) &&
            (step.matchExpressions ?? []).every((e) => ROLLING_SYNC_OPERATORS.includes(e.operator))
        )
            out.push({
                kind: "EmptyStep",
                application: null,
                step: n,
                message: `step ${n} selects no Application: its matchExpressions match none of the ${entries.filter((e) => e.app).length} Applications' labels (${emptyWhy(step.matchExpressions ?? [], entries)})`,
                evidence: [{ object: setRef(appset), field: `${field}.matchExpressions`, value: JSON.stringify(step.matchExpressions) }],
                todo: `compare the step's keys and values with the Applications' labels (kubectl get applications -n ${appset.metadata?.namespace} --show-labels)`,
            });
        const maxUpdate = step.maxUpdate;
        if (maxUpdate === undefined || maxUpdate === null) return;
        const valid =
            typeof maxUpdate === "number"
                ? Number.isInteger(maxUpdate) && maxUpdate >= 1
                : typeof maxUpdate === "string" && /^(\d+)%$/.test(maxUpdate) && Number(maxUpdate.slice(0, -1)) >= 1;
        if (!valid) {
            const limit = maxUpdateLimit(maxUpdate, selected);
            const effect =
                limit !== null && Number.isFinite(limit) && limit < 1
                    ? `no Application of step ${n} is ever allowed to update: the step never moves`
                    : `Argo CD cannot scale it and updates ${limit === 1 ? "one Application" : `${limit} Applications`} of the step at a time`;
            out.push({
                kind: "InvalidMaxUpdate",
                application: null,
                step: n,
                message: `step ${n}'s maxUpdate ${JSON.stringify(maxUpdate)} is not a count of at least 1 or a percentage of at least 1%: ${effect}`,
                evidence: [{ object: setRef(appset), field: `${field}.maxUpdate`, value: JSON.stringify(maxUpdate) }],
                todo: `set maxUpdate to a count (1, 2, …) or a percentage ("25%"), or remove it to update the whole step at once`,
            });
        }
    });
    if (!steps.length) return out;
    for (const e of entries) {
        if (!e.app) continue;
        const labels = e.app.metadata?.labels ?? {};
        // a later step with no matchExpressions is a catch-all (EmptyStep says so), not a second selection
        const by = selectedBy.get(e)!.filter((n, k) => k === 0 || (steps[n - 1].matchExpressions ?? []).length > 0);
        const labelText = Object.entries(labels)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ");
        if (!by.length)
            out.push({
                kind: "NotSelected",
                application: e.name,
                step: -1,
                message: `${e.name} is selected by no step (its step is -1): the rollout never syncs it, and with automated sync disabled by RollingSync nothing else does`,
                evidence: [
                    { object: appRef(e.app), field: "metadata.labels", value: labelText || "(none)" },
                    ...(e.status
                        ? [{ object: setRef(appset), field: `status.applicationStatus[${e.name}].step`, value: String(e.status.step) }]
                        : []),
                ],
                todo: `add a step whose matchExpressions select ${e.name}'s labels, or change its labels in the ApplicationSet's template`,
            });
        else if (by.length > 1)
            out.push({
                kind: "SelectedTwice",
                application: e.name,
                step: by[0],
                message: `${e.name} is selected by steps ${by.join(" and ")}: it rolls out in step ${by[0]}, and step ${by[by.length - 1]} waits for it too`,
                evidence: [{ object: appRef(e.app), field: "metadata.labels", value: labelText }],
                todo: `make the steps' matchExpressions exclusive (NotIn in the later step), so each Application is in one step`,
            });
    }
    return out;
}

/** RFC 3339 times compared at whole seconds, as Argo CD's metav1.Time are. */
const seconds = (iso: string | undefined) => (iso ? Math.floor(Date.parse(iso) / 1000) : NaN);

/** Whether every retry runs one revision: 3.6's RollingSync pins it in the operation; 3.5's resolves the branch anew. */
function pinnedSync(app: Application): boolean {
    const sync = (app.operation ?? app.status?.operationState?.operation)?.sync;
    return !!(sync?.revision || sync?.revisions?.length);
}

/** Each Application's own state, at any step. */
function applicationFindings(input: FindingsInput): Finding[] {
    const { appset, entries, current, now, stuckAfterSeconds } = input;
    const out: Finding[] = [];
    const steps = stepsOf(appset);
    const entryRef = (e: Entry) => `status.applicationStatus[${e.name}]`;
    for (const e of entries) {
        const app = e.app;
        const st = e.status;
        if (!app) {
            if (st)
                out.push({
                    kind: "DeletedApplication",
                    application: e.name,
                    step: e.step,
                    message: `the rollout has an entry for ${e.name} (step ${st.step}, ${st.status}), but ${input.fromFile ? "the dump holds no such Application (left out of it, or deleted?)" : "no such Application exists"}: ${st.status === "Healthy" ? "it is counted as done" : `step ${st.step} waits for it`}`,
                    evidence: [
                        { object: setRef(appset), field: `${entryRef(e)}.status`, value: String(st.status), time: st.lastTransitionTime },
                    ],
                    todo: input.fromFile
                        ? `dump every Application with the rest (kubectl get applicationsets.argoproj.io,applications.argoproj.io,appprojects.argoproj.io,jobs,pods -A -o json); if it is not in the cluster either, have the ApplicationSet controller rewrite its status (kubectl annotate applicationset -n ${appset.metadata?.namespace} ${appset.metadata?.name} argocd.argoproj.io/application-set-refresh=true --overwrite)`
                        : `have the ApplicationSet controller rewrite its status (kubectl annotate applicationset -n ${appset.metadata?.namespace} ${appset.metadata?.name} argocd.argoproj.io/application-set-refresh=true --overwrite); if the entry stays, restart the ApplicationSet controller`,
                });
            continue;
        }
        const op = app.status?.operationState;
        const sync = app.status?.sync?.status;
        const health = app.status?.health?.status;
        // an entry Waiting has a newer revision to come: its last sync's failure is the old revision's, unless that sync
        // ran at the entry's own target (a sync by hand of a tenant the rollout has not reached: it failed on its own)
        // (a hook Job gone while the sync waits for it: HookLeftRunning says what ends it, not a fix in Git)
        const synced = op?.syncResult?.revision ?? op?.operation?.sync?.revision;
        const atTarget = !!synced && (st?.targetRevisions ?? []).includes(synced);
        const failure = (st?.status === "Waiting" && !atTarget) || input.goneHook(app) ? null : input.syncFailure(app);
        if (failure) {
            out.push({
                kind: "SyncFailed",
                application: e.name,
                step: e.step,
                // its resources gone too (the Application deleted and made again: a cascade took them): the tenant runs nothing
                message: `${e.name}${stepText(e)}: its own sync failed: ${failure.message}${health === "Missing" ? `; its resources are not in the cluster (health Missing: deleted with an Application made again since?), so it runs nothing until a sync succeeds` : ""}`,
                evidence: failure.evidence,
                todo:
                    op?.phase === "Running"
                        ? // 3.6 pins RollingSync's sync to the entry's revision; 3.5's resolves the branch at each attempt
                          pinnedSync(app)
                            ? `fix the cause in Git: the retries run on the same revision and fail the same way; RollingSync syncs it again only at the next commit`
                            : `fix the cause in Git: each retry syncs the branch's newest commit, so a fix pushed now is what the next retry runs (a fix already pushed: wait for it); once the retries are spent, RollingSync syncs it again only at the next commit`
                        : `fix the cause in Git and push: RollingSync does not retry a failed sync, the next commit syncs it again (or sync it by hand once fixed: argocd app sync ${e.name})`,
            });
        }
        // an Application that cannot be compared (a source that does not render): its step will wait on it
        const cannot = failure ? null : cannotCompare(app, `${e.name}${stepText(e)}`);
        if (cannot) out.push({ ...cannot, application: e.name, step: e.step });
        out.push(...hookFindings(app, e, input));
        if (!st) continue;
        // a sync window: v3.5.1 keeps the operation Running with its message; the AppProject, where given, names the window
        const project = input.project(app);
        const blockedBy = project ? windowsBlocking(project, app, now) : null;
        const saysBlocked = op?.phase === "Running" && String(op.message ?? "").includes(SYNC_WINDOW_BLOCKED);
        // a window matters to a sync that waits for it: one running, one about to be started (Pending), or the step's next
        const wouldSync = op?.phase === "Running" || st.status === "Pending" || (st.status === "Waiting" && e.step === current);
        if (saysBlocked || (blockedBy && blockedBy.windows.length && wouldSync && st.status !== "Healthy")) {
            const windows = blockedBy?.windows ?? [];
            const when = blockedBy?.until ? ` until ${blockedBy.until}` : "";
            const projectName = app.spec?.project || "default";
            const why = blockedBy?.invalid
                ? `a sync window of project ${projectName} that Argo CD cannot read (${blockedBy.invalid}) holds every sync it applies to`
                : `its sync waits for a sync window of project ${projectName}${windows.length ? ` (${windows.map((w) => w.text).join("; ")})` : ""}${when}`;
            out.push({
                kind: "SyncWindow",
                application: e.name,
                step: e.step,
                message: `${e.name}${stepText(e)}: ${why}, and the step with it (RollingSync's syncs are automated ones: manualSync does not let them through)`,
                evidence: [
                    ...(saysBlocked
                        ? [{ object: appRef(app), field: "status.operationState.message", value: String(op.message), time: op.startedAt }]
                        : []),
                    ...windows.map((w) => ({
                        object: `AppProject ${project?.metadata?.namespace}/${project?.metadata?.name}`,
                        field: `spec.syncWindows[${w.index}]`,
                        value: w.text,
                    })),
                ],
                todo: blockedBy?.invalid
                    ? `fix the window's schedule (five cron fields) or duration (a Go duration such as 1h30m) in project ${projectName}`
                    : windows.length
                      ? `wait for the window${when}, or change or remove it in project ${projectName} (argocd proj windows list ${projectName})`
                      : `see the project's sync windows (argocd proj windows list ${projectName}); with appprojects.argoproj.io in the dump the doctor names the window`,
            });
        }
        // RollingSync moves an entry to Healthy only when the Application is Synced and Healthy
        if (
            st.status === "Progressing" &&
            health === "Healthy" &&
            sync !== "Synced" &&
            !failure &&
            op?.phase !== "Running" &&
            !app.operation &&
            // not the moment between a sync's end and the next comparison: so for longer than --stuck-after
            Math.min(ageSeconds(op?.finishedAt, now), ageSeconds(st.lastTransitionTime, now)) > stuckAfterSeconds
        ) {
            out.push({
                kind: "HealthyNotSynced",
                application: e.name,
                step: e.step,
                message: `${e.name} (step ${e.step}) is Healthy but ${sync ?? "not Synced"}: RollingSync counts a step done only when its Applications are Synced and Healthy, so step ${e.step} waits for it`,
                evidence: [
                    { object: appRef(app), field: "status.sync.status", value: String(sync) },
                    { object: appRef(app), field: "status.health.status", value: String(health) },
                    { object: setRef(appset), field: `${entryRef(e)}.status`, value: "Progressing", time: st.lastTransitionTime },
                ],
                todo: `see what differs (argocd app diff ${e.name}): a field something else changes belongs in ignoreDifferences; then sync it (argocd app sync ${e.name})`,
            });
        }
        // (a sync running that waits for a hook Pod not started for as long: HookNotStarted names that, not the controllers)
        if (
            st.status === "Pending" &&
            ageSeconds(st.lastTransitionTime, now) > stuckAfterSeconds &&
            !(op?.phase === "Running" && ageSeconds(input.waitingHook(app)?.since, now) > stuckAfterSeconds)
        ) {
            const since = st.lastTransitionTime;
            const reconciledAt = app.status?.reconciledAt;
            const why =
                reconciledAt && !(seconds(reconciledAt) > seconds(since))
                    ? `the application controller has not reconciled it since (reconciledAt ${reconciledAt}): is the application controller running, or is its queue behind?`
                    : app.operation && !(seconds(op?.startedAt) > seconds(since))
                      ? `a sync is requested (.operation) but the application controller has not started it: is it running, or busy with another operation of this Application?`
                      : op && seconds(op.startedAt) > seconds(since)
                        ? `its sync started at ${op.startedAt}, after the entry went Pending, but the ApplicationSet controller has not moved the entry on since: is it running? (it looks again at its requeue, or at once on an application-set-refresh)`
                        : op
                          ? `its last sync started at ${op.startedAt}, not after the entry went Pending: the ApplicationSet controller's sync never reached it (a sync started within that same second does not count)`
                          : `it has never been synced: the ApplicationSet controller's sync never reached it`;
            out.push({
                kind: "PendingNotProgressing",
                application: e.name,
                step: e.step,
                message: `${e.name} (step ${e.step}) has been Pending since ${since} and never turned Progressing: ${why}`,
                evidence: [
                    { object: setRef(appset), field: `${entryRef(e)}.status`, value: "Pending", time: since },
                    { object: appRef(app), field: "status.operationState.startedAt", value: String(op?.startedAt ?? "(none)") },
                    { object: appRef(app), field: "status.reconciledAt", value: String(reconciledAt ?? "(none)") },
                ],
                // a step after the stuck one (3.5 lets an entry go Pending ahead): a sync by hand would take the failing release
                todo:
                    (e.step ?? 0) > (current ?? Infinity)
                        ? `none for ${e.name} itself: its step ${e.step} comes after the stuck step ${current}, so it moves on once step ${current} is through; do not sync it by hand (it would take the release step ${current} fails on)`
                        : `check the application controller's log for ${e.name}; a sync started by hand (argocd app sync ${e.name}) moves the entry on`,
            });
        }
        // maxUpdate: Waiting entries of the current step held by the Pending and Progressing ones
        if (st.status === "Waiting" && e.step === current && current !== null) {
            const step = steps[current - 1];
            // v3.5.1 counts the entries of Applications no step selects into step 1 (appStepMap's zero value
            // for a missing name: UpdateApplicationSetApplicationStatusProgress, progressive_sync.go)
            const inStep = entries.filter((x) => x.status && (x.step === current || (current === 1 && x.step === null)));
            const limit = maxUpdateLimit(step?.maxUpdate, inStep.length);
            const updating = inStep.filter((x) => x.status?.status === "Pending" || x.status?.status === "Progressing");
            // held for longer than --stuck-after: a step updating maxUpdate at a time is otherwise just in progress
            const held = updating.length > 0 && updating.every((x) => ageSeconds(x.status?.lastTransitionTime, now) > stuckAfterSeconds);
            if (held && limit !== null && Number.isFinite(limit) && limit >= 1 && updating.length >= limit)
                out.push({
                    kind: "MaxUpdateHolding",
                    application: e.name,
                    step: current,
                    message: `${e.name} (step ${current}) is not allowed to update yet: ${updating.length}/${limit} in step ${current} (maxUpdate ${JSON.stringify(step.maxUpdate)}) are updating: ${updating.map((x) => `${x.name} (${x.status?.status})`).join(", ")}`,
                    evidence: [
                        {
                            object: setRef(appset),
                            field: `spec.strategy.rollingSync.steps[${current - 1}].maxUpdate`,
                            value: JSON.stringify(step.maxUpdate),
                        },
                        { object: setRef(appset), field: `${entryRef(e)}.status`, value: "Waiting", time: st.lastTransitionTime },
                    ],
                    todo: `it moves as those become Healthy; if one of them is stuck, see its finding; raise maxUpdate to update more at once`,
                });
        }
    }
    return out;
}

/** Argo CD 3.6's own condition on the rollout's configuration, where the controller writes it. */
function conditionFindings(appset: ApplicationSet): Finding[] {
    return [...generationFindings(appset), ...invalidRolloutFindings(appset)];
}

/**
 * Why a step's In expressions select none: a label key no Application has, a value beside one they have (a typo), or
 * values no Application has any more (the Application the step was for is gone: its generator no longer makes it).
 */
function emptyWhy(expressions: { key?: string; operator?: string; values?: string[] }[], entries: Entry[]): string {
    const labels = entries.flatMap((e) => (e.app ? [e.app.metadata?.labels ?? {}] : []));
    for (const x of expressions.filter((e) => e.operator === "In" && e.key)) {
        const held = [...new Set(labels.map((l) => l[x.key as string]).filter((v): v is string => typeof v === "string"))];
        if (!held.length) return `no Application has the label ${x.key}: a misspelt key?`;
        const values = x.values ?? [];
        if (values.some((v) => held.includes(v))) continue;
        // a typo's intended Application is one no step selects (the others' values are their own steps')
        const unselected = entries.flatMap((e) => {
            const v = e.app && (e.step === null || e.step < 1) ? e.app.metadata?.labels?.[x.key as string] : undefined;
            return typeof v === "string" ? [v] : [];
        });
        const near = unselected.length ? values.map((v) => [v, closest(v, unselected)]).find(([v, c]) => distance(v, c) <= 2) : undefined;
        if (near) return `${x.key}=${near[0]} is no Application's, ${x.key}=${near[1]} is, and no step selects it: a misspelt value?`;
        return `no Application has ${x.key}=${values.join(" or ")} (theirs: ${[...held].sort().join(", ")}): the Application the step was for is gone (its generator no longer makes it: its file or element deleted?), or a value misspelt`;
    }
    return "a misspelt key or value?";
}

/** ErrorOccurred's reasons for which the controller generated no Application at all (applicationset_types.go). */
const GENERATION_REASONS = ["ApplicationGenerationFromParamsError", "RenderTemplateParamsError"];

/** The ApplicationSet's ErrorOccurred condition when generating failed: it generates nothing new. */
function generationFindings(appset: ApplicationSet): Finding[] {
    const { name, namespace } = appset.metadata;
    return (
        (appset.status?.conditions ?? [])
            // generation's own reasons: with these nothing is generated (others, ApplicationValidationError's, still update the valid ones)
            .filter((c) => c.type === "ErrorOccurred" && c.status === "True" && GENERATION_REASONS.includes(c.reason ?? ""))
            .map((c) => ({
                kind: "GenerationError" as const,
                application: null,
                step: null,
                message: `the ApplicationSet cannot generate its Applications (its ErrorOccurred condition, ${c.reason ?? "no reason"}): ${firstLine(c.message)}; until it can, they stay as it last generated them, and a commit's change to them does not reach them`,
                evidence: [
                    {
                        object: setRef(appset),
                        field: "status.conditions[ErrorOccurred]",
                        value: c.message ?? "",
                        time: c.lastTransitionTime,
                    },
                ],
                todo: `fix what the condition names in Git (a new commit), push, and ask for a refresh: kubectl -n ${namespace} annotate applicationset ${name} ${APPSET_REFRESH_ANNOTATION}=true --overwrite`,
            }))
    );
}

/** A condition's message to its first line that says something (a YAML error quotes the lines after it). */
const firstLine = (m: string | undefined) =>
    String(m ?? "")
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean)[0]
        ?.replace(/:$/, "") ?? "";

/** The sentence a rollout's summary line carries while its ApplicationSet generates nothing new. */
export function generationLine(findings: Finding[]): string {
    const f = findings.find((x) => x.kind === "GenerationError");
    return f
        ? ` The ApplicationSet cannot generate its Applications: ${firstLine(f.evidence[0].value)} (a fix pushed reaches them only once it can).`
        : "";
}

function invalidRolloutFindings(appset: ApplicationSet): Finding[] {
    return (appset.status?.conditions ?? [])
        .filter((c) => c.type === "InvalidRolloutConfig" && c.status !== "False")
        .map((c) => ({
            kind: "InvalidRolloutConfig" as const,
            application: null,
            step: null,
            message: `Argo CD's ApplicationSet controller says the rollout's configuration is invalid (its InvalidRolloutConfig condition, Argo CD 3.6 and later): ${c.message}`,
            evidence: [
                {
                    object: setRef(appset),
                    field: "status.conditions[InvalidRolloutConfig]",
                    value: String(c.message),
                    time: c.lastTransitionTime,
                },
            ],
            todo: `fix spec.strategy.rollingSync as the condition says`,
        }));
}

/** Every finding of a RollingSync ApplicationSet, configuration first, then by step and Application. */
export function findingsOf(input: FindingsInput): Finding[] {
    const all = [...conditionFindings(input.appset), ...configFindings(input), ...gateFindings(input), ...applicationFindings(input)];
    const order = (f: Finding) => (f.application === null ? -1e9 : (f.step ?? 1e9));
    return all
        .map((f, i) => ({ f, i }))
        .sort((a, b) => order(a.f) - order(b.f) || a.i - b.i)
        .map(({ f }) => f);
}
