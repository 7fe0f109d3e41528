/**
 * What Argo CD 3.6's ApplicationSet controller says of its rollouts in its own metrics
 * (applicationset/metrics/metrics.go at v3.6.2): `argocd_appset_progressive_sync_app_status`, the
 * Applications of each step per RollingSync status. Served at the controller's `/metrics`, which the
 * install exposes as the Service argocd-applicationset-controller, port `metrics`; read through the
 * API server's service proxy. v3.5 has no such series.
 */
import { ARGOCD_NAMESPACE } from "./application";

/** The controller's metrics through the API server's service proxy. */
export const APPSET_METRICS = {
    namespace: ARGOCD_NAMESPACE,
    service: "argocd-applicationset-controller:metrics",
    path: "metrics",
} as const;

export const PROGRESSIVE_SYNC_APP_STATUS = "argocd_appset_progressive_sync_app_status";

/** One sample: how many Applications of an ApplicationSet's step have that RollingSync status. */
export interface ProgressiveSyncCount {
    namespace: string;
    name: string;
    step: string;
    status: string;
    count: number;
}

/**
 * The samples of `argocd_appset_progressive_sync_app_status` in Prometheus' text format. Hand-read:
 * one gauge family in the text format's sample line (`name{label="value",...} number`) is all that is
 * read, which no maintained Node package parses without a client's registry around it.
 */
export function progressiveSyncCounts(text: string): ProgressiveSyncCount[] {
    const out: ProgressiveSyncCount[] = [];
    for (const line of text.split("\n")) {
        if (!line.startsWith(`${PROGRESSIVE_SYNC_APP_STATUS}{`)) continue;
        const close = line.lastIndexOf("}");
        const labels: Record<string, string> = {};
        for (const m of line.slice(PROGRESSIVE_SYNC_APP_STATUS.length + 1, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
            labels[m[1]] = m[2].replace(/\\n/g, "\n").replace(/\\(["\\])/g, "$1");
        const count = Number(
            line
                .slice(close + 1)
                .trim()
                .split(/\s+/)[0],
        );
        if (!labels.namespace || !labels.name || !Number.isFinite(count)) continue;
        out.push({
            namespace: labels.namespace,
            name: labels.name,
            step: labels.step ?? "",
            status: labels.progressiveStatus ?? "",
            count,
        });
    }
    return out;
}
