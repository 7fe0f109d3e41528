/**
 * The rollout doctor (docs/tenants-lab.md, "The rollout doctor"): names the step at which a RollingSync rollout is stuck
 * and why, walking the chain an operator walks by hand: ApplicationSet step -> Application ->
 * hook Job -> the error line of its Pod's log (or of a termination message). A pure function from
 * objects to a diagnosis.
 */
import { REFRESH_GRACE_SECONDS, stepSelects } from "../argo/rollingSync";
import { rfc3339 } from "../kit/text";
import { isoOf, type Application, type ApplicationSet, type ApplicationSetApplicationStatus, type ApplicationSource } from "../argo/types";
import { causeOf, syncFailure } from "./cause";
import type { Dump } from "./dump";
import { goneHookJob, type HookInfo, waitingHookPod } from "./hooks";
import type { Evidence, Finding } from "./finding";
import { findingsOf, generationLine } from "./findings";
import { skipFinding, skipText } from "./skip";
import { lastRead } from "./lastRead";
import { gateOf, noStepsFinding, rolloutErrorFindings, stepMetricEvidence } from "./findings36";

export type { Finding, Evidence } from "./finding";
export { dumpFromList, type Dump } from "./dump";

export interface Blocking {
    application: string;
    reason: string;
    message: string;
    hook: HookInfo | null;
}

export type RolloutState = "complete" | "progressing" | "stuck";

/**
 * An Application RollingSync passed over (upstream issues #12325, #29410): its entry is Healthy while
 * the Application is OutOfSync at the ApplicationSet's current target, or Synced at the new revision
 * with the old source path. With automated sync disabled by RollingSync nothing syncs it until the
 * next commit.
 */
export interface Skipped {
    application: string;
    step: number;
    /** What it runs: the source path (and revision) of its last sync. */
    runs: string;
    /** What it should run: its spec's source path (and target revision). */
    shouldRun: string;
    /** The way out: a new commit, or a sync of that Application by hand. */
    remedy: string;
}

export interface Diagnosis {
    name: string;
    namespace: string;
    strategy: "RollingSync" | "none";
    state: RolloutState;
    step: number | null;
    steps: number;
    since: string | null;
    summary: string;
    blocking: Blocking[];
    waiting: { application: string; step: number }[];
    /** Applications the rollout passed over (a finding of its own, whatever the state). */
    skipped: Skipped[];
    /** Every named finding (lab/doctor/findings.ts), at any step: what is stuck, why, the evidence, what to do. */
    findings: Finding[];
}

export interface DiagnoseOptions {
    now: Date;
    /** `now` is a dump's own time (its newest), not the reader's: the durations say so. */
    asOfDump?: boolean;
    /** A step that has made no progress for longer than this is stuck (default 600). */
    stuckAfterSeconds: number;
    /** Only this ApplicationSet. */
    appset?: string;
}

/** The 1-based step of an Application: from the ApplicationSet's status, else from the step selectors. */
function stepOf(appset: ApplicationSet, app: Application | undefined, status: ApplicationSetApplicationStatus | undefined): number | null {
    const fromStatus = Number(status?.step);
    if (status?.step !== undefined && Number.isInteger(fromStatus) && fromStatus > 0) return fromStatus;
    const steps = appset.spec?.strategy?.rollingSync?.steps ?? [];
    const labels = app?.metadata?.labels ?? {};
    const i = steps.findIndex((s) => stepSelects(s, labels));
    return i >= 0 ? i + 1 : null;
}

function ownedBy(appset: ApplicationSet, app: Application): boolean {
    if (app.metadata?.namespace !== appset.metadata?.namespace) return false;
    return (app.metadata?.ownerReferences ?? []).some(
        (r) => r.kind === "ApplicationSet" && (r.uid ? r.uid === appset.metadata.uid : r.name === appset.metadata.name),
    );
}

/** Names in code-point order: Kubernetes names are ASCII, and localeCompare costs seconds over tens of thousands. */
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A sentence's full stop, unless it ends with one already (a hook's error quoted as it ends). */
const stop = (text: string) => (/[.!?]"?$/.test(text) ? "" : ".");

function minutes(fromIso: string | null, now: Date, asOfDump = false): string {
    const span = duration(fromIso, now);
    return span && asOfDump ? `${span} (as of the dump's newest time, ${rfc3339(now)})` : span;
}

function duration(fromIso: string | null, now: Date): string {
    if (!fromIso) return "";
    const ms = now.getTime() - Date.parse(fromIso);
    if (!Number.isFinite(ms) || ms < 0) return "";
    const m = Math.floor(ms / 60_000);
    if (m >= 48 * 60) return ` for ${Math.floor(m / 1440)} d ${Math.floor((m % 1440) / 60)} h`;
    if (m === 0) return " for under a minute";
    return m >= 120 ? ` for ${Math.floor(m / 60)} h ${m % 60} min` : ` for ${m} min`;
}

/** The Applications by owning ApplicationSet and by name, built once per diagnosis (thousands of ApplicationSets scan them). */
interface AppIndex {
    /** "ns/uid:UID" for owner references with a uid, "ns/name:NAME" for those without. */
    byOwner: Map<string, Application[]>;
    byName: Map<string, Application>;
}

function indexApps(apps: Application[]): AppIndex {
    const byOwner = new Map<string, Application[]>();
    const byName = new Map<string, Application>();
    for (const a of apps) {
        const ns = a.metadata?.namespace;
        byName.set(`${ns}/${a.metadata?.name}`, a);
        for (const r of a.metadata?.ownerReferences ?? []) {
            if (r.kind !== "ApplicationSet") continue;
            const key = r.uid ? `${ns}/uid:${r.uid}` : `${ns}/name:${r.name}`;
            const owned = byOwner.get(key);
            if (owned) owned.push(a);
            else byOwner.set(key, [a]);
        }
    }
    return { byOwner, byName };
}

/** A source as a person reads it: its path, and its revision when it names one. */
const sourceText = (src: ApplicationSource | undefined) =>
    src ? `${src.path ?? src.chart ?? "?"}${src.targetRevision ? ` at ${src.targetRevision}` : ""}` : "?";

/**
 * The silent skip, for an Application whose RollingSync entry is Healthy: OutOfSync at its current
 * spec with no operation, or Synced while the last comparison was at another source path. Never for
 * an entry that is Pending, Progressing or Waiting (the caller passes only Healthy ones).
 */
export function skippedBy(app: Application, step: number): Skipped[] {
    if (app.operation || app.status?.operationState?.phase === "Running") return [];
    const sync = app.status?.sync?.status;
    const target = app.spec?.source;
    const compared = app.status?.sync?.comparedTo?.source;
    const lastSynced = app.status?.operationState?.syncResult?.source ?? compared;
    const remedy = `it will not sync until the next commit: push one, or sync it by hand (argocd app sync ${app.metadata?.name})`;
    if (sync === "OutOfSync")
        return [{ application: app.metadata.name, step, runs: sourceText(lastSynced), shouldRun: sourceText(target), remedy }];
    if (sync === "Synced" && compared?.path && target?.path && compared.path !== target.path) {
        return [{ application: app.metadata.name, step, runs: sourceText(compared), shouldRun: sourceText(target), remedy }];
    }
    return [];
}

function diagnoseOne(dump: Dump, appset: ApplicationSet, opts: DiagnoseOptions, index: AppIndex = indexApps(dump.applications)): Diagnosis {
    const name = appset.metadata.name;
    // a dump made by someone may lack it: left out of the JSON then, and the keys read as indexApps makes them
    const namespace = appset.metadata.namespace as string;
    // another ApplicationSet of this name in another namespace: each line says which one it is about
    const twin =
        !!namespace &&
        dump.applicationSets.some(
            (o) => o !== appset && o.metadata.name === name && !!o.metadata.namespace && o.metadata.namespace !== namespace,
        );
    const shown = twin ? `${namespace}/${name}` : name;
    const rolling = appset.spec?.strategy?.type === "RollingSync";
    const statuses = appset.status?.applicationStatus ?? [];
    // owned (ownedBy: by uid where the reference has one, else by name), or named in the status
    const owned = [
        ...(appset.metadata.uid ? (index.byOwner.get(`${namespace}/uid:${appset.metadata.uid}`) ?? []) : []),
        ...(index.byOwner.get(`${namespace}/name:${name}`) ?? []),
    ];
    const named = statuses.map((st) => index.byName.get(`${namespace}/${st.application}`)).filter((a): a is Application => !!a);
    const apps = [...new Set([...owned, ...named])];
    const appByName = new Map(apps.map((a) => [a.metadata.name, a]));
    const names = [...new Set([...apps.map((a) => a.metadata.name), ...statuses.map((s) => s.application)])].sort();
    const base = { name, namespace, strategy: (rolling ? "RollingSync" : "none") as Diagnosis["strategy"] };

    if (!rolling) {
        const blocking: Blocking[] = [];
        for (const n of names) {
            const c = causeOf(dump, appByName.get(n), undefined, opts);
            if (c.fatal) blocking.push({ application: n, reason: c.reason, message: c.message, hook: c.hook });
        }
        const state: RolloutState = blocking.length ? "stuck" : "complete";
        const summary = blocking.length
            ? `${shown}: no rollout strategy; failing: ${blocking.map((b) => `${b.application}: ${b.message}`).join("; ")}.`
            : `${shown}: no rollout strategy (all Applications sync on their own); nothing is failing.`;
        return { ...base, state, step: null, steps: 0, since: null, summary, blocking, waiting: [], skipped: [], findings: [] };
    }

    const steps = (appset.spec?.strategy?.rollingSync?.steps ?? []).length;
    if (steps === 0) {
        // no steps: Argo CD 3.6 refuses the rollout (ErrorOccurred, ApplicationSetRolloutError); 3.5 runs none
        const refused = rolloutErrorFindings(appset);
        const failing: Blocking[] = [];
        for (const n of names) {
            const c = causeOf(dump, appByName.get(n), undefined, opts);
            if (c.fatal) failing.push({ application: n, reason: c.reason, message: c.message, hook: c.hook });
        }
        const finding = refused[0] ?? noStepsFinding(appset);
        const blocking = refused.length
            ? [{ application: "", reason: "RolloutError", message: finding.message, hook: null }, ...failing]
            : failing;
        const failingLine = failing.length ? ` Failing: ${failing.map((b) => `${b.application}: ${b.message}`).join("; ")}.` : "";
        return {
            ...base,
            state: blocking.length ? "stuck" : "complete",
            step: null,
            steps,
            since: refused.length ? (finding.evidence[0].time ?? null) : null,
            summary: clip(`${shown}: ${finding.message}.${failingLine}`),
            blocking,
            waiting: [],
            skipped: [],
            findings: [finding],
        };
    }
    if (!appset.status?.applicationStatus && names.length) {
        // applicationset_controller.go: with progressive syncs off the controller ignores the strategy and writes no applicationStatus
        const message = `the ApplicationSet has a RollingSync strategy but no status.applicationStatus: progressive syncs are off (applicationsetcontroller.enable.progressive.syncs in argocd-cmd-params-cm, read when the ApplicationSet controller starts), so the strategy is ignored`;
        return {
            ...base,
            state: "stuck",
            step: null,
            steps,
            since: null,
            summary: `${shown}: ${message}.`,
            blocking: [{ application: "", reason: "ProgressiveSyncsOff", message, hook: null }],
            waiting: [],
            skipped: [],
            findings: [],
        };
    }
    const statusOf = new Map<string, ApplicationSetApplicationStatus>();
    for (const st of statuses) if (!statusOf.has(st.application)) statusOf.set(st.application, st); // the first, as a find would
    const entries = names.map((n) => {
        const st = statusOf.get(n);
        return { name: n, app: appByName.get(n), status: st, step: stepOf(appset, appByName.get(n), st) };
    });
    const healthy = (e: (typeof entries)[number]) =>
        e.status ? e.status.status === "Healthy" : e.app?.status?.health?.status === "Healthy" && e.app?.status?.sync?.status === "Synced";
    const rollout = (appset.status?.conditions ?? []).find((c) => c.type === "RolloutProgressing");
    // the first few names, then a count: a summary over thousands of Applications stays one short line
    const few = <T>(xs: T[], n: number, f: (x: T) => string, sep: string) =>
        xs.slice(0, n).map(f).join(sep) + (xs.length > n ? `${sep}and ${xs.length - n} more` : "");
    const fromCondition = rollout?.status === "True" ? Number(/rollout of step (\d+)/.exec(rollout.message ?? "")?.[1]) : NaN;
    const pendingSteps = entries.filter((e) => !healthy(e) && e.step !== null).map((e) => e.step as number);
    const current =
        Number.isInteger(fromCondition) && fromCondition > 0 ? fromCondition : pendingSteps.length ? Math.min(...pendingSteps) : null;

    const skipped = entries.flatMap((e) => (e.step !== null && e.status?.status === "Healthy" && e.app ? skippedBy(e.app, e.step) : []));
    const skippedLine = skipped.length ? ` ${few(skipped, 3, (s) => `${skipText(s)}; ${s.remedy}`, "; ")}.` : "";

    const findings = findingsOf({
        appset,
        entries,
        current,
        now: opts.now,
        stuckAfterSeconds: opts.stuckAfterSeconds,
        syncFailure: (app) => syncFailure(dump, app),
        job: (ns, jobName) => dump.jobs.find((j) => j.metadata?.namespace === ns && j.metadata?.name === jobName),
        waitingHook: (app) => waitingHookPod(dump, app),
        goneHook: (app) => goneHookJob(dump, app, opts.now, opts.stuckAfterSeconds),
        project: (app) =>
            (dump.appProjects ?? []).find(
                (p) => p.metadata?.name === (app.spec?.project || "default") && p.metadata?.namespace === app.metadata?.namespace,
            ),
        fromFile: dump.fromFile,
    });
    for (const s of skipped) {
        const app = appByName.get(s.application);
        if (app) findings.push(skipFinding(appset, app, s));
    }
    // the step's findings carry what Argo CD 3.6 itself counts of the step, where its metrics were read
    const counted = current === null ? null : stepMetricEvidence(dump.progressiveSync, appset, current);
    if (counted) for (const f of findings.filter((x) => x.step === current)) f.evidence.push(counted);
    const blockingNames = new Set<string>();
    // every Application whose own sync failed outside the step that holds the rollout (one that raced ahead)
    const alsoFailing = (held: Set<string>) => {
        const others = findings.filter(
            (f) => (f.kind === "SyncFailed" || f.kind === "CannotCompare") && f.application && !held.has(f.application),
        );
        // the same failure in several (a release path none of them has): said once, with their names
        const groups = new Map<string, Finding[]>();
        for (const f of others) {
            const app = f.application!;
            const what = f.message
                .slice(f.message.indexOf(": ") + 2)
                .split(app)
                .join("\0");
            groups.set(what, [...(groups.get(what) ?? []), f]);
        }
        const said = [...groups].map(([what, fs]) =>
            fs.length === 1 ? fs[0].message : `${fs.map((f) => f.application).join(", ")}: ${what.split("\0").join("each")}`,
        );
        return said.length ? ` Also failing on its own: ${few(said, 3, (m) => m, "; ")}.` : "";
    };

    if (current === null) {
        // the rollout's entries say Healthy; the Applications themselves may not be (a label no step selects any more)
        const notWell = entries
            .map((e) => e.app)
            .filter((a): a is Application => !!a && (a.status?.health?.status !== "Healthy" || a.status?.sync?.status !== "Synced"));
        const well = skipped.length
            ? `${shown}: rollout complete (${steps} step${steps === 1 ? "" : "s"}), but not every Application got it.${skippedLine}`
            : notWell.length
              ? `${shown}: rollout complete (${steps} step${steps === 1 ? "" : "s"}), but not every Application is Healthy and Synced: ${few(notWell, 3, (a) => `${a.metadata.name} (${a.status?.health?.status ?? "no health"}, ${a.status?.sync?.status ?? "no sync status"})`, ", ")}.`
              : `${shown}: rollout complete (${steps} step${steps === 1 ? "" : "s"}, ${entries.length} Application${entries.length === 1 ? "" : "s"} Healthy)${lastRead(entries.map((e) => e.status))}.`;
        const summary = well + generationLine(findings) + alsoFailing(blockingNames);
        return {
            ...base,
            state: "complete",
            step: null,
            steps,
            since: null,
            summary: clip(summary + findingsNote(findings)),
            blocking: [],
            waiting: [],
            skipped,
            findings,
        };
    }

    const inStep = entries.filter((e) => e.step === current && !healthy(e));
    const causes = inStep.map((e) => ({ e, c: causeOf(dump, e.app, e.status, opts) }));
    const failedInStep = causes.filter((x) => x.c.fatal);
    const blocking: Blocking[] = [];
    let fatal = false;
    // Argo CD 3.6's reconcile gate holds every step, whatever the step's own Applications show: name what it waits for
    const gate = gateOf(appset, entries, opts.now);
    if (gate) {
        for (const f of findings.filter((x) => x.kind === "ReconcileGate"))
            blocking.push({ application: f.application ?? "", reason: "NotReconciled", message: f.message, hook: null });
        // within the grace, a step's Application that failed on its own still holds the step when the grace is over: that is the cause
        if (!blocking.length && !failedInStep.length) {
            // within the grace period every change waits, reconciled or not: a wait, not a cause
            const then = gate.behind.length
                ? `; then it asks for a refresh of ${few(gate.behind, 5, (e) => e.name, ", ")}, not reconciled since`
                : "; every Application is reconciled since, so the step moves then";
            blocking.push({
                application: "",
                reason: "ReconcileGate",
                message: `waiting out the grace after the change at ${gate.since}: no step moves for the refresh grace period (${REFRESH_GRACE_SECONDS} s by default), as after every change${then}`,
                hook: null,
            });
        }
    }
    for (const { e, c } of gate ? failedInStep : causes) {
        fatal ||= c.fatal;
        blocking.push({ application: e.name, reason: c.reason, message: c.message, hook: c.hook });
    }
    if (!inStep.length && !gate) {
        // the condition names a step none of whose Applications is waiting: say so instead of naming no one
        const members = entries.filter((e) => e.step === current).map((e) => e.name);
        blocking.push({
            application: "",
            reason: "Inconsistent",
            message: `the RolloutProgressing condition says step ${current}, but ${members.length ? `every Application of step ${current} (${members.join(", ")}) is Healthy` : `step ${current} has no Application`}; the ApplicationSet controller has not moved on (is it running?)`,
            hook: null,
        });
    }
    const times = inStep.map((e) => e.status?.lastTransitionTime).filter(Boolean) as string[];
    const gateHolds = blocking.some((b) => b.reason === "NotReconciled" || b.reason === "ReconcileGate");
    const lastMove = gateHolds && gate ? gate.since : times.length ? times.sort()[0] : (isoOf(rollout?.lastTransitionTime) ?? null);
    const idleSeconds = lastMove ? (opts.now.getTime() - Date.parse(lastMove)) / 1000 : 0;
    // how long the rollout has been at this step, as said: the RolloutProgressing condition's time, which Argo CD keeps while
    // its step stays; an entry's own time starts again when its Application changes (a patch of it at the stall), which
    // would say "under a minute" of a step stuck for longer (whether it is stuck still goes by the entries' last move)
    const atStep = !gateHolds && fromCondition === current ? (isoOf(rollout?.lastTransitionTime) ?? null) : null;
    // one time format, as Kubernetes writes times (an entry's time may carry milliseconds)
    const since = (atStep && lastMove && Date.parse(atStep) < Date.parse(lastMove) ? atStep : isoOf(lastMove ?? undefined)) ?? null;
    const state: RolloutState = fatal || idleSeconds > opts.stuckAfterSeconds ? "stuck" : "progressing";
    // waiting: later steps' Applications not yet synced at the current target (one already there waits for nothing)
    // a skipped one (its entry Healthy, never synced) waits for nothing: its own line says so
    const skippedNames = new Set(skipped.map((s) => s.application));
    const waiting = entries
        .filter(
            (e) => e.step !== null && (e.step as number) > current && e.app?.status?.sync?.status !== "Synced" && !skippedNames.has(e.name),
        )
        .sort((a, b) => (a.step as number) - (b.step as number) || byCodePoint(a.name, b.name))
        .map((e) => ({ application: e.name, step: e.step as number }));

    for (const b of blocking) blockingNames.add(b.application);
    const causeLine = few(blocking, 3, (b) => (b.application ? `${b.application}: ${b.message}` : b.message), "; ");
    const behind = waiting.length ? ` Waiting behind it: ${few(waiting, 5, (w) => `${w.application} (step ${w.step})`, ", ")}.` : "";
    const heldBy = gateHolds ? " by Argo CD 3.6's reconcile gate" : "";
    const summary =
        state === "stuck"
            ? `${shown}: rollout stuck at step ${current} of ${steps}${heldBy}${minutes(since, opts.now, opts.asOfDump)} — ${causeLine}${stop(causeLine)}${generationLine(findings)}${behind}${alsoFailing(blockingNames)}${skippedLine}`
            : `${shown}: rollout at step ${current} of ${steps}${heldBy}${minutes(since, opts.now, opts.asOfDump)}, in progress — ${causeLine || "waiting for the step's Applications"}${stop(causeLine)}${generationLine(findings)}${behind}${alsoFailing(blockingNames)}${skippedLine}`;
    return {
        ...base,
        state,
        step: current,
        steps,
        since,
        summary: clip(summary),
        blocking,
        waiting,
        skipped,
        findings,
    };
}

/**
 * The findings' count and kinds, for the line of a complete rollout: an alert or a reader of the line
 * alone must not take "rollout complete" for all well while a finding names an Application the rollout
 * leaves out. (A stuck or moving rollout's line names its cause already.)
 */
function findingsNote(findings: Finding[]): string {
    if (!findings.length) return "";
    const kinds = [...new Set(findings.map((f) => f.kind))];
    return ` Findings: ${findings.length} (${kinds.join(", ")}).`;
}

/** One line, one Event message: at most 1 KiB. */
export const MAX_LINE_BYTES = 1024;
function clip(line: string): string {
    if (Buffer.byteLength(line) <= MAX_LINE_BYTES) return line;
    let out = line;
    while (Buffer.byteLength(out + "…") > MAX_LINE_BYTES) out = out.slice(0, -16);
    return out + "…";
}

export function diagnose(dump: Dump, opts: DiagnoseOptions): Diagnosis[] {
    const sets = dump.applicationSets
        .filter((a) => !opts.appset || namesAppSet(opts.appset, a))
        .sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
    const index = indexApps(dump.applications);
    return sets.map((a) => diagnoseOne(dump, a, opts, index));
}

/** The note the field report wished someone had written next to `automated.enabled: false`. */
export function automatedDisabledNote(dump: Dump, d: Diagnosis): string | null {
    if (d.strategy !== "RollingSync") return null;
    const set = dump.applicationSets.find((a) => a.metadata.name === d.name && a.metadata.namespace === d.namespace);
    const disabled = dump.applications.filter((a) => set && ownedBy(set, a) && a.spec?.syncPolicy?.automated?.enabled === false);
    if (!disabled.length) return null;
    return `Note: automated.enabled: false on the Applications of ${d.name} is written by the ApplicationSet controller under RollingSync (it triggers each step's syncs itself); it is not a finding.`;
}

/** The JSON the issue specifies, field for field. */
/** A finding as --json prints it: a time the object does not give is null. */
export type FindingJson = Omit<Finding, "evidence"> & { evidence: (Omit<Evidence, "time"> & { time: string | null })[] };

export function toJson(ds: Diagnosis[]): { applicationSets: (Omit<Diagnosis, "findings"> & { findings: FindingJson[] })[] } {
    return {
        applicationSets: ds.map((d) => ({
            name: d.name,
            namespace: d.namespace,
            strategy: d.strategy,
            state: d.state,
            step: d.step,
            steps: d.steps,
            since: d.since,
            summary: d.summary,
            blocking: d.blocking.map((b) => ({
                application: b.application,
                reason: b.reason,
                message: b.message,
                hook: b.hook && {
                    namespace: b.hook.namespace,
                    job: b.hook.job,
                    reason: b.hook.reason,
                    message: b.hook.message,
                    log: b.hook.log,
                },
            })),
            waiting: d.waiting.map((w) => ({ application: w.application, step: w.step })),
            skipped: d.skipped.map((s) => ({
                application: s.application,
                step: s.step,
                runs: s.runs,
                shouldRun: s.shouldRun,
                remedy: s.remedy,
            })),
            findings: d.findings.map((f) => ({
                kind: f.kind,
                application: f.application,
                step: f.step,
                message: f.message,
                evidence: f.evidence.map((e) => ({ object: e.object, field: e.field, value: e.value, time: e.time ?? null })),
                todo: f.todo,
            })),
        })),
    };
}

/** Whether `--appset` names this ApplicationSet: by its name, or as namespace/name (as stall.json and the findings write it). */
export const namesAppSet = (given: string, appset: ApplicationSet): boolean =>
    given === appset.metadata?.name || given === `${appset.metadata?.namespace}/${appset.metadata?.name}`;
