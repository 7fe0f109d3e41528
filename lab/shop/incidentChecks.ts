/**
 * Step 3's checks of the incident: the values the learner read, the commit that turned the flag on in
 * the shared base (where an overlay's change instead is named as such), and what the overlays render.
 */
import { parse } from "yaml";
import { Check, eq } from "../grader/grader";
import { isSha } from "../grader/resultFiles";
import { renderShopConfigAt } from "./render";
import { obj, ShopWorld } from "./world";

/** The incident made in an overlay (envs/...) instead of base: said, since both environments share only base. */
async function overlayHint(w: ShopWorld, commit: string): Promise<string | undefined> {
    if (!(await w.repo.isCommit(commit))) return undefined;
    const changed: string[] = await w.repo.changedFiles(commit).catch(() => []);
    if (changed.includes("base/configmap.yaml") || !changed.some((f) => f.startsWith("envs/"))) return undefined;
    return `incident.commit does not change base/configmap.yaml (it changes ${changed.join(", ")}): the incident is a change to the shared base, which both environments render; make it there`;
}

/**
 * The way back from a wrong incident commit: its revert, then the incident made again, so that incident.commit's parent has
 * the flag off (what step 4 pins prod back to); a fix on top would leave the wrong commit as that parent.
 */
const makeAgain = (sha: string) =>
    `git revert ${sha.slice(0, 12)} and push, then make the incident again (FEATURE_CHECKOUT_V2 "on", once, in base/configmap.yaml's data), push, read the values, and write that commit as incident.commit`;

const notRendered = (sha: string) =>
    `Argo CD cannot render it (shop-dev and shop-prod show a ComparisonError, so there are no values to read): ${makeAgain(sha)}`;

/** Why base/configmap.yaml at a commit is no YAML (a key twice, say), or undefined. */
async function baseUnreadable(w: ShopWorld, sha: string): Promise<string | undefined> {
    try {
        parse((await w.repo.file(sha, "base/configmap.yaml")) ?? "null");
        return undefined;
    } catch (e) {
        return String((e as Error)?.message ?? e).split("\n")[0];
    }
}

/**
 * FEATURE_CHECKOUT_V2 in base at a commit, as YAML reads base/configmap.yaml (undefined where it cannot be read);
 * on where base renders it on, though the file says otherwise (a patch in base/kustomization.yaml sets it: the base
 * turns it on all the same).
 */
async function baseFlagAt(w: ShopWorld, sha: string): Promise<unknown> {
    let inFile: unknown;
    try {
        inFile = parse((await w.repo.file(sha, "base/configmap.yaml")) ?? "null")?.data?.FEATURE_CHECKOUT_V2;
    } catch {
        inFile = undefined;
    }
    if (inFile === "on") return inFile;
    const rendered = await renderShopConfigAt(w.repo, sha, "base", w.kubectl).then(
        (d) => d.FEATURE_CHECKOUT_V2,
        () => undefined,
    );
    return rendered === "on" ? rendered : inFile;
}

/** What to do about an incident commit that set the flag to another value than "on" ("true", a boolean true). */
const wrongValue = (set: unknown, sha: string) =>
    `sets FEATURE_CHECKOUT_V2 to ${typeof set === "string" ? JSON.stringify(set) : `${String(set)} (a YAML ${typeof set}, unquoted)`} in base, and the ConfigMaps hold what it set: the lab's value is "on" (compared exactly); ${makeAgain(sha)}`;

/** Before incident.json: main's base no YAML (the incident's commit made so) leaves nothing to read; said first. */
export const INCIDENT_MAIN_READABLE: Check<ShopWorld> = {
    step: 3,
    name: "main's base/configmap.yaml is YAML (before incident.json: the values are read from what it renders)",
    run: async (w) => {
        if (obj(w, "incident") || !w.main) return null;
        const unreadable = await baseUnreadable(w, w.main);
        return unreadable
            ? {
                  ok: false,
                  expected: "base/configmap.yaml that parses",
                  found: unreadable,
                  hint: `main (${w.main.slice(0, 12)}) has a base/configmap.yaml that is no YAML (${unreadable}): ${notRendered(w.main)}`,
              }
            : null;
    },
};

/** The values the learner read: on in both environments (the incident reached both). */
export const INCIDENT_VALUES: Check<ShopWorld> = {
    step: 3,
    name: "incident: dev_value and prod_value are on",
    run: async (w) => {
        const i = obj(w, "incident");
        if (!i) return null;
        const outcome = eq({ dev_value: "on", prod_value: "on" }, { dev_value: i.dev_value, prod_value: i.prod_value });
        // on in another case, or with spaces: the value read right, written otherwise
        // (or "true": YAML's unquoted on read as a boolean, then written as a string)
        // (or "\"on\"": the value with quote marks of its own, as jq prints a string without -r)
        const bare = (v: unknown) =>
            String(v)
                .trim()
                .replace(/^(["'])(.*)\1$/, "$2")
                .trim()
                .toLowerCase();
        const spelt = (["dev_value", "prod_value"] as const).filter((k) => i[k] !== "on" && ["on", "true"].includes(bare(i[k])));
        const quoted = spelt.some((k) => /^\s*(["']).*\1\s*$/.test(String(i[k])));
        // the ConfigMap's whole data read ({.data}), or the whole object: the flag's value alone is asked
        const whole = (["dev_value", "prod_value"] as const).filter((k) => {
            try {
                const v = typeof i[k] === "string" ? JSON.parse(i[k] as string) : i[k];
                return !!v && typeof v === "object" && JSON.stringify(v).includes("FEATURE_CHECKOUT_V2");
            } catch {
                return false;
            }
        });
        // empty: the command read nothing (kubectl get cm shop-config without -n looks in default, and finds none there)
        const empty = (["dev_value", "prod_value"] as const).filter((k) => i[k] === "");
        if (!outcome.ok && empty.length)
            return {
                ...outcome,
                hint: `${empty.join(" and ")} ${empty.length === 1 ? "is" : "are"} empty: the command read nothing (without -n, kubectl looks in the namespace default, where there is no shop-config); read each environment's from its namespace: kubectl -n ${empty[0] === "dev_value" ? "shop-dev" : "shop-prod"} get configmap shop-config -o jsonpath={.data.FEATURE_CHECKOUT_V2}`,
            };
        if (!outcome.ok && whole.length)
            return {
                ...outcome,
                hint: `${whole.join(" and ")} ${whole.length === 1 ? "holds" : "hold"} more than the flag's value (the ConfigMap's data, as jsonpath={.data} prints it): write FEATURE_CHECKOUT_V2's value alone (kubectl -n shop-dev get configmap shop-config -o jsonpath={.data.FEATURE_CHECKOUT_V2})`,
            };
        // the ConfigMaps hold what the incident's commit set (FEATURE_CHECKOUT_V2: "true" in base): read right, the commit is to change
        const set = spelt.length && isSha(i.commit) ? await baseFlagAt(w, i.commit) : undefined;
        if (!outcome.ok && set !== undefined && set !== "on" && spelt.every((k) => bare(i[k]) === bare(set)))
            return { ...outcome, hint: `${i.commit.slice(0, 12)} ${wrongValue(set, i.commit)}` };
        if (!outcome.ok && spelt.length)
            return {
                ...outcome,
                hint: `${spelt.map((k) => `${k} holds ${JSON.stringify(i[k])}`).join(", ")}${quoted ? " (quote marks of its own, as jq prints a string without -r)" : ""}: values are compared exactly, as the ConfigMap holds them: write "on"`,
            };
        // the commit's base no YAML: the cluster shows what it showed before (off), and nothing of the incident is to read
        const unreadable =
            !outcome.ok && isSha(i.commit) && (await w.repo.isCommit(i.commit)) ? await baseUnreadable(w, i.commit) : undefined;
        if (unreadable)
            return {
                ...outcome,
                hint: `${i.commit.slice(0, 12)}'s base/configmap.yaml is no YAML (${unreadable}): ${notRendered(i.commit)}`,
            };
        const hint = outcome.ok || !isSha(i.commit) ? undefined : await overlayHint(w, i.commit);
        if (hint) return { ...outcome, hint };
        // the commit itself renders no "on" in an environment (it does not render; an overlay sets the flag over base): no
        // refresh shows what it does not render
        // (only for a commit whose base has it on: one before the incident renders off, and is no overlay's doing)
        if (!outcome.ok && isSha(i.commit) && (await w.repo.isCommit(i.commit)) && (await baseFlagAt(w, i.commit)) === "on")
            for (const [env, dir] of [
                ["dev", "envs/dev"],
                ["prod", "envs/prod"],
            ] as const) {
                const rendered = await renderShopConfigAt(w.repo, i.commit, dir, w.kubectl).then(
                    (d) => d.FEATURE_CHECKOUT_V2,
                    (e: unknown) => new Error(String((e as Error)?.message ?? e).split("\n")[0]),
                );
                if (rendered instanceof Error)
                    return {
                        ...outcome,
                        hint: `${i.commit.slice(0, 12)} does not render ${dir} (${rendered.message}): ${notRendered(i.commit)}`,
                    };
                if (rendered !== "on")
                    return {
                        ...outcome,
                        hint: `${i.commit.slice(0, 12)} renders FEATURE_CHECKOUT_V2 ${JSON.stringify(rendered ?? null)} in ${dir} (its overlay sets it over base?), so shop-${env} shows no "on" to read, refreshed or not: take that out of the overlay, then ${makeAgain(i.commit)}`,
                    };
            }
        return outcome;
    },
};

/** incident.commit is the one that turned the flag on in base (its parent has it off). */
export const INCIDENT_IN_BASE: Check<ShopWorld> = {
    step: 3,
    name: "incident.commit turns FEATURE_CHECKOUT_V2 on in base, its parent has it off",
    run: async (w) => {
        const commit = obj(w, "incident")?.commit;
        if (!isSha(commit)) return null;
        const [parent] = await w.repo.parents(commit);
        const inBase = (sha: string) => baseFlagAt(w, sha);
        const unreadable = await baseUnreadable(w, commit);
        if (unreadable)
            return {
                ok: false,
                expected: { commit: "on", parent: "off" },
                found: unreadable,
                hint: `${commit.slice(0, 12)}'s base/configmap.yaml is no YAML (${unreadable}): ${notRendered(commit)}`,
            };
        const now = await inBase(commit);
        const before = parent ? await inBase(parent) : undefined;
        const outcome = eq({ commit: "on", parent: "off" }, { commit: now, parent: before });
        if (outcome.ok) return outcome;
        if (now === "on" && before === "on") {
            // the commit that turned it on (the earliest with it on, along first parents): one that renders no "on" in both
            // environments (an overlay over base, or no render) cannot be the incident either, so it is not pointed to
            let on = parent;
            for (let i = 0; i < 50; i++) {
                const [up] = await w.repo.parents(on);
                if (!up || (await inBase(up)) !== "on") break;
                on = up;
            }
            const renders = async (dir: string) =>
                (await renderShopConfigAt(w.repo, on, dir, w.kubectl).catch(() => undefined))?.FEATURE_CHECKOUT_V2 === "on";
            const usable = (await renders("envs/dev")) && (await renders("envs/prod"));
            return {
                ...outcome,
                hint: usable
                    ? `${commit.slice(0, 12)}'s parent has FEATURE_CHECKOUT_V2 on in base already: incident.commit is the commit that turned it on, an earlier one (git log -G FEATURE_CHECKOUT_V2 --oneline main -- base/ lists the commits that changed it)`
                    : `${commit.slice(0, 12)}'s parent has FEATURE_CHECKOUT_V2 on in base already, and the commit that turned it on (${on.slice(0, 12)}) does not render it on in both environments (an overlay set it over base, or it does not render), so neither is the incident: turn the flag off in base/configmap.yaml in one commit and push, then on in the next, push, read the values, and write that commit as incident.commit`,
            };
        }
        // no parent, and not main's: the first commit amended (git commit --amend), whose push the repository refused
        if (!parent && now === "on" && w.main && !(await w.repo.isAncestor(commit, w.main).catch(() => false)))
            return {
                ...outcome,
                hint: `${commit.slice(0, 12)} has no parent and is not on main: an amended first commit (git commit --amend), whose push the repository refuses (it takes fast-forwards only); reset your main to origin/main, make the incident as a new commit on top, push it, and write that commit`,
            };
        const hint = now !== "on" ? await overlayHint(w, commit) : undefined;
        if (hint) return { ...outcome, hint };
        // another value than on ("true", enabled, a boolean): named, with the way on
        if (now !== undefined && now !== null && now !== "on" && now !== "off" && String(now).trim() !== "on")
            return { ...outcome, hint: `${commit.slice(0, 12)} ${wrongValue(now, commit)}` };
        // "on " or " on": the value with a space a reader cannot see, which the lab compares exactly
        if (typeof now === "string" && now !== "on" && now.trim() === "on")
            return {
                ...outcome,
                hint: `${commit.slice(0, 12)} sets FEATURE_CHECKOUT_V2 to ${JSON.stringify(now)} in base, with a space a reader cannot see: the value is "on" exactly; put it back with a new commit (git revert ${commit.slice(0, 12)}), then make the incident again with "on", push, and write that commit`,
            };
        // the flag off in base at incident.commit (step 1's first commit, the tip before any push): the incident was
        // not made in Git (a kubectl patch of the ConfigMaps, which selfHeal undoes), or its commit was not written
        if (now === "off")
            return {
                ...outcome,
                hint: `${commit.slice(0, 12)}${parent ? "" : " (step 1's first commit)"} has FEATURE_CHECKOUT_V2 off in base: the incident is a commit that turns it on in base/configmap.yaml, pushed to main (a kubectl patch of the ConfigMaps is drift, which selfHeal puts back); write that commit's SHA as incident.commit`,
            };
        return outcome;
    },
};

/** incident.commit renders the flag on in both overlays, its parent off in prod's (what step 4 pins prod back to). */
export const INCIDENT_RENDERS: Check<ShopWorld> = {
    step: 3,
    name: "incident.commit renders FEATURE_CHECKOUT_V2 on in envs/dev and envs/prod, its parent off in envs/prod",
    run: async (w) => {
        const commit = obj(w, "incident")?.commit;
        if (!isSha(commit)) return null;
        const [parent] = await w.repo.parents(commit);
        if (!parent) return null; // the check above says it has none
        const flag = async (sha: string, env: string) =>
            (await renderShopConfigAt(w.repo, sha, `envs/${env}`, w.kubectl)).FEATURE_CHECKOUT_V2;
        const outcome = eq(
            { dev: "on", prod: "on", parent_prod: "off" },
            { dev: await flag(commit, "dev"), prod: await flag(commit, "prod"), parent_prod: await flag(parent, "prod") },
        );
        return outcome.ok
            ? outcome
            : {
                  ...outcome,
                  hint: "the incident turns the flag on in base, so that both environments get it; its parent is what step 4 pins prod back to, so prod must render off there: an overlay that sets FEATURE_CHECKOUT_V2 decides it over base (keep the flag in base only, and make the incident again on a main whose overlays leave it alone)",
              };
    },
};

/** incident.commit on main, as main stood at it: not a side branch's commit that a merge brought in (Argo CD synced the merge). */
export const INCIDENT_ON_MAIN: Check<ShopWorld> = {
    step: 3,
    name: "incident.commit is on main",
    run: async (w) => {
        const commit = obj(w, "incident")?.commit;
        if (!isSha(commit) || !w.main) return null;
        if (await w.repo.isAncestor(commit, w.main)) {
            // brought in by a merge on main (git merge --no-ff of a feature branch): main never stood at it (its log, which
            // the lab's repository keeps), so no Application synced it; the merge is the commit main, and Argo CD, took
            const tips = await w.repo.tipsOf("main").catch(() => null);
            if (!tips || tips.includes(commit)) return true;
            for (const m of await w.repo.ownMerges(w.main, null)) {
                const [first] = await w.repo.parents(m);
                if (!(await w.repo.isAncestor(commit, m)) || (first && (await w.repo.isAncestor(commit, first)))) continue;
                return {
                    ok: false,
                    expected: "a commit main stood at",
                    found: `a commit of a side branch, which the merge ${m.slice(0, 12)} brought onto main`,
                    hint: `incident.commit ${commit.slice(0, 12)} is a commit of a side branch that main took in by the merge ${m.slice(0, 12)}; main never stood at it, so Argo CD synced the merge, not it: write ${m} as incident.commit (and as promote.to, once promoted)`,
                };
            }
            return true;
        }
        const on = (await w.repo.isCommit(commit)) ? await w.repo.branchesContaining(commit) : [];
        return {
            ok: false,
            expected: `an ancestor of main (${w.main})`,
            found: "not in main's history",
            hint: `incident.commit ${commit.slice(0, 12)} is not on main${on.length ? ` (it is on ${on.join(", ")})` : ""}, and Argo CD renders main for both environments: make the change on main (or merge it there) and push main, then write that commit`,
        };
    },
};
