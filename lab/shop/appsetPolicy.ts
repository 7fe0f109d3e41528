/**
 * Step 2's ApplicationSet as the later steps need it: fields beside the lab's template that Argo CD obeys and
 * that stop a step from ever being done (the simulation obeys applicationsSync; ignoreDifferences it does not read,
 * so the grader says what a real Argo CD would do with it).
 */
import * as fs from "fs";
import { applicationsSyncAllows } from "../argo/application";
import type { ApplicationSet } from "../argo/types";
import { Check } from "../grader/grader";
import { readAppsetFile } from "./appsetFile";
import { ShopWorld } from "./world";

/** Argo CD's match of an ignoreDifferences' group or kind: the value, or * (glob.Match). */
const glob = (pattern: unknown, value: string) => pattern === "*" || pattern === value;

interface IgnoreDifference {
    group?: string;
    kind?: string;
    name?: string;
    namespace?: string;
    jsonPointers?: string[];
    jqPathExpressions?: string[];
    managedFieldsManagers?: string[];
}

/** What in an ApplicationSet keeps a later step from being done, each with why; empty when nothing does. */
export function policyProblems(set: Partial<ApplicationSet> | null | undefined): string[] {
    const problems: string[] = [];
    // utils.DefaultPolicy: with no controller policy (the install sets none) the ApplicationSet's own holds
    const policy = set?.spec?.syncPolicy?.applicationsSync;
    if (!applicationsSyncAllows(policy).update)
        problems.push(
            `spec.syncPolicy.applicationsSync: ${policy} lets the ApplicationSet create its Applications but never update them: step 4's pin (prod's element on release/prod) then never reaches shop-prod; the lab's ApplicationSet sets no applicationsSync (take it out)`,
        );
    // an ignoreDifferences over shop-config's data: Argo CD leaves the field out when it compares, so a change of it in
    // the cluster is never seen (step 5's drift) and one in Git never applied as a difference (steps 3 and 6's flag)
    const spec = set?.spec?.template?.spec as { ignoreDifferences?: unknown } | undefined;
    const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
    const covered = new Set<string>();
    for (const d of (Array.isArray(spec?.ignoreDifferences) ? spec.ignoreDifferences : []) as IgnoreDifference[]) {
        if (
            !d ||
            typeof d !== "object" ||
            !glob(d.kind, "ConfigMap") ||
            !glob(d.group ?? "", "") ||
            !(d.name ? d.name === "shop-config" : true)
        )
            continue;
        const pointers = [...list(d.jsonPointers), ...list(d.jqPathExpressions)];
        if (!pointers.length && !list(d.managedFieldsManagers).length) ["LOG_LEVEL", "FEATURE_CHECKOUT_V2"].forEach((k) => covered.add(k));
        for (const p of pointers)
            for (const k of ["LOG_LEVEL", "FEATURE_CHECKOUT_V2"])
                if (/^(\/data|\.data)$/.test(p) || p === `/data/${k}` || p === `.data.${k}`) covered.add(k);
    }
    // fields Argo CD obeys that change what the Applications are or render (the simulation reads none of them, so the
    // grader says what a real Argo CD would do): the lab's ApplicationSet has none of them
    const top = set?.spec as { templatePatch?: unknown; ignoreApplicationDifferences?: unknown } | undefined;
    if (top?.templatePatch !== undefined)
        problems.push(
            `spec.templatePatch rewrites each Application beyond the template (Argo CD applies it after the template): the lab's ApplicationSet has none, and the pin goes in prod's element (revision: release/prod), so appset.yaml records it (take templatePatch out)`,
        );
    if (top?.ignoreApplicationDifferences !== undefined)
        problems.push(
            `spec.ignoreApplicationDifferences keeps fields of the Applications that the ApplicationSet would write (an edit of shop-prod by hand stays): the lab's ApplicationSet has none, and its steps change the Applications through the elements (take it out)`,
        );
    const source = (set?.spec?.template?.spec as { source?: Record<string, unknown> } | undefined)?.source ?? {};
    for (const [key, why] of [
        [
            "directory",
            "makes Argo CD read envs/{{env}} as a folder of plain YAML, not as a kustomization (the Kustomization file is applied itself, and no shop-config is made)",
        ],
        [
            "kustomize",
            "hands kustomize options of its own (a namePrefix renames shop-config, which the steps and the grader read by that name)",
        ],
        ["helm", "makes Argo CD render envs/{{env}} as a Helm chart, which it is not"],
        ["plugin", "makes Argo CD render envs/{{env}} with a config management plugin, which the lab has none of"],
    ] as const)
        if (source[key] !== undefined)
            problems.push(
                `the template's source.${key} ${why}: the lab's source has repoURL, targetRevision and path alone (take ${key} out)`,
            );
    if (covered.size)
        problems.push(
            `the template's ignoreDifferences covers shop-config's ${[...covered].join(" and ")}: Argo CD leaves ${covered.size === 1 ? "it" : "them"} out when it compares the cluster with Git, so ${[
                ...(covered.has("LOG_LEVEL") ? ["step 5's drift is never seen and selfHeal never puts it back"] : []),
                ...(covered.has("FEATURE_CHECKOUT_V2") ? ["the flag's changes (steps 3 and 6) are never synced"] : []),
            ].join(", and ")}; the lab's template has no ignoreDifferences (take it out)`,
        );
    return problems;
}

export const APPSET_POLICY: Check<ShopWorld> = {
    step: 2,
    name: "appset.yaml lets Argo CD update the Applications and compare shop-config whole (no applicationsSync that stops updates, no ignoreDifferences over it, nothing beside the template that rewrites or renders them otherwise)",
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
