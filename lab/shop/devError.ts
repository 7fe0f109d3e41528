/** Step 7's dev_error: the message of shop-dev's ComparisonError, as a learner copies it (or copies more, or less). */
import { shellWord } from "../ports/shellWord";
import { Check } from "../grader/grader";
import { isSha } from "../grader/resultFiles";
import { obj, ShopWorld } from "./world";

const COPY = `(kubectl -n argocd get application shop-dev -o jsonpath='{.status.conditions[0].message}'), which names missing.yaml`;

/** The conditions (or one condition) as jsonpath prints them, JSON: their types and times around the message. */
function conditionsJson(v: string): boolean {
    if (!/^\s*[[{]/.test(v)) return false;
    try {
        const parsed: unknown = JSON.parse(v);
        return [parsed].flat().some((c) => !!c && typeof c === "object" && "message" in c);
    } catch {
        return false;
    }
}

/** Words of the message Argo CD writes for an overlay naming a file the repository lacks (kustomize's, as the repo-server passes them on). */
const KUSTOMIZE_WORDS =
    /accumulating resources|kustomize build|no such file|evalsymlink|Failed to load target state|must build at directory/i;

export const DEV_ERROR: Check<ShopWorld> = {
    step: 7,
    name: "dev_error is the ComparisonError's message (it mentions missing.yaml)",
    run: async (w) => {
        const r = obj(w, "revert");
        if (!r) return null;
        const v = r.dev_error;
        const mentions = typeof v === "string" && v.includes("missing.yaml");
        // Argo CD's message is kustomize's error (accumulating resources … missing.yaml … no such file or directory):
        // a line typed by hand that only names the file ("error: missing.yaml not found") is not what shop-dev showed
        const argoWords = typeof v === "string" && KUSTOMIZE_WORDS.test(v);
        const named = mentions && argoWords;
        const typed = mentions && !argoWords && !conditionsJson(String(v));
        // the whole condition (or the list of them) copied as JSON: its type and times beside the message
        const json = typeof v === "string" && conditionsJson(v);
        // the condition's type (or reason) for its message
        const typeOnly = !named && typeof v === "string" && /^\s*(ComparisonError|InvalidSpecError|Unknown|OutOfSync)\s*$/.test(v);
        const empty = !named && (v === null || (typeof v === "string" && !v.trim()));
        // copied from kubectl describe with its label and padding ("Message:   Failed to load target state: …")
        const described = typeof v === "string" && /^\s*Message:\s/.test(v);
        // the last sync operation's message (status.operationState.message), read for the condition's
        const operation =
            !named &&
            typeof v === "string" &&
            /^(successfully synced|one or more synchronization tasks|waiting for|sync operation)/i.test(v.trim());
        return {
            ok: named && !json && !described,
            expected: "…missing.yaml…",
            found: v,
            ...(described
                ? {
                      hint: `dev_error holds kubectl describe's "Message:" label and its padding before the message: write the message alone (kubectl -n argocd get application shop-dev -o jsonpath='{.status.conditions[?(@.type=="ComparisonError")].message}')`,
                  }
                : json
                  ? {
                        hint: `dev_error holds the conditions as JSON (their type and lastTransitionTime with the message), as jsonpath={.status.conditions} prints them: write the ComparisonError's message alone (kubectl -n argocd get application shop-dev -o jsonpath='{.status.conditions[?(@.type=="ComparisonError")].message}')`,
                    }
                  : operation
                    ? {
                          hint: `dev_error holds ${JSON.stringify(v)}, the last sync operation's message (status.operationState.message), not the error: the error is the ComparisonError condition's message ${COPY}`,
                      }
                    : typeOnly
                      ? { hint: `dev_error holds the condition's type; copy its message ${COPY}` }
                      : empty
                        ? { hint: `dev_error is empty: copy the message of shop-dev's ComparisonError while it shows ${COPY}` }
                        : typed
                          ? {
                                hint: `dev_error holds ${JSON.stringify(v)}, which names missing.yaml in words of its own, not Argo CD's: the step copies the ComparisonError's message as shop-dev showed it (kustomize's "accumulating resources from 'missing.yaml' … no such file or directory") ${COPY}; once reverted, kustomize prints the same words at bad_commit (git -C ${shellWord(w.layout.clone)} worktree add /tmp/bad ${isSha(r.bad_commit) ? String(r.bad_commit).slice(0, 12) : "BAD_COMMIT"}, then kubectl kustomize /tmp/bad/envs/dev)`,
                            }
                          : {}),
        };
    },
};
