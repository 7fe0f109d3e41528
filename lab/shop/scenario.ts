/**
 * The shop lab's scenario, steps 2-8 (docs/shop-lab.md), as plain TypeScript over the two ports.
 * It knows nothing of Pulumi: the dynamic provider, `npm run simulate` and the tests all call
 * `runShopScenario`. The result files are the checkpoint: a step whose file exists is not run again.
 */
import * as fs from "fs";
import * as path from "path";
import { shellWord } from "../ports/shellWord";
import { ARGOCD_NAMESPACE, describeApp, errorConditions } from "../argo/application";
import type { Application, ConfigMap } from "../argo/types";
import { readJsonIfExists, writeJsonAtomic } from "../ports/files";
import { BareRepo } from "../grader/bareRepo";
import { renderShopConfig } from "./render";
import { listElements, syncAppSetFile } from "./appset";
import { APPSET_NAME, ShopLayout } from "./layout";
import { CM, Ctx, DEFAULT_TIMEOUTS, DEV, PROD, RELEASE, say, ShopScenarioContext, StepTiming } from "./context";
import { addMissingResource, MadeByHand, switchFeatureOn } from "./edits";
import { startAgainAt } from "../kit/layout";
import { configValue, keepRefreshing, valueIs, waitFor, waitSynced } from "./waits";
import { Drift, Incident, Pin, Promote, Report, ShopResults, SHOP_RESULTS, Revert, SHOP_RESULT_SET } from "./results";
import { LabStep, runSteps } from "../kit/steps";
import { secs, short } from "../kit/text";
import { realClock } from "../ports/clock";

export type { ShopScenarioContext, ShopScenarioTimeouts, StepTiming } from "./context";

export const INCIDENT_MESSAGE = "Enable FEATURE_CHECKOUT_V2 in base (meant for dev) (lab step 3)";
export const BAD_MESSAGE = "dev: add missing.yaml to resources (lab step 7)";

// ---------------------------------------------------------------------------------------------
// The steps

type Step = LabStep<typeof SHOP_RESULTS, Ctx>;

async function sync(c: Ctx): Promise<void> {
    const main = await c.git.remoteBranch("main");
    if (!main) throw new Error("the lab repository has no main branch; build the lab (step 1) first");
    // a resumed run may find main at a commit that renders like the synced one: Synced, no new operation
    await waitSynced(c, DEV, main, { noOpAllowed: true });
    await waitSynced(c, PROD, main, { noOpAllowed: true });
}

/**
 * Edits one file, commits it with `message` and pushes main, once: if HEAD already is a commit
 * with this message (an earlier run pushed it, or died before pushing, and never wrote its
 * file), that commit is used (and pushed if it was not).
 */
async function commitOnMainOnce(
    c: Ctx,
    file: string,
    edit: (text: string) => string,
    message: string,
    what: string,
    /** The step it is made for: an edit refused (made by hand already) says how to start that step over. */
    step: number,
): Promise<string> {
    const head = await c.git.revParse("HEAD");
    if ((await c.git.subjectOf(head)) === message) {
        if ((await c.git.remoteBranch("main")) !== head) await c.git.pushTo(head, "main");
        return head;
    }
    // the edit of the file as committed: a run stopped between writing it and its commit left it written, which is taken
    // (the clone's state first: a refusal of the edit itself, made by hand already, comes after it)
    let text: string | undefined;
    let refused: unknown;
    try {
        text = edit(await c.git.readCommittedFile(file));
    } catch (e) {
        refused = e;
    }
    await c.git.ensureInSync("main", text === undefined ? {} : { [file]: text });
    if (text === undefined)
        throw refused instanceof MadeByHand
            ? new Error(`${refused.message}: ${startAgainAt(c.layout.root, { lab: "shop", through: step - 1 })}`)
            : refused;
    const sha = await c.git.commitFiles({ [file]: text }, message);
    await c.git.pushTo(sha, "main");
    say(c, `pushed ${short(sha)} to main: ${what}`);
    return sha;
}

async function incident(c: Ctx): Promise<Incident> {
    const commit = await commitOnMainOnce(
        c,
        "base/configmap.yaml",
        switchFeatureOn,
        INCIDENT_MESSAGE,
        `FEATURE_CHECKOUT_V2 "on" in base`,
        3,
    );
    await waitSynced(c, DEV, commit);
    await waitSynced(c, PROD, commit);
    const dev = await configValue(c, DEV, "FEATURE_CHECKOUT_V2");
    const prod = await configValue(c, PROD, "FEATURE_CHECKOUT_V2");
    return { commit, dev_value: dev, prod_value: prod };
}

async function pin(c: Ctx, r: ShopResults): Promise<Pin> {
    const initial = await c.git.parentOf(r.incident!.commit);
    const remote = await c.git.remoteBranch(RELEASE);
    if (remote === null) {
        await c.git.pushTo(initial, RELEASE);
        say(c, `created ${RELEASE} at ${short(initial)} (parent of the incident commit)`);
    } else if (remote !== initial) {
        // (at the incident commit itself: release/prod pushed from main's tip, the step's usual slip)
        throw new Error(
            `${RELEASE} already exists at ${remote}${remote === r.incident!.commit ? " (the incident commit itself, incident.commit)" : ""}, not at the incident's parent ${initial}, where the pin starts. It was left as it is; delete it (git -C ${shellWord(c.layout.clone)} push origin --delete ${RELEASE}; the repository refuses a force push), then run again`,
        );
    }
    const { name, namespace } = c.appset;
    const live = await c.cluster.getApplicationSet(name, namespace);
    if (!live) throw new Error(`ApplicationSet ${namespace}/${name} does not exist`);
    const els = listElements(live);
    const i = els.findIndex((e) => e.env === "prod");
    if (i < 0) throw new Error(`ApplicationSet ${namespace}/${name} has no element with env=prod`);
    if (els[i].revision !== RELEASE) {
        const at = `/spec/generators/0/list/elements/${i}`;
        await c.cluster.jsonPatchApplicationSet(
            name,
            [
                { op: "test", path: `${at}/env`, value: "prod" },
                { op: "replace", path: `${at}/revision`, value: RELEASE },
            ],
            namespace,
        );
        say(c, `ApplicationSet ${name}: prod element revision main -> ${RELEASE} (dev stays on main)`);
    }
    await syncAppSetFile(c.cluster, c.layout, name, namespace, c.appset.repoURL);
    await waitSynced(c, PROD, initial, { targetRevision: RELEASE, check: valueIs(c, PROD, "FEATURE_CHECKOUT_V2", "off") });
    const prod = await configValue(c, PROD, "FEATURE_CHECKOUT_V2");
    return { release_prod_initial: initial, prod_value_after_pin: prod };
}

/**
 * What Git says `key` of shop-config is for prod: the prod overlay rendered at the commit prod is
 * synced to. Never the live value, which a run stopped during the drift test leaves drifted.
 */
async function prodValueInGit(c: Ctx, key: string): Promise<{ value: string; revision: string }> {
    const app = await c.cluster.getApplication(PROD, c.appset.namespace);
    const revision: string | undefined = app?.status?.sync?.revision;
    if (!revision)
        throw new Error(`Application ${PROD} reports no synced revision, so Git's ${key} cannot be known; run step 4 (pin) first`);
    const data = await new BareRepo(c.layout.bareRepo).withTree(revision, (tree) =>
        renderShopConfig(path.join(tree, "envs", "prod"), "kubectl", { checkout: tree }),
    );
    if (data[key] === undefined) throw new Error(`envs/prod at ${revision} renders no ${key} in ${CM}`);
    return { value: data[key], revision };
}

async function drift(c: Ctx): Promise<Drift> {
    const before = await c.cluster.getConfigMap(PROD, CM);
    if (!before) throw new Error(`ConfigMap ${PROD}/${CM} does not exist`);
    const uid = before.metadata.uid ?? "";
    const git = await prodValueInGit(c, "LOG_LEVEL");
    const gitValue = git.value;
    const edited = "debug";
    if (edited === gitValue)
        throw new Error(
            `Git already says LOG_LEVEL=${edited} for prod (at ${git.revision}), so the drift test cannot tell a repair from no change`,
        );
    const live: string | undefined = before.data?.LOG_LEVEL;
    if (live === edited) {
        // an earlier run patched it and was stopped before selfHeal repaired it: wait for the repair from here
        say(c, `${PROD}/${CM} already has LOG_LEVEL=${edited} (an earlier run's patch, not yet repaired); Git says ${gitValue}`);
    } else {
        await c.cluster.patchConfigMapData(PROD, CM, { LOG_LEVEL: edited });
        say(c, `patched ${PROD}/${CM} LOG_LEVEL ${gitValue} -> ${edited} (uid ${uid})`);
    }
    const start = c.clock.now();
    let last: ConfigMap | null = null;
    const restored = await waitFor(
        c,
        `selfHeal to put LOG_LEVEL back in ${PROD}/${CM}`,
        async () => {
            last = await c.cluster.getConfigMap(PROD, CM);
            if (!last) throw new Error(`ConfigMap ${PROD}/${CM} disappeared during the drift test (selfHeal should repair it in place)`);
            if (last.metadata.uid !== uid) {
                throw new Error(
                    `ConfigMap ${PROD}/${CM} was recreated during the drift test: uid ${uid} became ${last.metadata.uid}; selfHeal should repair it in place`,
                );
            }
            const v = last.data?.LOG_LEVEL;
            return v !== edited ? (v as string) : undefined;
        },
        {
            timeoutMs: c.t.driftMs,
            intervalMs: c.t.driftPollMs,
            describe: () =>
                `timed out after ${secs(c.t.driftMs)}: ${PROD}/${CM} still has LOG_LEVEL=${last?.data?.LOG_LEVEL}; is selfHeal on for Application ${PROD}?`,
        },
    );
    const seconds = Math.max(1, Math.ceil((c.clock.now() - start) / 1000));
    if (restored !== gitValue) throw new Error(`selfHeal put LOG_LEVEL=${restored} back, but Git says ${gitValue}`);
    return { uid, edited, restored, seconds };
}

async function promote(c: Ctx, r: ShopResults): Promise<Promote> {
    const to = r.incident!.commit;
    let from = await c.git.remoteBranch(RELEASE);
    if (!from) throw new Error(`${RELEASE} does not exist on the remote; run step 4 (pin) first`);
    if (from === to && r.pin && (await c.git.isAncestor(r.pin.release_prod_initial, to))) {
        from = r.pin.release_prod_initial; // pushed by an earlier run that died before writing promote.json
    } else {
        if (!(await c.git.isAncestor(from, to))) {
            throw new Error(
                `promotion refused: ${RELEASE} is at ${from}, which is not an ancestor of ${to}, so this is not a fast-forward (force push is forbidden). Nothing was pushed`,
            );
        }
        await c.git.pushTo(to, RELEASE);
        say(c, `fast-forwarded ${RELEASE} ${short(from)} -> ${short(to)}`);
    }
    await waitSynced(c, PROD, to, { targetRevision: RELEASE, check: valueIs(c, PROD, "FEATURE_CHECKOUT_V2", "on") });
    return { from, to };
}

/** The part of a ComparisonError message a person needs: from the missing.yaml accumulation on. */
export function errorExcerpt(message: string): string {
    const i = message.indexOf("accumulating resources");
    const text = i >= 0 ? message.slice(i) : message;
    return text.length > 300 ? text.slice(0, 300) : text;
}

/** What step 7 saw while dev was broken, kept before the revert so a resumed run need not see it again. */
interface Observed {
    bad_commit: string;
    dev_error: string;
    prod_revision_during: string;
}
const observedFile = (c: Ctx) => path.join(c.layout.workDir, ".revert-observed.json");

async function revertBad(c: Ctx, r: ShopResults): Promise<Revert> {
    // a run that already reverted (and maybe pushed) and died before writing revert.json
    const observed = readJsonIfExists<Observed>(observedFile(c));
    const head = await c.git.revParse("HEAD");
    if (observed && (await c.git.subjectOf(head)) === `Revert "${BAD_MESSAGE}"` && (await c.git.parentOf(head)) === observed.bad_commit) {
        if ((await c.git.remoteBranch("main")) !== head) await c.git.pushTo(head, "main");
        say(c, `found the revert ${short(head)} of ${short(observed.bad_commit)} made by an earlier run`);
        return finishRevert(c, observed, head);
    }
    const bad = await commitOnMainOnce(
        c,
        "envs/dev/kustomization.yaml",
        addMissingResource,
        BAD_MESSAGE,
        "missing.yaml in envs/dev resources",
        7,
    );
    const refresher = await keepRefreshing(c, DEV, "hard");
    let lastDev: Application | null = null;
    const seen = await waitFor(
        c,
        `the ComparisonError on ${DEV}`,
        async () => {
            lastDev = await c.cluster.getApplication(DEV, c.appset.namespace);
            const err = errorConditions(lastDev).find((e) => e.type === "ComparisonError" && e.message.includes("missing.yaml"));
            if (!err) return undefined;
            // the same moment: read prod right after the error was seen
            const prod = await c.cluster.getApplication(PROD, c.appset.namespace);
            return { message: err.message, prodRevision: prod?.status?.sync?.revision as string };
        },
        {
            timeoutMs: c.t.errorMs,
            intervalMs: c.t.pollMs,
            describe: () =>
                `timed out after ${secs(c.t.errorMs)} waiting for a ComparisonError about missing.yaml on ${DEV} (commit ${bad}). Last status: ${describeApp(lastDev)}`,
            between: () => refresher.again(lastDev),
        },
    );
    say(c, `${DEV}: ${errorExcerpt(seen.message).slice(0, 120)}...; ${PROD} at ${seen.prodRevision}`);
    if (seen.prodRevision !== r.promote!.to) {
        throw new Error(`while ${DEV} was broken, ${PROD} was at ${seen.prodRevision}, not at the promoted commit ${r.promote!.to}`);
    }
    const obs: Observed = { bad_commit: bad, dev_error: errorExcerpt(seen.message), prod_revision_during: seen.prodRevision };
    writeJsonAtomic(observedFile(c), obs);
    const revertCommit = await c.git.revert(bad);
    await c.git.pushTo(revertCommit, "main");
    say(c, `git revert ${short(bad)} -> ${short(revertCommit)}, pushed to main`);
    return finishRevert(c, obs, revertCommit);
}

async function finishRevert(c: Ctx, obs: Observed, revertCommit: string): Promise<Revert> {
    // hard: the repo-server caches the failed manifest generation. The revert renders exactly like
    // the last synced commit, so Argo CD reports Synced at it without a new sync operation.
    await waitSynced(c, DEV, revertCommit, { refresh: "hard", noOpAllowed: true, check: valueIs(c, DEV, "LOG_LEVEL", "debug") });
    return { ...obs, revert_commit: revertCommit };
}

async function report(c: Ctx, r: ShopResults): Promise<Report> {
    const dev = await c.cluster.getApplication(DEV, c.appset.namespace);
    const prod = await c.cluster.getApplication(PROD, c.appset.namespace);
    // the report says what each environment tracks: it is never written from a missing Application
    const missing = !dev ? DEV : !prod ? PROD : null;
    if (missing || !dev || !prod)
        throw new Error(
            `Application ${missing} does not exist, so the report cannot say what it tracks; nothing was written. Check the ApplicationSet ${c.appset.namespace}/${c.appset.name}, then run again`,
        );
    if (prod.spec?.source?.targetRevision !== RELEASE) {
        throw new Error(
            `Application ${PROD} tracks ${prod.spec?.source?.targetRevision ?? "(nothing)"}, not ${RELEASE} as step 4 pinned it; nothing was written. Put the prod element of the ApplicationSet back on ${RELEASE}, then run again`,
        );
    }
    const releaseTip = await c.git.remoteBranch(RELEASE);
    if (!releaseTip) throw new Error(`${RELEASE} does not exist on the remote`);
    return {
        dev_tracks: dev.spec?.source?.targetRevision ?? "",
        prod_tracks: prod.spec?.source?.targetRevision ?? "",
        promoted_commit: r.promote!.to,
        drift_seconds: r.drift!.seconds,
        bad_commit_reached_prod: await c.git.isAncestor(r.revert!.bad_commit, releaseTip),
        rollback: "revert",
    };
}

export const STEPS: Step[] = [
    { n: 2, name: "sync", run: sync },
    { n: 3, name: "incident", file: "incident", run: incident },
    { n: 4, name: "pin", file: "pin", run: pin },
    { n: 5, name: "drift", file: "drift", run: drift },
    { n: 6, name: "promote", file: "promote", run: promote },
    { n: 7, name: "revert", file: "revert", run: revertBad },
    { n: 8, name: "report", file: "report", run: report },
];

/** The results already on disk (the checkpoint), in step order; refuses gaps. */
export function readShopResults(layout: ShopLayout): ShopResults {
    return SHOP_RESULT_SET.read(layout.resultFile);
}

export interface ShopScenarioRun {
    results: ShopResults;
    timings: StepTiming[];
    /** The highest step now done. */
    through: number;
}

/**
 * Runs steps 2..through (2 <= through <= 8), skipping those whose result file exists.
 * Through < 2 does nothing.
 */
export async function runShopScenario(ctx: ShopScenarioContext, through: number): Promise<ShopScenarioRun> {
    if (!Number.isInteger(through) || through < 0 || through > 8)
        throw new Error(`solveThrough must be a whole number from 0 to 8, got ${through}`);
    const c: Ctx = {
        layout: ctx.layout,
        git: ctx.git,
        cluster: ctx.cluster,
        log: ctx.log,
        appset: ctx.appset ?? { name: APPSET_NAME, namespace: ARGOCD_NAMESPACE },
        clock: ctx.clock ?? realClock,
        refresh: ctx.refresh ?? true,
        t: { ...DEFAULT_TIMEOUTS, ...(ctx.timeouts ?? {}) },
        waitMs: 0,
        prefix: "",
    };
    const results = readShopResults(ctx.layout);
    // a step still to run that commits on main (3, 7) and a clone on another branch, or holding the learner's changes or
    // commits not pushed: said before any step runs, not when that step's turn comes after the others changed the lab (a
    // commit of the lab's own, an earlier run's stopped before its push, or a file a step writes itself, is that step's)
    if ((through >= 3 && !results.incident) || (through >= 7 && !results.revert)) {
        const subject = await ctx.git.subjectOf(await ctx.git.revParse("HEAD"));
        // (the commit of a step whose result is not written yet: that step's own, stopped before it was done)
        const own =
            (subject === INCIDENT_MESSAGE && !results.incident) ||
            ([BAD_MESSAGE, `Revert "${BAD_MESSAGE}"`].includes(subject) && !results.revert);
        const why = own ? undefined : await ctx.git.notReadyFor("main", ["base/configmap.yaml", "envs/dev/kustomization.yaml"]);
        if (why) throw new Error(why);
    }
    const started = Date.now();
    const timings = await runSteps({
        steps: STEPS,
        through,
        set: SHOP_RESULT_SET,
        results,
        resultFile: ctx.layout.resultFile,
        log: ctx.log,
        prefix: (step) => `[step ${step.n} ${step.name}]`,
        context: (_step, prefix) => Object.assign(c, { prefix, waitMs: 0 }),
        waitedMs: (x) => x.waitMs,
        written: (step, x) => {
            if (step.file === "revert") fs.rmSync(observedFile(x), { force: true });
        },
        clock: c.clock,
    });
    if (through >= 8 && results.report) c.log(`report: ${JSON.stringify(results.report)}`);
    c.log(`scenario through step ${through} finished in ${secs(Date.now() - started)}`);
    return { results, timings, through };
}
