/**
 * The tenants grader's check of step 3's ask as main holds it: every tenant at the fixed release, read
 * whatever recovery.json says (or before it is written). Part of the table in checks.ts, which runs it.
 */
import { Check } from "../grader/grader";
import { isSha } from "../grader/resultFiles";
import { RELEASES, Tenant, TENANTS } from "./layout";
import { tenantPath } from "./repoFiles";
import { obj, readTenantFile, releasesAt, TenantsWorld } from "./world";

/** Step 3's ask, read from main whatever recovery.json says (or before it is written): every tenant at the fixed release. */
export const MAIN_AT_FIXED: Check<TenantsWorld> = {
    step: 3,
    name: `main sets every tenant to ${RELEASES.fixed}`,
    run: async (w) => {
        if (!w.main) return null;
        const at = await releasesAt(w, w.main);
        const behind = TENANTS.filter((t) => at[t] !== RELEASES.fixed);
        if (!behind.length) return true;
        // the faulty release's hook changed instead (a masked failure): not the fix the step asks for
        const s = obj(w, "stall");
        const hook = `releases/${RELEASES.faulty}/setup-job.yaml`;
        const script = `releases/${RELEASES.faulty}/code/setup.sh`;
        const edited =
            isSha(s?.commit) &&
            (await w.repo.isCommit(s.commit)) &&
            ((await w.repo.file(s.commit, hook)) !== (await w.repo.file(w.main, hook)) ||
                (await w.repo.file(s.commit, script)) !== (await w.repo.file(w.main, script)));
        // the fix made, but not on main (a branch of its own, a push main refused)
        const rec = obj(w, "recovery")?.commit;
        if (isSha(rec) && (await w.repo.isCommit(rec)) && !(await w.repo.isAncestor(rec, w.main))) {
            const fixed = await releasesAt(w, rec);
            if (TENANTS.every((t) => fixed[t] === RELEASES.fixed)) {
                const on = await w.repo.branchesContaining(rec);
                // made beside stall.commit (the same parent): a rebase or cherry-pick onto main conflicts in every tenant file,
                // so the recipe takes its files; stall.commit amended (on no branch: main refused the push) is said as such
                const beside =
                    isSha(s?.commit) &&
                    s.commit !== rec &&
                    (await w.repo.isCommit(s.commit)) &&
                    (await w.repo.parents(rec))[0] === (await w.repo.parents(s.commit))[0];
                const takeFiles = `in the clone, git fetch, git checkout -B main origin/main, git checkout ${rec.slice(0, 12)} -- tenants/ (its files), git commit, push main, and write recovery.json again`;
                if (beside && !on.length)
                    return {
                        ok: false,
                        expected: `every tenant at ${RELEASES.fixed} on main`,
                        found: behind.map((t) => `${t} at ${at[t]}`).join(", "),
                        hint: `recovery.commit ${rec.slice(0, 12)} is stall.commit amended (the same parent): main holds stall.commit and refuses a push that would drop it, as it should; make the fix a new commit on top of main: ${takeFiles}`,
                    };
                return {
                    ok: false,
                    expected: `every tenant at ${RELEASES.fixed} on main`,
                    found: behind.map((t) => `${t} at ${at[t]}`).join(", "),
                    hint: `recovery.commit ${rec.slice(0, 12)} sets every tenant to ${RELEASES.fixed}, but it is not on main${on.length ? ` (it is on ${on.join(", ")})` : ""}${isSha(s?.commit) && !(await w.repo.isAncestor(s.commit, rec)) ? " and does not come after stall.commit" : ""}: make the commit on top of main as it is (${beside ? takeFiles : "git fetch, then git rebase origin/main or git cherry-pick it there, and push main"})`,
                };
            }
        }
        // every tenant rolled back to the first release (after the stall): a rollback, not the fix; the fix on top of it would
        // be a routine rollout, not the stall's way out, so the step is done over on a new lab (said now, not after that push)
        if (
            TENANTS.every((t) => at[t] === RELEASES.first) &&
            isSha(s?.commit) &&
            (await w.repo.isAncestor(s.commit, w.main).catch(() => false))
        )
            return {
                ok: false,
                expected: `every tenant at ${RELEASES.fixed} on main`,
                found: `every tenant at ${RELEASES.first} (a rollback)`,
                hint: `main rolls every tenant back to ${RELEASES.first}, a rollback, not the step's fix (the fixed release ${RELEASES.fixed} on top of the stalled ${RELEASES.faulty}); ${RELEASES.fixed} pushed now would be a routine rollout from ${RELEASES.first}, not the stall's way out, which the step grades, and the repository rewinds nothing: the step is done over on a new lab (the lab's reset, then the lab again)`,
            };
        // a file Argo CD's generator cannot read (a key given twice), or one the fix deleted: said as such
        const unread: string[] = [];
        const gone: Tenant[] = [];
        for (const t of behind) {
            const text = await w.repo.file(w.main, tenantPath(t));
            const error = text === null ? undefined : readTenantFile(text).error;
            if (text === null) gone.push(t);
            else if (error) unread.push(`${tenantPath(t)} (${error})`);
        }
        if (unread.length || gone.length)
            return {
                ok: false,
                expected: `every tenant at ${RELEASES.fixed} on main`,
                found: behind.map((t) => `${t} at ${at[t]}`).join(", "),
                hint: [
                    ...(unread.length
                        ? [
                              `main's ${unread.join(", ")} ${unread.length === 1 ? "is" : "are"} no YAML Argo CD reads: the ApplicationSet generates nothing from it (its ErrorOccurred condition says so: kubectl -n argocd get applicationset tenants -o jsonpath='{.status.conditions}'), so the fix reaches no tenant; mend it in a new commit (each key once), push, and refresh the ApplicationSet`,
                          ]
                        : []),
                    ...(gone.length
                        ? [
                              `${gone.map(tenantPath).join(", ")} ${gone.length === 1 ? "is" : "are"} gone from main (a commit deleted ${gone.length === 1 ? "it" : "them"}): the ApplicationSet then deletes ${gone.join(", ")}'s Application and its site; put ${gone.length === 1 ? "it" : "them"} back at ${RELEASES.fixed} in a new commit (${gone.map((t) => `git checkout $(git log -1 --format=%H -- ${tenantPath(t)})~1 -- ${tenantPath(t)}`).join(", ")}: from before the commit that deleted it; then set the release), push, and refresh the ApplicationSet`,
                          ]
                        : []),
                ].join("; "),
            };
        return {
            ok: false,
            expected: `every tenant at ${RELEASES.fixed} on main`,
            found: behind.map((t) => `${t} at ${at[t]}`).join(", "),
            hint: `${behind.join(", ")} ${behind.length === 1 ? "is" : "are"} not at ${RELEASES.fixed} on main: the step sets every tenant's release (tenants/<tenant>.yaml) to ${RELEASES.fixed} in one commit${behind.length < TENANTS.length ? ` (the others are there already: a second commit for the rest leaves the fix split, and the repository rewinds nothing, so the step is then done over on a new lab: the lab's reset, then the lab again)` : ""}${edited ? `; releases/${RELEASES.faulty} changed since stall.commit: the faulty release is left as it is, the fix is the fixed release` : ""}`,
        };
    },
};
