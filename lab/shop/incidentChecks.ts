/**
 * Step 3's checks of the incident: the values the learner read, and the commit that turned the flag on
 * in the shared base (where an overlay's change instead is named as such).
 */
import { parse } from "yaml";
import { Check, eq } from "../grader/grader";
import { isSha } from "../grader/resultFiles";
import { obj, ShopWorld } from "./world";

/** The incident made in an overlay (envs/...) instead of base: said, since both environments share only base. */
async function overlayHint(w: ShopWorld, commit: string): Promise<string | undefined> {
    if (!(await w.repo.isCommit(commit))) return undefined;
    const changed: string[] = await w.repo.changedFiles(commit).catch(() => []);
    if (changed.includes("base/configmap.yaml") || !changed.some((f) => f.startsWith("envs/"))) return undefined;
    return `incident.commit does not change base/configmap.yaml (it changes ${changed.join(", ")}): the incident is a change to the shared base, which both environments render; make it there`;
}

/** The values the learner read: on in both environments (the incident reached both). */
export const INCIDENT_VALUES: Check<ShopWorld> = {
    step: 3,
    name: "incident: dev_value and prod_value are on",
    run: async (w) => {
        const i = obj(w, "incident");
        if (!i) return null;
        const outcome = eq({ dev_value: "on", prod_value: "on" }, { dev_value: i.dev_value, prod_value: i.prod_value });
        const hint = outcome.ok || !isSha(i.commit) ? undefined : await overlayHint(w, i.commit);
        return hint ? { ...outcome, hint } : outcome;
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
        const now = parse((await w.repo.file(commit, "base/configmap.yaml")) ?? "null")?.data?.FEATURE_CHECKOUT_V2;
        const before = parent ? parse((await w.repo.file(parent, "base/configmap.yaml")) ?? "null")?.data?.FEATURE_CHECKOUT_V2 : undefined;
        const outcome = eq({ commit: "on", parent: "off" }, { commit: now, parent: before });
        if (outcome.ok) return outcome;
        if (now === "on" && before === "on")
            return {
                ...outcome,
                hint: `${commit.slice(0, 12)}'s parent has FEATURE_CHECKOUT_V2 on in base already: incident.commit is the commit that turned it on, an earlier one (git log -G FEATURE_CHECKOUT_V2 --oneline main -- base/ lists the commits that changed it)`,
            };
        const hint = now !== "on" ? await overlayHint(w, commit) : undefined;
        return hint ? { ...outcome, hint } : outcome;
    },
};
