/** An Application's revision history (`status.history`), as v3.5.1's controller keeps it. */

import type { Application, RevisionHistory } from "../lab/argo/types";

/** Argo CD's default `spec.revisionHistoryLimit` (common.RevisionHistoryLimit). */
export const REVISION_HISTORY_LIMIT = 10;

/**
 * An Application's `status.history` with one more entry, as v3.5.1's persistRevisionHistory makes it
 * (controller/state.go): its id the last entry's id + 1 (0 for the first), then cut to the newest
 * `spec.revisionHistoryLimit` (default 10; a negative limit keeps none: RevisionHistories.Trunc).
 */
export function withRevisionHistory(app: Application, entry: RevisionHistory): RevisionHistory[] {
    const before: RevisionHistory[] = app.status?.history ?? [];
    const id = before.length ? Number(before[before.length - 1].id) + 1 : 0;
    const limit = Math.max(0, Number(app.spec?.revisionHistoryLimit ?? REVISION_HISTORY_LIMIT));
    const all = [...before, { ...entry, id }];
    return all.slice(Math.max(0, all.length - limit));
}
