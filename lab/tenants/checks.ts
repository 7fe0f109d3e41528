/**
 * The tenants lab's grader: the table of named checks that re-derives the lab's facts from the
 * world (stall.json, recovery.json, the platform repository read directly and, unless offline, the
 * cluster). Only the result schemas (results.ts) are shared with the scenario.
 */
import { ARGOCD_NAMESPACE } from "../argo/application";
import { Check, CheckResult, eq, eqFields, runChecks } from "../grader/grader";
import { whereElse } from "../grader/whereElse";
import { MAIN_AT_FIXED } from "./mainChecks";
import { SHIPPED_CHECKS } from "./shippedChecks";
import { RECOVERY_ORDER } from "./orderCheck";
import { stackOutputChecks } from "../grader/live";
import { isSha, resultFileChecks } from "../grader/resultFiles";
import { startAgainAt } from "../kit/layout";
import { RELEASES, Tenant, TENANTS, TENANTS_APPSET } from "./layout";
import { HOOK_ERROR, tenantPath } from "./repoFiles";
import { TenantsResultName, TENANTS_RESULT_FILES, TENANTS_RESULT_STEP, tenantsFieldsOf } from "./results";
import { skippedTenants, TENANTS_LIVE_CHECKS } from "./liveChecks";
import { madeAt, secondsSinceCommit, secondsWithinRollout } from "./resultTimes";
import { hookJobSlip, releaseSlip, STALL_FIELDS, withReleaseSlip } from "./stallFields";
import {
    laterThanFix,
    AFTER_BLOCKED,
    all,
    expectedRunning,
    changedOnMain,
    obj,
    parentOnMain,
    Order,
    racedAhead,
    readTenantsWorld,
    releasesAt,
    TenantsVerifyOptions,
    TenantsWorld,
} from "./world";
export type { TenantsVerifyOptions, TenantsWorld } from "./world";

const step1: Check<TenantsWorld>[] = [
    {
        step: 1,
        name: "platform.git exists with a main branch",
        run: async (w) => ({
            ok: !!w.main,
            expected: `${w.layout.bareRepo} with refs/heads/main`,
            found: w.repo.exists() ? "no main branch" : "no repository",
        }),
    },
    {
        step: 1,
        name: "every file of platform.git is readable by others (the git daemon runs as nobody)",
        run: async (w) => {
            if (!w.repo.exists()) return null;
            const bad = w.repo.unreadableByOthers(5);
            return {
                ok: bad.length === 0,
                expected: "o+r on files, o+rx on directories",
                found: `not readable by others: ${bad.join(", ")}`,
            };
        },
    },
    {
        step: 1,
        name: `the first commit puts every tenant at ${RELEASES.first}`,
        run: async (w) => (w.main ? eq(all(RELEASES.first), await releasesAt(w, await w.repo.rootOf("main"))) : null),
    },
    {
        step: 1,
        name: `only release ${RELEASES.faulty} ships the news extension's settings template`,
        run: async (w) => {
            if (!w.main) return null;
            const found: Record<string, boolean> = {};
            for (const r of [RELEASES.first, RELEASES.faulty, RELEASES.fixed])
                found[r] = (await w.repo.file(w.main, `releases/${r}/code/news.settings-template`)) !== null;
            const outcome = eq({ [RELEASES.first]: false, [RELEASES.faulty]: true, [RELEASES.fixed]: false }, found);
            // the faulty release's folder taken out by a later commit (a clean-up): put back, not rebuilt
            if (!outcome.ok && (await w.repo.file(w.main, `releases/${RELEASES.faulty}/kustomization.yaml`)) === null) {
                // taken out by the step's own commit (the fix, with a clean-up of the faulty release): putting it back
                // later leaves that commit as it is, so that step is made again on a new lab
                // the step whose commit took it out (the fix's, else the stall's): the one whose changed files hold it
                let by: readonly ["recovery" | "stall", number] | undefined;
                for (const step of [
                    ["recovery", 3],
                    ["stall", 2],
                ] as const) {
                    const c = obj(w, step[0])?.commit;
                    if (
                        isSha(c) &&
                        (await w.repo.isCommit(String(c))) &&
                        (await changedOnMain(w, String(c))).some((f) => f.startsWith(`releases/${RELEASES.faulty}/`))
                    ) {
                        by = step;
                        break;
                    }
                }
                const sha = by ? String(obj(w, by[0])?.commit) : undefined;
                const ownStep = by !== undefined;
                return {
                    ...outcome,
                    hint: ownStep
                        ? `main has no releases/${RELEASES.faulty}/: ${by![0]}.commit ${sha!.slice(0, 12)} took it out with the step's change; the lab keeps every release, the faulty one too, and a step's commit changes the tenants' files alone, which a later commit putting it back does not undo: start the lab again (${startAgainAt(w.layout.root, { lab: "tenants", through: by![1] - 1 })}) and make that commit on tenants/ alone`
                        : `main has no releases/${RELEASES.faulty}/ (taken out by a later commit?): the lab keeps every release, the faulty one too; put it back in a new commit (git checkout ${(await w.repo.rootOf("main")).slice(0, 12)} -- releases/${RELEASES.faulty}, then commit and push)`,
                };
            }
            return outcome;
        },
    },
];

const step2: Check<TenantsWorld>[] = [
    {
        step: 2,
        // the names say what is compared, never the diagnosis: --step prints the name of what is missing, and the diagnosis is the step
        name: "stall: the ApplicationSet, the release, the step it is stuck at (of how many), the blocking Application and its hook Job",
        run: async (w) => {
            const s = obj(w, "stall");
            if (!s) return null;
            // a tenant's file gone from stall.commit (renamed to .yml?): no Application for it, so not the lab's rollout
            const at = isSha(s.commit) && (await w.repo.isCommit(s.commit)) ? await releasesAt(w, s.commit) : {};
            const gone = TENANTS.filter((t) => at[t] === null).map((t) => tenantPath(t as Tenant));
            const goneHint = `stall.commit has no ${gone.join(", ")} (renamed?): the git files generator reads tenants/*.yaml alone, so that tenant has no Application and the rollout is not the lab's: put the file back in a new commit, then start the lab again (${startAgainAt(w.layout.root, { lab: "tenants", through: 1 })})`;
            const outcome = eqFields(
                {
                    appset: `${ARGOCD_NAMESPACE}/${TENANTS_APPSET}`,
                    release: RELEASES.faulty,
                    step: 2,
                    steps: 4,
                    blocking: "mandant-b",
                    hook_job: "mandant-b/site-setup",
                },
                { appset: s.appset, release: s.release, step: s.step, steps: s.steps, blocking: s.blocking, hook_job: s.hook_job },
                {
                    ...STALL_FIELDS,
                    ...(releaseSlip(s.release) ? { release: releaseSlip(s.release) as string } : {}),
                    ...hookJobSlip(s.hook_job),
                    // another tenant by its right name: the wrong one, not a format slip
                    ...((TENANTS as readonly string[]).includes(s.blocking) && s.blocking !== "mandant-b"
                        ? {
                              blocking: `${s.blocking} ${s.blocking === "mandant-a" ? "passed its hook (it is in passed)" : "waits in a later step"}; the blocked one is the stuck step's Application whose PreSync hook failed (gitops-lab doctor names it)`,
                          }
                        : {}),
                },
            );
            return !outcome.ok && gone.length ? { ...outcome, hint: goneHint } : outcome;
        },
    },
    {
        step: 2,
        // the name never quotes the line: --step prints the name of what is missing, and the line is the answer
        name: "stall.hook_error is the hook script's own error line, as its Pod's log has it",
        run: async (w) => {
            const s = obj(w, "stall");
            if (!s || !isSha(s.commit)) return null;
            const script = (await w.repo.file(s.commit, `releases/${RELEASES.faulty}/code/setup.sh`)) ?? "";
            // (as the log prints it, indented: the blanks around the line on one line are no part of it)
            const ok =
                typeof s.hook_error === "string" &&
                !s.hook_error.includes("\n") &&
                s.hook_error.trim() === HOOK_ERROR &&
                script.includes(HOOK_ERROR);
            const text: string = typeof s.hook_error === "string" ? s.hook_error : "";
            const lines = text.split("\n").filter((l) => l.trim()).length;
            // the line is in it, with more around it (the block the log prints, indentation): say what is too much, not the line
            const extra =
                !ok && text.includes(HOOK_ERROR)
                    ? lines > 1
                        ? `hook_error holds ${lines} lines: write only the script's own error line, one line as the log prints it, without the lines around it`
                        : /^\s*["'“].*["'”]\s*$/.test(text) && text.trim().slice(1, -1).trim() === HOOK_ERROR
                          ? "hook_error holds the error line inside quotes (as the doctor's line quotes it): write the line alone, without them"
                          : "hook_error holds the error line with more around it (spaces, a prefix): write the line alone, trimmed"
                    : !ok && text.trim() && script.includes(`echo "${text.trim()}"`)
                      ? // another line the script prints (the header above the error, a progress line): the right log, the wrong line
                        `hook_error holds another line the hook prints (${JSON.stringify(text.trim())}): write the error line itself, the one that says what failed (the last line of text in kubectl logs -n mandant-b job/site-setup)`
                      : !ok && text.trim()
                        ? "hook_error is not the line the hook's log prints (kubectl logs -n mandant-b job/site-setup, the script's own error line): copy it exactly as printed, punctuation included"
                        : !ok && typeof s.hook_error === "string"
                          ? // empty or blank: the log ends with an empty line, so tail -n1 gives nothing
                            `hook_error is ${text ? "blank" : "empty"}: the hook's log ends with an empty line, so its last line (tail -n1) is nothing; the error line is the last with text: kubectl logs -n mandant-b job/site-setup | grep . | tail -n1`
                          : undefined;
            return {
                ok,
                expected: `${HOOK_ERROR} (printed by releases/${RELEASES.faulty}/code/setup.sh)`,
                found: s.hook_error,
                ...(extra ? { hint: extra } : {}),
            };
        },
    },
    // the commit first: what the stall is of comes before what the rollout did with it
    {
        step: 2,
        name: `stall.commit sets every tenant to ${RELEASES.faulty}, on top of every tenant at ${RELEASES.first}`,
        run: async (w) => {
            const s = obj(w, "stall");
            if (!s || !isSha(s.commit) || !(await w.repo.isCommit(s.commit))) return null;
            const [parent] = await w.repo.parents(s.commit);
            const found = { commit: await releasesAt(w, s.commit), parent: parent ? await releasesAt(w, parent) : null };
            const outcome = eq({ commit: all(RELEASES.faulty), parent: all(RELEASES.first) }, found);
            const ahead = TENANTS.filter((t) => found.parent?.[t] === RELEASES.faulty);
            // an earlier commit's SHA (step 1's: every tenant still at the first release) for the push's
            if (!outcome.ok && eq(all(RELEASES.first), found.commit).ok)
                return {
                    ...outcome,
                    hint: `stall.commit ${s.commit.slice(0, 12)} has every tenant at ${RELEASES.first}, a commit before the one that sets ${RELEASES.faulty} (an earlier commit, or one pushed with it): write the SHA of the commit that sets ${RELEASES.faulty} (git log --oneline origin/main shows it; git rev-parse <it> prints it in full)`,
                };
            // a tenant forgotten (its file left at the first release) in a commit that sets the others from it
            const left = TENANTS.filter((t) => found.commit?.[t] === RELEASES.first);
            if (!outcome.ok && left.length && left.length < TENANTS.length && eq(all(RELEASES.first), found.parent).ok)
                return {
                    ...outcome,
                    hint: `stall.commit leaves ${left.join(", ")} at ${RELEASES.first}: the step sets every tenant to ${RELEASES.faulty} in one commit (another commit for ${left.length === 1 ? "it" : "them"} would roll the release out in two). The repository rewinds nothing: start the lab again (${startAgainAt(w.layout.root, { lab: "tenants", through: 1 })}) and push the release to every tenant in one commit`,
                };
            if (outcome.ok || !found.parent || !eq(all(RELEASES.faulty), found.commit).ok) return outcome;
            // a push before it set the tenants to something else (a release typo'd, then fixed): the rollout began from there
            const other = TENANTS.filter((t) => found.parent?.[t] !== RELEASES.first && found.parent?.[t] !== RELEASES.faulty);
            if (ahead.length === 0 && other.length)
                return {
                    ...outcome,
                    hint: `stall.commit's parent has ${other.map((t) => `${t} at ${JSON.stringify(found.parent?.[t])}`).join(", ")}, not ${RELEASES.first}: an earlier push set them (a release the repository does not ship, fixed by this commit?), and the rollout began from that one; the step is one commit from ${RELEASES.first} for every tenant. The repository rewinds nothing: start the lab again (${startAgainAt(w.layout.root, { lab: "tenants", through: 1 })}) and push the release in one commit`,
                };
            if (ahead.length === 0) return outcome;
            // the release in several commits: RollingSync rolled out each one; the repository rewinds none of them
            return {
                ...outcome,
                hint: `the release went out in more than one commit (${ahead.join(", ")} at ${RELEASES.faulty} already in stall.commit's parent); the step is one commit for every tenant, the one change a RollingSync rollout is of. The repository rewinds nothing: start the lab again (${startAgainAt(w.layout.root, { lab: "tenants", through: 1 })}) and push the release in one commit`,
            };
        },
    },
    {
        step: 2,
        name: "stall.commit is on main",
        run: async (w) => {
            const s = obj(w, "stall");
            if (!s || !isSha(s.commit) || !w.main) return null;
            if (await w.repo.isAncestor(s.commit, w.main)) return true;
            const on = (await w.repo.isCommit(s.commit)) ? await w.repo.branchesContaining(s.commit) : [];
            return {
                ok: false,
                expected: `an ancestor of main (${w.main})`,
                found: `${s.commit} is not`,
                // pushed to a branch of its own: the ApplicationSet reads main, so no rollout of it ran
                ...(on.length
                    ? {
                          hint: `stall.commit ${s.commit.slice(0, 12)} is on ${on.join(", ")}, not on main, which the ApplicationSet reads (so no rollout of it ran): push it to main (git push origin ${s.commit.slice(0, 12)}:refs/heads/main), refresh the ApplicationSet, and write stall.json once the rollout stalls`,
                      }
                    : {}),
            };
        },
    },
    {
        step: 2,
        name: "stall.detected_after_seconds is from 0 to the time since stall.commit was made",
        run: (w) =>
            secondsSinceCommit(
                w,
                "stall",
                "detected_after_seconds",
                "the seconds from your push of stall.commit to when you saw the rollout stuck",
                { min: 1 },
            ),
    },
    {
        step: 2,
        name: "stall: the tenants that passed, those that wait (but one that raced ahead), and whether RollingSync wrote automated.enabled: false",
        run: async (w) => {
            const s = obj(w, "stall");
            if (!s) return null;
            const raced = racedAhead(w);
            const outcome = eqFields(
                {
                    passed: ["mandant-a"],
                    waiting: AFTER_BLOCKED.filter((t) => !raced.includes(t)),
                    auto_sync_disabled_by_rollingsync: true,
                },
                { passed: s.passed, waiting: s.waiting, auto_sync_disabled_by_rollingsync: s.auto_sync_disabled_by_rollingsync },
                {
                    ...STALL_FIELDS,
                    // the blocked tenant listed as waiting: it is blocking, the others wait behind it
                    ...(Array.isArray(s.waiting) && s.waiting.includes("mandant-b")
                        ? {
                              waiting:
                                  "mandant-b is the blocked one (blocking), not one that waits: waiting lists the tenants of the steps after it",
                          }
                        : {}),
                    // the names with more around them (the doctor's --json objects, its line's " (step 3)"): the names alone
                    ...Object.fromEntries(
                        (["passed", "waiting"] as const)
                            .filter(
                                (k) => Array.isArray(s[k]) && s[k].some((x: unknown) => typeof x !== "string" || / \(step \d+\)$/.test(x)),
                            )
                            .map((k) => [
                                k,
                                `write the Applications' names alone, as strings (["mandant-c"], not objects or "mandant-c (step 3)")`,
                            ]),
                    ),
                },
            );
            // a tenant RollingSync passed over (its Application compared before the ApplicationSet wrote its new path):
            // the rollout the learner saw is not the field report's, and no field of stall.json can make it so
            // looked at when the file's values fail, and when they pass while main still stands at stall.commit (the stall as it
            // is, before a fix: a file listing a skipped tenant as waiting would pass otherwise)
            const asItIs = outcome.ok && isSha(s.commit) && w.main === s.commit;
            const skipped = (outcome.ok && !asItIs) || !w.cluster || w.clusterError ? [] : await skippedTenants(w.cluster).catch(() => []);
            return skipped.length
                ? {
                      ...outcome,
                      ...(outcome.ok
                          ? {
                                ok: false,
                                expected: "a stall in which RollingSync passed over no tenant",
                                found: skipped.map((k) => `${k.application} skipped`).join(", "),
                            }
                          : {}),
                      hint: `${skipped.map((k) => `${k.application} (step ${k.step})`).join(", ")} ${skipped.length === 1 ? "was" : "were"} skipped by RollingSync: ${skipped.length === 1 ? "its entry is" : "their entries are"} Healthy, but ${skipped.map((k) => `${k.application} runs ${k.runs}, not ${k.shouldRun}`).join("; ")}. RollingSync passes over an Application whose entry turned Healthy with no sync of its own: one compared at the new commit before the ApplicationSet wrote its new path (a hard refresh of the Applications; the lab refreshes only the ApplicationSet), or one that synced at a release patched into the live template, or by hand, before the template was put back. This stall is not the field report's: start the lab again (${startAgainAt(w.layout.root, { lab: "tenants", through: 1 })}), push the release in one commit and refresh only the ApplicationSet`,
                  }
                : outcome;
        },
    },
    {
        step: 2,
        name: "stall.running: each site's release as the stall left it (but one that raced ahead)",
        run: async (w) => {
            const s = obj(w, "stall");
            if (!s) return null;
            const want = expectedRunning(2, racedAhead(w)) as Record<string, string>;
            const outcome = withReleaseSlip(eq(want, s.running), s.running);
            if (outcome.ok || outcome.hint || !s.running || typeof s.running !== "object") return outcome;
            // one tenant's release wrong: which, and why it runs what it runs at the stall
            const t = TENANTS.find((x) => typeof s.running[x] === "string" && s.running[x] !== want[x]);
            // keys written namespace/name (argocd/mandant-a): the tenant's name alone, as in passed and waiting
            const ns = Object.keys(s.running).find((k) => k.includes("/"));
            if (ns) return { ...outcome, hint: `running's key ${ns} has a namespace: the keys are the tenants' names alone (mandant-a)` };
            if (!t) return outcome;
            const why =
                t === "mandant-a"
                    ? `it passed the hook with ${RELEASES.faulty} (it is in passed)`
                    : t === "mandant-b"
                      ? `its sync of ${RELEASES.faulty} failed on its hook, so it kept ${RELEASES.first}`
                      : want[t] === RELEASES.faulty
                        ? `it raced ahead of the stuck step and synced it`
                        : `it waits behind the stuck step`;
            return {
                ...outcome,
                hint: `running.${t} holds ${JSON.stringify(s.running[t])}, but ${t} runs ${want[t]} at the stall: ${why} (the site's example.org/release label: kubectl -n ${t} get deployment site --show-labels)`,
            };
        },
    },
];

const step3: Check<TenantsWorld>[] = [
    {
        step: 3,
        name: `recovery: release ${RELEASES.fixed}, every site runs it`,
        run: async (w) => {
            const r = obj(w, "recovery");
            return r
                ? withReleaseSlip(
                      eq({ release: RELEASES.fixed, running: all(RELEASES.fixed) }, { release: r.release, running: r.running }),
                      r.release,
                      r.running,
                  )
                : null;
        },
    },
    {
        step: 3,
        name: `recovery.commit sets every tenant to ${RELEASES.fixed} in one commit and descends from stall.commit (a fast-forward of main)`,
        run: async (w) => {
            const r = obj(w, "recovery");
            const s = obj(w, "stall");
            if (!r || !isSha(r.commit) || !(await w.repo.isCommit(r.commit))) return null;
            const descends = !!s && isSha(s.commit) && (await w.repo.isAncestor(s.commit, r.commit));
            const onMain = !!w.main && (await w.repo.isAncestor(r.commit, w.main));
            // the one commit of the fix: before it, no tenant was at the fixed release yet (of a merge, main's parent)
            const parent = await parentOnMain(w, r.commit);
            const before = parent ? await releasesAt(w, parent) : {};
            const early = TENANTS.filter((t) => before[t] === RELEASES.fixed);
            // another commit's SHA copied (stall.commit, the first one) while the fix itself is on main: the SHA is what is wrong
            const at = await releasesAt(w, r.commit);
            if (!TENANTS.some((t) => at[t] === RELEASES.fixed) && w.main && eq(all(RELEASES.fixed), await releasesAt(w, w.main)).ok)
                return {
                    ok: false,
                    expected: `the commit that sets every tenant to ${RELEASES.fixed}`,
                    found: `${r.commit.slice(0, 12)}, which sets none to it`,
                    hint: `recovery.commit ${r.commit === s?.commit ? "is stall.commit itself" : `is ${r.commit.slice(0, 12)}, which sets no tenant to ${RELEASES.fixed}`}, while main has the fix: write the fix's SHA (git log --oneline origin/main shows it; git rev-parse <it> prints it in full)`,
                };
            // a later commit's SHA (git rev-parse HEAD after one more commit): the fix is behind it, where every tenant moved at once
            const later = early.length === TENANTS.length && onMain ? await laterThanFix(w, r.commit, parent) : undefined;
            if (later) return later;
            return eqFields(
                { releases: all(RELEASES.fixed), after: true, main: true, early: [], before: all(RELEASES.faulty) },
                {
                    releases: await releasesAt(w, r.commit),
                    after: descends,
                    main: onMain,
                    early,
                    // (a fix split over commits is early's to say, not a rollback)
                    before: early.length ? all(RELEASES.faulty) : before,
                },
                {
                    // the stall rolled back before the fix: the fix then is a routine rollout, not the stall's way out
                    before: `each tenant's release in the commit before recovery.commit: the fix goes on top of the stalled release (every tenant at ${RELEASES.faulty}), which the lab leaves as it is; a rollback first makes the fix a routine rollout, not the stall's way out: the step is done over on a new lab (the lab's reset, then the lab again)`,
                    releases: `each tenant's release at recovery.commit (tenants/<tenant>.yaml), all ${RELEASES.fixed} in that one commit; a commit that sets only some is not made whole by a second one (the step is one commit): then the step is done over on a new lab (the lab's reset, then the lab again)`,
                    early: `the tenants already at ${RELEASES.fixed} before recovery.commit: the step sets all four in one commit (RollingSync then rolls the one change out step by step); main takes fast-forwards only, so a fix split over commits stays split: the step is done over on a new lab (the lab's reset, then the lab again)`,
                    after: "recovery.commit comes after stall.commit on main: a new commit on top, never a rewrite",
                    main: "recovery.commit is on main once pushed; the repository takes fast-forwards only, so a refused push leaves it out: put the commit on top of main as it is (git fetch, then git rebase origin/main) and push",
                },
            );
        },
    },
    RECOVERY_ORDER,
    {
        step: 3,
        name: "recovery.seconds is from 1 to the time since recovery.commit was made",
        run: (w) =>
            secondsSinceCommit(w, "recovery", "seconds", "the whole seconds from your push of the fix to the rollout complete", {
                millis: true,
                min: 1,
            }),
    },
    {
        step: 3,
        name: "recovery.seconds is as long as the rollout took (recovery.commit pushed, or made, to the last healthy_at)",
        run: secondsWithinRollout,
    },
    {
        step: 3,
        name: "recovery.order's healthy_at times are after recovery.commit was made, and not later than now",
        run: async (w) => {
            const r = obj(w, "recovery");
            if (!r || !Array.isArray(r.order) || !isSha(r.commit) || !(await w.repo.isCommit(r.commit))) return null;
            // no tenant turns Healthy at the fixed release before its commit exists; the commit's time is the clone's
            // machine's, healthy_at the cluster's: five minutes of skew between the two are allowed
            const made = await madeAt(w, r.commit);
            const early = r.order.filter((o: { healthy_at?: string } | null) => !(Date.parse(o?.healthy_at ?? "") >= made - 300_000));
            // a time still to come (shifted, or of another zone written as UTC): no tenant turned Healthy then
            const late = r.order.filter((o: { healthy_at?: string } | null) => Date.parse(o?.healthy_at ?? "") > Date.now() + 300_000);
            if (!early.length && late.length)
                return {
                    ok: false,
                    expected: `each before now (${new Date().toISOString()})`,
                    found: late.map((o: Order) => `${o?.application} ${o?.healthy_at}`).join(", "),
                    hint: `${late.map((o: Order) => `${o?.application}'s ${o?.healthy_at}`).join(", ")} ${late.length === 1 ? "is" : "are"} later than now: read each time from the ApplicationSet's status.applicationStatus (lastTransitionTime of its Healthy entry), as it is written there (UTC, Z)`,
                };
            return early.length
                ? {
                      ok: false,
                      expected: `each after ${new Date(made).toISOString()}`,
                      found: early.map((o: Order) => `${o?.application} ${o?.healthy_at}`).join(", "),
                      hint: `${early.map((o: Order) => o?.application).join(", ")} turned Healthy at the fixed release after recovery.commit was made (${new Date(made).toISOString()}), not at ${early.map((o: Order) => inUtc(o?.healthy_at)).join(", ")}: read each time from the ApplicationSet's status.applicationStatus (lastTransitionTime of its Healthy entry) once the rollout is complete${early.some((o: Order) => zoned(o?.healthy_at)) ? ", and write it as written there (UTC, Z): a zone's offset put on a UTC time moves it by that much" : ""}`,
                  }
                : true;
        },
    },
];

/** A time with a zone's offset (+01:00), not Z: the clock time it holds is not UTC's. */
const zoned = (t: unknown) => typeof t === "string" && /[+-]\d\d:?\d\d$/.test(t) && !/[+-]00:?00$/.test(t);
/** A time as written, with its UTC instant beside it where it carries an offset. */
const inUtc = (t: unknown) =>
    zoned(t) && !isNaN(Date.parse(t as string)) ? `${t} (${new Date(Date.parse(t as string)).toISOString()} in UTC)` : t;

const stackOutputs = stackOutputChecks<TenantsResultName, TenantsWorld>({
    names: TENANTS_RESULT_FILES,
    stepOf: TENANTS_RESULT_STEP,
    output: (name) => `tenants${name[0].toUpperCase()}${name.slice(1)}`,
    result: obj,
});

/** stall.json not written while the rollout stalled, and the fix on main since: the stall is no longer there to read. */
async function stallEnded(w: TenantsWorld): Promise<string | undefined> {
    if (!w.main) return undefined;
    const at = await releasesAt(w, w.main);
    if (!TENANTS.every((t) => at[t] === RELEASES.fixed)) return undefined;
    return `stall.json was not written while the rollout stalled, and main's fix (every tenant at ${RELEASES.fixed}) has ended that stall: the cluster no longer shows it, so its values are of the stall as it was: the commit you pushed for step 2 and its release (git log), the step and Applications the rollout stopped at, the hook Job's error (its Pod's log), and running as the sites ran then, before the fix (to see it again, start the lab again: ${startAgainAt(w.layout.root, { lab: "tenants", through: 1 })})`;
}

export const TENANTS_CHECKS: readonly Check<TenantsWorld>[] = [
    // before the result files: what main holds is the step's own ask, and says what to do first
    MAIN_AT_FIXED,
    ...TENANTS_RESULT_FILES.flatMap((n) =>
        resultFileChecks<TenantsResultName, TenantsWorld>(
            n,
            TENANTS_RESULT_STEP[n],
            tenantsFieldsOf(n),
            n === "stall" ? stallEnded : undefined,
        ),
    ),
    ...step1,
    ...step2,
    ...step3,
    ...SHIPPED_CHECKS,
    ...stackOutputs,
    ...TENANTS_LIVE_CHECKS,
];

export async function verifyTenants(opts: TenantsVerifyOptions): Promise<CheckResult[]> {
    const w = await readTenantsWorld(opts);
    return runChecks(TENANTS_CHECKS, w, opts.through, { whereElse: (found, self) => whereElse(w.repo, w.files, found, self) });
}
