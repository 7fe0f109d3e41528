/**
 * The hints of appset.yaml's list elements that are not the step's: a revision on the wrong element, a
 * commit or a full ref for a branch, the pin made early or undone. The check is in checks.ts.
 */
import { shellWord } from "../ports/shellWord";
import * as fs from "fs";
import { distance } from "fastest-levenshtein";
import * as path from "path";
import { isSha } from "../grader/resultFiles";
import { obj, ShopWorld, wantProd } from "./world";
import { IN_CLUSTER_SERVER } from "../argo/application";
import { sameRepo } from "./appsetFile";
import { REPO_URL } from "./layout";

/** Why the elements are not dev=main, prod=(the step's branch), where a known mistake says so; else undefined. */
export function elementsHint(w: ShopWorld, elements: { env?: unknown; revision?: unknown }[], template?: unknown): string | undefined {
    const apply = `kubectl apply -f ${w.layout.appsetFile}`;
    // a key misspelt in an element (envr for env): the template's {{env}} then finds nothing
    const extra = [...new Set(elements.flatMap((e) => Object.keys(e ?? {}).filter((k) => k !== "env" && k !== "revision")))];
    // a key of one's own that the template reads ({{url}}, as Argo CD's docs write a cluster's): the lab's template has its fields fixed
    const read = extra.filter((k) =>
        new RegExp(`\\{\\{\\s*\\.?${k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*\\}\\}`).test(JSON.stringify(template ?? "")),
    );
    if (read.length)
        return `the elements carry ${read.map((k) => JSON.stringify(k)).join(", ")}, which the template reads (${read.map((k) => `{{${k}}}`).join(", ")}): the lab's elements are env and revision alone, and the template writes the rest as the lab gives it (destination.server ${IN_CLUSTER_SERVER}); write them so, then ${apply}`;
    // (a key the template never reads, beside env and revision, changes no Application: only an element lacking one is named)
    const odd = [
        ...new Set(
            elements
                .filter((e) => !(e && "env" in e && "revision" in e))
                .flatMap((e) => Object.keys(e ?? {}).filter((k) => k !== "env" && k !== "revision")),
        ),
    ];
    if (odd.length)
        return `an element has the key ${odd.map((k) => JSON.stringify(k)).join(", ")}: an element's keys are env and revision, which the template's {{env}} and {{revision}} read; write them so, then ${apply}`;
    // a branch written as an env (env: release/prod): the Application would be shop-release/prod, which no name may be
    const branchEnv = elements.find((e) => e?.env === "release/prod" || e?.env === "main")?.env;
    if (branchEnv)
        return `an element's env is ${JSON.stringify(branchEnv)}, a branch: env names the environment (dev, prod) and revision the branch it tracks (the ApplicationSet cannot make an Application shop-${branchEnv}: "/" is no name's); write {env: prod, revision: ${wantProd(w)}}, then ${apply}`;
    // dev or prod in another case (Dev, PROD): shop-Dev is no name Kubernetes takes (RFC 1123: lower case), so the
    // ApplicationSet makes no Application of it (its ErrorOccurred condition says so)
    const cased = elements
        .map((e) => e?.env)
        .filter((env) => typeof env === "string" && ["dev", "prod"].includes(env.toLowerCase()) && env !== env.toLowerCase());
    if (cased.length)
        return `an element's env is ${cased.map((e) => JSON.stringify(e)).join(", ")}: an Application's name is lower case (RFC 1123), so shop-${cased[0]} is refused and the ApplicationSet makes no Application of it (kubectl -n argocd get applicationset shop -o yaml shows its ErrorOccurred condition); write ${cased.map((e) => `env: ${String(e).toLowerCase()}`).join(" and ")}, then ${apply}`;
    // an environment the lab does not have (staging): its Application renders envs/staging, which the repository lacks
    // (only beside both of the lab's: an env for one of them spelt otherwise, Prod or production, is that one renamed)
    const others = [...new Set(elements.map((e) => e?.env).filter((env) => typeof env === "string" && env !== "dev" && env !== "prod"))];
    const both = ["dev", "prod"].every((env) => elements.some((e) => e?.env === env));
    if (others.length && both)
        return `the elements name ${others.map((e) => JSON.stringify(e)).join(", ")} beside dev and prod: the lab has two environments (envs/dev and envs/prod), and shop-${others[0]} would render envs/${others[0]}, which the repository lacks; take ${others.length === 1 ? "that element" : "those elements"} out, then ${apply} (the ApplicationSet deletes the Application it made)`;
    // an element added beside the one it was to change: two for one env make two Applications of one name,
    // which the ApplicationSet refuses ("contains applications with duplicate name")
    const twice = ["dev", "prod"].find((env) => elements.filter((e) => e?.env === env).length > 1);
    if (twice)
        return `${twice} has ${elements.filter((e) => e?.env === twice).length} elements (${elements
            .filter((e) => e?.env === twice)
            .map((e) => JSON.stringify(e?.revision))
            .join(
                ", ",
            )}), and each makes an Application shop-${twice}: the ApplicationSet refuses the duplicate name and leaves shop-${twice} as it was; keep one element per env and change its revision, then ${apply}`;
    // an environment's element taken out: the ApplicationSet then deletes the Application it made from it, and an
    // Application made by hand in its place is not one the ApplicationSet keeps (nor prunes, nor updates at the pin)
    const gone = ["dev", "prod"].filter((env) => !elements.some((e) => e?.env === env));
    if (gone.length === 1 && !others.length) {
        const env = gone[0];
        const revision = env === "dev" ? "main" : wantProd(w);
        return `appset.yaml has no element for ${env}: the ApplicationSet makes shop-${env} from its element, and deletes the one it made when the element goes (an Application shop-${env} made by hand is not the ApplicationSet's: it is neither updated nor pruned by it); put the element back, {env: ${env}, revision: ${revision}}, then ${apply}${env === "prod" ? " (step 4's pin is that element's revision)" : ""}`;
    }
    const prodRevision = elements.find((e) => e?.env === "prod")?.revision;
    const devRevision = elements.find((e) => e?.env === "dev")?.revision;
    // the branch as its full ref: Argo CD resolves it too, but the lab's ApplicationSet names the branch
    const fullRef = prodRevision === `refs/heads/${wantProd(w)}` ? prodRevision : devRevision === "refs/heads/main" ? devRevision : null;
    if (fullRef)
        return `an element names a branch by its full ref (${fullRef}); Argo CD resolves that too, but the lab's ApplicationSet names branches as git branch does (main, release/prod): write the short name, then ${apply}`;
    // the pin undone (prod's element back on main) once the lab is past step 4 (a result of step 5 or 6 written): a
    // promotion moves the branch, the element stays
    // (a pin never made, release/prod never pushed and no pin.json, is step 4 not done, not undone)
    const pinned = !!obj(w, "pin") || !!w.releaseTip;
    if (
        devRevision === "main" &&
        prodRevision === "main" &&
        wantProd(w) === "release/prod" &&
        pinned &&
        (obj(w, "drift") || obj(w, "promote"))
    )
        return `prod's element is back on main, which undoes step 4's pin: prod tracks release/prod from step 4 on, and a promotion moves that branch (git push origin COMMIT:refs/heads/release/prod, a fast-forward); put prod's revision back to release/prod, then ${apply}`;
    // the pin made on the wrong element: dev on release/prod, prod still on main
    if (devRevision === "release/prod" && prodRevision === "main" && wantProd(w) === "release/prod")
        return `the pin is on the dev element (revision release/prod) and prod still tracks main: step 4 pins prod, dev stays on main; swap the two revisions (dev: main, prod: release/prod), then ${apply}`;
    // dev pinned too (both elements on release/prod): dev tracks main at every step
    if (devRevision !== undefined && devRevision !== "main")
        return `the dev element tracks ${JSON.stringify(devRevision)}: dev follows main at every step (step 4 pins prod alone): put its revision back to main, then ${apply}`;
    // prod pinned to a commit: the promotion moves the branch prod tracks, not the element
    if (isSha(prodRevision) && wantProd(w) === "release/prod")
        return `the prod element names a commit (${String(prodRevision).slice(0, 12)}); prod tracks the branch release/prod, and a promotion moves the branch (git push origin <commit>:release/prod): put the element back to release/prod, then ${apply}`;
    // the clone's remote-tracking name: Argo CD reads the repository's own branches, which have no origin/
    if (typeof prodRevision === "string" && prodRevision === `origin/${wantProd(w)}`)
        return `prod tracks ${JSON.stringify(prodRevision)}, your clone's name for the branch; Argo CD reads the repository's branches by their own names (Argo CD answers "unable to resolve"): write ${wantProd(w)}, then ${apply}`;
    // the branch's name with another separator (release-prod, release_prod, releases/prod): the lab's has a slash
    if (
        wantProd(w) === "release/prod" &&
        typeof prodRevision === "string" &&
        prodRevision !== "release/prod" &&
        /^releases?[-_/.]?prod$/i.test(prodRevision)
    )
        return `prod tracks ${JSON.stringify(prodRevision)}; the lab's branch is release/prod (with a slash): push it under that name (git push origin COMMIT:refs/heads/release/prod), point the prod element at it, then ${apply}`;
    // prod pinned to release/prod before step 4 asks for it: step 3's incident is to reach prod first
    if (prodRevision === "release/prod" && wantProd(w) === "main")
        return `prod already tracks release/prod, step 4's pin made early: until step 3's incident has reached both environments prod tracks main; put the prod element back to revision main, ${apply}, and pin at step 4 (release/prod stays where it is)`;
    // master, git's older default: the repository's branch is main, and Argo CD cannot resolve a branch it lacks
    const master = [devRevision, prodRevision].includes("master");
    if (master)
        return `an element tracks master, which is no branch of the repository (its branch is main; Argo CD says unable to resolve 'master' to a commit SHA, and the Application's sync is Unknown): write ${prodRevision === "master" ? `revision: ${wantProd(w)} for prod` : "revision: main for dev"}, then ${apply}`;
    return undefined;
}

/** What a template's automated (Argo CD 3's enabled left out) lacks of the lab's {prune: true, selfHeal: true}, and what each does. */
export function automatedWhy(automated: unknown): string {
    const where = "under spec.template.spec.syncPolicy.automated";
    if (!automated || typeof automated !== "object")
        return `the template has no automated sync: Argo CD then syncs only when asked; add automated: {prune: true, selfHeal: true} ${where.replace(".automated", "")}`;
    const a = automated as Record<string, unknown>;
    const does: Record<string, string> = {
        prune: "without it Argo CD never deletes what Git no longer has",
        selfHeal: "without it a change made in the cluster stays until the next commit (step 5's drift is never put back)",
    };
    const wrong = Object.keys(does).filter((k) => a[k] !== true);
    const extra = Object.keys(a).filter((k) => !(k in does));
    if (!wrong.length && extra.length)
        return `automated holds ${extra.join(", ")} beside prune and selfHeal, which the lab's template has alone: take ${extra.length === 1 ? "it" : "them"} out`;
    return wrong
        .map((k) => `automated ${k in a ? `has ${k}: ${JSON.stringify(a[k])}` : `has no ${k}`} (${does[k]})`)
        .concat(`set ${wrong.map((k) => `${k}: true`).join(" and ")} ${where}`)
        .join("; ");
}

/** What a template's syncOptions other than the lab's [CreateNamespace=true] hold: the options beside it, or it missing. */
/** Why a template's repoURL is not the lab's repository: another scheme for the git daemon's own address, or another address. */
export function repoUrlWhy(url: unknown): string {
    const scheme = typeof url === "string" ? /^([a-z][\w+.-]*):\/\/(.*)$/i.exec(url) : null;
    if (scheme && scheme[1] !== "git" && sameRepo(`git://${scheme[2]}`))
        return `it names the git daemon's Service with ${scheme[1]}://, and the git daemon speaks git:// alone: write ${REPO_URL}`;
    return "the repository as Argo CD's repo-server reaches it inside the cluster (the git daemon's Service), not an address on this machine";
}

export function syncOptionsWhy(policy: { syncOptions?: unknown } | undefined): string {
    const options = policy?.syncOptions;
    // the key misspelt (syncOption, syncoptions): the API server refuses a field the CRD does not declare
    const near = Object.keys(policy ?? {}).find((k) => k !== "syncOptions" && distance(k.toLowerCase(), "syncoptions") <= 2);
    if (options === undefined && near)
        return `the template's syncPolicy has ${near}, which is no field of it (the API server refuses an unknown field, so kubectl apply changed nothing in the cluster): write syncOptions:, then kubectl apply -f it`;
    // one string, not a list (syncOptions: CreateNamespace=true): the API server refuses it (must be of type array)
    if (typeof options === "string")
        return `it is a string, not a list: write it as a list item (syncOptions:, then - CreateNamespace=true on the next line); the API server refuses a string there, so kubectl apply changed nothing in the cluster`;
    const list = Array.isArray(options) ? options.map(String) : [];
    const extra = list.filter((o) => o !== "CreateNamespace=true");
    if (list.includes("CreateNamespace=true") && extra.length)
        return `${extra.join(", ")} beside CreateNamespace=true, which the lab's template has alone (the later steps are graded on how Argo CD syncs with it alone): take ${extra.length === 1 ? "it" : "them"} out`;
    return "CreateNamespace=true makes each environment's namespace (shop-dev, shop-prod), which nothing else makes";
}

/** appset.yaml not there: a file like it beside it (appset.yml, ApplicationSet.yaml) named, with the move; else what to write. */
export function missingAppsetHint(w: ShopWorld): string {
    const file = w.layout.appsetFile;
    let like: string | undefined;
    try {
        like = fs
            .readdirSync(path.dirname(file))
            .find((n) => n !== path.basename(file) && /^(appset|applicationset|application-set)[\w.-]*\.ya?ml$/i.test(n));
    } catch {
        // no folder: nothing beside it
    }
    return like
        ? `${file} is not there, ${path.join(path.dirname(file), like)} is: the lab keeps the ApplicationSet you applied as appset.yaml (mv ${shellWord(path.join(path.dirname(file), like))} ${shellWord(file)})`
        : `${file} is not there: write the ApplicationSet you apply into it (kubectl -n argocd get applicationset shop -o yaml shows the one applied)`;
}
