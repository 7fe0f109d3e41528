/**
 * The shop lab in its one order: step 1 (the repository), the ApplicationSet, then the scenario
 * (steps 2-8). `npm run simulate`, the bench and the tests call this; `pulumi up` keeps the same
 * order through the dependencies of its resources (ShopRepo -> ShopAppSet -> Scenario).
 */
import * as fs from "fs";
import * as path from "path";
import { isDeepStrictEqual } from "util";
import { parse } from "yaml";
import { Clock, realClock } from "../ports/clock";
import { ClusterPort } from "../ports/cluster";
import { CloneGit } from "../ports/git";
import { applyShopAppSet, appsetFileContent, listElements, shopApplicationSet } from "./appset";
import { APPSET_NAME, ShopLayout } from "./layout";
import { createShopRepo } from "./repo";
import { readRepoFiles } from "./repoFiles";
import { SHOP_RESULT_SET } from "./results";
import { runShopScenario, ShopScenarioRun, ShopScenarioTimeouts, StepTiming } from "./scenario";

export interface ShopLabContext {
    layout: ShopLayout;
    cluster: ClusterPort;
    log?: (line: string) => void;
    timeouts?: Partial<ShopScenarioTimeouts>;
    /** The repository URL Argo CD reads (default: the in-cluster git daemon's). */
    repoURL?: string;
    /** The clock the scenario's waits are on (default: the real one). */
    clock?: Clock;
    /** Refresh-triggered waits (default), or poll-only ones (the bench's baseline). */
    refresh?: boolean;
}

export type ShopLabRun = ShopScenarioRun & { setup: StepTiming[] };

/** Steps 1..through (0: nothing of the lab's own). `setup` times step 1 and the ApplicationSet. */
export async function solveShopLab(ctx: ShopLabContext, through: number): Promise<ShopLabRun> {
    if (!Number.isInteger(through) || through < 0 || through > 8) throw new Error(`the shop lab has steps 0 to 8, got ${through}`);
    const log = ctx.log ?? (() => {});
    const setup: StepTiming[] = [];
    const timed = async (step: number, name: string, f: (log: (l: string) => void) => Promise<unknown>) => {
        const prefix = `[step ${step} ${name}]`;
        const t0 = Date.now();
        const c0 = (ctx.clock ?? realClock).now();
        log(`${prefix} start`);
        await f((l) => log(`${prefix} ${l}`));
        const ms = Date.now() - t0;
        setup.push({ step, name, ms, waitMs: 0, clockMs: (ctx.clock ?? realClock).now() - c0, skipped: false });
        log(`${prefix} done in ${(ms / 1000).toFixed(1)} s`);
    };
    if (through >= 1) await timed(1, "repo", (l) => createShopRepo(ctx.layout, readRepoFiles(), l));
    if (through < 2) return { results: {}, timings: [], through, setup };
    // applied once (appset.yaml is written after the apply), the ApplicationSet and its file are the learner's: a lab
    // started again does not rewrite them (a served lab's learner may be part-way through step 4's edit)
    if (fs.existsSync(ctx.layout.appsetFile)) {
        // the file says it was applied; the cluster must have it still (deleted by hand, every later wait would time out)
        if (!(await ctx.cluster.getApplicationSet(APPSET_NAME)))
            throw new Error(
                `the ApplicationSet argocd/${APPSET_NAME} is not in the cluster (deleted?), while ${ctx.layout.appsetFile} says it was applied: apply it again (kubectl apply -f ${ctx.layout.appsetFile}), then run again`,
            );
        log(`[step 2 appset] applied already (${ctx.layout.appsetFile} is there): left as it stands`);
        setup.push({ step: 2, name: "appset", ms: 0, waitMs: 0, clockMs: 0, skipped: true });
    } else await timed(2, "appset", (l) => applyShopAppSet(ctx.cluster, ctx.layout, shopApplicationSet({ repoURL: ctx.repoURL }), l));
    const run = await runShopScenario(
        {
            layout: ctx.layout,
            git: new CloneGit(ctx.layout.clone),
            cluster: ctx.cluster,
            log,
            timeouts: ctx.timeouts,
            clock: ctx.clock,
            refresh: ctx.refresh,
        },
        through,
    );
    return { ...run, setup };
}

/**
 * The files a learner may have changed that solving steps after `done` through `through` rewrites
 * (said before it does): step 4 writes appset.yaml's prod element from the live ApplicationSet.
 */
export function filesSolverRewrites(layout: ShopLayout, done: number, through: number): string[] {
    if (!(done < 4 && through >= 4 && fs.existsSync(layout.appsetFile))) return [];
    // as the solver wrote it (step 2, or step 4 stopped before its result file): nothing of the learner's is in it
    const text = fs.readFileSync(layout.appsetFile, "utf8");
    let solvers = false;
    try {
        // the elements the solver writes: prod on main (step 2), or pinned to release/prod (step 4 stopped before its file)
        const elements = listElements(parse(text));
        const solverElements = ["main", "release/prod"].map((prod) => [
            { env: "dev", revision: "main" },
            { env: "prod", revision: prod },
        ]);
        solvers = solverElements.some((e) => isDeepStrictEqual(elements, e)) && text === appsetFileContent(shopApplicationSet(), elements);
    } catch {
        solvers = false; // not an ApplicationSet the solver could have written
    }
    return solvers ? [] : [layout.appsetFile];
}

/**
 * How far the lab on these paths has come, from what is on disk: 0 nothing, 1 the repository,
 * 2 the ApplicationSet (appset.yaml), 3-8 the result files.
 */
export function shopLabProgress(layout: ShopLayout): number {
    const setup = fs.existsSync(layout.appsetFile) ? 2 : fs.existsSync(path.join(layout.bareRepo, "HEAD")) ? 1 : 0;
    return Math.max(setup, SHOP_RESULT_SET.progress(layout.resultFile));
}
