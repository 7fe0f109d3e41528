/**
 * A trace of the tenants lab's rollout, the same on the real plane (from watches) and on the
 * simulated cluster (from its change feed): each tenant Application's states over time (sync
 * status, health, operation phase and its RollingSync step status), the hook Jobs created and the
 * syncs started per tenant, each counted in the phase of the lab it happened in (the first rollout,
 * the stall, the recovery). test/real/tenantsLab.real.ts compares the two.
 */
import { ArgoCdVersion } from "../../lab/platform/argocd";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { HOOK_JOB, RELEASES, TENANTS, TENANTS_APPSET } from "../../lab/tenants/layout";
import { keepWatching } from "../../realplane/watch";
import { VirtualClock } from "../../sim/clock";
import { ArgoTimings, V351_DEFAULTS } from "../../sim/profiles";
import { solveSimulatedTenants, startSimulatedLab } from "../../sim/simulatedLab";

export type Phase = "first" | "stall" | "recovery";
export const PHASES: Phase[] = ["first", "stall", "recovery"];

export interface RolloutTrace {
    /** Per tenant, its distinct consecutive states `sync/health/operation phase/step status`. */
    states: Record<string, string[]>;
    /** Per phase and tenant, the hook Jobs created (distinct uids), each counted in the phase its sync started in. */
    hookJobs: Record<Phase, Record<string, number>>;
    /** Per phase and tenant, the syncs started (distinct operation start times). */
    syncs: Record<Phase, Record<string, number>>;
    /** The tenants in the order their first sync of the recovery started. */
    recoveryOrder: string[];
    /** The tenants whose step went Healthy in the recovery with no sync of the fixed release (the silent skip). */
    skipped: string[];
    /** Every event in order, for the test's output: `phase +seconds tenant what`. */
    log: string[];
}

const zero = () => Object.fromEntries(TENANTS.map((t) => [t, 0])) as Record<string, number>;

export class TraceRecorder {
    readonly trace: RolloutTrace = {
        states: Object.fromEntries(TENANTS.map((t) => [t, []])),
        hookJobs: { first: zero(), stall: zero(), recovery: zero() },
        syncs: { first: zero(), stall: zero(), recovery: zero() },
        recoveryOrder: [],
        skipped: [],
        log: [],
    };
    private phase: Phase = "first";
    private readonly apps = new Map<string, any>();
    private steps = new Map<string, string>();
    private readonly jobs = new Set<string>();
    private readonly started = new Map<string, string>();
    /** The phase each tenant's latest sync started in: a sync of one phase may run its hook after the next began. */
    private readonly syncPhase = new Map<string, Phase>();
    private readonly said = new Map<string, string>();
    /** Tenants that started a sync of the fixed release in the recovery. */
    private readonly fixedSyncs = new Set<string>();
    private phaseStart: number;

    constructor(private readonly now: () => number) {
        this.phaseStart = now();
    }

    /** The lab moved on (the faulty release pushed: "stall"; the fix pushed: "recovery"). */
    mark(phase: Phase): void {
        this.phase = phase;
        this.phaseStart = this.now();
        this.note("-", `phase ${phase}`);
    }

    /** One object as a watch (or the simulated API's change feed) delivered it. */
    observe(kind: string, obj: any, deleted = false): void {
        if (!obj?.metadata) return;
        if (kind === "Application" && (TENANTS as readonly string[]).includes(obj.metadata.name)) {
            if (deleted) return;
            this.apps.set(obj.metadata.name, obj);
            const op = obj.status?.operationState;
            if (op?.startedAt && this.started.get(obj.metadata.name) !== op.startedAt) {
                this.started.set(obj.metadata.name, op.startedAt);
                this.trace.syncs[this.phase][obj.metadata.name]++;
                this.syncPhase.set(obj.metadata.name, this.phase);
                const path = op.operation?.sync?.source?.path ?? obj.spec?.source?.path;
                this.note(obj.metadata.name, `sync started (${path})`);
                if (this.phase === "recovery" && path === `releases/${RELEASES.fixed}`) {
                    if (!this.fixedSyncs.has(obj.metadata.name)) this.trace.recoveryOrder.push(obj.metadata.name);
                    this.fixedSyncs.add(obj.metadata.name);
                }
            }
            const said = `${op?.phase ?? "-"} ${op?.retryCount ?? 0} ${op?.message ?? ""}`;
            if (op && this.said.get(obj.metadata.name) !== said) {
                this.said.set(obj.metadata.name, said);
                this.note(obj.metadata.name, `operation ${op.phase}${op.retryCount ? ` retry ${op.retryCount}` : ""}: ${op.message ?? ""}`);
            }
            this.record(obj.metadata.name);
        } else if (kind === "ApplicationSet" && obj.metadata.name === TENANTS_APPSET && !deleted) {
            const next = new Map<string, string>((obj.status?.applicationStatus ?? []).map((s: any) => [s.application, s.status]));
            const before = this.steps;
            this.steps = next;
            for (const t of TENANTS) {
                if (before.get(t) === next.get(t)) continue;
                if (
                    this.phase === "recovery" &&
                    next.get(t) === "Healthy" &&
                    !this.fixedSyncs.has(t) &&
                    this.apps.get(t)?.spec?.source?.path === `releases/${RELEASES.fixed}`
                ) {
                    if (!this.trace.skipped.includes(t)) this.trace.skipped.push(t);
                }
                this.record(t);
            }
        } else if (kind === "Job" && obj.metadata.name === HOOK_JOB && (TENANTS as readonly string[]).includes(obj.metadata.namespace)) {
            if (deleted) return this.note(obj.metadata.namespace, "hook Job deleted");
            if (this.jobs.has(obj.metadata.uid)) return;
            this.jobs.add(obj.metadata.uid);
            this.trace.hookJobs[this.syncPhase.get(obj.metadata.namespace) ?? this.phase][obj.metadata.namespace]++;
            this.note(obj.metadata.namespace, "hook Job created");
        }
    }

    private record(tenant: string): void {
        const app = this.apps.get(tenant);
        const s = app?.status;
        const key = `${s?.sync?.status || "-"}/${s?.health?.status || "-"}/${s?.operationState?.phase || "-"}/${this.steps.get(tenant) || "-"}`;
        const list = this.trace.states[tenant];
        if (list[list.length - 1] === key) return;
        list.push(key);
        this.note(tenant, key);
    }

    private note(tenant: string, what: string): void {
        this.trace.log.push(`${this.phase} +${((this.now() - this.phaseStart) / 1000).toFixed(0)}s ${tenant} ${what}`);
    }
}

/** Watches the real plane's Applications, ApplicationSets and Jobs into `rec` until stopped. */
export async function watchPlane(kubeconfig: string, rec: TraceRecorder): Promise<{ stop(): void }> {
    const watches = [
        await keepWatching(kubeconfig, "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications", {}, (type, obj) =>
            rec.observe("Application", obj, type === "DELETED"),
        ),
        await keepWatching(kubeconfig, "/apis/argoproj.io/v1alpha1/namespaces/argocd/applicationsets", {}, (type, obj) =>
            rec.observe("ApplicationSet", obj, type === "DELETED"),
        ),
        await keepWatching(kubeconfig, "/apis/batch/v1/jobs", {}, (type, obj) => rec.observe("Job", obj, type === "DELETED")),
    ];
    return { stop: () => watches.forEach((w) => w.stop()) };
}

/** A phase's mark from the lab's own progress lines. */
export function marker(rec: TraceRecorder): (line: string) => void {
    return (l) => {
        if (/^\[tenants 2 \w+\] pushed/.test(l)) rec.mark("stall");
        if (/^\[tenants 3 \w+\] pushed/.test(l)) rec.mark("recovery");
    };
}

/** The simulation's trace of the same lab (at v3.5.1's timings unless told), on its virtual clock. */
export async function simulatedTrace(timings: ArgoTimings = V351_DEFAULTS, argocdVersion?: ArgoCdVersion): Promise<RolloutTrace> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "sim-tenants-trace-"));
    const clock = new VirtualClock();
    const lab = await startSimulatedLab(root, { timings, clock, argocdVersion });
    const rec = new TraceRecorder(() => clock.now());
    const off = lab.kube.onChange((c) => rec.observe(c.kind, c.obj, c.type === "DELETED"));
    try {
        await solveSimulatedTenants(lab, 3, { productDefaults: true, log: marker(rec) });
        return rec.trace;
    } finally {
        off();
        await lab.stop();
        fs.rmSync(root, { recursive: true, force: true });
    }
}

/**
 * Where the real Argo CD and the simulation differ in the trace's transitions, and why. Anything
 * else that differs fails the test: a difference is either fixed in the simulation or written down
 * here. (The interleaving of the two controllers' writes varies from run to run on either side, so
 * the trace is compared as transitions of each controller's own fields, not as joint states.)
 */
export const EXPLAINED: Record<string, string> = {
    "step Pending -> Waiting":
        "the real ApplicationSet controller can write a new Application's entry Pending before the application controller's first comparison; when it arrives, the entry sees a revision where there was none and goes back to Waiting (progressive_sync.go, pending changes). After the fix the same race can set mandant-b Pending, then Waiting when mandant-a's new comparison lands. In the simulation the first comparison comes first, at its timings",
    "step Waiting -> Progressing":
        "follows from the race above: a sync started while its entry was Pending ends after the entry went back to Waiting, and a Waiting entry whose Application is Synced but not yet Healthy moves to Progressing ('Application resource has synced, updating status to Progressing'). The simulation has the rule (sim/rollingSync.ts) but its timings did not reach it",
    "sync OutOfSync/Missing -> OutOfSync/Healthy":
        "right after a first sync's apply the real controller can write one comparison that finds the tenant's resources live and Healthy but not yet every one matching its target (its live-state cache takes the apply's watch events one by one), and Synced at the next; the simulation's live state takes a sync's apply at once, so its first comparison after it sees it whole. Not modelled",
    "sync OutOfSync/Missing -> Synced/Progressing":
        "the other side of the same: the simulation's first comparison after a first sync's apply sees it whole and goes straight to Synced; the real controller does so only when its live-state cache has taken every watch event of the apply before that comparison, and in other runs passes through OutOfSync/Healthy (above) for every tenant",
};

/** Each dimension's transitions over every tenant's states (`sync/health/operation/step`): "sync A -> B", "operation A -> B", "step A -> B". */
export function transitions(t: RolloutTrace): Set<string> {
    const out = new Set<string>();
    const dims: [string, (s: string[]) => string][] = [
        ["sync", (s) => `${s[0]}/${s[1]}`],
        ["operation", (s) => s[2]],
        ["step", (s) => s[3]],
    ];
    for (const states of Object.values(t.states)) {
        for (const [name, pick] of dims) {
            const seq = states.map((x) => pick(x.split("/"))).filter((v, i, a) => i === 0 || v !== a[i - 1]);
            for (let i = 1; i < seq.length; i++) out.add(`${name} ${seq[i - 1]} -> ${seq[i]}`);
        }
    }
    return out;
}

/** The hook Jobs created during the sync of `tenant` that gave up (from its start to its Failed), from the trace's log. */
export function hookJobsOfGivenUpSync(t: RolloutTrace, tenant: string): number | undefined {
    const failed = t.log.findIndex((l) => new RegExp(`^stall \\S+ ${tenant} operation Failed retry 5:`).test(l));
    if (failed < 0) return undefined;
    let start = failed;
    while (start > 0 && !new RegExp(`^stall \\S+ ${tenant} sync started`).test(t.log[start])) start--;
    return t.log.slice(start, failed).filter((l) => new RegExp(`^stall \\S+ ${tenant} hook Job created$`).test(l)).length;
}
