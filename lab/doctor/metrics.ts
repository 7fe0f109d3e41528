/**
 * The doctor's Prometheus metrics (prom-client): one series per blocking Application of a stuck
 * rollout, one per Application a rollout passed over (the silent skip), and one per named finding.
 */
import { Gauge, Registry } from "prom-client";
import { Diagnosis } from "./diagnose";

export const STUCK_METRIC = "gitops_lab_rollout_stuck";
export const SKIPPED_METRIC = "gitops_lab_rollout_skipped";
export const FINDING_METRIC = "gitops_lab_rollout_finding";

export class RolloutMetrics {
    readonly registry = new Registry();
    private readonly stuck = new Gauge({
        name: STUCK_METRIC,
        help: "A RollingSync rollout is stuck at this step, held by this Application (1 while stuck).",
        labelNames: ["namespace", "appset", "step", "application", "reason"] as const,
        registers: [this.registry],
    });
    private readonly skipped = new Gauge({
        name: SKIPPED_METRIC,
        help: "RollingSync passed over this Application: its step's entry is Healthy but it is not at the target, and nothing will sync it until the next commit (1 while so).",
        labelNames: ["namespace", "appset", "step", "application"] as const,
        registers: [this.registry],
    });

    private readonly finding = new Gauge({
        name: FINDING_METRIC,
        help: "The rollout doctor has this named finding on this ApplicationSet's rollout (kind; the Application and step it is about, empty for the configuration), 1 while it holds.",
        labelNames: ["namespace", "appset", "kind", "step", "application"] as const,
        registers: [this.registry],
    });

    /** Replaces every series with those of this diagnosis. */
    set(ds: Diagnosis[]): void {
        this.stuck.reset();
        this.skipped.reset();
        this.finding.reset();
        for (const d of ds)
            for (const f of d.findings)
                this.finding.set(
                    {
                        namespace: d.namespace,
                        appset: d.name,
                        kind: f.kind,
                        step: f.step === null ? "" : String(f.step),
                        application: f.application ?? "",
                    },
                    1,
                );
        for (const d of ds)
            for (const s of d.skipped)
                this.skipped.set({ namespace: d.namespace, appset: d.name, step: String(s.step), application: s.application }, 1);
        for (const d of ds) {
            if (d.state !== "stuck") continue;
            for (const b of d.blocking)
                this.stuck.set(
                    { namespace: d.namespace, appset: d.name, step: String(d.step ?? ""), application: b.application, reason: b.reason },
                    1,
                );
        }
    }

    /** The exposition text for GET /metrics. */
    text(): Promise<string> {
        return this.registry.metrics();
    }

    get contentType(): string {
        return this.registry.contentType;
    }
}

/** The exposition text of one diagnosis. */
export async function metricsText(ds: Diagnosis[]): Promise<string> {
    const m = new RolloutMetrics();
    m.set(ds);
    return m.text();
}
