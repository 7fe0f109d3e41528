/**
 * The tenants lab's stall and recovery at Argo CD v3.5.1's and Kubernetes' defaults on the
 * simulation's virtual clock, watched as a monitoring stack would: the doctor's `--watch` rounds as
 * the command runs them (lab/doctor/watch.ts watchRounds: at once on a change of a rollout or an
 * Application, at least every 30 s) and, every minute (Prometheus's default scrape interval), what a
 * scrape would read — the doctor's own series (lab/doctor/metrics.ts) and those of the
 * kube-state-metrics alternative (lab/doctor/kube-state-metrics.yaml, computed here from the same
 * objects). The samples feed `promtool test rules` (test/real/alertRules.real.ts).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { KubeCluster } from "../../lab/ports/cluster";
import { HOOK_ANNOTATION } from "../../lab/argo/application";
import { MIN_ROUND_GAP_MS, readLive, RolloutChanges, RolloutWatcher, watchRounds } from "../../lab/doctor/watch";
import { VirtualClock } from "../../sim/clock";
import { V351_DEFAULTS } from "../../sim/profiles";
import { solveSimulatedTenants, startSimulatedLab } from "../../sim/simulatedLab";

/** One scrape: series (`name{labels}`) -> value. */
export interface Scrape {
    /** Seconds since the recording began. */
    at: number;
    series: Map<string, number>;
}

export interface StallRecording {
    intervalSeconds: number;
    scrapes: Scrape[];
    /** Seconds since the recording began: the push of the faulty release, mandant-b's hook Job's first BackoffLimitExceeded, its sync's first failed attempt, mandant-b giving up, the push of the fix, the rollout complete again (undefined when the recovery failed). */
    marks: { stallPush: number; hookFailed: number; firstFailure: number; gaveUp: number; fixPush: number; recovered?: number };
    /** Why the recovery did not complete, when it did not. */
    recoveryError?: string;
}

/** Prometheus's default scrape_interval. */
export const SCRAPE_SECONDS = 60;
/** The doctor's default --interval. */
const DOCTOR_INTERVAL_SECONDS = 30;

const series = (name: string, labels: Record<string, string>) =>
    `${name}{${Object.entries(labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(",")}}`;

const KSM_LABELS = { customresource_group: "argoproj.io", customresource_version: "v1alpha1" };
/** The StateSet's list in kube-state-metrics.yaml. */
const SYNC_PHASES = ["Running", "Terminating", "Failed", "Error", "Succeeded"];

/** What kube-state-metrics would export with lab/doctor/kube-state-metrics.yaml: the ApplicationSets' rollout entries and the Applications' sync operations. */
export function kubeStateSeries(applicationSets: any[], applications: any[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of applicationSets)
        for (const e of s.status?.applicationStatus ?? [])
            out.set(
                series("gitops_lab_appset_rollout_application_step", {
                    ...KSM_LABELS,
                    customresource_kind: "ApplicationSet",
                    customresource_name: s.metadata.name,
                    namespace: s.metadata.namespace,
                    application: e.application,
                    step: String(e.step),
                    status: e.status,
                }),
                Number(e.step),
            );
    for (const a of applications) {
        const op = a.status?.operationState;
        const labels = {
            ...KSM_LABELS,
            customresource_kind: "Application",
            customresource_name: a.metadata.name,
            namespace: a.metadata.namespace,
            application: a.metadata.name,
        };
        out.set(series("gitops_lab_application_sync_retries", labels), Number(op?.retryCount ?? 0)); // nilIsZero
        if (op?.phase)
            for (const phase of SYNC_PHASES)
                out.set(series("gitops_lab_application_sync_phase", { ...labels, phase }), op.phase === phase ? 1 : 0);
    }
    return out;
}

/** Parses Prometheus text exposition into series -> value (comments skipped). */
export function parseExposition(text: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const line of text.split("\n")) {
        if (!line || line.startsWith("#")) continue;
        const i = line.lastIndexOf(" ");
        out.set(line.slice(0, i), Number(line.slice(i + 1)));
    }
    return out;
}

/** Runs the tenants lab (step 1 before the recording, then the stall and the recovery) and records a scrape every 30 s of simulated time. */
export async function recordStall(): Promise<StallRecording> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "stall-series-"));
    const clock = new VirtualClock();
    const lab = await startSimulatedLab(root, { timings: V351_DEFAULTS, clock, argocdVersion: "v3.5.1" }); // the version whose timings these are
    try {
        await solveSimulatedTenants(lab, 1, { productDefaults: true });
        const cluster = new KubeCluster(lab.kubeconfig);
        const start = clock.now();
        const at = () => Math.round((clock.now() - start) / 1000);
        const marks: Partial<StallRecording["marks"]> = {};
        const scrapes: Scrape[] = [];
        // the step first blocks when mandant-b's hook Job fails and then its first sync attempt: seen on the simulated API as it happens
        const changes = new RolloutChanges();
        const listeners = new Set<() => void>();
        const off = lab.kube.onChange((c) => {
            if ((c.kind === "Application" || c.kind === "ApplicationSet") && changes.changed(c.obj, c.type === "DELETED"))
                listeners.forEach((l) => l());
            if (marks.stallPush === undefined) return;
            const job = c.kind === "Job" && c.obj?.metadata?.namespace === "mandant-b" && c.obj.metadata.annotations?.[HOOK_ANNOTATION];
            if (
                job &&
                marks.hookFailed === undefined &&
                (c.obj.status?.conditions ?? []).some((x: any) => x.reason === "BackoffLimitExceeded")
            )
                marks.hookFailed = at();
            const op = c.kind === "Application" && c.obj?.metadata?.name === "mandant-b" ? c.obj.status?.operationState : undefined;
            if (!op) return;
            if (marks.firstFailure === undefined && (op.retryCount! >= 1 || op.phase === "Failed")) marks.firstFailure = at();
            if (marks.gaveUp === undefined && op.phase === "Failed") marks.gaveUp = at();
        });
        const watcher = new RolloutWatcher(() => readLive(cluster), null, { stuckAfterSeconds: 600 });
        let solving = true;
        let latest: Awaited<ReturnType<RolloutWatcher["tick"]>> = [];
        // the doctor's --watch, as the command runs it, on the simulation's clock
        const doctor = watchRounds(
            async () => {
                latest = await watcher.tick(new Date(clock.now()));
            },
            {
                intervalMs: DOCTOR_INTERVAL_SECONDS * 1000,
                minGapMs: MIN_ROUND_GAP_MS,
                clock,
                stopped: () => !solving,
                changes: (l) => {
                    listeners.add(l);
                    return () => listeners.delete(l);
                },
            },
        );
        // the scrapes: what the doctor serves at that moment, and what kube-state-metrics would read from the objects
        const sampler = (async () => {
            while (solving) {
                const [sets, apps] = await Promise.all([cluster.listApplicationSets(), cluster.listApplications()]);
                const s = new Map([...parseExposition(await watcher.metrics.text()), ...kubeStateSeries(sets, apps)]);
                scrapes.push({ at: at(), series: s });
                if (
                    marks.fixPush !== undefined &&
                    marks.recovered === undefined &&
                    latest.length &&
                    latest.every((d) => d.state === "complete")
                )
                    marks.recovered = at();
                await clock.sleep(SCRAPE_SECONDS * 1000);
            }
        })();
        await clock.sleep(120_000); // two minutes of a healthy rollout first
        let recoveryError: string | undefined;
        await solveSimulatedTenants(lab, 3, {
            productDefaults: true,
            log: (l) => {
                if (/\[tenants 2 \w+\] pushed/.test(l)) marks.stallPush = at();
                if (/\[tenants 3 \w+\] pushed/.test(l)) marks.fixPush = at();
            },
        }).catch((e) => {
            // the recovery can miss a tenant (the silent skip the simulation at v3.5.1's timings can show: mandant-a OutOfSync/Healthy); the stall's record stands
            if (marks.fixPush === undefined) throw e;
            recoveryError = String(e.message ?? e);
        });
        // and three minutes after the recovery as the sampler saw it (it may notice the rollout complete a scrape or two after the lab did)
        const tailFrom = at();
        while (at() < (marks.recovered ?? tailFrom) + 180 && at() < tailFrom + 600) await clock.sleep(SCRAPE_SECONDS * 1000);
        solving = false;
        await Promise.all([sampler, doctor]);
        off();
        return { intervalSeconds: SCRAPE_SECONDS, scrapes, marks: marks as StallRecording["marks"], recoveryError };
    } finally {
        await lab.stop();
        fs.rmSync(root, { recursive: true, force: true });
    }
}
