/**
 * The shop lab's world as its checks read it (lab/shop/checks.ts, liveChecks.ts): the files, the bare
 * repository's branches and the cluster, read once; and the readings several checks share.
 */
import * as path from "path";
import { BareRepo, cloneAt } from "../grader/bareRepo";
import { clusterErrorOf } from "../grader/live";
import { readResultFiles } from "../grader/resultFiles";
import { servedCloneDir } from "../kit/layout";
import { ClusterPort } from "../ports/cluster";
import { APPSET_NAME } from "./layout";
import { SHOP_RESULT_FILES } from "./results";
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
    /**
     * release/prod moved on from pin.release_prod_initial (its reflog shows it stood there; with no reflog, once
     * drift.json is written) to the incident commit or past it: the promotion pushed, promote.json written or not,
     * and done before the drift too (step 5 can still be done as it is); prod then runs the incident's value.
     */
    promoted: boolean;
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

/** The drift done again, as the lab asks it: the patch, the timing, the file. */
export const PATCH_AGAIN = `kubectl patch configmap shop-config -n shop-prod -p '{"data":{"LOG_LEVEL":"debug"}}', time how long until it is warn again, and write drift.json again`;

export interface VerifyOptions {
    layout: ShopLayout;
    /** Grade steps 1..through (0 grades nothing of the lab's own: the environment only). */
    through: number;
    /** The live cluster; undefined means offline. */
    cluster?: ClusterPort;
    /** `pulumi stack output --json` of the lab's stack, if there is one to compare with. */
    stackOutputs?: Record<string, unknown>;
    kubectl?: string;
}

/** Reads the world once: the files, the repository's branches, whether the cluster answers. */
export async function readShopWorld(opts: VerifyOptions): Promise<ShopWorld> {
    const { layout } = opts;
    const repo = new BareRepo(layout.bareRepo);
    const files = readResultFiles(SHOP_RESULT_FILES, layout.resultFile);
    const main = repo.exists() ? await repo.branch("main") : null;
    const releaseTip = main ? await repo.branch("release/prod") : null;
    // nothing of the lab is in the cluster before step 2
    const clusterError = opts.through >= 2 ? await clusterErrorOf(opts.cluster, APPSET_NAME) : undefined;
    const w: ShopWorld = {
        layout,
        fileOf: layout.resultFile,
        clone: new BareRepo(path.join(layout.clone, ".git")),
        servedClone: cloneAt(servedCloneDir(layout.root, "shop-envs")),
        through: opts.through,
        kubectl: opts.kubectl ?? "kubectl",
        repo,
        files,
        main,
        releaseTip,
        cluster: opts.cluster,
        clusterError,
        stackOutputs: opts.stackOutputs,
        promoted: false,
    };
    const [start, incident] = [obj(w, "pin")?.release_prod_initial, obj(w, "incident")?.commit];
    if (
        releaseTip &&
        isSha(start) &&
        isSha(incident) &&
        releaseTip !== start &&
        (await repo.isAncestor(incident, releaseTip).catch(() => false))
    ) {
        const tips = await repo.tipsOf("release/prod").catch(() => null);
        // a repository with no reflog (one made by hand: git init --bare keeps none) cannot show it stood at the pin: taken
        // as promoted only once step 5 is done (the promotion's turn), as a branch pushed at the incident is not a pin
        w.promoted = tips ? tips.includes(start) : !!obj(w, "drift");
    }
    return w;
}
