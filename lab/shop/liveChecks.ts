/**
 * The shop lab's live checks: the cluster, graded against what each step leaves (nothing of the lab is
 * in it before step 2).
 */
import { isDeepStrictEqual } from "util";
import { Check, eq } from "../grader/grader";
import { clusterAnswers, liveCheck, missingAppSetHint } from "../grader/live";
import { isSha } from "../grader/resultFiles";
import { ClusterPort } from "../ports/cluster";
import { obj, PATCH_AGAIN, pinStep, putBack, releaseNotAtPin, ShopWorld, wantProd } from "./world";
import { renderShopConfigAt, rendersAlike } from "./render";
import { listElementsOf, destinationServer, readAppsetFile, sameRepo, withoutDefaults } from "./appsetFile";
import type { ApplicationSet } from "../argo/types";

const live = liveCheck<ShopWorld>;
const cmValue = async (c: ClusterPort, ns: string, key: string) => (await c.getConfigMap(ns, "shop-config"))?.data?.[key];
/** shop-prod's FEATURE_CHECKOUT_V2 at a step: on from the incident, off once pinned, on again once promoted (early too). */
const prodFeature = (w: ShopWorld) =>
    w.through >= 6 || (w.through >= 4 && w.promoted) ? "on" : w.through >= 4 ? "off" : w.through >= 3 ? "on" : "off";

/**
 * shop-prod's latest sync made the ConfigMap: it was deleted (by hand, or with its Application) since
 * step 2's sync, the only one that creates it; every later one (the pin, selfHeal's repair) configures
 * it. Seen until shop-prod's next sync (step 6 for a learner grading step 5).
 */
async function madeByLatestSync(c: ClusterPort): Promise<{ at: string; message: string } | undefined> {
    const op = (await c.getApplication("shop-prod"))?.status?.operationState;
    const made = (op?.syncResult?.resources ?? []).find(
        (r) => r.kind === "ConfigMap" && r.name === "shop-config" && / created$/.test(r.message ?? ""),
    );
    return made ? { at: op?.finishedAt ?? op?.startedAt ?? "", message: made.message ?? "" } : undefined;
}

/**
 * An Application whose sync the API server refuses because shop-config is immutable (immutable: true, then its data
 * changed: ValidateConfigMapUpdate's Forbidden): what to do, or undefined.
 */
async function immutableRefused(c: ClusterPort, app: string): Promise<string | undefined> {
    const a = await c.getApplication(app);
    const said = [a?.status?.operationState?.message, ...(a?.status?.conditions ?? []).map((x) => x.message)];
    if (!said.some((m) => String(m ?? "").includes("field is immutable when `immutable` is set"))) return undefined;
    return `${app}'s sync is refused by the API server: shop-config was made with immutable: true, and an immutable ConfigMap's data never changes ("field is immutable when \`immutable\` is set"), while the lab's steps change it (the incident, the drift); take immutable out of base/configmap.yaml in a new commit and push it, then delete the live one (kubectl -n ${app} delete configmap shop-config) and sync ${app}, which makes it anew: kubectl -n argocd patch application ${app} --type merge -p '{"operation":{"initiatedBy":{"username":"learner"},"sync":{}}}'`;
}

const SHOP_CONFIG_UID = "kubectl get configmap shop-config -n shop-prod -o jsonpath={.metadata.uid}";
type Read = (c: ClusterPort) => Promise<{ metadata?: { uid?: string } } | null | undefined>;
/** Objects whose uid a learner copies for the ConfigMap's, each with what to say. */
const UID_OWNERS: [Read, string][] = [
    // the namespace: the first uid kubectl shows
    [(c) => c.getNamespace("shop-prod"), `drift.uid is the namespace shop-prod's uid, not the ConfigMap's: ${SHOP_CONFIG_UID}`],
    // the namespace's other ConfigMap, listed first by kubectl get cm (-o jsonpath={.items[0]...})
    [
        (c) => c.getConfigMap("shop-prod", "kube-root-ca.crt"),
        `drift.uid is ConfigMap kube-root-ca.crt's (the namespace's CA bundle, which kubectl lists first), not shop-config's: ${SHOP_CONFIG_UID}`,
    ],
    // the other environment's ConfigMap: the drift test is on prod's
    [
        (c) => c.getConfigMap("shop-dev", "shop-config"),
        `drift.uid is shop-dev's ConfigMap's uid: the drift test is on shop-prod's (${SHOP_CONFIG_UID}), and so is its patch and the time selfHeal takes`,
    ],
    // the Applications (kubectl -n argocd get app shop-prod -o yaml shows a uid too)
    ...(["shop-prod", "shop-dev"] as const).map(
        (name) =>
            [
                (c: ClusterPort) => c.getApplication(name),
                `drift.uid is the Application ${name}'s uid (in argocd), not the ConfigMap's it deploys: ${SHOP_CONFIG_UID}`,
            ] as [Read, string],
    ),
];

/** The list elements appset.yaml holds, or undefined when it is missing or not YAML. */
const fileElements = (file: string): unknown => listElementsOf(fileSet(file));

/** appset.yaml's ApplicationSet, or undefined when it is missing or not YAML. */
function fileSet(file: string): Partial<ApplicationSet> | undefined {
    try {
        return readAppsetFile(file).set ?? undefined;
    } catch {
        return undefined; // no such file
    }
}

/**
 * The first field of the template, of those the lab's steps read, where the live ApplicationSet and the
 * file differ (each as JSON; "unset" when absent); undefined when they agree or there is no file to compare.
 */
function templateDifference(
    live: Partial<ApplicationSet>,
    file: Partial<ApplicationSet> | undefined,
): { field: string; live: string; file: string } | undefined {
    if (!file?.spec?.template) return undefined;
    const fields: [string, (t: Partial<ApplicationSet>) => unknown][] = [
        ["metadata.name", (t) => t.spec?.template?.metadata?.name],
        ["spec.project", (t) => t.spec?.template?.spec?.project],
        ["spec.source.repoURL", (t) => t.spec?.template?.spec?.source?.repoURL],
        ["spec.source.targetRevision", (t) => t.spec?.template?.spec?.source?.targetRevision],
        ["spec.source.path", (t) => t.spec?.template?.spec?.source?.path],
        // read as the file's checks read them: the same cluster by name or URL, automated.enabled: true as left out
        ["spec.destination.server", (t) => destinationServer(t.spec?.template?.spec?.destination)],
        ["spec.destination.namespace", (t) => t.spec?.template?.spec?.destination?.namespace],
        ["spec.syncPolicy.automated", (t) => withoutDefaults(t.spec?.template?.spec?.syncPolicy?.automated)],
        ["spec.syncPolicy.syncOptions", (t) => t.spec?.template?.spec?.syncPolicy?.syncOptions],
        ["spec.ignoreDifferences", (t) => (t.spec?.template?.spec as { ignoreDifferences?: unknown } | undefined)?.ignoreDifferences],
        // not the template's: the ApplicationSet's own, which decides whether the template reaches the Applications
        ["(the ApplicationSet's) spec.syncPolicy.applicationsSync", (t) => t.spec?.syncPolicy?.applicationsSync],
    ];
    const show = (v: unknown) => (v === undefined ? "unset" : JSON.stringify(v));
    // a null is an absent field (an API server drops it from what it stores)
    const value = (v: unknown) => (v === null ? undefined : v);
    for (const [field, read] of fields) {
        const [l, f] = [value(read(live)), value(read(file))];
        if (!isDeepStrictEqual(l, f)) return { field, live: show(l), file: show(f) };
    }
    return undefined;
}

export function liveChecks(): Check<ShopWorld>[] {
    const checks: Check<ShopWorld>[] = [
        clusterAnswers(2),
        live(
            pinStep,
            (w) => `live ApplicationSet shop: dev=main, prod=${wantProd(w)}`,
            async (c, w) => {
                const want = [
                    { env: "dev", revision: "main" },
                    { env: "prod", revision: wantProd(w) },
                ];
                const set = await c.getApplicationSet("shop");
                if (!set)
                    return {
                        ok: false,
                        expected: want,
                        found: "no ApplicationSet shop in argocd",
                        hint: await missingAppSetHint(c, "shop", w.layout.appsetFile, { lab: "tenants", appset: "tenants" }),
                    };
                const outcome = eq(want, listElementsOf(set));
                if (outcome.ok) {
                    // the Applications another ApplicationSet made (one applied before, under another name): shop leaves them
                    const owner = (set.status?.conditions ?? [])
                        .filter((x) => x.type === "ErrorOccurred" && x.status === "True")
                        .map((x) => /already owned by another ApplicationSet controller (\S+)/.exec(x.message ?? "")?.[1])
                        .find(Boolean);
                    if (owner)
                        return {
                            ok: false,
                            expected: "shop's own Applications",
                            found: `shop-dev and shop-prod owned by ApplicationSet ${owner}`,
                            hint: `the Applications belong to ApplicationSet ${owner} (applied before, under another name?), and shop leaves another's Applications as they are: kubectl -n argocd delete applicationset ${owner} (its Applications go with it), then shop makes its own`,
                        };
                    // the elements are right: the template applied must be the file's too (selfHeal off in the cluster, on in the file)
                    const differs = templateDifference(set, fileSet(w.layout.appsetFile));
                    if (differs)
                        return {
                            ok: false,
                            expected: `the template of ${w.layout.appsetFile}`,
                            found: `${differs.field} ${differs.live} (the file: ${differs.file})`,
                            hint: `the cluster's ApplicationSet differs from ${w.layout.appsetFile} in its template: ${differs.field} is ${differs.live} there and ${differs.file} in the file; apply the file (kubectl apply -f ${w.layout.appsetFile}), or mend the file and apply it, so the two are one`,
                        };
                    // it says it cannot make or update its Applications (a destination with both name and server): its own words
                    const error = (set.status?.conditions ?? []).find((x) => x.type === "ErrorOccurred" && x.status === "True");
                    // (a project that does not exist has the template check's own hint, which names the field)
                    if (error?.message && !/references project \S+ which does not exist/.test(error.message))
                        return {
                            ok: false,
                            expected: "the ApplicationSet shop without an error",
                            found: `ErrorOccurred: ${error.message.split("\n")[0].slice(0, 200)}`,
                            hint: `the ApplicationSet shop says it cannot make or update its Applications ("${error.message.split("\n")[0].slice(0, 200)}"), so they stay as they were: fix ${w.layout.appsetFile}, then kubectl apply -f it (kubectl -n argocd get applicationset shop -o yaml shows its conditions)`,
                        };
                    return outcome;
                }
                if (!isDeepStrictEqual(fileElements(w.layout.appsetFile), want)) return outcome;
                // which element the cluster's lacks or has otherwise (a merge patch of the list replaces it whole)
                const listed = listElementsOf(set);
                const held = (Array.isArray(listed) ? listed : []) as ({ env?: unknown; revision?: unknown } | null)[];
                const gone = want.filter((e) => !held.some((h) => h?.env === e.env)).map((e) => e.env);
                const deleted = [];
                for (const e of gone) if (!(await c.getApplication(`shop-${e}`))) deleted.push(`shop-${e}`);
                const moved = want.flatMap((e) => {
                    const h = held.find((x) => x?.env === e.env);
                    return h && h.revision !== e.revision ? [`${e.env} on ${JSON.stringify(h.revision)}`] : [];
                });
                const says = [
                    ...(gone.length
                        ? [
                              `it has no ${gone.join(" or ")} element (a kubectl patch --type merge of the elements replaces the whole list)${deleted.length ? `, and the ApplicationSet deleted ${deleted.join(" and ")} with it` : ""}`,
                          ]
                        : []),
                    ...(moved.length ? [`it has ${moved.join(", ")}`] : []),
                ];
                return {
                    ...outcome,
                    hint: `${w.layout.appsetFile} is right, but the cluster's ApplicationSet is not what it says${says.length ? `: ${says.join("; ")}` : ""}; kubectl apply -f ${w.layout.appsetFile}`,
                };
            },
        ),
    ];
    for (const [app, want, step] of [
        ["shop-dev", () => "main", () => 2],
        ["shop-prod", wantProd, pinStep],
    ] as const) {
        checks.push(
            live(
                step,
                (w) => `live Application ${app} tracks ${want(w)} and is Synced`,
                async (c, w) => {
                    const a = await c.getApplication(app);
                    const outcome = eq(
                        { targetRevision: want(w), sync: "Synced" },
                        { targetRevision: a?.spec?.source?.targetRevision, sync: a?.status?.sync?.status },
                    );
                    if (outcome.ok) return outcome;
                    if (a) {
                        // Argo CD cannot compare it (a repository it cannot reach, a path that does not render): its own words
                        const cannot = (a.status?.conditions ?? []).find(
                            (x) => x.type === "ComparisonError" || x.type === "InvalidSpecError",
                        );
                        const repo = a.spec?.source?.repoURL;
                        let inFile: unknown;
                        try {
                            inFile = readAppsetFile(w.layout.appsetFile).set?.spec?.template?.spec?.source?.repoURL;
                        } catch {
                            inFile = undefined; // no file: the ApplicationSet's own checks say so
                        }
                        const wrongRepo = typeof inFile === "string" && repo !== undefined && repo !== inFile;
                        // the repository not reached (the git daemon down: a served lab's ended, its Pod not running): not the commit's error
                        const unreachable =
                            cannot &&
                            /connection refused|unable to connect|dial tcp|no such host|i\/o timeout|connection reset|could not read from remote/i.test(
                                String(cannot.message),
                            );
                        // (the lab's own repository: a host mistyped in both the file and the cluster is the template's to fix)
                        if (unreachable && !wrongRepo && sameRepo(repo))
                            return {
                                ...outcome,
                                hint: `Argo CD cannot reach the repository ${repo} (${cannot.type}: ${String(cannot.message).split("\n")[0].slice(0, 200)}): the git daemon that serves it does not answer (a served lab's log says when its daemon ended: run the same simulate command again; on a host, kubectl -n gitsrv get pods), then refresh: kubectl -n argocd annotate application ${app} argocd.argoproj.io/refresh=hard --overwrite`,
                            };
                        // its last sync failed and auto-sync tries that revision no more (a SyncError after its retries), though the
                        // cause is mended since (CreateNamespace=true applied after shop-dev's namespace was refused): a sync is to start
                        const immutable = await immutableRefused(c, app);
                        if (immutable) return { ...outcome, hint: immutable };
                        const op = a.status?.operationState;
                        const syncError = (a.status?.conditions ?? []).find((x) => x.type === "SyncError");
                        if (
                            !cannot &&
                            !wrongRepo &&
                            a.spec?.source?.targetRevision === want(w) &&
                            (op?.phase === "Failed" || op?.phase === "Error" || syncError)
                        )
                            return {
                                ...outcome,
                                hint: `${app}'s last sync ${
                                    op?.phase === "Failed" || op?.phase === "Error"
                                        ? `ended ${op.phase} (${String(op.message ?? "")
                                              .split("\n")[0]
                                              .slice(0, 200)})`
                                        : "failed"
                                }${syncError ? `, and automated sync tries that revision no more (SyncError: ${String(syncError.message).split("\n")[0].slice(0, 160)})` : ", and automated sync does not try a revision whose sync failed again"}; once the cause is mended (the template applied right), start a sync: kubectl -n argocd patch application ${app} --type merge -p '{"operation":{"initiatedBy":{"username":"learner"},"sync":{}}}' (or argocd app sync ${app})`,
                            };
                        // the error of an earlier commit (step 7's bad one) while the branch renders now: not compared again yet
                        const tip = want(w) === "main" ? w.main : w.releaseTip;
                        const dir = app === "shop-dev" ? "envs/dev" : "envs/prod";
                        if (
                            cannot &&
                            !wrongRepo &&
                            tip &&
                            (await renderShopConfigAt(w.repo, tip, dir, w.kubectl).then(
                                () => true,
                                () => false,
                            ))
                        )
                            return {
                                ...outcome,
                                hint: `Argo CD cannot compare ${app} (${cannot.type}: ${String(cannot.message).split("\n")[0]}), but ${want(w)} (${tip.slice(0, 12)}) renders ${dir} now: the error is an earlier commit's, which Argo CD has not compared again yet; refresh it: kubectl -n argocd annotate application ${app} argocd.argoproj.io/refresh=hard --overwrite`,
                            };
                        return cannot || wrongRepo
                            ? {
                                  ...outcome,
                                  hint: `${wrongRepo ? `${app} reads ${repo}, while ${w.layout.appsetFile} says ${inFile}; ` : ""}${cannot ? `Argo CD cannot compare ${app} (${cannot.type}: ${String(cannot.message).split("\n")[0]}); ` : ""}compare the cluster's ApplicationSet with ${w.layout.appsetFile} (kubectl -n argocd get applicationset shop -o yaml), fix it, then kubectl apply -f it`,
                              }
                            : outcome;
                    }
                    // not generated: the ApplicationSet says why (a project that does not exist, a duplicate name)
                    const error = (await c.getApplicationSet("shop"))?.status?.conditions?.find(
                        (x) => x.type === "ErrorOccurred" && x.status === "True",
                    );
                    if (!error?.message) {
                        // it makes Applications of other names (its template's name changed): named
                        const made = (await c.listApplications("argocd"))
                            .filter((x) => x.metadata?.ownerReferences?.some((o) => o.kind === "ApplicationSet" && o.name === "shop"))
                            .map((x) => x.metadata.name);
                        return made.length
                            ? {
                                  ...outcome,
                                  found: `no Application ${app}; the ApplicationSet shop makes ${made.join(", ")}`,
                                  hint: `the ApplicationSet shop makes ${made.join(" and ")}, not ${app}: its template's name is to be 'shop-{{env}}' (later steps and the grader read shop-dev and shop-prod); fix ${w.layout.appsetFile}, then kubectl apply -f it`,
                              }
                            : { ...outcome, found: `no Application ${app}` };
                    }
                    return {
                        ...outcome,
                        found: `no Application ${app}`,
                        hint: `the ApplicationSet shop generates no ${app}, and says why: "${error.message}": fix ${w.layout.appsetFile}, then kubectl apply -f it`,
                    };
                },
                // a later commit (step 7's bad one, a wrong revert) keeps it from syncing: that step's own checks say why
                { yieldsToLaterSteps: true },
            ),
        );
    }
    // a value check belongs to the latest step (up to the graded one) that decides the value
    const prod: Check<ShopWorld> = live(
        2,
        (w) => `live shop-prod FEATURE_CHECKOUT_V2 is ${prodFeature(w)}`,
        async (c, w) => {
            const outcome = eq(prodFeature(w), await cmValue(c, "shop-prod", "FEATURE_CHECKOUT_V2"));
            const immutable = outcome.ok ? undefined : await immutableRefused(c, "shop-prod");
            if (immutable) return { ...outcome, hint: immutable };
            // release/prod moved on (the promotion pushed) to a commit that renders the value, and shop-prod not synced there yet:
            // Argo CD has not seen the push (it polls every 3 minutes)
            if (!outcome.ok && (w.through >= 6 || w.promoted) && w.releaseTip) {
                const synced = (await c.getApplication("shop-prod"))?.status?.sync?.revision;
                const renders = await renderShopConfigAt(w.repo, w.releaseTip, "envs/prod", w.kubectl).catch(() => undefined);
                if (synced && synced !== w.releaseTip && renders?.FEATURE_CHECKOUT_V2 === prodFeature(w))
                    return {
                        ...outcome,
                        hint: `shop-prod is still at ${synced.slice(0, 12)}, while release/prod is at ${w.releaseTip.slice(0, 12)}, which renders it ${prodFeature(w)}: Argo CD has not seen the push yet (it polls every 3 minutes); refresh it: kubectl -n argocd annotate application shop-prod argocd.argoproj.io/refresh=normal --overwrite, then verify again`,
                    };
            }
            // pinned, but release/prod is not where pin.json says it starts (pushed at the incident, a force push refused)
            const start = obj(w, "pin")?.release_prod_initial;
            if (outcome.ok || w.through < 4 || w.through > 5 || !isSha(start) || !w.releaseTip || w.releaseTip === start) return outcome;
            return { ...outcome, hint: releaseNotAtPin(w.releaseTip, start) };
        },
    );
    const dev: Check<ShopWorld> = live(
        2,
        (w) => `live shop-dev FEATURE_CHECKOUT_V2 is ${w.through >= 3 ? "on" : "off"}`,
        async (c, w) => {
            const outcome = eq(w.through >= 3 ? "on" : "off", await cmValue(c, "shop-dev", "FEATURE_CHECKOUT_V2"));
            const immutable = outcome.ok ? undefined : await immutableRefused(c, "shop-dev");
            if (immutable) return { ...outcome, hint: immutable };
            // main's tip itself turns it off again (the incident reverted on main after it): no refresh brings it back
            if (outcome.ok || w.through < 3 || !w.main) return outcome;
            const atTip = await renderShopConfigAt(w.repo, w.main, "envs/dev", w.kubectl).catch(() => undefined);
            return atTip?.FEATURE_CHECKOUT_V2 === "off"
                ? {
                      ...outcome,
                      hint: `main's tip ${w.main.slice(0, 12)} renders dev's FEATURE_CHECKOUT_V2 off (the incident undone on main, a revert?): shop-dev follows main, so no refresh turns it on; the lab keeps the incident on main until step 7 (the pin moves prod alone): undo that change with a new commit on main, push, then refresh`,
                  }
                : outcome;
        },
    );
    checks.push({ ...prod, step: (w) => Math.max(2, Math.min(w.through, 6)) }, { ...dev, step: (w) => Math.min(w.through, 3) });
    checks.push(
        live(5, "live shop-prod ConfigMap uid is drift.uid, LOG_LEVEL warn", async (c, w) => {
            const d = obj(w, "drift");
            if (!d) return null;
            const cm = await c.getConfigMap("shop-prod", "shop-config");
            const outcome = eq({ uid: d.uid, LOG_LEVEL: "warn" }, { uid: cm?.metadata?.uid, LOG_LEVEL: cm?.data?.LOG_LEVEL });
            // a uid copied from another object: say whose it is
            if (!outcome.ok && cm && d.uid !== cm.metadata?.uid)
                for (const [read, whose] of UID_OWNERS) if (d.uid === (await read(c))?.metadata?.uid) return { ...outcome, hint: whose };
            const made = cm ? await madeByLatestSync(c) : undefined;
            if (!made) return outcome;
            if (outcome.ok)
                return {
                    ok: false,
                    expected: "the ConfigMap step 2 made, repaired in place by selfHeal",
                    found: `shop-prod's latest sync (${made.at}) answered "${made.message}": the ConfigMap was deleted and made again`,
                    hint: `the drift test edits the ConfigMap and times selfHeal's repair of the same object; a deleted one is made again, not repaired: ${PATCH_AGAIN}`,
                };
            // the drift was done, then the ConfigMap went (deleted, or with its Application) and was made again
            return {
                ...outcome,
                hint: `shop-prod's latest sync (${made.at}) made the ConfigMap again (it, or the Application shop-prod, was deleted): drift.uid names the one before; the drift is graded on the live one: ${PATCH_AGAIN}`,
            };
        }),
        // selfHeal's repair is a sync of the drifted resources alone; shop-prod's operation shows it until its next sync
        // (the promotion's): graded while the lab is at step 5, a drift.json with no drift behind it is found
        live(5, "live shop-prod's latest sync is selfHeal's repair of its ConfigMap (while the lab is at step 5)", async (c, w) => {
            // past step 5 (promote.json, or release/prod moved from the pin before it is written): a later sync is the latest
            const pinned = obj(w, "pin")?.release_prod_initial;
            if (!obj(w, "drift") || obj(w, "promote") || !isSha(pinned) || w.releaseTip !== pinned) return null;
            const app = await c.getApplication("shop-prod");
            const op = app?.status?.operationState;
            const repaired = (op?.operation?.sync?.resources ?? []).some((r) => r.kind === "ConfigMap" && r.name === "shop-config");
            if (repaired || (await madeByLatestSync(c))) return true; // a ConfigMap made again: the check above says so
            // release/prod moved on by a commit rendering as the one prod synced (Argo CD syncs nothing for it: the
            // Application stays Synced); a drift then finds that revision not yet synced, and auto-sync repairs it with a
            // sync of the whole Application at it: an automated sync at a revision rendering as the previous one's
            const [before, last] = (app?.status?.history ?? []).slice(-2);
            const revision = op?.operation?.sync?.revision;
            if (
                op?.phase === "Succeeded" &&
                op.operation?.initiatedBy?.automated &&
                revision === pinned &&
                // the ConfigMap changed by it (kubectl apply's "configured", not "unchanged"): the drift was its
                (op.syncResult?.resources ?? []).some(
                    (r) => r.kind === "ConfigMap" && r.name === "shop-config" && / configured$/.test(r.message ?? ""),
                ) &&
                isSha(before?.revision) &&
                last?.revision === revision &&
                before.revision !== revision &&
                (await rendersAlike(w.repo, before.revision, revision, "envs/prod", w.kubectl))
            )
                return true;
            // the drift patched into a key of another case (log_level): a key Git does not have is no drift to Argo CD
            const stray = Object.keys((await c.getConfigMap("shop-prod", "shop-config"))?.data ?? {}).filter(
                (k) => k !== "LOG_LEVEL" && k.toLowerCase() === "log_level",
            );
            return {
                ok: false,
                expected:
                    "a sync of ConfigMap shop-config alone, by selfHeal, since the pin (or auto-sync's of the whole Application at a revision rendering as the pin's, which changed the ConfigMap)",
                found: op ? `shop-prod's latest sync (${op.finishedAt ?? op.startedAt}) is of the whole Application` : "no sync",
                hint: stray.length
                    ? `shop-prod's shop-config holds ${stray.join(", ")} beside LOG_LEVEL: keys are case-sensitive, and a key Git does not have is no drift to Argo CD (it leaves it there, until you remove it: kubectl patch configmap shop-config -n shop-prod -p '{"data":{"${stray[0]}":null}}'); ${PATCH_AGAIN}`
                    : `shop-prod has synced no repair since the pin: no drift of its ConfigMap was repaired by selfHeal; ${PATCH_AGAIN}`,
            };
        }),
        live(3, "live shop-prod synced incident.commit (its history)", async (c, w) => {
            const commit = obj(w, "incident")?.commit;
            if (!isSha(commit)) return null;
            const app = await c.getApplication("shop-prod");
            const history = app?.status?.history ?? [];
            if (history.some((h) => h?.revision === commit)) return true;
            // the incident made again (back to off, then on, pushed together): Argo CD syncs nothing new when main renders as
            // prod runs, so an earlier commit of main that turned it on in prod is what prod synced
            // (or a later commit of main pushed together with it, which prod synced in its place: the incident's change with it)
            for (const h of history)
                if (
                    isSha(h?.revision) &&
                    h.revision !== commit &&
                    ((await w.repo.isAncestor(h.revision, commit)) || (await w.repo.isAncestor(commit, h.revision))) &&
                    (await renderShopConfigAt(w.repo, h.revision, "envs/prod", w.kubectl)).FEATURE_CHECKOUT_V2 === "on"
                )
                    return true;
            // Argo CD keeps an Application's latest syncs (revisionHistoryLimit, 10): an older one may have gone
            if (history.length >= Number(app?.spec?.revisionHistoryLimit ?? 10)) return null;
            // an Application made again since (deleted, or its ApplicationSet applied again) has no history of the
            // incident to show: only one that synced before the incident was made (a minute's skew allowed) and not since says so
            const made = await w.repo.committedAt(commit);
            if (!history.some((h) => Date.parse(h?.deployedAt ?? "") < made - 60_000)) return null;
            return {
                ok: false,
                expected: `${commit} in shop-prod's status.history`,
                found: history.map((h) => String(h?.revision ?? "").slice(0, 12)).join(", ") || "no history",
                hint: "shop-prod never synced incident.commit: was prod pinned before the incident? The incident reaches both environments on main (step 3); the pin comes after it (step 4)",
            };
        }),
        live(6, "live shop-prod is synced to promote.to", async (c, w) => {
            if (!obj(w, "promote")) return null;
            const revision = (await c.getApplication("shop-prod"))?.status?.sync?.revision;
            return (await putBack(w, revision)) ? true : eq(obj(w, "promote").to, revision);
        }),
        live(7, "live shop-dev has no ComparisonError", async (c, w) => {
            if (!obj(w, "revert")) return null;
            const conds = ((await c.getApplication("shop-dev"))?.status?.conditions ?? []).filter((x) => x.type === "ComparisonError");
            return { ok: conds.length === 0, expected: "no ComparisonError", found: conds.map((x) => x.message).join("; ") };
        }),
        live(8, "report tracks equal the live Applications' targetRevision", async (c, w) => {
            const r = obj(w, "report");
            if (!r) return null;
            return eq(
                {
                    dev_tracks: (await c.getApplication("shop-dev"))?.spec?.source?.targetRevision,
                    prod_tracks: (await c.getApplication("shop-prod"))?.spec?.source?.targetRevision,
                },
                { dev_tracks: r.dev_tracks, prod_tracks: r.prod_tracks },
            );
        }),
    );
    return checks;
}
