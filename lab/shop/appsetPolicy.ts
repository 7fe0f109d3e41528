/**
 * Step 2's ApplicationSet as the later steps need it: fields beside the lab's template that Argo CD obeys and
 * that stop a step from ever being done (the simulation obeys applicationsSync; ignoreDifferences it does not read,
 * so the grader says what a real Argo CD would do with it).
 */
import * as fs from "fs";
import type { ApplicationSet } from "../argo/types";
import { Check } from "../grader/grader";
import { readAppsetFile } from "./appsetFile";
import { ShopWorld } from "./world";

interface IgnoreDifference {
    group?: string;
    kind?: string;
    name?: string;
    namespace?: string;
    jsonPointers?: string[];
    jqPathExpressions?: string[];
}

/** What in an ApplicationSet keeps a later step from being done, each with why; empty when nothing does. */
export function policyProblems(set: Partial<ApplicationSet> | null | undefined): string[] {
    const problems: string[] = [];
    // utils.DefaultPolicy: with no controller policy (the install sets none) the ApplicationSet's own holds
    const policy = set?.spec?.syncPolicy?.applicationsSync;
    if (policy === "create-only" || policy === "create-delete")
        problems.push(
            `spec.syncPolicy.applicationsSync: ${policy} lets the ApplicationSet create its Applications but never update them: step 4's pin (prod's element on release/prod) then never reaches shop-prod; the lab's ApplicationSet sets no applicationsSync (take it out)`,
        );
    // an ignoreDifferences over shop-config: Argo CD leaves the field out when it compares, so the drift of step 5 is
    // never seen, and selfHeal never puts it back
    const spec = set?.spec?.template?.spec as { ignoreDifferences?: IgnoreDifference[] } | undefined;
    const ignored = (spec?.ignoreDifferences ?? []).filter(
        (d) => d && (d.kind ?? "") === "ConfigMap" && (d.group ?? "") === "" && (d.name === undefined || d.name === "shop-config"),
    );
    if (ignored.length)
        problems.push(
            `the template's ignoreDifferences covers ConfigMap shop-config (${
                ignored.flatMap((d) => [...(d.jsonPointers ?? []), ...(d.jqPathExpressions ?? [])]).join(", ") || "all of it"
            }): Argo CD leaves that out when it compares the cluster with Git, so step 5's drift is never seen and selfHeal never puts it back; the lab's template has no ignoreDifferences (take it out)`,
        );
    return problems;
}

export const APPSET_POLICY: Check<ShopWorld> = {
    step: 2,
    name: "appset.yaml lets Argo CD update the Applications and compare shop-config whole (no applicationsSync that stops updates, no ignoreDifferences over it)",
    run: async (w) => {
        if (!fs.existsSync(w.layout.appsetFile)) return null; // step 2's first check says so
        const file = readAppsetFile(w.layout.appsetFile);
        if (file.error !== undefined) return null;
        const problems = policyProblems(file.set);
        return problems.length
            ? {
                  ok: false,
                  expected: "neither",
                  found: problems.map((p) => p.split(":")[0]).join("; "),
                  hint: `${problems.join("; ")}; then kubectl apply -f ${w.layout.appsetFile}`,
              }
            : true;
    },
};
