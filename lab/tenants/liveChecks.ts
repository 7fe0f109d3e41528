/**
 * The tenants lab's checks of the live cluster: the ApplicationSet, the rollout as the graded step leaves it,
 * each site's release, and the paths the generator made.
 */
import { APPSET_REFRESH_ANNOTATION, ARGOCD_NAMESPACE, REFRESH_ANNOTATION } from "../argo/application";
import { type Skipped, skippedBy } from "../doctor/diagnose";
import { stepSelects, SYNCED_HEALTHY_MESSAGE } from "../argo/rollingSync";
import type { ClusterPort } from "../ports/cluster";
import { Check, eq } from "../grader/grader";
import { clusterAnswers, liveCheck, missingAppSetHint } from "../grader/live";
import { isSha } from "../grader/resultFiles";
import { startAgainAt } from "../kit/layout";
import { RELEASES, Tenant, TENANT_LABEL, TENANTS, TENANTS_APPSET } from "./layout";
import { RELEASE_LABEL, TENANT_SETTINGS, tenantPath } from "./repoFiles";
import { madeAt } from "./resultTimes";
import { AFTER_BLOCKED, expectedPath, expectedRunning, obj, racedAhead, releasesAt, TenantsWorld } from "./world";

const live = liveCheck<TenantsWorld>;

/**
 * The step of a live check whose expectation is the graded step's (the rollout, each Application's path,
 * each site's release): a lab graded through 3 whose fix is missing says step 3, not step 1, which is done.
 */
const graded = (w: TenantsWorld) => Math.max(1, Math.min(w.through, 3));

/** The tenants lab's checks of the live cluster, from step 1 on. */
export const TENANTS_LIVE_CHECKS: Check<TenantsWorld>[] = [
    clusterAnswers(1),
    live(1, "live ApplicationSet tenants: git files generator tenants/*.yaml at main, RollingSync in 4 steps a, b, c, d", async (c, w) => {
        const s = await c.getApplicationSet(TENANTS_APPSET);
        if (!s)
            return {
                ok: false,
                expected: `ApplicationSet ${ARGOCD_NAMESPACE}/${TENANTS_APPSET}`,
                found: `no ApplicationSet ${TENANTS_APPSET} in ${ARGOCD_NAMESPACE}`,
                hint: await missingAppSetHint(c, TENANTS_APPSET, w.layout.appsetFile, { lab: "shop", appset: "shop" }),
            };
        // each step's whole selection (key, operator, values): an operator Argo CD does not read ("in") selects nothing
        const specSteps = s?.spec?.strategy?.rollingSync?.steps ?? [];
        const written = specSteps.map((x) =>
            (x.matchExpressions ?? []).map((e) => `${e.key} ${e.operator} ${(e.values ?? []).join(",")}`).join(" and "),
        );
        // steps written another way that select the same tenants, one a step in order (a NotIn for the last): the same rollout
        const selects = specSteps.map((x) => TENANTS.filter((t) => stepSelects(x, { [TENANT_LABEL]: t })).join(","));
        const steps =
            selects.length === TENANTS.length && selects.every((sel, i) => sel === TENANTS[i])
                ? TENANTS.map((t) => `${TENANT_LABEL} In ${t}`)
                : written;
        // the template's path names each tenant's release from its file ({{release}}, or {{.release}} with goTemplate)
        const path = s?.spec?.template?.spec?.source?.path;
        const templated = "releases/{{release}}";
        const outcome = eq(
            {
                files: "tenants/*.yaml",
                revision: "main",
                strategy: "RollingSync",
                steps: TENANTS.map((t) => `${TENANT_LABEL} In ${t}`),
                path: templated,
            },
            {
                files: s?.spec?.generators?.[0]?.git?.files?.[0]?.path,
                revision: s?.spec?.generators?.[0]?.git?.revision,
                strategy: s?.spec?.strategy?.type,
                steps,
                // {{.release}} is Go's template (goTemplate: true), {{release}} fasttemplate's: each works only in its own
                path:
                    typeof path === "string" &&
                    (s?.spec?.goTemplate === true ? /^releases\/\{\{-?\s*\.release\s*-?\}\}$/ : /^releases\/\{\{\s*release\s*\}\}$/).test(
                        path,
                    )
                        ? templated
                        : path,
            },
        );
        const apply = `put it back as the lab wrote it (${w.layout.appsetFile}): kubectl apply -f ${w.layout.appsetFile}`;
        // a release patched into the live template: every tenant then runs it, whatever its file says
        if (!outcome.ok && typeof path === "string" && path !== templated && /^releases\/[^{}]+$/.test(path)) {
            // tenants synced at it already: put back, their entries stay Healthy and RollingSync passes them over
            const synced: string[] = [];
            for (const t of TENANTS) {
                const a = await c.getApplication(t);
                if (a?.spec?.source?.path === path && a?.status?.sync?.status === "Synced") synced.push(t);
            }
            const after = synced.length
                ? `; ${synced.join(", ")} synced at it already: once it is put back, RollingSync passes ${synced.length === 1 ? "it" : "them"} over (an entry Healthy with no sync of its own), and the lab is to be started again (${startAgainAt(w.layout.root, { lab: "tenants", through: 1 })})`
                : "";
            return {
                ...outcome,
                hint: `the live ApplicationSet's template path is ${path}, set in the cluster by hand: a release comes from each tenant's file in Git (the template's path is releases/{{release}}); ${apply}${after}`,
            };
        }
        // the generator pointed at another branch or files in the cluster (a fix branch): the lab's reads main's tenants/*.yaml
        const gen = s?.spec?.generators?.[0]?.git;
        if (!outcome.ok && (gen?.revision !== "main" || gen?.files?.[0]?.path !== "tenants/*.yaml"))
            return {
                ...outcome,
                hint: `the live ApplicationSet's git generator reads ${gen?.files?.[0]?.path ?? "no files"} at ${gen?.revision ?? "no revision"}, changed in the cluster: the lab's reads tenants/*.yaml at main (a fix goes to main, as a commit); ${apply}`,
            };
        // the strategy taken out (to unblock the stall): every tenant syncs on its own, the faulty release everywhere
        if (!outcome.ok && s?.spec?.strategy?.type !== "RollingSync")
            return {
                ...outcome,
                hint: `the live ApplicationSet has no RollingSync strategy (taken out in the cluster?): without it nothing holds the tenants back, and each one syncs the faulty release on its own (its hook failing as mandant-b's); the rollout's way out is step 3's fixed release; ${apply}`,
            };
        // a step removed (or added) in the cluster: the rollout the lab grades has the four; a tenant no step selects is
        // dropped from it, tenants merged into one step sync together (each failing its own hook at the faulty release)
        if (!outcome.ok && steps.length !== TENANTS.length) {
            const specSteps = s?.spec?.strategy?.rollingSync?.steps ?? [];
            const stepOf = (t: Tenant) => specSteps.findIndex((x) => stepSelects(x, { [TENANT_LABEL]: t }));
            const dropped = TENANTS.filter((t) => stepOf(t) < 0);
            const shared = TENANTS.filter((t) => !dropped.includes(t) && TENANTS.some((u) => u !== t && stepOf(u) === stepOf(t)));
            const what = dropped.length
                ? `a step taken out does not unblock a rollout, it drops its tenant from it (${dropped.join(", ")} in no step now)`
                : shared.length
                  ? `steps merged into one do not unblock a rollout: ${shared.join(", ")} now share a step and sync together, each failing its own hook at the faulty release`
                  : "a step added does not unblock a rollout";
            return {
                ...outcome,
                hint: `the live ApplicationSet has ${steps.length} step${steps.length === 1 ? "" : "s"} (${steps.join("; ") || "none"}), not one for each of the four tenants: ${what}; ${apply}`,
            };
        }
        // the four steps in another order: the rollout the lab grades blocks at mandant-b's step 2
        const want = TENANTS.map((t) => `${TENANT_LABEL} In ${t}`);
        if (!outcome.ok && steps.join("|") !== want.join("|") && [...steps].sort().join("|") === [...want].sort().join("|"))
            return {
                ...outcome,
                hint: `the live ApplicationSet's steps are in another order (${steps.map((x) => x.split(" ").pop()).join(", ")}): the lab's rollout goes a, b, c, d, one tenant a step, and a reordered one does not unblock, it only moves who waits; ${apply}`,
            };
        const invalid = (s?.spec?.strategy?.rollingSync?.steps ?? []).findIndex((x) =>
            (x.matchExpressions ?? []).some((e) => !["In", "NotIn"].includes(e.operator)),
        );
        return !outcome.ok && invalid >= 0
            ? {
                  ...outcome,
                  hint: `step ${invalid + 1}'s operator is not one RollingSync reads (In or NotIn, as written: case matters), so the step selects no tenant: put it back as the lab wrote it (${w.layout.appsetFile}), kubectl apply -f ${w.layout.appsetFile}`,
              }
            : outcome;
    }),
    // the rollout as the step graded leaves it: the first one complete (1), held at step 2 (2), complete again (3)
    live(
        graded,
        (w) =>
            w.through >= 3
                ? `live rollout complete: the lab's ${TENANTS.length} tenants Healthy in status.applicationStatus`
                : w.through >= 2
                  ? "live rollout at step 2 (RolloutProgressing)"
                  : "live rollout complete",
        async (c, w) => {
            const s = await c.getApplicationSet(TENANTS_APPSET);
            const cond = (s?.status?.conditions ?? []).find((x) => x.type === "RolloutProgressing");
            const want = w.through === 2 ? "ApplicationSet is performing rollout of step 2" : "ApplicationSet Rollout has completed";
            // at step 3 the lab's tenants' entries too (an Application onboarded later, which no step selects, is not the lab's)
            const entries = (s?.status?.applicationStatus ?? []).filter((e) => (TENANTS as readonly string[]).includes(e.application));
            const unhealthy = w.through >= 3 ? TENANTS.filter((t) => entries.find((e) => e.application === t)?.status !== "Healthy") : [];
            const outcome = unhealthy.length
                ? eq({ condition: want, unhealthy: [] }, { condition: cond?.message, unhealthy })
                : eq(want, cond?.message);
            if (outcome.ok) return outcome;
            // a rollout held by a path the repository cannot give says so, not the stall's hint
            const paths: Record<string, unknown> = {};
            for (const t of TENANTS) paths[t] = { path: (await c.getApplication(t))?.spec?.source?.path };
            const hint = pathHint(paths);
            // graded at step 1 while main holds step 2's release already (pushed by hand, or by the solver stopped after its
            // push): the rollout of it is under way; step 1's is behind, and step 2 is what to grade
            if (!("hint" in hint) && w.through === 1 && w.main) {
                const at = await releasesAt(w, w.main);
                if (TENANTS.every((t) => at[t] === RELEASES.faulty))
                    return {
                        ...outcome,
                        hint: `main holds release ${RELEASES.faulty} for every tenant already (step 2's push, ${w.main.slice(0, 12)}), and its rollout is under way: step 1's rollout is behind it; write stall.json once the rollout is stuck, then verify --lab tenants --step 2 grades it`,
                    };
            }
            // graded at step 3 with the fix on main and no Application at it: the ApplicationSet has not read the push
            if (!("hint" in hint) && w.through >= 3 && w.main) {
                const at = await releasesAt(w, w.main);
                const path = (t: string) => (paths[t] as { path?: unknown }).path;
                if (TENANTS.every((t) => at[t] === RELEASES.fixed && path(t) !== `releases/${RELEASES.fixed}`))
                    return {
                        ...outcome,
                        hint: `main sets ${RELEASES.fixed} for every tenant (${w.main.slice(0, 12)}), but no Application reads releases/${RELEASES.fixed} yet: the ApplicationSet has not read the push (it reads Git again every 3 minutes); refresh it: kubectl -n argocd annotate applicationset ${TENANTS_APPSET} argocd.argoproj.io/application-set-refresh=true --overwrite`,
                    };
            }
            // graded at step 3 while the fix's rollout is still under way: recovery.json is written once it completes
            const under = /performing rollout of step (\d+)/.exec(cond?.message ?? "");
            if (!("hint" in hint) && w.through >= 3 && under)
                return {
                    ...outcome,
                    hint: `the rollout is still under way (step ${under[1]} of ${TENANTS.length}): wait until RolloutProgressing says "ApplicationSet Rollout has completed", then write recovery.json (its times are the ApplicationSet's); if it does not move on, gitops-lab doctor says what step ${under[1]} waits for`,
                };
            if ("hint" in hint || w.through !== 2) return { ...outcome, ...hint };
            // graded right after the push: the rollout has not reached the blocked step yet
            if (under && Number(under[1]) < 2)
                return {
                    ...outcome,
                    hint: `the rollout of the push is at step ${under[1]} of ${TENANTS.length}, not at the stall yet: wait until RolloutProgressing says "ApplicationSet is performing rollout of step 2" and mandant-b's sync has failed (gitops-lab doctor names it), then grade again`,
                };
            // the stall healed by hand (mandant-b's faulty release synced after all): the cluster no longer shows what stall.json says;
            // read from the sync's own revision (an earlier sync's Succeeded is not the faulty release's)
            const b = await c.getApplication("mandant-b");
            const op = b?.status?.operationState;
            // the release synced is the path's (releases/<release>), the commit's tenant file only where the path says none
            const byPath = /^releases\/([^/]+)\/?$/.exec(op?.syncResult?.source?.path ?? "")?.[1];
            const synced =
                op?.phase !== "Succeeded" || !op.syncResult?.revision
                    ? undefined
                    : (byPath ?? (await releasesAt(w, op.syncResult.revision).catch(() => null))?.["mandant-b"]);
            const past = under ? Number(under[1]) > 2 : /Rollout has completed/.test(cond?.message ?? "");
            if (!past || !synced) return outcome;
            // a release other than the faulty one is a rollback only once the stall's push reached main, main itself sets mandant-b
            // back (not to the fix), and the ApplicationSet has read it (mandant-b tracks it): right after the push, step 1's
            // sync is still mandant-b's last, and no rollback
            if (synced !== RELEASES.faulty) {
                const atMain = w.main ? await releasesAt(w, w.main) : {};
                const rolledBack =
                    Object.values(atMain).includes(RELEASES.faulty) &&
                    atMain["mandant-b"] === synced &&
                    synced !== RELEASES.fixed &&
                    b?.spec?.source?.path === `releases/${synced}`;
                if (!rolledBack) return outcome;
            }
            const after = `so the rollout went on and the cluster no longer shows the stall stall.json describes; the lab's way out of the stall is step 3's fixed release (${RELEASES.fixed}) in one commit: verify --lab tenants --step 3 grades it`;
            return {
                ...outcome,
                hint:
                    synced === RELEASES.faulty
                        ? `mandant-b's sync of ${RELEASES.faulty} succeeded after all (healed by hand?), ${after}`
                        : `mandant-b was synced at release ${synced} after its sync of ${RELEASES.faulty} failed (a rollback of mandant-b), ${after}, not a rollback of one tenant`,
            };
        },
    ),
    live(
        graded,
        (w) => `live Applications track ${expectedPath(w.through, "")} with automated.enabled: false and label ${TENANT_LABEL}`,
        async (c, w) => {
            const found: Record<string, unknown> = {};
            const want: Record<string, unknown> = {};
            for (const t of TENANTS) {
                const a = await c.getApplication(t);
                want[t] = { path: expectedPath(w.through, t), automated: false, label: t };
                found[t] = {
                    path: a?.spec?.source?.path,
                    automated: a?.spec?.syncPolicy?.automated?.enabled,
                    label: a?.metadata?.labels?.[TENANT_LABEL],
                };
            }
            const outcome = eq(want, found);
            if (outcome.ok || "hint" in pathHint(found)) return outcome.ok ? outcome : { ...outcome, ...pathHint(found) };
            // the template's label changed in the cluster (a key's case, a typo): the steps select by it, and select none now
            const unlabelled = TENANTS.filter((t) => (found[t] as { label?: unknown }).label !== t);
            if (unlabelled.length === TENANTS.length) {
                const has = Object.keys((await c.getApplication(TENANTS[0]))?.metadata?.labels ?? {}).join(", ") || "none";
                return {
                    ...outcome,
                    hint: `the Applications lack the label ${TENANT_LABEL} the RollingSync steps select by (${TENANTS[0]} has ${has}): the ApplicationSet's template labels were changed in the cluster; put it back as the lab wrote it: kubectl apply -f ${w.layout.appsetFile}`,
                };
            }
            // the change committed in the clone of the git daemon, which is read-only: its push was refused, main never moved
            const served = w.servedClone?.repo.exists() ? await w.servedClone.repo.branch("main") : null;
            if (served && served !== w.main && !(await w.repo.isCommit(served))) {
                // a file there that is no YAML: no hint from it
                const there = await releasesAt({ ...w, repo: w.servedClone!.repo }, served).catch(
                    () => ({}) as Record<string, string | null>,
                );
                if (
                    TENANTS.some(
                        (t) =>
                            `releases/${there[t]}` === expectedPath(w.through, t) &&
                            found[t] &&
                            (found[t] as { path?: unknown }).path !== expectedPath(w.through, t),
                    )
                )
                    return {
                        ...outcome,
                        hint: `your commit is in ${w.servedClone!.dir}, a clone of the git daemon, which is read-only (its push was refused: "access denied or repository not exported"); main is where it was: make the change in the lab's clone (${w.layout.clone}) and push from there`,
                    };
            }
            // the Applications behind main (the ApplicationSet has not read the push): the Applications' refresh key on it
            const set = await c.getApplicationSet(TENANTS_APPSET);
            // a second file for one tenant (tenants/mandant-a.orig.yaml: every tenants/*.yaml is a tenant): two of one name
            const twice = (set?.status?.conditions ?? [])
                .filter((x) => x.type === "ErrorOccurred" && x.status === "True")
                .map((x) => /duplicate name: (\S+)/.exec(x.message ?? "")?.[1])
                .find(Boolean);
            if (twice)
                return {
                    ...outcome,
                    hint: `the ApplicationSet makes two Applications named ${twice} ("contains applications with duplicate name"): every tenants/*.yaml file is a tenant, and a second file names ${twice} again (a copy, tenants/${twice}.orig.yaml?); it updates neither: remove the extra file in a new commit and push`,
                };
            // only where main names the graded release already: a tenant behind main, not a push not made
            const onMain = set?.metadata?.annotations?.[REFRESH_ANNOTATION] !== undefined && w.main ? await releasesAt(w, w.main) : {};
            const behindMain = TENANTS.filter(
                (t) =>
                    (found[t] as { path?: unknown }).path !== expectedPath(w.through, t) &&
                    `releases/${onMain[t]}` === expectedPath(w.through, t),
            );
            if (behindMain.length)
                return {
                    ...outcome,
                    hint: `the ApplicationSet carries ${REFRESH_ANNOTATION}, the Applications' key, which the ApplicationSet controller does not read: its own is ${APPSET_REFRESH_ANNOTATION}=true (kubectl -n argocd annotate applicationset ${TENANTS_APPSET} ${APPSET_REFRESH_ANNOTATION}=true --overwrite)`,
                };
            return outcome;
        },
    ),
    live(graded, "live: each site runs the release the graded step leaves it at", async (c, w) => {
        const found: Record<string, unknown> = {};
        for (const t of TENANTS)
            found[t] = (await c.getWorkload("Deployment", t, "site"))?.spec?.template?.metadata?.labels?.[RELEASE_LABEL] ?? null;
        const outcome = eq(expectedRunning(w.through, racedAhead(w)), found);
        if (outcome.ok) return outcome;
        // the ApplicationSet made again after the stall (deleted, then applied): its Applications, and their sites, went
        // with it, and the rollout began again
        const s = obj(w, "stall");
        const set = await c.getApplicationSet(TENANTS_APPSET);
        const made = Date.parse(String(set?.metadata?.creationTimestamp ?? ""));
        if (
            TENANTS.some((t) => found[t] === null) &&
            isSha(s?.commit) &&
            (await w.repo.isCommit(s.commit)) &&
            made > (await w.repo.committedAt(s.commit))
        )
            return {
                ...outcome,
                hint: `the ApplicationSet ${TENANTS_APPSET} was made again after stall.commit (at ${set?.metadata?.creationTimestamp}: deleted, then applied?), and its Applications went with it, their sites deleted by Argo CD's finalizer; its rollout began again from step 1, so the sites of the stall are gone: start the lab again (${startAgainAt(w.layout.root, { lab: "tenants", through: 1 })})`,
            };
        // a tenant's namespace deleted (by hand): its site and the settings the lab made there (not Git's) went with it; a
        // sync makes the namespace again (CreateNamespace), not the settings, and its hook's Pod waits for them
        for (const t of TENANTS.filter((x) => found[x] === null)) {
            const ns = await c.getNamespace(t);
            if (ns && (await c.getConfigMap(t, TENANT_SETTINGS))) {
                // its Application deleted (Argo CD's finalizer takes the site with it) and made again by the ApplicationSet
                const app = await c.getApplication(t);
                if (app?.status?.health?.status === "Missing")
                    return {
                        ...outcome,
                        hint: `${t} runs nothing: its site is gone while its Application is there, health Missing (its Deployment deleted by hand, or the Application deleted, whose resources Argo CD's finalizer deletes, and made again by the ApplicationSet); neither retries a sync, and under RollingSync its site comes back only with a sync that gets past its hook: ${t === "mandant-b" && w.through === 2 ? `step 3's fixed release does; to grade step 2 as the stall left it, start the lab again (${startAgainAt(w.layout.root, { lab: "tenants", through: 1 })})` : `gitops-lab doctor says where its sync stands`}`,
                    };
                continue;
            }
            return {
                ...outcome,
                hint: `${t} runs nothing: ${ns ? `its settings (ConfigMap ${t}/${TENANT_SETTINGS}) are gone` : `its namespace ${t} is gone, and with it its settings (ConfigMap ${TENANT_SETTINGS})`} (the namespace deleted by hand?), which the lab made, not Git, so no sync brings them back (its hook's Pod waits for them): start the lab again (${startAgainAt(w.layout.root, { lab: "tenants", through: Math.max(1, graded(w) - 1) })})`,
            };
        }
        // a tenant RollingSync passed over (the silent skip): its entry Healthy, its site never synced to the new release
        // (a site that runs: one with none is said above; a skip that runs what it should is none to mend)
        const skipped = (await skippedTenants(c)).filter((k) => found[k.application] !== null && k.runs !== k.shouldRun);
        if (skipped.length)
            return {
                ...outcome,
                hint: `${skipped.map((k) => `${k.application} (step ${k.step})`).join(", ")} ${skipped.length === 1 ? "was" : "were"} skipped by RollingSync: ${skipped.map((k) => `${k.application} runs ${k.runs}, not ${k.shouldRun}`).join("; ")}, though ${skipped.length === 1 ? "its entry is" : "their entries are"} Healthy (compared at the new commit before the ApplicationSet wrote the new path: the Applications refreshed after a push, not the ApplicationSet); nothing syncs ${skipped.length === 1 ? "it" : "them"} but the next commit or a sync by hand: ${skipped.map((k) => `kubectl -n argocd patch application ${k.application} --type merge -p '{"operation":{"initiatedBy":{"username":"learner"},"sync":{}}}'`).join("; ")}, then read what each site runs again`,
            };

        return outcome;
    }),
    live(
        2,
        `live: the tenants after the blocked one that stall.json has racing ahead, and only those, were synced to releases/${RELEASES.faulty} at stall.commit (their Applications' history)`,
        async (c, w) => {
            const s = obj(w, "stall");
            if (!s || !isSha(s.commit)) return null;
            const want: Record<string, boolean> = {};
            const found: Record<string, boolean> = {};
            for (const t of AFTER_BLOCKED) {
                const history = (await c.getApplication(t))?.status?.history ?? [];
                want[t] = racedAhead(w).includes(t);
                found[t] = history.some((h) => h?.revision === s.commit && h?.source?.path === `releases/${RELEASES.faulty}`);
            }
            return eq(want, found);
        },
    ),
    live(2, "live mandant-b's sync of 1.2.0 failed on its hook (given up, or waiting for a retry)", async (c, w) => {
        if (w.through !== 2) return null;
        const op = (await c.getApplication("mandant-b"))?.status?.operationState;
        const failing = op?.phase === "Failed" || (op?.phase === "Running" && Number(op?.retryCount ?? 0) >= 1);
        return {
            ok: failing,
            expected: "operationState Failed, or Running with retryCount >= 1",
            found: `${op?.phase ?? "no operation"}${op?.retryCount ? ` (retry ${op.retryCount})` : ""}: ${op?.message ?? ""}`,
        };
    }),
    // the times written by hand (all the same, or the commit's) while the ApplicationSet keeps its own: compared
    live(3, "live: recovery.order's healthy_at are when the ApplicationSet marked each tenant Healthy (within 10 s)", async (c, w) => {
        const r = obj(w, "recovery");
        if (w.through < 3 || !r || !Array.isArray(r.order)) return null;
        const entries = (await c.getApplicationSet(TENANTS_APPSET))?.status?.applicationStatus ?? [];
        // the entries of the fix's rollout alone: a later commit (a README pushed after the lab) has a rollout of its own
        if (!entries.every((e) => (e.targetRevisions ?? []).includes(String(r.commit)))) {
            // a side branch's commit merged into main (git merge --no-ff): the rollout ran the merge, which is main's own
            const rev = entries[0]?.targetRevisions?.[0];
            if (!isSha(r.commit) || !isSha(rev) || !(await w.repo.isAncestor(r.commit, rev).catch(() => false))) return null;
            const line: string[] = [];
            for (let at: string | undefined = rev; at && line.length < 50; at = (await w.repo.parents(at))[0]) line.push(at);
            if (line.includes(r.commit)) return null;
            return {
                ok: false,
                expected: `recovery.commit on main's own line (the revision the rollout ran: ${rev.slice(0, 12)})`,
                found: `${r.commit.slice(0, 12)}, a side branch's commit merged into main`,
                hint: `recovery.commit ${r.commit.slice(0, 12)} is a side branch's commit that a merge brought into main; the rollout ran the merge, ${rev.slice(0, 12)} (the Applications' revision), and its times are that rollout's: write ${rev} as recovery.commit`,
            };
        }
        // every entry made anew, Healthy at once (the strategy taken out and put back clears them): the fix's times are gone
        // from the cluster, and the files' are graded offline alone (after recovery.commit, before now, in step order)
        // (every entry at one instant, later than every time of the file's: a tenant synced by hand, or a spec change,
        // makes one such entry, not all four at once)
        const times = entries.map((e) => Date.parse(String(e.lastTransitionTime)));
        const madeAnew =
            entries.length > 0 &&
            entries.every((e) => e.message === SYNCED_HEALTHY_MESSAGE) &&
            Math.max(...times) - Math.min(...times) <= 1000 &&
            (r.order as { healthy_at?: unknown }[]).every((o) => Date.parse(String(o?.healthy_at)) < Math.min(...times));
        if (madeAnew) return null;
        const off: string[] = [];
        const offAt: number[] = [];
        let early = 0;
        for (const o of r.order as { application?: unknown; healthy_at?: unknown }[]) {
            const e = entries.find((x) => x.application === o?.application);
            const [file, at] = [Date.parse(String(o?.healthy_at)), Date.parse(String(e?.lastTransitionTime))];
            // a tenant not Healthy, or a time that is no time: the rollout's and the order's checks say so
            if (e?.status !== "Healthy" || !Number.isFinite(file) || !Number.isFinite(at)) return null;
            // (copied, or rounded to the second, it is within a second; ten allow a time read off a watch by eye)
            if (Math.abs(file - at) > 10_000) {
                off.push(`${String(o.application)} ${String(o.healthy_at)} (the ApplicationSet's: ${e.lastTransitionTime})`);
                offAt.push(file);
                if (file < at) early++;
            }
        }
        if (!off.length) return true;
        const status = `kubectl -n argocd get applicationset ${TENANTS_APPSET} -o jsonpath='{.status.applicationStatus}'`;
        // read before the fix's rollout (the times then there were the stall's rollout's): said as such
        const made = isSha(r.commit) ? await madeAt(w, r.commit).catch(() => NaN) : NaN;
        // (within the offline check's five minutes of skew: further before, that check says they precede the commit)
        const before = early === off.length && offAt.every((t) => t < made && t >= made - 300_000);
        return {
            ok: false,
            expected: "each healthy_at within 10 s of its entry's lastTransitionTime",
            found: off.join("; "),
            hint: before
                ? `these healthy_at are before recovery.commit was made (${new Date(made).toISOString()}): read before the fix's rollout ran, they are an earlier rollout's; read each entry's lastTransitionTime again once the rollout of recovery.commit is complete (${status})`
                : `healthy_at is when the ApplicationSet marked the tenant Healthy, its entry's lastTransitionTime (${status}): read each there, not from the clock`,
        };
    }),
];

/** The tenants RollingSync passed over (the silent skip), as the rollout doctor reads them: entry Healthy, never synced to its spec. */
export async function skippedTenants(c: ClusterPort): Promise<Skipped[]> {
    const entries = (await c.getApplicationSet(TENANTS_APPSET))?.status?.applicationStatus ?? [];
    const out: Skipped[] = [];
    for (const e of entries) {
        if (e.status !== "Healthy" || e.step === undefined) continue;
        const app = await c.getApplication(e.application);
        if (app) out.push(...skippedBy(app, Number(e.step)));
    }
    return out;
}

/**
 * When a tenant's Application tracks what the repository cannot give: a path the generator left
 * unresolved (its tenant file lacks the release key, a typo) or a release the repository does not ship.
 */
function pathHint(found: Record<string, unknown>): { hint: string } | Record<string, never> {
    const paths = Object.entries(found).map(([t, f]) => [t, String((f as { path?: unknown })?.path ?? "")] as const);
    const unresolved = paths.filter(([, p]) => p.includes("{{"));
    if (unresolved.length)
        return {
            hint: `${unresolved.map(([t, p]) => `${t} tracks ${p}`).join(", ")}: the generator found no release key in ${unresolved.map(([t]) => tenantPath(t as Tenant)).join(", ")} (a typo?); write release: "<version>" there and push`,
        };
    const shipped: string[] = Object.values(RELEASES);
    const unknown = paths.filter(([, p]) => /^releases\//.test(p) && !shipped.includes(p.slice("releases/".length)));
    if (unknown.length)
        return {
            hint: `${unknown.map(([t, p]) => `${t} tracks ${p}`).join(", ")}, which the repository does not ship (its releases: ${shipped.join(", ")}): set a release that exists and push`,
        };
    return {};
}
