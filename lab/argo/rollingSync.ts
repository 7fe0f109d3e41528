import type { ApplicationSet, RollingSyncStep } from "./types";
/**
 * How Argo CD v3.5.1's progressive sync reads a RollingSync step (applicationset/progressivesync/):
 * which Applications a step's matchExpressions select, and the limit a step's maxUpdate sets. The
 * simulated ApplicationSet controller rolls out by these, and the rollout doctor judges by them.
 */

/**
 * The messages of an entry moved to Waiting by a change (not a new Application): v3.6's reconcile
 * gate (`hasPendingChanges`) holds the rollout from the newest of them.
 */
export const PENDING_CHANGE_MESSAGES = [
    "Application has pending changes, setting status to Waiting",
    "Application has pending changes (revision and spec differ), setting status to Waiting",
    "Application has pending changes (spec differs), setting status to Waiting",
];

/**
 * The message of an entry that was Waiting and found its Application synced already (no sync of its own): every
 * entry has it when the entries were made anew (the strategy taken out and put back clears them).
 */
export const SYNCED_HEALTHY_MESSAGE = "Application resource has synced, updating status to Healthy";

/** v3.6's default `--refresh-grace-period-seconds`: the gate waits this long before it asks for refreshes. */
export const REFRESH_GRACE_SECONDS = 30;

/** Whether an ApplicationSet was written by Argo CD 3.6 or later: it writes InvalidRolloutConfig at the end of every RollingSync pass. */
export const writtenBy36 = (appset: ApplicationSet) => (appset.status?.conditions ?? []).some((c) => c?.type === "InvalidRolloutConfig");

/** The operators RollingSync understands; any other makes an expression fail on a present label. */
export const ROLLING_SYNC_OPERATORS = ["In", "NotIn"];

/**
 * Whether a step selects an Application with these labels: every expression holds; a label the
 * Application lacks fails only an In.
 */
export function stepSelects(step: RollingSyncStep | undefined, labels: Record<string, string>): boolean {
    for (const expr of step?.matchExpressions ?? []) {
        const val = labels[expr.key];
        if (val !== undefined) {
            if (!ROLLING_SYNC_OPERATORS.includes(expr.operator)) return false;
            const listed = (expr.values ?? []).includes(val);
            if (expr.operator === "In" ? !listed : listed) return false;
        } else if (expr.operator === "In") return false;
    }
    return true;
}

/**
 * The number of a step's `total` Applications that may be Pending or Progressing at once, or null for
 * no limit, as v3.5.1 computes it (intstr.GetScaledValueFromIntOrPercent, rounding down): a number is
 * itself (0 or less: none ever); a string is a percentage "N%" of the step, raised to at least 1
 * except "0%"; any other string (not a percentage: "2", "half", "12.5%") fails to scale and is
 * raised to 1.
 */
export function maxUpdateLimit(maxUpdate: unknown, total: number): number | null {
    if (maxUpdate === undefined || maxUpdate === null) return null;
    if (typeof maxUpdate === "number") return maxUpdate;
    const s = String(maxUpdate);
    const pct = /^([+-]?\d+)%$/.exec(s);
    const limit = pct ? Math.floor((Number(pct[1]) * total) / 100) : 0;
    return s !== "0%" && limit < 1 ? 1 : limit;
}
