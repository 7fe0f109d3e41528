/**
 * The tenants lab in its one order: step 1 (the platform repository, the tenants' data, the
 * releases' site images, the ApplicationSet, the first rollout complete), then the scenario (2 stall, 3 recovery).
 * `simulate --lab tenants` and the tests call this; `pulumi up` keeps the same order through the
 * dependencies of its resources (TenantsLab after Argo CD and the git daemon).
 */
import * as fs from "fs";
import * as path from "path";
import { Clock } from "../ports/clock";
import { ClusterPort } from "../ports/cluster";
import { ImagePort } from "../ports/images";
import { CloneGit } from "../ports/git";
import { applyTenantsAppSet, tenantsApplicationSet } from "./appset";
import { run } from "../ports/exec";
import { RELEASES, TENANTS, TenantsLayout } from "./layout";
import { createPlatformRepo, createTenantData } from "./repo";
import { platformRepoFiles, tenantPath } from "./repoFiles";
import { loadSiteImages } from "./siteImages";
import { TENANTS_RESULT_SET, TenantsResults } from "./results";
import { firstRollout, runTenantsScenario, TenantsTimeouts } from "./scenario";

export interface TenantsLabContext {
    layout: TenantsLayout;
    cluster: ClusterPort;
    /** How the releases' site images reach the cluster (the node's registry, k3s's containerd, the simulated node). */
    images: ImagePort;
    log?: (line: string) => void;
    timeouts?: Partial<TenantsTimeouts>;
    /** The repository URL Argo CD reads (default: the in-cluster git daemon's). */
    repoURL?: string;
    /** The clock the waits are on (default: the real one). */
    clock?: Clock;
    /**
     * An ApplicationSet applied once (its file there) is left as it stands, the file and the live object:
     * a served lab started again must not rewrite what a learner may have changed since (`simulate`).
     * The stack applies it at every `up` (a changed template is its update).
     */
    leaveApplied?: boolean;
}

/** Steps 1..through (1-3) of the tenants lab; a step already done is recognised and not redone. */
export async function solveTenantsLab(ctx: TenantsLabContext, through: number): Promise<TenantsResults> {
    if (!Number.isInteger(through) || through < 1 || through > 3) throw new Error(`tenantsSolveThrough must be 1, 2 or 3, got ${through}`);
    const log = ctx.log ?? (() => {});
    const t0 = Date.now();
    log("[tenants 1 platform] start");
    await createPlatformRepo(ctx.layout, platformRepoFiles(), (l) => log(`[tenants 1 platform] ${l}`));
    await createTenantData(ctx.cluster, (l) => log(`[tenants 1 platform] ${l}`));
    await loadSiteImages(ctx.images, (l) => log(`[tenants 1 platform] ${l}`));
    if (!fs.existsSync(ctx.layout.resultFile("stall"))) {
        // once the faulty release is out, the first rollout is history: a resumed run does not wait for it again
        if (ctx.leaveApplied && fs.existsSync(ctx.layout.appsetFile))
            log(`[tenants 1 platform] ApplicationSet applied already (${ctx.layout.appsetFile} is there): left as it stands`);
        else
            await applyTenantsAppSet(ctx.cluster, ctx.layout, tenantsApplicationSet({ repoURL: ctx.repoURL }), (l) =>
                log(`[tenants 1 platform] ${l}`),
            );
        if (tenantsLabProgress(ctx.layout) < 2 && !(await pushedBeyondFirst(ctx)))
            await firstRollout({ ...ctx, git: new CloneGit(ctx.layout.clone), log });
    }
    log(`[tenants 1 platform] done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return runTenantsScenario(
        { layout: ctx.layout, git: new CloneGit(ctx.layout.clone), cluster: ctx.cluster, log, timeouts: ctx.timeouts, clock: ctx.clock },
        through,
    );
}

/**
 * The first rollout is history once main no longer puts the tenants at the first release (step 2
 * pushed, even if a run died before noting it): read from the bare repository, not from notes.
 */
async function pushedBeyondFirst(ctx: TenantsLabContext): Promise<boolean> {
    const text = await run("git", ["--git-dir", ctx.layout.bareRepo, "show", `main:${tenantPath(TENANTS[0])}`]).then(
        (r) => r.stdout,
        () => null,
    );
    return text !== null && !text.includes(`release: "${RELEASES.first}"`);
}

/**
 * How far the tenants lab on these paths has come, from what is on disk: 0 nothing, 1 the
 * repository and the ApplicationSet (appset.yaml), 2-3 the result files.
 */
export function tenantsLabProgress(layout: TenantsLayout): number {
    const setup = fs.existsSync(path.join(layout.bareRepo, "HEAD")) && fs.existsSync(layout.appsetFile) ? 1 : 0;
    return Math.max(setup, TENANTS_RESULT_SET.progress(layout.resultFile));
}
