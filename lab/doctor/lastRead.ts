/** Where a complete rollout stands in Git: what the doctor's summary adds to "rollout complete". */
import type { ApplicationSetApplicationStatus } from "../argo/types";

/**
 * The one revision a rollout's entries were rolled out at (their targetRevisions, the Applications' compared revision),
 * said so that a push since, not compared yet, is not taken for rolled out; nothing when the entries differ or carry none.
 */
export const lastRead = (entries: (ApplicationSetApplicationStatus | undefined)[]): string =>
    new Set(entries.map((x) => x?.targetRevisions?.[0])).size === 1 && entries[0]?.targetRevisions?.[0]
        ? ` at ${entries[0].targetRevisions[0].slice(0, 12)}, the revision its Applications were compared at`
        : "";
