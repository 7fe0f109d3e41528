/**
 * Step 1: the bare repository, the working clone, the base and the overlays (lab/platform/labRepo.ts
 * does the work; this says what makes the shop repository the shop lab's own).
 */
import * as path from "path";
import { createLabRepo, deleteLabRepo, LabRepoResult, labRepoPaths, Log, RepoKind } from "../platform/labRepo";
import { ShopLayout } from "./layout";
import { renderShopConfig } from "./render";

/** @public (the names the delete code kept in older Pulumi states requires from here: test/architecture.test.ts) */
export { isOurBareRepo, makeWorldReadable, OWNER_KEY, SHARED_REPOSITORY } from "../platform/labRepo";
export const OWNER_VALUE = "shop-repo";
export const INITIAL_MESSAGE = "Shop base and dev/prod overlays (lab step 1)";

export type ShopRepoResult = LabRepoResult;

/** The shop repository: both overlays must render before the first commit. */
export function shopRepoKind(kubectl = "kubectl"): RepoKind {
    return {
        owner: OWNER_VALUE,
        initialMessage: INITIAL_MESSAGE,
        check: async (clone, log) => {
            for (const env of ["dev", "prod"]) {
                const data = await renderShopConfig(path.join(clone, "envs", env), kubectl);
                log(`kubectl kustomize envs/${env}: LOG_LEVEL=${data.LOG_LEVEL} FEATURE_CHECKOUT_V2=${data.FEATURE_CHECKOUT_V2}`);
            }
        },
    };
}

/** Creates (or recognises) the shop repository and its clone and pushes the first commit (see createLabRepo). */
export function createShopRepo(
    layout: ShopLayout,
    files: Record<string, string>,
    log: Log = () => {},
    kubectl = "kubectl",
): Promise<ShopRepoResult> {
    return createLabRepo(layout, shopRepoKind(kubectl), files, log);
}

/** Removes exactly what createShopRepo made. */
export function deleteShopRepo(layout: ShopLayout, log: Log = () => {}): Promise<void> {
    return deleteLabRepo(layout, shopRepoKind(), log);
}

/** What must be the lab's own (or absent) at the shop lab's paths, for the preflight. */
export function shopRepoPaths(layout: ShopLayout) {
    return labRepoPaths(layout, shopRepoKind());
}
