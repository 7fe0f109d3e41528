/** The tenants lab's result times: a time in seconds graded against the age of the commit it is measured from. */
import { Outcome } from "../grader/grader";
import { isSha } from "../grader/resultFiles";
import { obj, TenantsWorld } from "./world";

/**
 * A result's seconds measured from its commit's push: from 0 to the commit's age (no longer than it has existed);
 * `millis`: a value that fits as milliseconds says so.
 */
/**
 * When a commit came to be, as the repository can tell: its first push to main (the reflog), else its own date, never
 * one still to come (a commit dated by a machine whose clock runs ahead).
 */
export async function madeAt(w: TenantsWorld, sha: string): Promise<number> {
    const pushed = await w.repo.heldSince("main", sha).catch(() => null);
    return pushed ?? Math.min(await w.repo.committedAt(sha), Date.now());
}

export async function secondsSinceCommit(
    w: TenantsWorld,
    file: "stall" | "recovery",
    key: string,
    what: string,
    opts: { millis?: boolean; min?: number } = {},
): Promise<Outcome | boolean | null> {
    const o = obj(w, file);
    const d = o?.[key];
    if (typeof d !== "number" || !isSha(o.commit) || !(await w.repo.isCommit(o.commit))) return null;
    // from its push where the repository's reflog says when main first held it, else from the commit's making
    const since = await madeAt(w, o.commit);
    const pushed = (await w.repo.heldSince("main", o.commit).catch(() => null)) === since;
    const age = Math.ceil((Date.now() - since) / 1000);
    const min = opts.min ?? 0;
    // below the least it can be (a placeholder 0: the stall shows only once the hook has failed, the rollout takes time)
    if (d < min && d >= 0)
        return {
            ok: false,
            expected: `${min} to ${age}`,
            found: d,
            hint: `${key} holds ${d}, which no rollout takes: ${what}`,
        };
    if (d >= 0 && d <= age) return true;
    // milliseconds: a rollout's take at least a second, so a thousand or more
    const ms = opts.millis && d >= 1000 && d / 1000 <= age ? ` (${d} ms is ${Math.ceil(d / 1000)} s: write seconds)` : "";
    // the recovery counted from the stall's push, the rollout that stalled, not from the fix's
    const stall = file === "recovery" ? obj(w, "stall")?.commit : undefined;
    const stallAge =
        isSha(stall) && stall !== o.commit && (await w.repo.isCommit(stall))
            ? Math.ceil((Date.now() - (await madeAt(w, stall))) / 1000)
            : NaN;
    // (from the stall's push, the count is at least the time from the stall's commit to the fix's, and at most the stall's age)
    const fromStall =
        !ms && d <= stallAge && d >= stallAge - age
            ? " (counted from the stall's push, stall.commit? the recovery counts from your push of the fix, recovery.commit)"
            : "";
    return {
        ok: false,
        expected: `0 to ${age} (${file}.commit was ${pushed ? "pushed" : "made"} ${age} s ago)`,
        found: d,
        hint: `${key} holds ${d}, longer than ${file}.commit has ${pushed ? "been on main (since its push, by the repository's reflog)" : "existed"} (${age} s)${ms}${fromStall}: ${what}`,
    };
}

/**
 * recovery.seconds against the rollout the file itself records: no longer than from recovery.commit's
 * making (a push comes after it) to the last tenant's healthy_at, and no shorter than from its push (where the
 * repository's reflog says when) to it, a minute allowed for the clocks either way; the
 * healthy_at times themselves are checked against the ApplicationSet's where the cluster is read.
 */
export async function secondsWithinRollout(w: TenantsWorld): Promise<Outcome | boolean | null> {
    const r = obj(w, "recovery");
    const d = r?.seconds;
    if (typeof d !== "number" || !Array.isArray(r.order) || !isSha(r.commit) || !(await w.repo.isCommit(r.commit))) return null;
    const last = Math.max(...r.order.map((o: { healthy_at?: unknown } | null) => Date.parse(String(o?.healthy_at))));
    if (!Number.isFinite(last)) return null; // the order's own checks say what is wrong with its times
    // no shorter than from the fix's push (the repository's reflog) to the last healthy_at, a minute allowed for the clocks
    const pushed = await w.repo.heldSince("main", r.commit).catch(() => null);
    // (a healthy_at later than now, beyond the clocks' five minutes, is no time to count from: the order's check says so)
    const least = pushed === null || last > Date.now() + 300_000 ? 0 : Math.floor((last - pushed) / 1000) - 60;
    if (d >= 0 && d < least)
        return {
            ok: false,
            expected: `at least ${least} (-60 for the clocks): recovery.commit was pushed ${least + 60} s before the last healthy_at`,
            found: d,
            hint: `seconds holds ${d}, shorter than the rollout took: recovery.commit was pushed (by the repository's reflog) ${least + 60} s before the last tenant turned Healthy (${new Date(last).toISOString()}); count from your push of the fix to the rollout complete, the last healthy_at`,
        };
    const took = Math.ceil((last - (await madeAt(w, r.commit))) / 1000);
    if (took < 0 || d <= took + 60) return true; // (a healthy_at before the commit: the order's checks say so)
    return {
        ok: false,
        expected: `at most ${took} (+60 for the clocks): recovery.commit was made ${took} s before the last healthy_at`,
        found: d,
        hint: `seconds holds ${d}, longer than the rollout took: recovery.commit was made ${took} s before the last tenant turned Healthy (${new Date(last).toISOString()}); count from your push of the fix to the rollout complete, the last healthy_at`,
    };
}
