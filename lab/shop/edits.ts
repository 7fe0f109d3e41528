/** The shop scenario's edits of the lab repository: pure text functions, tested on their own. */
import { isScalar, isSeq, parseDocument } from "yaml";

/** An edit the solver refuses because the step's change is on main already (made by hand): the way on is finishing it, or starting over. */
export class MadeByHand extends Error {}

/** base/configmap.yaml with FEATURE_CHECKOUT_V2 set to "on" (quoted: YAML 1.1 reads a bare on as a boolean). */
export function switchFeatureOn(text: string): string {
    const re = /^(\s*FEATURE_CHECKOUT_V2:\s*)("off"|'off'|off)\s*$/m;
    if (!re.test(text)) {
        // one line: the flag's own line as it stands (on already: step 3's commit made by hand, its incident.json not written)
        const line = /^\s*FEATURE_CHECKOUT_V2:.*$/m.exec(text)?.[0].trim();
        if (/:\s*("on"|'on'|on)\s*$/.test(line ?? ""))
            throw new MadeByHand(
                `base/configmap.yaml on main has ${line} already (step 3's commit made by hand?): the solver does not make it twice; write incident.json for that commit (verify --step 3 says what it holds), or start over`,
            );
        throw new Error(
            `base/configmap.yaml has no FEATURE_CHECKOUT_V2: "off" line to switch on (${line ? `its line: ${line}` : "no FEATURE_CHECKOUT_V2 line at all"})`,
        );
    }
    return text.replace(re, `$1"on"`);
}

/** envs/dev/kustomization.yaml with missing.yaml added to resources (or to bases:, its deprecated alias, where it has that alone). */
export function addMissingResource(text: string): string {
    const doc = parseDocument(text);
    const res = isSeq(doc.get("resources")) || !isSeq(doc.get("bases")) ? doc.get("resources") : doc.get("bases");
    if (!isSeq(res))
        throw new Error(
            `envs/dev/kustomization.yaml has no resources list (resources: holds ${JSON.stringify(doc.toJS()?.resources ?? null)})`,
        );
    // listed already: step 7's bad commit made by hand (the solver's own is found by its message before this edit)
    if (res.items.some((i) => String(isScalar(i) ? i.value : i) === "missing.yaml"))
        throw new MadeByHand(
            "envs/dev/kustomization.yaml on main lists missing.yaml already (step 7's bad commit made by hand?): the solver does not make it twice; finish step 7 by hand (read shop-dev's error, revert that commit and push, write revert.json: verify --step 7 says what it holds), or start over",
        );
    res.add("missing.yaml");
    return doc.toString();
}
