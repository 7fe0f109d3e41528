/**
 * The shop lab's grader: the table of named checks that re-derives every fact of the lab from the
 * world (the six files, the bare repository read directly and, unless offline, the cluster). It
 * shares no bookkeeping with the scenario; only the result schemas (results.ts) are common.
 */
import * as fs from "fs";
import { isDeepStrictEqual } from "util";
import { Check, CheckResult, eq, eqFields, runChecks, shown } from "../grader/grader";
import { whereElse } from "../grader/whereElse";
import { stackOutputChecks } from "../grader/live";
import { isSha, resultFileChecks } from "../grader/resultFiles";
import { REPO_URL } from "./layout";
import { badCommit, MAIN_RENDERS_ON, REVERT_CHECKS } from "./historyChecks";
import { PROMOTE_CHECKS } from "./promoteChecks";
import { NOT_MADE_ANEW } from "./remadeCheck";
import { INCIDENT_ON_MAIN, INCIDENT_IN_BASE, INCIDENT_MAIN_READABLE, INCIDENT_RENDERS, INCIDENT_VALUES } from "./incidentChecks";
import { liveChecks } from "./liveChecks";
import { STEP1_CHECKS } from "./step1Checks";
import { DRIFT_CHECKS } from "./driftChecks";
import { listElementsOf, destinationServer, IN_CLUSTER, readAppsetFile, sameRepo, withoutDefaults } from "./appsetFile";
import { APPSET_POLICY } from "./appsetPolicy";
import { elementsHint, missingAppsetHint, syncOptionsWhy, automatedWhy, repoUrlWhy } from "./appsetHints";
import { shopFieldsOf, ShopResultName, SHOP_RESULT_FILES, SHOP_RESULT_STEP } from "./results";
import { obj, pinStep, readShopWorld, releaseNotAtPin, ShopWorld, VerifyOptions, wantProd } from "./world";
import { RELEASE_NOT_AT_INCIDENT } from "./pinChecks";
export type { VerifyOptions } from "./world";

// ---------------------------------------------------------------------------------------------
// Each result file: present, a JSON object, exactly its keys, each of its type, SHAs in the repository

function fileChecks(name: ShopResultName): Check<ShopWorld>[] {
    return resultFileChecks<ShopResultName, ShopWorld>(name, SHOP_RESULT_STEP[name], shopFieldsOf(name));
}

// ---------------------------------------------------------------------------------------------
// The table

const step2: Check<ShopWorld>[] = [
    {
        step: pinStep,
        name: (w) => `appset.yaml: ApplicationSet argocd/shop, dev=main, prod=${wantProd(w)}`,
        run: async (w) => {
            if (!fs.existsSync(w.layout.appsetFile))
                return { ok: false, expected: w.layout.appsetFile, found: "no such file", hint: missingAppsetHint(w) };
            const file = readAppsetFile(w.layout.appsetFile);
            if (file.error !== undefined) {
                const why = file.error;
                return {
                    ok: false,
                    expected: "an ApplicationSet in YAML",
                    found: `not YAML (${why})`,
                    hint: `${w.layout.appsetFile} is not valid YAML (${why}): fix it there, then kubectl apply -f it`,
                };
            }
            const a = file.set;
            // another apiVersion: kubectl apply refuses it (no matches for kind "ApplicationSet"), whatever else the file says
            if (a?.kind === "ApplicationSet" && a?.apiVersion !== "argoproj.io/v1alpha1")
                return {
                    ok: false,
                    expected: "apiVersion argoproj.io/v1alpha1",
                    found: `apiVersion ${JSON.stringify(a?.apiVersion)}`,
                    hint: `appset.yaml's apiVersion is ${a?.apiVersion === undefined ? "missing" : JSON.stringify(a.apiVersion)}: Argo CD serves ApplicationSets as argoproj.io/v1alpha1 alone, and kubectl apply refuses any other (no matches for kind "ApplicationSet"): write apiVersion: argoproj.io/v1alpha1, then kubectl apply -f ${w.layout.appsetFile}`,
                };
            // another kind (a typo's Applicationset, an Application): kubectl apply refuses it or makes something else
            if (a && typeof a === "object" && a.kind !== "ApplicationSet")
                return {
                    ok: false,
                    expected: "kind ApplicationSet",
                    found: `kind ${JSON.stringify(a.kind)}`,
                    hint: `appset.yaml's kind is ${a.kind === undefined ? "missing" : JSON.stringify(a.kind)}${typeof a.kind === "string" && a.kind.toLowerCase() === "applicationset" ? ", which kubectl apply does not know (kinds are case-sensitive: no matches for kind)" : ""}: the lab's file holds the ApplicationSet itself: write kind: ApplicationSet, then kubectl apply -f ${w.layout.appsetFile}`,
                };
            const outcome = eq(
                {
                    kind: "ApplicationSet",
                    name: "shop",
                    namespace: "argocd",
                    elements: [
                        { env: "dev", revision: "main" },
                        { env: "prod", revision: wantProd(w) },
                    ],
                },
                {
                    kind: a?.kind,
                    name: a?.metadata?.name,
                    namespace: a?.metadata?.namespace,
                    elements: listElementsOf(a) ?? [],
                },
            );
            if (outcome.ok) return outcome;
            // generators as a mapping (list: not under -): the API server refuses it, so the cluster keeps the earlier one
            const gens = (a?.spec as { generators?: unknown } | undefined)?.generators;
            if (gens && typeof gens === "object" && !Array.isArray(gens))
                return {
                    ...outcome,
                    hint: `spec.generators in appset.yaml is a mapping, but the ApplicationSet takes a list of generators: write - list: (a dash before list:), then kubectl apply -f ${w.layout.appsetFile}; kubectl apply refused the mapping, so the cluster still holds what you applied before`,
                };
            // applied right, the file left behind: the file is what the lab keeps of the change
            const want = [
                { env: "dev", revision: "main" },
                { env: "prod", revision: wantProd(w) },
            ];
            const fileRight = isDeepStrictEqual(listElementsOf(a) ?? [], want);
            const live =
                w.cluster && !w.clusterError && !fileRight ? await w.cluster.getApplicationSet("shop").catch(() => undefined) : undefined;
            if (live && isDeepStrictEqual(listElementsOf(live), want))
                return {
                    ...outcome,
                    hint: `the cluster's ApplicationSet has dev=main, prod=${wantProd(w)}, but ${w.layout.appsetFile} does not say so: write what you applied into it (kubectl -n argocd get applicationset shop -o yaml shows it)`,
                };
            // one ApplicationSet per environment (shop-dev, shop-prod): the lab's is one, shop, with an element for each
            const sets = file.names ?? [];
            if (a?.metadata?.name !== "shop" && sets.length > 1)
                return {
                    ...outcome,
                    found: `${sets.length} ApplicationSets (${sets.join(", ")})`,
                    hint: `appset.yaml holds ${sets.length} ApplicationSets (${sets.join(", ")}), none named shop: the lab's is one ApplicationSet shop whose list generator has an element per environment (dev=main, prod=${wantProd(w)}); write it so, kubectl apply -f ${w.layout.appsetFile}, then delete the others (kubectl -n argocd delete applicationset ${sets.join(" ")}: their Applications go with them, and shop makes its own)`,
                };
            // the elements spread over several generators (a list per environment): the lab's is one list with both
            const generators = a?.spec?.generators ?? [];
            if (generators.length > 1)
                return {
                    ...outcome,
                    found: `${generators.length} generators (${generators.map((g) => Object.keys(g ?? {}).join("+") || "empty").join(", ")})`,
                    hint: `appset.yaml's ApplicationSet has ${generators.length} generators: the lab's has one, a list generator whose elements are dev=main and prod=${wantProd(w)}; put every element into spec.generators[0].list.elements, take the other generators out, then kubectl apply -f ${w.layout.appsetFile}`,
                };
            const hint = elementsHint(w, a?.spec?.generators?.[0]?.list?.elements ?? [], a?.spec?.template);
            if (hint) return { ...outcome, hint };
            if (a?.metadata?.namespace === "argocd") return outcome;
            // no namespace: kubectl apply puts it where -n or the current context says (default, unless -n argocd was given)
            const where = a?.metadata?.namespace
                ? `is in namespace ${a.metadata.namespace}`
                : "names no namespace (kubectl apply then puts it in the current one, default, unless given -n argocd)";
            return {
                ...outcome,
                hint: `appset.yaml's ApplicationSet ${where}; Argo CD reads ApplicationSets in its own namespace, argocd, only, and the file is to say so: set metadata.namespace: argocd, then kubectl apply -f ${w.layout.appsetFile}`,
            };
        },
    },
    {
        step: 2,
        name: "appset.yaml template: shop-{{env}} of project default, repoURL, {{revision}}, envs/{{env}} into namespace shop-{{env}}, prune+selfHeal, CreateNamespace",
        run: async (w) => {
            if (!fs.existsSync(w.layout.appsetFile)) return null; // the check above says so
            const file = readAppsetFile(w.layout.appsetFile);
            if (file.error !== undefined) return null; // not YAML: the check above says so
            const t = file.set?.spec?.template;
            // with goTemplate: true the same fields are written {{.env}}: read them as the fasttemplate form the lab asks for
            const go = file.set?.spec?.goTemplate === true;
            // without it, a tag's spaces are trimmed ({{ env }} is {{env}}: strings.TrimSpace in applicationset/utils/utils.go)
            const field = (v: unknown) =>
                typeof v !== "string"
                    ? v
                    : go
                      ? v.replace(/\{\{-?\s*\.(\w+)\s*-?\}\}/g, "{{$1}}")
                      : v.replace(/\{\{\s*(\w+)\s*\}\}/g, "{{$1}}");
            // goTemplate with fasttemplate's tags: Go reads {{env}} as a function call, and Argo CD renders nothing
            const bare = go ? /\{\{-?\s*(\w+)\s*-?\}\}/.exec(JSON.stringify(t ?? {}))?.[1] : undefined;
            if (bare)
                return {
                    ok: false,
                    expected: `{{.${bare}}} with goTemplate: true`,
                    found: `{{${bare}}}`,
                    hint: `the ApplicationSet sets goTemplate: true, but its template writes {{${bare}}}: a Go template reads an element's key as {{.${bare}}} (with the dot), and Argo CD renders nothing from {{${bare}}} (function "${bare}" not defined): write {{.env}} and {{.revision}}, or take goTemplate out, then kubectl apply -f ${w.layout.appsetFile}`,
                };
            // sources: (a list, for Applications of several sources) for source:: named, not its fields one by one
            if (t?.spec?.sources !== undefined && t?.spec?.source === undefined)
                return {
                    ok: false,
                    expected: "spec.template.spec.source",
                    found: "spec.template.spec.sources",
                    hint: `the template has sources: (a list, for an Application of several sources), and the lab's Applications have one source: write source: with repoURL, targetRevision and path under it, then kubectl apply -f ${w.layout.appsetFile}`,
                };
            // the fields that differ, each named with what it holds (never the lab's value)
            return eqFields(
                {
                    name: "shop-{{env}}",
                    project: "default",
                    repoURL: REPO_URL,
                    targetRevision: "{{revision}}",
                    path: "envs/{{env}}",
                    namespace: "shop-{{env}}",
                    server: IN_CLUSTER,
                    automated: { prune: true, selfHeal: true },
                    syncOptions: ["CreateNamespace=true"],
                },
                {
                    name: field(t?.metadata?.name),
                    project: t?.spec?.project,
                    // without .git, or without git's default port (9418), it is the same repository (git daemon and Argo CD read it so)
                    repoURL: sameRepo(t?.spec?.source?.repoURL) ? REPO_URL : t?.spec?.source?.repoURL,
                    targetRevision: field(t?.spec?.source?.targetRevision),
                    // a trailing slash, or a leading ./, names the same folder (Argo CD joins and cleans the path)
                    path:
                        typeof field(t?.spec?.source?.path) === "string"
                            ? String(field(t?.spec?.source?.path))
                                  .replace(/\/+$/, "")
                                  .replace(/^(\.\/)+/, "")
                            : field(t?.spec?.source?.path),
                    namespace: field(t?.spec?.destination?.namespace),
                    // the cluster by its name (in-cluster), or its URL with a trailing slash, is the same cluster
                    server: destinationServer(t?.spec?.destination),
                    // Argo CD 3's automated.enabled: true is what automated means when it is left out
                    automated: withoutDefaults(t?.spec?.syncPolicy?.automated),
                    syncOptions: t?.spec?.syncPolicy?.syncOptions,
                },
                {
                    // the Applications' names: later steps, and the grader, read shop-dev and shop-prod
                    name: (() => {
                        const n = field(t?.metadata?.name);
                        const made =
                            typeof n === "string" && n.includes("{{env}}") ? ["dev", "prod"].map((e) => n.replace(/\{\{env\}\}/g, e)) : [];
                        return `the ApplicationSet names each Application from it${made.length ? `, so it makes ${made.join(" and ")}` : ""}; the lab's are shop-dev and shop-prod, which later steps and the grader read: write name: 'shop-{{env}}', then kubectl apply -f ${w.layout.appsetFile} (the ApplicationSet deletes the Applications it no longer makes)`;
                    })(),
                    project:
                        t?.spec?.project === undefined
                            ? `the template has no project: an Application needs one (the API server refuses an ApplicationSet whose template leaves it out, so kubectl apply changed nothing): write project: default under spec.template.spec, then kubectl apply -f ${w.layout.appsetFile}`
                            : "an Application of a project Argo CD does not have is not generated (kubectl get appprojects -n argocd lists them)",
                    repoURL: repoUrlWhy(t?.spec?.source?.repoURL),
                    ...(String(field(t?.spec?.source?.path) ?? "").startsWith("/")
                        ? {
                              path: "Argo CD refuses an absolute path (app path is absolute): write envs/{{env}}, relative to the repository's root",
                          }
                        : {}),
                    // the ApplicationSet's own syncPolicy holds it: one level out of the template's
                    automated: (file.set?.spec?.syncPolicy as { automated?: unknown } | undefined)?.automated
                        ? "it is under the ApplicationSet's own spec.syncPolicy, one level out: the Applications' goes under spec.template.spec.syncPolicy"
                        : automatedWhy(withoutDefaults(t?.spec?.syncPolicy?.automated)),
                    server: /^https:\/\/kubernetes\.default\.svc(\.cluster\.local)?:443\/?$/.test(
                        String(t?.spec?.destination?.server ?? ""),
                    )
                        ? "Argo CD finds a cluster by its URL exactly, and knows the one it runs in as https://kubernetes.default.svc: write it without the port (an Application to a cluster Argo CD does not know is not generated)"
                        : "the cluster Argo CD itself runs in, by its address inside the cluster, not this machine's API address (an Application to a cluster Argo CD does not know is not generated)",
                    syncOptions: syncOptionsWhy(t?.spec?.syncPolicy),
                    // one namespace written for every environment (shop-dev): both Applications then deploy into it
                    namespace:
                        typeof field(t?.spec?.destination?.namespace) === "string" &&
                        !String(field(t?.spec?.destination?.namespace)).includes("{{")
                            ? `every environment's Application then deploys into ${String(field(t?.spec?.destination?.namespace))}, one namespace for both, and their ConfigMaps are one object: write namespace: 'shop-{{env}}', then kubectl apply -f ${w.layout.appsetFile}`
                            : `each environment's Application deploys into its own namespace, named from its element: write namespace: 'shop-{{env}}', then kubectl apply -f ${w.layout.appsetFile}`,
                    // a branch for every environment: the pin goes in prod's element, the template takes each one's
                    ...(typeof t?.spec?.source?.targetRevision === "string" && !t.spec.source.targetRevision.includes("{{")
                        ? {
                              targetRevision: `every environment then tracks ${t.spec.source.targetRevision}: the template takes each element's {{revision}}, and step 4's pin goes in prod's element`,
                          }
                        : {}),
                },
            );
        },
    },
];

const step3: Check<ShopWorld>[] = [INCIDENT_MAIN_READABLE, INCIDENT_VALUES, INCIDENT_IN_BASE, INCIDENT_RENDERS, INCIDENT_ON_MAIN];

const step4: Check<ShopWorld>[] = [
    {
        step: 4,
        name: "no tag is named as a branch the lab tracks (main, release/prod)",
        run: async (w) => {
            if (!w.releaseTip) return null;
            const shadow = (await w.repo.tags()).filter((t) => t === "main" || t === "release/prod");
            return shadow.length
                ? {
                      ok: false,
                      expected: "branches alone under those names",
                      found: shadow.map((t) => `tag ${t}`).join(", "),
                      hint: `a tag named ${shadow.join(" and ")} stands beside the branch: git reads the tag for the short name (refname '${shadow[0]}' is ambiguous), so git merge-base and git push with it mean the tag; delete it: git push origin :refs/tags/${shadow[0]} (and git tag -d ${shadow[0]} in the clone)`,
                  }
                : true;
        },
    },
    {
        step: 4,
        name: "release/prod exists",
        run: async (w) => {
            if (!w.main) return null;
            if (w.releaseTip) return true;
            // pushed as a tag of that name (git push origin SHA:refs/tags/release/prod, or a bare name git took for a tag)
            const tagged = await w.repo.tag("release/prod");
            if (tagged)
                return {
                    ok: false,
                    expected: "refs/heads/release/prod",
                    found: `refs/tags/release/prod (a tag, at ${tagged.slice(0, 12)})`,
                    hint: `release/prod is a tag, not a branch: git push origin ${tagged.slice(0, 12)}:refs/heads/release/prod, then git push origin :refs/tags/release/prod`,
                };
            const broken = await w.repo.brokenBranch("release/prod");
            if (broken) {
                const mend = broken.file.endsWith("packed-refs")
                    ? `delete its line in ${broken.file}`
                    : `remove that file (rm ${broken.file})`;
                return {
                    ok: false,
                    expected: "refs/heads/release/prod",
                    found: `a broken ref (it holds ${broken.holds}, no commit)`,
                    hint: `refs/heads/release/prod in ${w.repo.gitDir} was damaged by hand: git ignores it and refuses a push to it; ${mend}, then push release/prod again at the commit it last held (your clone's origin/release/prod, or promote.json's to once promoted): git push origin COMMIT:refs/heads/release/prod`,
                };
            }
            // made at step 4 (pin.json says so), then deleted by a push: step 4's own hint (change the ApplicationSet) does not fit;
            // a clone with no origin/release/prod most often never pushed it (pin.json written, the push forgotten); a push
            // of the deletion from it removes that too, so the hint names both
            const pin = obj(w, "pin");
            const pushedOnce = w.clone?.exists() ? (await w.clone.ref("refs/remotes/origin/release/prod")) !== null : true;
            const parent = pin && isSha(pin.release_prod_initial) ? pin.release_prod_initial : "<the incident commit's parent>";
            // pinned in appset.yaml, the branch not pushed (pin.json not written yet): the push comes first
            const prodTracks =
                !pin && fs.existsSync(w.layout.appsetFile)
                    ? (readAppsetFile(w.layout.appsetFile).set?.spec?.generators?.[0]?.list?.elements ?? []).find((e) => e?.env === "prod")
                          ?.revision
                    : undefined;
            const incident = obj(w, "incident")?.commit;
            const before = isSha(incident) ? ((await w.repo.parents(incident).catch(() => []))[0] ?? parent) : parent;
            const gone = !pin
                ? prodTracks === "release/prod"
                    ? {
                          hint: `appset.yaml's prod tracks release/prod, which the repository does not have (Argo CD answers "unable to resolve"): push it first at the incident commit's parent, where prod is to stay (git push origin ${before}:refs/heads/release/prod), then write pin.json`,
                      }
                    : {}
                : pushedOnce || obj(w, "promote")
                  ? {
                        hint: "release/prod is gone from the repository (a push deleted it); push it again at the commit it last held (your clone's origin/release/prod, or promote.json's to once promoted): git push origin COMMIT:refs/heads/release/prod",
                    }
                  : {
                        hint: `release/prod is not in the repository, and your clone has no origin/release/prod: never pushed (or deleted by a push from it); an Application tracking it cannot resolve it: git push origin ${parent}:refs/heads/release/prod`,
                    };
            return { ok: false, expected: "refs/heads/release/prod", found: "no such branch", ...gone };
        },
    },
    {
        step: 4,
        name: "pin.release_prod_initial is the parent of incident.commit",
        run: async (w) => {
            const pin = obj(w, "pin");
            const commit = obj(w, "incident")?.commit;
            if (!pin || !isSha(commit)) return null;
            const parent = (await w.repo.parents(commit))[0];
            const outcome = eq(parent, pin.release_prod_initial);
            // the incident commit itself: release/prod would hold the incident it is there to keep out of prod
            if (!outcome.ok && pin.release_prod_initial === commit)
                return {
                    ...outcome,
                    hint: "pin.release_prod_initial is incident.commit itself: release/prod starts at the commit before it (its parent), so that prod is pinned to what it ran before the incident",
                };
            // another commit (an older one: the branch pushed at it): where release/prod starts, and how it moves there
            if (outcome.ok || !isSha(pin.release_prod_initial) || !isSha(parent)) return outcome;
            const [at, p] = [pin.release_prod_initial.slice(0, 12), parent.slice(0, 12)];
            return {
                ...outcome,
                hint: `pin.release_prod_initial is ${at}, not the incident commit's parent ${p}, where release/prod starts (what prod ran just before the incident): if release/prod is at ${at}, the repository refuses a force push: delete it (git push origin :refs/heads/release/prod) and push it again at ${p} (git push origin ${p}:refs/heads/release/prod); then write ${p}'s full SHA`,
            };
        },
    },
    {
        step: 4,
        name: "release/prod starts at pin.release_prod_initial (until the promotion moves it on)",
        run: async (w) => {
            const start = obj(w, "pin")?.release_prod_initial;
            // promoted (a fast-forward from it): step 6's checks read where it went
            if (!isSha(start) || !w.releaseTip || obj(w, "promote")) return null;
            // a pin.json that names another commit: the check above says so
            const commit = obj(w, "incident")?.commit;
            if (!isSha(commit) || (await w.repo.parents(commit).catch(() => []))[0] !== start) return null;
            const outcome = eq(start, w.releaseTip);
            // moved on to the incident or after it (a promotion whose promote.json is not written yet, before the drift or after): step 6's
            const promoting = w.promoted;
            if (outcome.ok || promoting) return { ok: true };
            return { ...outcome, hint: releaseNotAtPin(w.releaseTip, start) };
        },
    },
    {
        step: 4,
        name: "pin.prod_value_after_pin is off",
        run: async (w) => {
            const pin = obj(w, "pin");
            if (!pin) return null;
            const outcome = eq("off", pin.prod_value_after_pin);
            // read before Argo CD synced shop-prod to the pin: the incident's value, still live
            if (!outcome.ok && pin.prod_value_after_pin === "on")
                return {
                    ...outcome,
                    hint: "on is the incident's value, read before shop-prod was synced to the pin: wait until kubectl get application shop-prod -n argocd shows Synced at release/prod's commit, then read shop-prod's ConfigMap again",
                };
            // another key's value (LOG_LEVEL's) for the flag's
            if (!outcome.ok && ["debug", "info", "warn"].includes(String(pin.prod_value_after_pin)))
                return {
                    ...outcome,
                    hint: `${JSON.stringify(pin.prod_value_after_pin)} is a LOG_LEVEL: prod_value_after_pin is FEATURE_CHECKOUT_V2 in shop-prod's ConfigMap shop-config after the pin (kubectl -n shop-prod get configmap shop-config -o jsonpath={.data.FEATURE_CHECKOUT_V2})`,
                };
            return outcome;
        },
    },
];

const step8: Check<ShopWorld>[] = [
    {
        step: 8,
        name: "report: dev_tracks main, prod_tracks release/prod, rollback revert",
        run: async (w) => {
            const r = obj(w, "report");
            if (!r) return null;
            // reset after a revert: main still holds bad_commit (said only where it does)
            const bad = obj(w, "revert")?.bad_commit;
            const kept = r.rollback === "reset" && isSha(bad) && w.main ? await w.repo.isAncestor(bad, w.main).catch(() => false) : false;
            const source = (app: string) =>
                `${app}'s spec.source.targetRevision (kubectl get application ${app} -n argocd -o jsonpath={.spec.source.targetRevision})`;
            return eqFields(
                { dev_tracks: "main", prod_tracks: "release/prod", rollback: "revert" },
                { dev_tracks: r.dev_tracks, prod_tracks: r.prod_tracks, rollback: r.rollback },
                {
                    dev_tracks: source("shop-dev"),
                    prod_tracks: source("shop-prod"),
                    rollback: kept
                        ? "how step 7 rolled main back: main still holds bad_commit, and revert_commit undoes it (This reverts commit ...), so main was reverted, not reset (a reset takes the commit out of main's history)"
                        : "how step 7 rolled main back (revert.json's revert_commit is the answer's evidence)",
                },
            );
        },
    },
    {
        step: 8,
        name: "report.promoted_commit is promote.to",
        run: async (w) => copied(w, "promote", "to", "promoted_commit"),
    },
    { step: 8, name: "report.drift_seconds is drift.seconds", run: async (w) => copied(w, "drift", "seconds", "drift_seconds") },
    {
        step: 8,
        name: "report.bad_commit_reached_prod agrees with git merge-base --is-ancestor (and is false)",
        run: async (w) => {
            const bad = await badCommit(w);
            if (!obj(w, "report") || !bad || !w.releaseTip) return null;
            const reached = await w.repo.isAncestor(bad, w.releaseTip);
            const outcome = eq({ reported: reached, value: false }, { reported: obj(w, "report").bad_commit_reached_prod, value: reached });
            return outcome.ok || reached
                ? outcome
                : {
                      ...outcome,
                      hint: `bad_commit_reached_prod holds ${JSON.stringify(obj(w, "report").bad_commit_reached_prod)}; git answers it: git fetch, then git merge-base --is-ancestor ${bad} origin/release/prod; echo $? (0: true, 1: false) in the clone`,
                  };
        },
    },
];

/** A report value copied from an earlier file: the two must agree, and the hint names both. */
function copied(w: ShopWorld, file: "promote" | "drift", key: string, as: string) {
    const [from, r] = [obj(w, file), obj(w, "report")];
    if (!from || !r) return null;
    const outcome = eq(from[key], r[as]);
    if (outcome.ok) return outcome;
    // a SHA: whose value it is (the grader's note, said before this hint: another key's, or another branch's), and what to copy
    return isSha(r[as])
        ? {
              ...outcome,
              hint: `report.${as} is to be ${file}.json's ${key}${key === "to" ? " (the commit step 6 moved release/prod to)" : ""}, ${shown(from[key])}: copy it from ${file}.json`,
              whereElseToo: true,
          }
        : {
              ...outcome,
              hint: `report.${as} holds ${shown(r[as])} and ${file}.json's ${key} ${shown(from[key])}: the report copies ${file}.json; make the two agree`,
          };
}

const stackOutputs = stackOutputChecks<ShopResultName, ShopWorld>({
    names: SHOP_RESULT_FILES,
    stepOf: SHOP_RESULT_STEP,
    output: (name) => name,
    result: obj,
});

/** The whole table, in the order the table prints it (sorted by step, stable). */
export const SHOP_CHECKS: readonly Check<ShopWorld>[] = [
    ...SHOP_RESULT_FILES.flatMap(fileChecks),
    ...STEP1_CHECKS,
    ...step2,
    APPSET_POLICY,
    ...step3,
    ...step4,
    RELEASE_NOT_AT_INCIDENT,
    ...DRIFT_CHECKS,
    ...PROMOTE_CHECKS,
    ...REVERT_CHECKS,
    MAIN_RENDERS_ON,
    ...step8,
    ...stackOutputs,
    ...liveChecks(),
    NOT_MADE_ANEW,
];

export async function verify(opts: VerifyOptions): Promise<CheckResult[]> {
    const w = await readShopWorld(opts);
    return runChecks(SHOP_CHECKS, w, opts.through, { whereElse: (found, self) => whereElse(w.repo, w.files, found, self) });
}
