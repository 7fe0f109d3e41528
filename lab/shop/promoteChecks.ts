/**
 * The shop grader's checks of step 6, the promotion: release/prod fast-forwarded to the incident commit
 * and never rewritten (a merge, a cherry-pick or a squash merge named as such). Part of the table in
 * checks.ts, which runs them.
 */
import * as path from "path";
import { isDeepStrictEqual } from "util";
import { Check, eq } from "../grader/grader";
import { isSha } from "../grader/resultFiles";
import { startAgainAt } from "../kit/layout";
import { obj, putBack, ShopWorld } from "./world";
import { missingYamlAfter } from "./overlays";
/** A promotion that can no longer be a fast-forward is done again on a lab brought back to step 5. */
export const startOver = (w: ShopWorld) =>
    `start the lab over to promote again (${startAgainAt(w.layout.root, { lab: "shop", through: 5 })})`;

/**
 * How `copy` was made from `of` as another commit with its change: "a cherry-pick" (its message, or git
 * cherry-pick -x's note), "a squash merge" (git merge --squash's message, or a commit of its own holding
 * `of`'s files on top of where `of` started); undefined when it is no copy of it.
 */
async function copyOf(w: ShopWorld, copy: unknown, of: unknown): Promise<string | undefined> {
    if (!isSha(copy) || !isSha(of) || copy === of || !(await w.repo.isCommit(copy)) || !(await w.repo.isCommit(of))) return undefined;
    const [a, b] = await Promise.all([w.repo.message(copy), w.repo.message(of)]);
    if (a.includes(`cherry picked from commit ${of}`) || a.trim().startsWith(b.trim())) return "a cherry-pick";
    if (a.startsWith("Squashed commit of the following:") && a.includes(`commit ${of}`)) return "a squash merge";
    // a squash merge committed with a message of one's own: one parent, of's files, and not of's descendant
    const [parents, ofParents] = await Promise.all([w.repo.parents(copy), w.repo.parents(of)]);
    return parents.length === 1 && isDeepStrictEqual(parents, ofParents) && (await w.repo.sameTree(copy, of))
        ? "a squash merge (or a cherry-pick)"
        : undefined;
}

/** Step 6: the promotion, a fast-forward of release/prod to the incident commit. */
export const PROMOTE_CHECKS: Check<ShopWorld>[] = [
    {
        step: 6,
        name: "promote.from is pin.release_prod_initial",
        run: async (w) => {
            if (!obj(w, "promote") || !obj(w, "pin")) return null;
            const { from, to } = obj(w, "promote");
            const outcome = eq(obj(w, "pin").release_prod_initial, from);
            // written the other way round: from is where release/prod was, to where the fast-forward took it
            if (!outcome.ok && isSha(from) && from === obj(w, "incident")?.commit && to === obj(w, "pin").release_prod_initial)
                return {
                    ...outcome,
                    hint: "promote.from and promote.to are swapped: from is where release/prod was before the promotion, to where it went",
                };
            // read after the push (from = to): the file is wrong, not the repository
            return !outcome.ok && isSha(from) && from === to
                ? {
                      ...outcome,
                      hint: "promote.from is promote.to, release/prod read after the push: from is where release/prod stood before the promotion, pin.release_prod_initial (the repository is right: only the file is to change)",
                      whereElseToo: true,
                  }
                : outcome;
        },
    },
    {
        step: 6,
        name: "promote.to is incident.commit",
        run: async (w) => {
            if (!obj(w, "promote") || !obj(w, "incident")) return null;
            const { commit } = obj(w, "incident");
            const { to } = obj(w, "promote");
            const outcome = eq(commit, to);
            // a merge commit made on release/prod (git merge --no-ff): no fast-forward, whatever it brings
            if (!outcome.ok && isSha(to) && (await w.repo.isCommit(to)) && (await w.repo.parents(to)).length > 1)
                return {
                    ...outcome,
                    hint: `promote.to is a merge commit (git merge --no-ff, or a merge after release/prod moved): the promotion is a fast-forward of release/prod to incident.commit itself, which a merge on release/prod rules out now (the repository rewinds nothing): ${startOver(w)}`,
                };
            // promoted past the incident commit: a fast-forward too far (to main's tip, most often)
            if (!outcome.ok && isSha(to) && isSha(commit) && to !== commit && (await w.repo.isAncestor(commit, to)))
                return {
                    ...outcome,
                    hint: "promote.to comes after incident.commit: the promotion went too far (the step promotes the incident commit itself, not what main has since); if release/prod is there, put its files back with new commits (git revert of the commits after incident.commit, pushed to release/prod), never a force push, and write promote.to as the incident commit",
                };
            // short of it: a commit the incident (a merge, most often, of the branch the change was made on) brought in
            if (
                !outcome.ok &&
                isSha(to) &&
                isSha(commit) &&
                (await w.repo.isCommit(to)) &&
                (await w.repo.isAncestor(to, commit)) &&
                // (release/prod not moved off the way to it: a copy, a merge, or past it rules the fast-forward out)
                (!w.releaseTip || (await w.repo.isAncestor(w.releaseTip, commit)))
            ) {
                // release/prod already at the incident: the push was made, and promote.to was read where it stood before (the
                // clone's local branch, which git push origin main:release/prod does not move)
                if (w.releaseTip === commit)
                    return {
                        ...outcome,
                        hint: `release/prod in the repository is at incident.commit already (the promotion was pushed), but promote.to holds ${to.slice(0, 12)}, ${to === obj(w, "promote").from ? "where it stood before (promote.from)" : "an earlier commit"}: read from your clone's own release/prod, which a push of another branch to it (git push origin main:release/prod) does not move? write what the repository holds: git fetch, then git rev-parse origin/release/prod`,
                    };
                const merge = (await w.repo.parents(commit)).length > 1;
                return {
                    ...outcome,
                    hint: `promote.to comes before incident.commit${merge ? " (a commit of the branch incident.commit, a merge, brought in)" : ""}: the step promotes incident.commit itself; release/prod can still fast-forward on to it: git push origin ${commit.slice(0, 12)}:refs/heads/release/prod, then write promote.to as ${commit.slice(0, 12)}'s full SHA (and refresh shop-prod)`,
                };
            }
            const copy = outcome.ok ? undefined : await copyOf(w, to, commit);
            return copy
                ? {
                      ...outcome,
                      hint: `promote.to is a copy of incident.commit (${copy}: its change, another commit); the promotion fast-forwards release/prod to incident.commit itself, which the copy on release/prod now rules out (the repository rewinds nothing): ${startOver(w)}`,
                  }
                : outcome;
        },
    },
    {
        step: 6,
        name: "promote.from is an ancestor of promote.to (a fast-forward)",
        run: async (w) => {
            const p = obj(w, "promote");
            if (!p || !isSha(p.from) || !isSha(p.to)) return null;
            return { ok: await w.repo.isAncestor(p.from, p.to), expected: "an ancestor", found: "not an ancestor: not a fast-forward" };
        },
    },
    {
        step: 6,
        name: "release/prod is at promote.to (its history never rewritten)",
        run: async (w) => {
            if (!obj(w, "promote")) return null;
            const to = obj(w, "promote").to;
            // fast-forwarded past the commit, then put back as the lab teaches (putBack)
            if (await putBack(w, w.releaseTip)) return true;
            const past = isSha(to) && w.releaseTip && to !== w.releaseTip && (await w.repo.isAncestor(to, w.releaseTip));
            // a merge brought promote.to in from the side: no fast-forward, and none can be made now
            if (past && (await w.repo.ownMerges(w.releaseTip!, w.main)).length)
                return {
                    ok: false,
                    expected: to,
                    found: `${w.releaseTip}, a merge that brought promote.to in (not a fast-forward)`,
                    hint: `release/prod reached promote.to by a merge, not a fast-forward (git merge --no-ff, or a merge after a cherry-pick); the repository rewinds nothing, so a fast-forward to it cannot be made now: ${startOver(w)}`,
                };
            const from = obj(w, "promote").from;
            // (promote.from written as promote.to, read after the push: release/prod is at promote.to, the from check says the rest)
            if (!past && isSha(to) && w.releaseTip && w.releaseTip === from && from !== to) {
                // not moved: the push went elsewhere (another branch), or was never made
                const elsewhere = (await w.repo.branchesAt(to)).filter((b) => b !== "main" && b !== "release/prod");
                // moved in the clone alone (git reset --hard, or a merge), never pushed
                const local = w.clone?.exists() ? await w.clone.branch("release/prod") : null;
                if (local === to)
                    return {
                        ok: false,
                        expected: to,
                        found: `${w.releaseTip}, promote.from: not moved (your clone's release/prod is at promote.to)`,
                        hint: `your clone's release/prod is at promote.to, but it was never pushed: release/prod in the repository is still at promote.from; push it: git push origin release/prod`,
                    };
                // a clone of the git daemon beside it: its push is refused (the daemon reads only), so the lab's clone is named
                const served = w.servedClone?.repo.exists()
                    ? ` from the lab's clone${w.clone ? ` (${path.dirname(w.clone.gitDir)})` : ""}: ${w.servedClone.dir} is a clone of the git daemon, which is read-only (its push is refused)`
                    : "";
                return {
                    ok: false,
                    expected: to,
                    found: `${w.releaseTip}, promote.from: not moved`,
                    hint: `release/prod has not moved from promote.from${elsewhere.length ? `; ${elsewhere.join(", ")} ${elsewhere.length === 1 ? "is" : "are"} at promote.to: the push went to another branch` : ""}: fast-forward release/prod itself (git push origin <commit>:release/prod${served ? `${served})` : ")"}`,
                };
            }
            // a cherry-pick (or a squash merge) of promote.to onto release/prod: its change, another commit, and no fast-forward to it now
            const copy = !past && w.releaseTip ? await copyOf(w, w.releaseTip, to) : undefined;
            if (copy)
                return {
                    ok: false,
                    expected: to,
                    found: `${w.releaseTip}, a copy of promote.to (${copy})`,
                    hint: `release/prod holds ${copy} of promote.to (its change, another commit), not promote.to itself; the repository rewinds nothing, so a fast-forward to it cannot be made now: ${startOver(w)}`,
                };
            // step 7's bad commit made on release/prod (the clone had it checked out): said as such, with its way back
            const bad = past ? await missingYamlAfter(w, to, w.releaseTip!) : undefined;
            // made on release/prod itself: main does not have it (a commit that came from main came with a promotion)
            if (bad && !(w.main && (await w.repo.isAncestor(bad, w.main))))
                return {
                    ok: false,
                    expected: to,
                    found: `${w.releaseTip}, past it: ${bad.slice(0, 12)} adds missing.yaml to envs/dev`,
                    hint: `${bad.slice(0, 12)} on release/prod adds missing.yaml to envs/dev: step 7's bad commit went to release/prod, not main (the clone had release/prod checked out?); take it out there with a new commit (git revert ${bad.slice(0, 12)}, pushed to release/prod), never a force push, then make step 7's commit on main (git checkout main first)`,
                };
            return past
                ? {
                      ok: false,
                      expected: to,
                      found: `${w.releaseTip}, past it (a fast-forward too far)`,
                      hint: "release/prod went past promote.to; the repository refuses to rewind it, as it should: put its files back with new commits (git revert of the commits after promote.to, pushed to release/prod), never a force push",
                  }
                : eq(to, w.releaseTip);
        },
    },
    {
        step: 6,
        name: "release/prod was moved to promote.to, not deleted and made again",
        run: async (w) => {
            const p = obj(w, "promote");
            if (!p || !isSha(p.from) || !isSha(p.to) || !w.releaseTip) return null;
            // its log, kept by the lab's repository (one made by hand keeps none), begins where the branch was made last:
            // at the pin's commit (or before it), unless it was deleted since and pushed anew
            const tips = await w.repo.tipsOf("release/prod").catch(() => null);
            const first = tips?.[tips.length - 1];
            if (!first || first === p.from || (await w.repo.isAncestor(first, p.from).catch(() => true))) return true;
            return {
                ok: false,
                expected: `release/prod's log from promote.from on`,
                found: `its log begins at ${first.slice(0, 12)}: deleted and pushed anew`,
                hint: `release/prod was deleted and pushed anew at ${first.slice(0, 12)} (its log in the repository begins there), not moved from promote.from: a promotion is a push that moves the branch (git push origin <commit>:release/prod), which the repository accepts only as a fast-forward, and deleting it skips that check; the repository now holds what a fast-forward would have, but the step is the move: ${startOver(w)}`,
            };
        },
    },
    {
        step: 6,
        name: "release/prod still contains promote.from",
        run: async (w) => {
            const from = obj(w, "promote")?.from;
            if (!isSha(from) || !w.releaseTip) return null;
            return {
                ok: await w.repo.isAncestor(from, w.releaseTip),
                expected: `${from} in release/prod's history`,
                found: "missing: release/prod was rewritten",
            };
        },
    },
];
