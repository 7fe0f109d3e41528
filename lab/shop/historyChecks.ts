/**
 * The shop grader's checks of step 7's history: the bad commit on main and its revert (step 6's promotion
 * is in promoteChecks.ts). Part of the table in checks.ts, which runs them.
 */
import { Check, eq } from "../grader/grader";
import { isSha } from "../grader/resultFiles";
import { messageOf } from "../ports/errors";
import { renderShopConfigAt } from "./render";
import { startOver } from "./promoteChecks";
import { obj, putBack, ShopWorld } from "./world";
import { keyHolding, kustomizationOf, missingYamlAfter, readKustomization, resourcesOf } from "./overlays";
import { DEV_ERROR } from "./devError";

/** The revert's bad commit, when it is a commit of the repository (step 8 asks whether it reached release/prod). */
export async function badCommit(w: ShopWorld): Promise<string | null> {
    const bad = obj(w, "revert")?.bad_commit;
    return isSha(bad) && (await w.repo.isCommit(bad)) ? bad : null;
}

/**
 * A message git revert wrote for `sha`: "This reverts commit <sha>." or, with git revert --reference, its abbreviation
 * and subject ("This reverts commit 1faecca (dev: add missing.yaml, 2026-12-07).").
 */
function revertsBy(message: string, sha: string): boolean {
    return [...message.matchAll(/This reverts commit ([0-9a-f]{7,40})\b/g)].some((m) => sha.startsWith(m[1]));
}

/** When release/prod reached promote.to after main held revert_commit, by the reflogs: both times, said; else undefined. */
async function promotedAfterRevert(w: ShopWorld): Promise<string | undefined> {
    const to = obj(w, "promote")?.to;
    const rc = obj(w, "revert")?.revert_commit;
    if (!isSha(to) || !isSha(rc)) return undefined;
    const promoted = await w.repo.heldSince("release/prod", to).catch(() => null);
    const reverted = await w.repo.heldSince("main", rc).catch(() => null);
    if (promoted === null || reverted === null || promoted <= reverted) return undefined;
    const at = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, "Z");
    return `the revert at ${at(reverted)}, the promotion at ${at(promoted)}`;
}

/**
 * Whether envs/dev renders at `sha` (a bad commit that names missing.yaml): undefined when it does not, as the step
 * wants; else whether the commit's tree holds envs/dev/missing.yaml (the file made too).
 */
async function madeToo(w: ShopWorld, sha: string): Promise<boolean | undefined> {
    const renders = await renderShopConfigAt(w.repo, sha, "envs/dev", w.kubectl).then(
        () => true,
        () => false,
    );
    return renders ? (await w.repo.file(sha, "envs/dev/missing.yaml")) !== null : undefined;
}

/** Step 7: the bad commit on main, its ComparisonError, and its revert. */
export const REVERT_CHECKS: Check<ShopWorld>[] = [
    {
        step: 7,
        name: "main's bad commit (before revert.json) breaks envs/dev, the overlay shop-dev renders from main",
        run: async (w) => {
            // once revert.json is there, bad_commit's own check names the overlay
            const to = obj(w, "promote")?.to;
            if (obj(w, "revert") || !isSha(to) || !w.main || !(await w.repo.isAncestor(to, w.main).catch(() => false))) return null;
            const devSha = await missingYamlAfter(w, to, w.main);
            if (devSha) {
                // main, as it stands, names missing.yaml and renders (the file made too): shop-dev shows no error for step 7 to
                // copy; main not rendering (the error showing), or missing.yaml gone from it (reverted), is the step under way
                const made = resourcesOf(await kustomizationOf(w, w.main, "envs/dev")).includes("missing.yaml")
                    ? await madeToo(w, w.main)
                    : undefined;
                return !made
                    ? null
                    : {
                          ok: false,
                          expected: "envs/dev not rendering on main while it names missing.yaml (the file is not there)",
                          found: `envs/dev at main (${w.main.slice(0, 12)}) renders: envs/dev/missing.yaml exists there`,
                          hint: `${devSha.slice(0, 12)} adds missing.yaml to envs/dev's resources, but main has envs/dev/missing.yaml too, so envs/dev renders and shop-dev shows no ComparisonError for dev_error to copy: the step's bad commit names a file that does not exist; git revert ${devSha.slice(0, 12)} and push, then add missing.yaml to envs/dev's resources alone (no file of that name) in a new commit and push`,
                      };
            }
            for (const dir of ["envs/prod", "base"]) {
                // reverted since: nothing of it is left to point at
                if (!resourcesOf(await kustomizationOf(w, w.main, dir)).includes("missing.yaml")) continue;
                const sha = await missingYamlAfter(w, to, w.main, dir);
                if (sha)
                    return {
                        ok: false,
                        expected: "missing.yaml added to envs/dev/kustomization.yaml",
                        found: `${sha.slice(0, 12)} adds it to ${dir}/kustomization.yaml`,
                        hint: `${sha.slice(0, 12)} adds missing.yaml to ${dir}/kustomization.yaml, not envs/dev's: ${dir === "base" ? "base is every environment's" : "prod reads release/prod, not main, so nothing shows the error"}, and the step breaks dev (shop-dev tracks main); git revert ${sha.slice(0, 12)} and push, then add missing.yaml to envs/dev/kustomization.yaml's resources in a new commit and push`,
                    };
            }
            return null;
        },
    },
    {
        step: 7,
        name: "bad_commit adds missing.yaml to envs/dev/kustomization.yaml resources",
        run: async (w) => {
            const bad = await badCommit(w);
            if (!bad) return null;
            const [parent] = await w.repo.parents(bad);
            const resources = async (sha: string) => resourcesOf(await kustomizationOf(w, sha, "envs/dev"));
            const [before, after] = await Promise.all([resources(parent), resources(bad)]);
            const outcome = eq(
                { before: false, after: true },
                { before: before.includes("missing.yaml"), after: after.includes("missing.yaml") },
            );
            // envs/dev's and another's too (prod's overlay, or base): the step breaks dev alone, main's prod stays renderable
            for (const dir of outcome.ok ? ["envs/prod", "base"] : []) {
                const of = async (sha: string) => resourcesOf(await kustomizationOf(w, sha, dir));
                const [was, is] = await Promise.all([of(parent), of(bad)]);
                if (!was.includes("missing.yaml") && is.includes("missing.yaml"))
                    return {
                        ok: false,
                        expected: "missing.yaml added to envs/dev's resources alone",
                        found: `added to ${dir}/kustomization.yaml too`,
                        hint: `bad_commit adds missing.yaml to ${dir}/kustomization.yaml too: the step breaks dev alone (shop-dev tracks main), and ${dir === "base" ? "base is every environment's" : "prod's overlay on main is what the next promotion brings to prod"}; make it again on envs/dev alone: a new commit adding missing.yaml to envs/dev/kustomization.yaml's resources, push, revert that one, and write it as bad_commit`,
                    };
            }
            // written the other way round: bad_commit is the revert of revert_commit (which added missing.yaml)
            const rc = obj(w, "revert")?.revert_commit;
            if (!outcome.ok && isSha(rc) && revertsBy(await w.repo.message(bad), rc))
                return {
                    ...outcome,
                    hint: "bad_commit and revert_commit are swapped: bad_commit is the commit that added missing.yaml, revert_commit the one git revert made of it",
                };
            // the file no longer YAML (a line appended without its indentation): kustomize, and Argo CD, stop at it
            const devText = (await kustomizationOf(w, bad, "envs/dev")) ?? "";
            let parses = true;
            try {
                readKustomization(devText);
            } catch {
                parses = false;
            }
            if (!outcome.ok && !parses && /missing\.yaml/.test(devText))
                return {
                    ...outcome,
                    hint: `bad_commit leaves envs/dev/kustomization.yaml no YAML (missing.yaml appended without the indentation of resources:' items?), so the error is of the file, not of a missing resource: the step's bad commit adds "  - missing.yaml" under resources:, as the other items are written; make that commit, push, revert it, and write it as bad_commit`,
                };
            // under another list than resources: (components:, written so): named by the key that holds it
            const holder = parses && !after.includes("missing.yaml") ? keyHolding(devText, "missing.yaml") : undefined;
            if (!outcome.ok && holder && holder !== "patches")
                return {
                    ...outcome,
                    hint: `bad_commit puts missing.yaml under ${holder}: in envs/dev/kustomization.yaml, not under resources:, the list the step's bad commit adds it to: put it under resources:, in a new commit, push, revert that one, and write it as bad_commit`,
                };
            // the line appended at the file's end (echo >> ...), under patches: rather than resources:
            if (!outcome.ok && !after.includes("missing.yaml") && /missing\.yaml/.test(devText))
                return {
                    ...outcome,
                    hint: `bad_commit names missing.yaml in envs/dev/kustomization.yaml, but not under resources: (appended at the file's end, it lands in the list above it, patches:): put it under resources:, in a new commit, push, revert that one, and write it as bad_commit`,
                };
            // another name that is not there either (missing.yml): as broken, but not the file the step names
            const added = after.filter((r) => !before.includes(r) && r !== "missing.yaml");
            if (!outcome.ok && !added.length) {
                // the other overlay (prod's, which prod pinned to release/prod does not read from main), or base (every environment's)
                for (const [dir, why] of [
                    ["envs/prod", "the step breaks dev (shop-dev tracks main; prod reads release/prod)"],
                    ["base", "base is every environment's, and the step breaks dev alone (envs/dev's)"],
                ] as const) {
                    const of = async (sha: string) => resourcesOf(await kustomizationOf(w, sha, dir));
                    const [was, is] = await Promise.all([of(parent), of(bad)]);
                    if (!was.includes("missing.yaml") && is.includes("missing.yaml"))
                        return {
                            ...outcome,
                            hint: `bad_commit adds missing.yaml to ${dir}/kustomization.yaml, not envs/dev's: ${why}; if it is not reverted yet, git revert ${bad.slice(0, 12)} and push; then add missing.yaml to envs/dev/kustomization.yaml in a new commit, push, revert that one, and write it as bad_commit`,
                        };
                }
            }
            if (!outcome.ok && added.length)
                return {
                    ...outcome,
                    hint: `bad_commit adds ${added.join(", ")}; the step's bad commit adds missing.yaml (so the error names it): add missing.yaml in a new commit, push, then revert that one, and write it as bad_commit`,
                };
            // the file it names made too (in it or before it): envs/dev renders, and shop-dev never showed the error dev_error copies
            const made = outcome.ok ? await madeToo(w, bad) : undefined;
            if (made !== undefined) {
                return {
                    ok: false,
                    expected: "envs/dev at bad_commit not rendering (missing.yaml is not there)",
                    found: `envs/dev at ${bad.slice(0, 12)} renders${made ? " (envs/dev/missing.yaml exists there)" : ""}`,
                    hint: `bad_commit's envs/dev renders${made ? ": envs/dev/missing.yaml is there too" : ""}, so shop-dev never showed the ComparisonError dev_error is to copy: the step's bad commit names a file that does not exist; ${made ? `if ${bad.slice(0, 12)} is not reverted yet, git revert it and push; then ` : ""}add missing.yaml to envs/dev's resources alone (no file of that name) in a new commit, push, copy shop-dev's error while it shows, revert that commit, and write it as bad_commit`,
                };
            }
            return outcome;
        },
    },
    {
        step: 7,
        name: "bad_commit stays in main's history (rolled back by a revert, not a reset)",
        run: async (w) => {
            const bad = await badCommit(w);
            if (!bad || !w.main) return null;
            if (await w.repo.isAncestor(bad, w.main)) return true;
            // made on another branch (release/prod checked out in the clone), not rewritten: said where it is
            const on = (await w.repo.branchesContaining(bad)).filter((b) => b !== "main");
            return on.length
                ? {
                      ok: false,
                      expected: "an ancestor of main",
                      found: `on ${on.join(", ")}, not on main`,
                      hint: `bad_commit ${bad.slice(0, 12)} is on ${on.join(", ")}, not on main: step 7's commits went to ${on[0]} (the clone had it checked out?); undo them there with a new commit (git revert, pushed to ${on[0]}), never a force push, then make step 7's commits on main (git checkout main first)`,
                  }
                : { ok: false, expected: "an ancestor of main", found: "not in main's history: history was rewritten" };
        },
    },
    {
        step: 7,
        name: "main stood at bad_commit (pushed on its own, before its revert)",
        run: async (w) => {
            const bad = await badCommit(w);
            const tips = bad && obj(w, "revert") ? await w.repo.tipsOf("main") : null;
            // a repository without a reflog (made by hand) cannot tell
            if (!bad || !tips || !tips.length || tips.includes(bad)) return tips && bad ? true : null;
            return {
                ok: false,
                expected: `${bad.slice(0, 12)} among main's tips`,
                found: `main went from ${tips[1]?.slice(0, 12) ?? "nothing"} to ${tips[0].slice(0, 12)} past it`,
                hint: `bad_commit ${bad.slice(0, 12)} was pushed together with the commits after it (its revert), so main never stood at it and shop-dev never showed the error step 7 reads: push a bad commit on its own, read shop-dev's ComparisonError, then push its revert, and write revert.json again`,
            };
        },
    },
    {
        step: 7,
        name: "bad_commit is not in release/prod's history",
        run: async (w) => {
            const bad = await badCommit(w);
            if (!bad || !w.releaseTip) return null;
            if (!(await w.repo.isAncestor(bad, w.releaseTip))) return true;
            if (!w.main || !(await w.repo.isAncestor(bad, w.main)))
                return { ok: false, expected: "not an ancestor of release/prod", found: `release/prod (${w.releaseTip}) contains it` };
            // promoted again after the revert (release/prod moved to main's tip): it holds bad_commit, and no revert takes it out of history
            return {
                ok: false,
                expected: "not an ancestor of release/prod",
                found: `release/prod (${w.releaseTip}) contains it`,
                hint: `release/prod was moved on after step 7 (to ${w.releaseTip.slice(0, 12)}${w.releaseTip === w.main ? ", main's tip" : ""}) and now holds bad_commit in its history, which the repository never rewinds; the lab promotes the incident commit alone: ${startOver(w)}`,
            };
        },
    },
    {
        step: 7,
        name: "revert_commit is a revert of bad_commit (made after it, its message, its content)",
        run: async (w) => {
            const rc = obj(w, "revert")?.revert_commit;
            if (!isSha(rc) || !(await w.repo.isCommit(rc))) return null;
            const bad = obj(w, "revert").bad_commit;
            const [parent] = await w.repo.parents(rc);
            const msg = await w.repo.message(rc);
            const [grand] = (await badCommit(w)) ? await w.repo.parents(bad) : [undefined];
            // the kustomization bad_commit changed (envs/dev's, as the step asks; base's or prod's when it went there)
            let dir = "envs/dev";
            if (grand)
                for (const d of ["envs/dev", "base", "envs/prod"])
                    if ((await kustomizationOf(w, bad, d)) !== (await kustomizationOf(w, grand, d))) {
                        dir = d;
                        break;
                    }
            const file = `${dir}/kustomization.yaml`;
            const dev = (sha: string) => kustomizationOf(w, sha, dir);
            const same = grand ? (await dev(rc)) === (await dev(grand)) : false;
            // the revert itself takes bad_commit's change out: a commit that changes nothing only claims to
            const changes = parent !== undefined && (await dev(parent)) !== (await dev(rc));
            // after bad_commit: its child, or later when a wrong revert came first (history is never rewound)
            const after = parent === bad || (isSha(bad) && parent !== undefined && (await w.repo.isAncestor(bad, parent)));
            const outcome = eq(
                { after_bad_commit: true, message: true, content: true },
                { after_bad_commit: after, message: revertsBy(msg, bad), content: same && changes },
            );
            // the commit the message names (abbreviated by git revert --reference): bad_commit itself where it is its prefix
            const named = /This reverts commit ([0-9a-f]{7,40})\b/.exec(msg)?.[1];
            const other = named && isSha(bad) && bad.startsWith(named) ? bad : named;
            const badShort = String(bad).slice(0, 12);
            // the change taken out right, but without git revert's line (git revert --no-commit and a message of one's own)
            if (!outcome.ok && !other && isSha(bad) && after && same && changes)
                return {
                    ...outcome,
                    hint: `revert_commit takes bad_commit's change out, but its message lacks the line git revert writes ("This reverts commit ${badShort}…"), which is how the lab tells a revert: revert_commit is a commit git revert made with its own message (git revert ${badShort}, no --no-commit or -m of your own); as main already holds this one, git revert it, then git revert ${badShort}, and write revert.json again; history is never rewound`,
                };
            // bad_commit itself (a git revert that failed, its SHA copied again): no revert was made
            if (!outcome.ok && rc === bad)
                return {
                    ...outcome,
                    hint: `revert_commit is bad_commit itself: no revert was made (did git revert fail?): git revert ${badShort} (a new commit), push it, and write that commit as revert_commit`,
                };
            // undone by hand (an edit and a commit): git revert then finds nothing left to take out
            if (!outcome.ok && !other && isSha(bad))
                return {
                    ...outcome,
                    hint: `revert_commit is not one git revert made (its message says "This reverts commit ${badShort}…"): the rollback is git revert ${badShort}, a new commit; where main already holds an undo made by hand, git revert finds nothing left to take out: git revert that undo first (it brings bad_commit's change back), then git revert ${badShort}, and write revert.json again; history is never rewound`,
                };
            if (!outcome.ok && same && !changes && other === bad)
                return {
                    ...outcome,
                    hint: `revert_commit changes nothing in ${file}: bad_commit's change was taken out before it (by hand?); a revert made by git revert ${badShort} takes it out itself: git revert the undo that came first, then git revert ${badShort}, and write revert.json again`,
                };
            return outcome.ok || !other || other === bad || !isSha(bad)
                ? outcome
                : {
                      ...outcome,
                      hint: `revert_commit reverts ${other.slice(0, 12)}, not bad_commit: git revert ${String(bad).slice(0, 12)} (a new commit) and write revert.json again; the wrong revert stays in main's history, so revert it too (git revert ${rc.slice(0, 12)}) to bring its change back`,
                  };
        },
    },
    {
        step: 7,
        name: "revert_commit is on main",
        run: async (w) => {
            const rc = obj(w, "revert")?.revert_commit;
            if (!isSha(rc) || !(await w.repo.isCommit(rc)) || !w.main) return null;
            if (await w.repo.isAncestor(rc, w.main)) return true;
            // pushed to a branch of its own (git push origin HEAD:revert-x), main left at the bad commit
            const on = (await w.repo.branchesContaining(rc)).filter((b) => b !== "main");
            return {
                ok: false,
                expected: "an ancestor of main",
                found: "not in main's history",
                hint: `revert_commit ${on.length ? `is on ${on.join(", ")}, not on main` : "is not on main"}: the revert undoes bad_commit where shop-dev reads it, main: git push origin ${rc.slice(0, 12)}:refs/heads/main (a fast-forward of main)`,
            };
        },
    },
    DEV_ERROR,
    {
        step: 7,
        name: "prod_revision_during is promote.to",
        run: async (w) => {
            if (!obj(w, "revert") || !obj(w, "promote")) return null;
            const during = obj(w, "revert").prod_revision_during;
            if (await putBack(w, during)) return true;
            const outcome = eq(obj(w, "promote").to, during);
            // step 7 done before step 6 (by the reflogs): shop-prod never ran promote.to while shop-dev showed the error
            const late = await promotedAfterRevert(w);
            if (late)
                return {
                    ...outcome,
                    ok: false,
                    hint: `release/prod reached promote.to only after revert_commit was on main (${late}): step 7 was done before step 6, so shop-prod never ran promote.to while shop-dev showed the error; do step 7 again now (a new bad commit, shop-dev's error and shop-prod's revision read while it shows, its revert) and write revert.json from that`,
                };
            // release/prod's commit before the promotion: read before step 6, or copied from pin.json
            if (!outcome.ok && during === obj(w, "pin")?.release_prod_initial)
                return {
                    ...outcome,
                    hint: "prod_revision_during is pin.release_prod_initial, release/prod before the promotion: shop-prod runs promote.to since step 6; read shop-prod's status.sync.revision while shop-dev shows the error",
                };
            // shop-dev's revision (the bad commit it tries to sync) read for shop-prod's
            if (!outcome.ok && during === obj(w, "revert").bad_commit)
                return {
                    ...outcome,
                    hint: "prod_revision_during is bad_commit, the commit shop-dev tries to sync: prod tracks release/prod, which the bad commit never reached; read shop-prod's status.sync.revision (kubectl -n argocd get application shop-prod -o jsonpath={.status.sync.revision}) while shop-dev shows the error",
                };
            return outcome;
        },
    },
];

/** Step 7 leaves main rendering the flag on in dev: the incident stays, bad_commit is reverted (a revert of the wrong commit, or of the revert, is not). */
export const MAIN_RENDERS_ON: Check<ShopWorld> = {
    step: 7,
    name: "main's envs/dev renders FEATURE_CHECKOUT_V2 on (no revert but bad_commit's left on main)",
    run: async (w) => {
        if (!obj(w, "revert") || !w.main) return null;
        let rendered: Record<string, string>;
        try {
            rendered = await renderShopConfigAt(w.repo, w.main, "envs/dev", w.kubectl);
        } catch (e) {
            // bad_commit's change back on main (a revert of its revert, or the same edit again): shop-dev cannot sync
            return {
                ok: false,
                expected: "main's envs/dev to render",
                found: messageOf(e),
                hint: "main's envs/dev does not render again: a later commit brought bad_commit's change back (git log --oneline main shows it, a revert of the revert?): revert that commit too (git revert <its SHA>), a new commit; history is never rewound",
            };
        }
        const outcome = eq("on", rendered.FEATURE_CHECKOUT_V2);
        return outcome.ok
            ? outcome
            : {
                  ...outcome,
                  hint: "a revert of another commit is still on main (git log --oneline main shows it): revert that revert too (git revert <its SHA>), a new commit; history is never rewound",
              };
    },
};
