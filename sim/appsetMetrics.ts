/**
 * The progressive sync series of v3.6's ApplicationSet controller (applicationset/metrics/metrics.go at
 * v3.6.2), kept as the simulated controller works and written as Prometheus' text format, as its
 * `/metrics` answers (served by the simulated API at the controller Service's proxy path, apiServer.ts):
 *
 * - `argocd_appset_progressive_sync_app_status{namespace,name,step,progressiveStatus}`: Applications per
 *   step and RollingSync status, set again at each write of `status.applicationStatus`;
 * - `argocd_appset_progressive_sync_syncs_triggered_total{namespace,name,step}`: each sync RollingSync starts;
 * - `argocd_appset_app_refresh_total{namespace,name}`: each refresh the reconcile gate asks for;
 * - `argocd_appset_progressive_sync_detection_to_trigger_seconds{namespace,name}`: from the rollout's look
 *   to its syncs, for a reconcile that starts one (the simulation takes no time: 0).
 *
 * v3.5 has none of them. Hand-written: prom-client's registry is process-wide, and a served lab may
 * simulate two controllers in one process (tests do).
 */

/** The histogram's buckets, as metrics.go sets them. */
const DETECTION_BUCKETS = [0.05, 0.1, 0.15, 0.5, 1, 5];

type Labels = Record<string, string>;

/** A label set as Prometheus writes it: names in order, values quoted and escaped. */
const labelText = (labels: Labels) =>
    `{${Object.keys(labels)
        .sort()
        .map((k) => `${k}="${labels[k].replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
        .join(",")}}`;

export class AppSetMetrics {
    /** "ns/name" -> the app status series of that ApplicationSet (step, progressiveStatus, count). */
    private readonly appStatus = new Map<string, { step: string; status: string; count: number }[]>();
    private readonly syncs = new Map<string, { labels: Labels; count: number }>();
    private readonly refreshes = new Map<string, { labels: Labels; count: number }>();
    private readonly detection = new Map<string, { labels: Labels; buckets: number[]; sum: number; count: number }>();

    /** SetProgressiveSyncAppStatus: the ApplicationSet's series replaced by the counts of its entries now. */
    setAppStatus(namespace: string, name: string, entries: { step?: string; status?: string }[]): void {
        const counts = new Map<string, { step: string; status: string; count: number }>();
        for (const e of entries) {
            const step = e.step ?? "";
            const status = e.status ?? "";
            const k = `${step}\u0000${status}`;
            const c = counts.get(k) ?? { step, status, count: 0 };
            c.count++;
            counts.set(k, c);
        }
        this.appStatus.set(`${namespace}/${name}`, [...counts.values()]);
    }

    /** SetProgressiveSyncAppSync: one sync started at `step`. */
    syncTriggered(namespace: string, name: string, step: string): void {
        const key = `${namespace}/${name}/${step}`;
        const s = this.syncs.get(key) ?? { labels: { namespace, name, step }, count: 0 };
        s.count++;
        this.syncs.set(key, s);
    }

    /** IncRefreshTriggeredCount: one refresh annotation the gate added. */
    refreshTriggered(namespace: string, name: string): void {
        const key = `${namespace}/${name}`;
        const r = this.refreshes.get(key) ?? { labels: { namespace, name }, count: 0 };
        r.count++;
        this.refreshes.set(key, r);
    }

    /** ObserveTimeToStartSyncAfterDetection. */
    detectionToTrigger(namespace: string, name: string, seconds: number): void {
        const key = `${namespace}/${name}`;
        const h = this.detection.get(key) ?? { labels: { namespace, name }, buckets: DETECTION_BUCKETS.map(() => 0), sum: 0, count: 0 };
        DETECTION_BUCKETS.forEach((b, i) => (h.buckets[i] += seconds <= b ? 1 : 0));
        h.sum += seconds;
        h.count++;
        this.detection.set(key, h);
    }

    /** The series in Prometheus' text format (a family is written once it has a series, as client_golang does). */
    text(): string {
        const out: string[] = [];
        // a family's series in label order; a histogram's lines of one series stay in theirs (buckets by le, sum, count)
        const family = (name: string, help: string, type: string, series: string[][]) => {
            const sorted = [...series].sort((a, b) => a[0].localeCompare(b[0]));
            if (sorted.length) out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...sorted.flat());
        };
        family(
            "argocd_appset_app_refresh_total",
            "Counts application refresh triggered by AppSet for progressive sync",
            "counter",
            [...this.refreshes.values()].map((r) => [`argocd_appset_app_refresh_total${labelText(r.labels)} ${r.count}`]),
        );
        family(
            "argocd_appset_progressive_sync_app_status",
            "Count of apps per status (Waiting/Pending/Progressing/Healthy) per step",
            "gauge",
            [...this.appStatus.entries()].flatMap(([key, series]) => {
                const [namespace, name] = key.split("/");
                return series.map((s) => [
                    `argocd_appset_progressive_sync_app_status${labelText({ namespace, name, step: s.step, progressiveStatus: s.status })} ${s.count}`,
                ]);
            }),
        );
        const hist = "argocd_appset_progressive_sync_detection_to_trigger_seconds";
        family(
            hist,
            "Time between detecting applications to sync and triggering their sync during a progressive sync wave",
            "histogram",
            [...this.detection.values()].map((h) => [
                ...DETECTION_BUCKETS.map((b, i) => `${hist}_bucket${labelText({ ...h.labels, le: String(b) })} ${h.buckets[i]}`),
                `${hist}_bucket${labelText({ ...h.labels, le: "+Inf" })} ${h.count}`,
                `${hist}_sum${labelText(h.labels)} ${h.sum}`,
                `${hist}_count${labelText(h.labels)} ${h.count}`,
            ]),
        );
        family(
            "argocd_appset_progressive_sync_syncs_triggered_total",
            "Counts sync operations triggered by progressive sync",
            "counter",
            [...this.syncs.values()].map((s) => [`argocd_appset_progressive_sync_syncs_triggered_total${labelText(s.labels)} ${s.count}`]),
        );
        return out.length ? `${out.join("\n")}\n` : "";
    }
}
