/**
 * The tenants grader's checks that the releases ship as they are: stall.commit and recovery.commit change
 * the tenants' files, never a release's folder (a search and replace over the whole repository rewrites
 * releases/1.1.0, what the tenants ran before and a rollback's target, and passes nothing else would see).
 * Part of the table in checks.ts, which runs them.
 */
import { Check } from "../grader/grader";
import { isSha } from "../grader/resultFiles";
import { startAgainAt } from "../kit/layout";
import { changedOnMain, obj, TenantsWorld } from "./world";

/** `name`.commit changes no file under releases/. */
function leavesReleases(name: "stall" | "recovery", step: 2 | 3): Check<TenantsWorld> {
    return {
        step,
        name: `${name}.commit leaves the shipped releases as they are (no file under releases/ changed)`,
        run: async (w) => {
            const sha = obj(w, name)?.commit;
            if (!isSha(sha) || !(await w.repo.isCommit(sha))) return null;
            const touched = (await changedOnMain(w, sha)).filter((f) => f.startsWith("releases/"));
            if (!touched.length) return true;
            const folders = [...new Set(touched.map((f) => f.split("/").slice(0, 2).join("/")))];
            // every one of them deleted (a clean-up of the faulty release), or rewritten (a search and replace)
            const deleted = (await Promise.all(touched.map(async (f) => (await w.repo.file(sha, f)) === null))).every(Boolean);
            return {
                ok: false,
                expected: "no file under releases/ changed",
                found: `${touched.slice(0, 3).join(", ")}${touched.length > 3 ? `, … (${touched.length} files)` : ""}`,
                hint: `${name}.commit ${sha.slice(0, 12)} ${deleted ? `deletes ${folders.join(", ")} (a clean-up of a release?)` : `changes ${folders.join(", ")} too (a search and replace over the whole repository?)`}: a release ships as it is, and a later commit putting it back leaves this one as it is; the step changes the tenants' files alone (tenants/*.yaml); the repository rewinds nothing: start the lab again (${startAgainAt(w.layout.root, { lab: "tenants", through: step - 1 })}) and make the commit on tenants/ alone`,
            };
        },
    };
}

export const SHIPPED_CHECKS: Check<TenantsWorld>[] = [leavesReleases("stall", 2), leavesReleases("recovery", 3)];
