/**
 * Where else in the lab a commit a failed check found is: another result key that holds it (a value
 * copied from another key, or read at another moment), the branch whose tip it is, or that it is on
 * no branch the lab reads (pushed elsewhere). Said before the hint of a check that has none of its
 * own, so the learner sees which value or ref was taken for which.
 */
import { BareRepo } from "./bareRepo";
import { FileState, isSha } from "./resultFiles";

/** The branches a lab reads; a commit on none of them was pushed elsewhere. */
const LAB_BRANCHES = ["main", "release/prod"];

/**
 * `found` as the lab has it elsewhere, or undefined when nothing else holds it. `self` is what the
 * check is about, as its name begins ("promote.to", "prod_revision_during", "release/prod"): a key or
 * branch is not said to hold its own value.
 */
export async function whereElse(
    repo: BareRepo,
    files: Record<string, FileState>,
    found: string,
    self: string,
): Promise<string | undefined> {
    if (!isSha(found) || !(await repo.isCommit(found))) return undefined;
    const mine = (label: string) => label === self || label.endsWith(`.${self}`);
    const keys = Object.entries(files).flatMap(([name, f]) => {
        const value = f.exists && "value" in f ? f.value : undefined;
        if (!value || typeof value !== "object" || Array.isArray(value)) return [];
        return Object.entries(value as Record<string, unknown>)
            .filter(([, v]) => v === found)
            .map(([k]) => `${name}.${k}`)
            .filter((label) => !mine(label));
    });
    const tips = (await repo.branchesAt(found)).filter((b) => !mine(b));
    const parts = [
        ...(keys.length ? [`the value of ${keys.join(" and ")}`] : []),
        ...(tips.length ? [`the tip of ${tips.join(", ")}`] : []),
    ];
    if (!parts.length) {
        const on = await repo.branchesContaining(found);
        if (!on.some((b) => LAB_BRANCHES.includes(b)))
            parts.push(on.length ? `on ${on.join(", ")} only, a branch the lab does not read` : "on no branch of the repository");
    }
    return parts.length ? `found ${found.slice(0, 12)} is ${parts.join(" and ")}` : undefined;
}
