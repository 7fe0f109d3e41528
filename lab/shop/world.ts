/**
 * The shop lab's world as its checks read it (lab/shop/checks.ts, liveChecks.ts): the files, the bare
 * repository's branches and the cluster, read once; and the readings several checks share.
 */
import { BareRepo } from "../grader/bareRepo";
import { LiveWorld } from "../grader/live";
import { isSha, ResultFilesWorld, resultObject } from "../grader/resultFiles";
import { readAppsetFile } from "./appsetFile";
import { ShopLayout } from "./layout";
import { ShopResultName } from "./results";

/** Everything the checks look at, read once before they run. */
export interface ShopWorld extends ResultFilesWorld<ShopResultName>, LiveWorld {
    layout: ShopLayout;
    through: number;
    kubectl: string;
    repo: BareRepo;
    /** main and release/prod of the bare repository (null: missing). */
    main: string | null;
    releaseTip: string | null;
}

export const obj = (w: ShopWorld, name: ShopResultName) => resultObject(w, name);

/** prod's expected revision: release/prod from step 4 on. */
export const wantProd = (w: ShopWorld) => (w.through >= 4 ? "release/prod" : "main");

/**
 * The step a check of prod's revision counts for: step 4's (the pin) where release/prod is wanted and
 * appset.yaml still has prod on main, as step 2 left it (the pin not made yet); else step 2's. So a lab
 * graded past step 4 whose pin is not made says step 4 (or an earlier step not done) comes first, not
 * step 2, which is done.
 */
export function pinStep(w: ShopWorld): number {
    if (wantProd(w) !== "release/prod") return 2;
    try {
        const elements = readAppsetFile(w.layout.appsetFile).set?.spec?.generators?.[0]?.list?.elements ?? [];
        return elements.find((e) => e?.env === "prod")?.revision === "main" ? 4 : 2;
    } catch {
        return 2; // no such file: step 2's own check says so
    }
}

/**
 * A commit after promote.to on release/prod's line that holds promote.to's files: a fast-forward too
 * far, put back with new commits (git revert) as the lab teaches, since the repository rewinds nothing.
 * It stands for promote.to wherever a check compares a revision of prod with it.
 */
export async function putBack(w: ShopWorld, sha: unknown): Promise<boolean> {
    const to = obj(w, "promote")?.to;
    if (!isSha(to) || !isSha(sha) || sha === to || !(await w.repo.isCommit(sha))) return false;
    // by fast-forwards and new commits only: a merge made on release/prod itself brought promote.to in from the side
    return (await w.repo.isAncestor(to, sha)) && (await w.repo.sameTree(to, sha)) && (await w.repo.ownMerges(sha, w.main)).length === 0;
}

/** release/prod pushed at another commit than pin.release_prod_initial: the way to move it (no force push). */
export const releaseNotAtPin = (tip: string, start: string) =>
    `release/prod is at ${tip.slice(0, 12)}, not at pin.release_prod_initial ${start.slice(0, 12)}, and prod renders what release/prod holds; the repository refuses a force push: delete the branch (git push origin :refs/heads/release/prod) and push it again at ${start.slice(0, 12)} (git push origin ${start.slice(0, 12)}:refs/heads/release/prod)`;
