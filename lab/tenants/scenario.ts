/**
 * The tenants lab's scenario (docs/tenants-lab.md), as plain TypeScript over the two ports:
 * 1. the first rollout (every tenant at 1.1.0) runs to completion;
 * 2. stall: one commit sets every tenant to 1.2.0; the rollout stops at step 2, where mandant-b's
 *    PreSync hook fails; the wait ends when the rollout doctor's own diagnosis (the pure function,
 *    over what it reads live) says so; stall.json;
 * 3. recovery: one commit sets every tenant to 1.2.1 (a fast-forward); the rollout completes with no
 *    change in the cluster but Git and refresh annotations; recovery.json.
 * The result files are the checkpoint: a step whose file exists is not run again. A push's time is
 * noted next to them (.stall-pushed.json, .recovery-pushed.json) so that a resumed step still
 * measures from the push.
 */
import { parse } from "yaml";
import * as fs from "fs";
import * as path from "path";
import { APPSET_REFRESH_ANNOTATION, ARGOCD_NAMESPACE } from "../argo/application";
import { diagnose, Diagnosis } from "../doctor/diagnose";
import { readLive } from "../doctor/watch";
import { Clock, realClock } from "../ports/clock";
import { ClusterPort } from "../ports/cluster";
import { readJsonIfExists, writeJsonAtomic } from "../ports/files";
import { GitPort } from "../ports/git";
import { BareRepo } from "../grader/bareRepo";
import { notReadyBecause } from "../platform/readiness";
import { RELEASES, Tenant, TENANTS, TENANTS_APPSET, TenantsLayout } from "./layout";
import { RELEASE_LABEL, tenantFile, tenantPath } from "./repoFiles";
import { Recovery, Stall, TenantsResultName, TenantsResults, TENANTS_RESULT_SET, TENANTS_RESULTS } from "./results";
import { LabStep, runSteps } from "../kit/steps";
import { fit, LINE_MAX, secs, short } from "../kit/text";
import { waitSaid } from "../kit/wait";
import type { Application, ApplicationSetApplicationStatus, OperationState } from "../argo/types";

export interface TenantsTimeouts {
    /** Deadline of the first rollout (step 1). */
    rolloutMs: number;
    /** Deadline for the stall to show (step 2). */
    stallMs: number;
    /** Deadline for the recovery to complete (step 3). */
    recoveryMs: number;
    /** Time between two looks. */
    pollMs: number;
    /** While waiting, refresh again when this long has passed since the last refresh. */
    refreshEveryMs: number;
}

/**
 * On a real host: a rollout of four one-replica sites takes a minute or two; the stall shows once
 * mandant-b's hook Job has failed three Pods (10 s and 20 s of backoff between them), about a
 * minute after the push; before the recovery, mandant-b's sync gives up after 5 retries (waits of
 * 10, 20, 40, 80 and 160 s, each retry running the hook's three Pods again: about 9 minutes), which
 * the stall's deadline covers.
 */
export const DEFAULT_TENANTS_TIMEOUTS: TenantsTimeouts = {
    rolloutMs: 900_000,
    stallMs: 900_000,
    recoveryMs: 1_200_000,
    pollMs: 2_000,
    refreshEveryMs: 30_000,
};

export const STALL_MESSAGE = `Roll out release ${RELEASES.faulty} to every tenant (tenants lab step 2)`;
export const RECOVERY_MESSAGE = `Roll out release ${RELEASES.fixed} to every tenant (tenants lab step 3)`;

export interface TenantsScenarioContext {
    layout: TenantsLayout;
    git: GitPort;
    cluster: ClusterPort;
    log: (line: string) => void;
    timeouts?: Partial<TenantsTimeouts>;
    clock?: Clock;
}

interface Ctx {
    layout: TenantsLayout;
    git: GitPort;
    cluster: ClusterPort;
    log: (line: string) => void;
    t: TenantsTimeouts;
    clock: Clock;
    prefix: string;
}

const say = (c: Ctx, line: string) => c.log(fit(`${c.prefix} ${line}`, LINE_MAX));

/** The rollout in the lab's words, a few of them: the step, who it waits for and why, how many wait behind it. */
export function rolloutBrief(d: Diagnosis): string {
    if (d.state === "complete") return `rollout complete (${d.steps} steps)`;
    if (d.step === null)
        return d.blocking[0]?.reason === "ProgressiveSyncsOff" ? "progressive syncs are off: no rollout" : "no rollout step yet";
    const b = d.blocking[0];
    const why = !b
        ? ""
        : b.hook
          ? `${b.application}'s hook ${b.hook.job} failed`
          : b.reason === "SyncRetrying"
            ? `${b.application} retrying its sync`
            : `${b.application} ${b.reason}`;
    const behind = d.waiting.length ? `; ${d.waiting.length} waiting behind` : "";
    return `step ${d.step} of ${d.steps}${d.state === "stuck" ? " stuck" : ""}${why ? `: ${why}` : ""}${behind}`;
}

/** An Application's sync and health in a word or two ("not compared yet" before its first comparison). */
const appState = (app: Application) => {
    const sync = app.status?.sync?.status;
    const health = app.status?.health?.status;
    return !sync && !health ? "not compared yet" : `${sync ?? "?"}/${health ?? "?"}`;
};
/** Note of when a step pushed, to measure a resumed step from the push. */
const pushedFile = (c: Ctx, step: TenantsResultName) => path.join(c.layout.workDir, `.${step}-pushed.json`);

/** What the doctor sees now: its own live read and its own diagnosis of the tenants ApplicationSet. */
async function diagnosis(c: Ctx): Promise<{ d: Diagnosis; apps: Application[] }> {
    const dump = await readLive(c.cluster);
    const [d] = diagnose(dump, { now: new Date(c.clock.now()), stuckAfterSeconds: 600, appset: TENANTS_APPSET });
    if (!d) throw new Error(`ApplicationSet ${ARGOCD_NAMESPACE}/${TENANTS_APPSET} does not exist; build the lab (step 1) first`);
    const apps = dump.applications.filter(
        (a) => (TENANTS as readonly string[]).includes(a.metadata?.name) && a.metadata?.namespace === ARGOCD_NAMESPACE,
    );
    return { d, apps };
}

/** The release each tenant's site runs: its Deployment's, once that is rolled out (else "rolling out to X"). */
async function running(c: Ctx): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const t of TENANTS) {
        const d = await c.cluster.getWorkload("Deployment", t, "site");
        const release = d?.spec?.template?.metadata?.labels?.[RELEASE_LABEL];
        out[t] = !d ? "none" : notReadyBecause(d) === null ? String(release) : `rolling out ${release}`;
    }
    return out;
}

/**
 * Asks Argo CD to read Git now: the ApplicationSet only (its git generator, past the repo-server's
 * revision cache). Not the Applications: an Application refreshed before the ApplicationSet has
 * written its new path compares the new commit at the old path, Synced, and RollingSync then takes
 * the spec change for one that needs no sync (Waiting -> Healthy at once; progressive_sync.go), so
 * the Application is never synced. Written with its new path, each Application compares at once.
 */
async function refresh(c: Ctx): Promise<void> {
    await c.cluster.annotateApplicationSet(TENANTS_APPSET, { [APPSET_REFRESH_ANNOTATION]: "true" }, ARGOCD_NAMESPACE);
}

/** Between looks: refresh again every refreshEveryMs. */
function refresher(c: Ctx): (elapsed: number) => Promise<void> {
    let last = 0;
    return async (elapsed) => {
        if (elapsed - last < c.t.refreshEveryMs) return;
        last = elapsed;
        await refresh(c);
    };
}

/**
 * The rollout of `release` is complete: the doctor says complete, every tenant's Application is
 * Synced to `commit` (when given) and Healthy at releases/<release>, and every site runs it.
 */
async function rolloutComplete(
    c: Ctx,
    release: string,
    commit: string | null,
): Promise<{ d: Diagnosis; apps: Application[]; running: Record<string, string> } | string> {
    const { d, apps } = await diagnosis(c);
    if (!apps.length) return "no Application generated yet";
    if (d.state !== "complete") return rolloutBrief(d);
    const behind: string[] = [];
    for (const t of TENANTS) {
        const app = apps.find((a) => a.metadata.name === t);
        if (!app) behind.push(`${t} has no Application yet`);
        else if (app.spec?.source?.path !== `releases/${release}`) behind.push(`${t} tracks ${app.spec?.source?.path}`);
        else if (app.status?.sync?.status !== "Synced" || app.status?.health?.status !== "Healthy") behind.push(`${t} ${appState(app)}`);
        else if (commit && app.status?.sync?.revision !== commit) behind.push(`${t} not compared at ${short(commit)} yet`);
    }
    if (behind.length)
        return `${behind.length} of ${TENANTS.length} tenants not at ${release} yet (${behind[0]}${behind.length > 1 ? ", …" : ""})`;
    // a sync still running (v3.5.1 and v3.6.2 set a Pending entry's sync again once its first is done): a commit pushed
    // now would find that tenant's entry Healthy when the sync ends, which RollingSync then passes over (skipped, not waiting)
    const syncing = TENANTS.filter((t) => apps.find((a) => a.metadata.name === t)?.status?.operationState?.phase === "Running");
    if (syncing.length) return `${syncing.join(", ")} still syncing`;
    const sites = await running(c);
    const notYet = TENANTS.filter((t) => sites[t] !== release);
    if (notYet.length)
        return `${notYet.length} site${notYet.length === 1 ? "" : "s"} not at ${release} yet (${notYet[0]}: ${sites[notYet[0]]}${notYet.length > 1 ? ", …" : ""})`;
    return { d, apps, running: sites };
}

/** Polls `look` (a string is "not yet, because ...", said when it changes) to a deadline, refreshing between looks. */
async function waitUntil<T>(c: Ctx, what: string, timeoutMs: number, look: () => Promise<T | string>): Promise<T> {
    let last = "";
    return waitSaid(
        { say: (l) => say(c, l), clock: c.clock },
        what,
        async () => {
            const r = await look();
            if (typeof r !== "string") return r;
            if (r !== last) say(c, `… ${r}`);
            last = r;
            return undefined;
        },
        {
            timeoutMs,
            intervalMs: c.t.pollMs,
            between: refresher(c),
            describe: () => `${c.prefix} ${what} did not happen within ${secs(timeoutMs)}; last seen: ${last}`,
        },
    );
}

/**
 * Sets every tenant to `release` in one commit and pushes main (never forced), once; returns the
 * commit and when it was pushed. The note (commit, time) is written before the push, so a run
 * killed at any instant finds it: made but not pushed (pushed now, keeping the noted time), pushed
 * (resumed).
 */
/** The tenants' files as a step that rolls `release` out writes them. */
function stepFiles(release: string): Record<string, string> {
    const files: Record<string, string> = {};
    for (const t of TENANTS) files[tenantPath(t as Tenant)] = tenantFile(t as Tenant, release);
    return files;
}

async function rollOut(c: Ctx, step: TenantsResultName, release: string, message: string): Promise<{ commit: string; pushedAt: number }> {
    const noted = readJsonIfExists<{ commit: string; pushedAt: number }>(pushedFile(c, step));
    const head = await c.git.revParse("HEAD");
    let commit: string;
    let learners = false;
    if ((await c.git.subjectOf(head)) === message) {
        commit = head; // made by an earlier run (pushed or not)
    } else {
        const files = stepFiles(release);
        // a run stopped between writing the files and their commit left them written: taken as this run's own
        await c.git.ensureInSync("main", files);
        // main already sets the release for every tenant (the learner's own push of this step): that push is the step's
        // by each file's release (as the grader reads it), not its bytes: release: 1.2.0 unquoted is the same
        const same = await Promise.all(
            TENANTS.map(async (t) => {
                const text = await c.git.readCommittedFile(tenantPath(t as Tenant)).catch(() => null);
                return text !== null && String(parse(text)?.release ?? "") === release;
            }),
        );
        learners = same.every(Boolean);
        if (learners) {
            commit = await c.git.revParse("HEAD");
            say(c, `${short(commit)} on main already sets ${release} for every tenant: this step's push, made by hand`);
        } else commit = await c.git.commitFiles(files, message);
    }
    // the learner's push is timed by the repository's reflog (when main moved to it), counted back from the clock's now
    // (a simulation's clock may run ahead of the wall's); this run's own push is timed now
    const movedAt =
        learners && noted?.commit !== commit ? await new BareRepo(c.layout.bareRepo).heldSince("main", commit).catch(() => null) : null;
    const pushedAt = movedAt === null ? c.clock.now() : c.clock.now() - Math.max(0, Date.now() - movedAt);
    const note = noted?.commit === commit ? noted : { commit, pushedAt };
    writeJsonAtomic(pushedFile(c, step), note);
    if ((await c.git.remoteBranch("main")) !== commit) {
        await c.git.pushTo(commit, "main");
        say(c, `pushed ${short(commit)} to main: every tenant at ${release}`);
    } else if (!learners) {
        say(c, `${short(commit)} (${release} for every tenant) was pushed by an earlier run; resuming`);
    }
    await refresh(c);
    return note;
}

/** Step 1's wait: the first rollout (release 1.1.0) complete. */
export async function firstRollout(ctx: TenantsScenarioContext): Promise<void> {
    const c = context(ctx, "[tenants 1 rollout]");
    await refresh(c);
    await waitUntil(c, `the first rollout (every tenant at ${RELEASES.first})`, c.t.rolloutMs, () =>
        rolloutComplete(c, RELEASES.first, null),
    );
}

async function stall(c: Ctx): Promise<Stall> {
    const { commit, pushedAt } = await rollOut(c, "stall", RELEASES.faulty, STALL_MESSAGE);
    const { d, apps } = await waitUntil(c, "the rollout doctor to find the rollout stuck", c.t.stallMs, async () => {
        const now = await diagnosis(c);
        const { d } = now;
        const onFaulty = now.apps.filter((a) => a.spec?.source?.path === `releases/${RELEASES.faulty}`).length;
        if (onFaulty < TENANTS.length)
            return `the ApplicationSet has moved ${onFaulty} of ${TENANTS.length} tenants to releases/${RELEASES.faulty}`;
        if (d.state === "complete") {
            const done = await rolloutComplete(c, RELEASES.faulty, commit);
            // a state the stall can never come from: say so now instead of at the deadline
            if (typeof done !== "string")
                throw new Error(
                    `${c.prefix} the rollout of ${RELEASES.faulty} completed on every tenant: the stall never came (does mandant-b's site-settings hold the news extension's keys? kubectl get configmap site-settings -n mandant-b -o yaml)`,
                );
            return `not stuck: ${done}`;
        }
        if (d.state !== "stuck") return rolloutBrief(d);
        const hook = d.blocking.find((b) => b.hook)?.hook;
        if (!hook) return `${rolloutBrief(d)}; no failed hook named yet`;
        // the lab's release stalls the rollout at mandant-b (step 2); a stall elsewhere means its tenant data was changed
        if (d.step !== 2 || d.blocking[0]?.application !== "mandant-b")
            throw new Error(
                `${c.prefix} the rollout is stuck, but not where the lab stalls it (step 2, mandant-b): ${d.summary} (was the tenants' site-settings changed? pulumi destroy resets them)`,
            );
        if (!hook.log) return `stuck at ${hook.namespace}/${hook.job}, its Pod's log not read yet`;
        return now;
    });
    const blocking = d.blocking.find((b) => b.hook)!;
    const hook = blocking.hook!;
    const step = d.step!;
    const statuses: ApplicationSetApplicationStatus[] =
        (apps.length && (await c.cluster.getApplicationSet(TENANTS_APPSET, ARGOCD_NAMESPACE))?.status?.applicationStatus) || [];
    const passed = statuses
        .filter((s) => Number(s.step) < step)
        .sort((a, b) => Number(a.step) - Number(b.step) || a.application.localeCompare(b.application))
        .map((s) => s.application);
    const result: Stall = {
        appset: `${ARGOCD_NAMESPACE}/${TENANTS_APPSET}`,
        commit,
        release: RELEASES.faulty,
        step,
        steps: d.steps,
        blocking: blocking.application,
        hook_job: `${hook.namespace}/${hook.job}`,
        hook_error: hook.log,
        waiting: d.waiting.map((w) => w.application),
        passed,
        running: await running(c),
        auto_sync_disabled_by_rollingsync:
            apps.length === TENANTS.length && apps.every((a) => a.spec?.syncPolicy?.automated?.enabled === false),
        // whole seconds, up: the stall shows only after the push, never at it
        detected_after_seconds: Math.max(1, Math.ceil((c.clock.now() - pushedAt) / 1000)),
    };
    say(c, `stuck at step ${step} of ${d.steps}: ${blocking.application}'s hook failed: "${hook.log}"`);
    return result;
}

/**
 * The stall as the report met it: the blocking tenant's sync has given up (its retries spent, phase
 * Failed). A fix pushed while that sync still waits for a retry reaches the tenant through the retry
 * (which syncs the Application's current path), ahead of the steps before it; from the settled
 * stall the fixed release rolls out in step order.
 *
 * Argo CD may sync the tenant once more after the give-up: its RollingSync entry moves from Pending
 * to Progressing only when the Application's sync started after the entry's transition, compared in
 * whole seconds (progressive_sync.go, alike in 3.5 and 3.6), so a sync started within the second of
 * it leaves the entry Pending, and a Pending entry is synced again when its operation ends. Seen on
 * Argo CD 3.6.2's real controllers. That second sync starts seconds later, moves the entry on, and
 * gives up in turn: the wait follows it with a deadline of its own, and refuses a third.
 */
async function stallSettled(c: Ctx, stall: Stall): Promise<void> {
    const blocking = stall.blocking;
    let waitedOn: string | undefined; // the operation waited for (its start)
    for (let round = 1; ; round++) {
        const r = await waitUntil(c, `${blocking}'s sync to give up (its retries spent)`, c.t.stallMs, async () => {
            const app = await c.cluster.getApplication(blocking, ARGOCD_NAMESPACE);
            const op = app?.status?.operationState;
            if (!app) throw new Error(`${c.prefix} the Application ${blocking} is gone; rebuild the lab (pulumi destroy, then up)`);
            if (app.spec?.source?.path !== `releases/${RELEASES.faulty}`) return { settled: true }; // someone moved on already
            // given up; or succeeded (a learner gave the tenant the extension's keys: the stall is fixed another way); or never synced
            if (!app.operation && (!op || ["Failed", "Error", "Succeeded"].includes(op.phase ?? ""))) return { settled: true };
            const started = String(op?.startedAt ?? "");
            waitedOn ??= started;
            if (started !== waitedOn) return { settled: false, again: op, started };
            return `${blocking}'s sync ${op?.phase ?? "not started"}${op?.retryCount ? ` (retry ${op.retryCount})` : ""}`;
        });
        if (r.settled) return;
        if (round > 1)
            throw new Error(
                `${c.prefix} Argo CD synced ${blocking} a third time after its sync gave up; kubectl -n ${ARGOCD_NAMESPACE} get applicationset ${TENANTS_APPSET} -o yaml shows its step's status`,
            );
        waitedOn = (r as { started?: string }).started;
        const by = (r as { again?: OperationState }).again?.operation?.initiatedBy?.username ?? "Argo CD";
        say(c, `${blocking}'s sync gave up; ${by} synced it again (step still Pending): waiting`);
    }
}

/** Step 3's first wait on its own: until the stall's blocking sync has given up (what it says, through `ctx.log`). */
export const waitForStallToSettle = (ctx: TenantsScenarioContext, stall: Stall) =>
    stallSettled(context(ctx, "[tenants 3 recovery]"), stall);

async function recovery(c: Ctx, r: TenantsResults): Promise<Recovery> {
    const pushed = fs.existsSync(pushedFile(c, "recovery"));
    // the clone is checked before the wait for the give-up (minutes on a real cluster), not after it: a change of the
    // learner's there (or a commit not pushed) is refused at once, as rollOut would refuse it
    if (!pushed && (await c.git.subjectOf(await c.git.revParse("HEAD"))) !== RECOVERY_MESSAGE)
        await c.git.ensureInSync("main", stepFiles(RELEASES.fixed));
    if (!pushed && r.stall) await stallSettled(c, r.stall);
    const { commit, pushedAt } = await rollOut(c, "recovery", RELEASES.fixed, RECOVERY_MESSAGE);
    if (r.stall && !(await c.git.isAncestor(r.stall.commit, commit)))
        throw new Error(
            `${c.prefix} ${short(commit)} does not descend from the faulty commit ${short(r.stall.commit)}; the lab's repository was changed by hand`,
        );
    const done = await waitUntil(c, `the rollout of ${RELEASES.fixed} to complete`, c.t.recoveryMs, async () => {
        const now = await diagnosis(c);
        // stuck again on the fixed release itself: it can never complete by waiting
        if (now.d.state === "stuck") {
            for (const b of now.d.blocking) {
                const app = now.apps.find((a) => a.metadata.name === b.application);
                const op = app?.status?.operationState;
                const atFix =
                    app?.spec?.source?.path === `releases/${RELEASES.fixed}` &&
                    (op?.syncResult?.revision === commit || op?.operation?.sync?.revision === commit);
                if (b.hook && atFix && op?.phase === "Failed")
                    throw new Error(`${c.prefix} the recovery stalled again on ${RELEASES.fixed}: ${now.d.summary}`);
            }
        }
        return rolloutComplete(c, RELEASES.fixed, commit);
    });
    const set = await c.cluster.getApplicationSet(TENANTS_APPSET, ARGOCD_NAMESPACE);
    const statuses: ApplicationSetApplicationStatus[] = set?.status?.applicationStatus ?? [];
    const order = TENANTS.map((t) => {
        const s = statuses.find((x) => x.application === t);
        return { application: t as string, step: Number(s?.step), healthy_at: String(s?.lastTransitionTime) };
    }).sort((a, b) => a.step - b.step);
    return {
        commit,
        release: RELEASES.fixed,
        order,
        running: done.running,
        seconds: Math.max(0, Math.round((c.clock.now() - pushedAt) / 1000)),
    };
}

function context(ctx: TenantsScenarioContext, prefix: string): Ctx {
    return {
        layout: ctx.layout,
        git: ctx.git,
        cluster: ctx.cluster,
        log: ctx.log,
        t: { ...DEFAULT_TENANTS_TIMEOUTS, ...(ctx.timeouts ?? {}) },
        clock: ctx.clock ?? realClock,
        prefix,
    };
}

/** The results already on disk (the checkpoint); refuses a recovery without its stall. */
export function readTenantsResults(layout: TenantsLayout): TenantsResults {
    return TENANTS_RESULT_SET.read(layout.resultFile);
}

const STEPS: LabStep<typeof TENANTS_RESULTS, Ctx>[] = [
    { n: 2, file: "stall", name: "stall", run: stall },
    { n: 3, file: "recovery", name: "recovery", run: recovery },
];

/** Steps 2..through of the tenants lab (through 1 does nothing here), skipping those whose file exists. */
export async function runTenantsScenario(ctx: TenantsScenarioContext, through: number): Promise<TenantsResults> {
    if (!Number.isInteger(through) || through < 1 || through > 3) throw new Error(`tenantsSolveThrough must be 1, 2 or 3, got ${through}`);
    const results = readTenantsResults(ctx.layout);
    await runSteps({
        steps: STEPS,
        through,
        set: TENANTS_RESULT_SET,
        results,
        resultFile: ctx.layout.resultFile,
        log: ctx.log,
        prefix: (step) => `[tenants ${step.n} ${step.name}]`,
        context: (_step, prefix) => context(ctx, prefix),
        written: (step, c) => fs.rmSync(pushedFile(c, step.file as TenantsResultName), { force: true }),
        clock: ctx.clock ?? realClock,
    });
    return results;
}
