/**
 * The live part of a lab's grader, the same for every lab: whether the cluster answers (read once
 * with the world), the check that says so, the checks that read it (skipped when it does not
 * answer, or offline), and the checks that each stack output equals its result file.
 */
import { ARGOCD_NAMESPACE } from "../argo/application";
import { ClusterPort } from "../ports/cluster";
import { Check, eq, Outcome } from "./grader";
import { messageOf } from "../ports/errors";

/** What a world holds of the cluster: none offline, and why it did not answer when it did not. */
export interface LiveWorld {
    cluster?: ClusterPort;
    /** Why the cluster did not answer (undefined: it did, or offline). */
    clusterError?: string;
    /** `pulumi stack output --json` of the lab's stack, if there is one to compare with. */
    stackOutputs?: Record<string, unknown>;
}

/** Reads the lab's ApplicationSet once: undefined when the cluster answers (or there is none to ask), else why not. */
export async function clusterErrorOf(cluster: ClusterPort | undefined, appset: string): Promise<string | undefined> {
    if (!cluster) return undefined;
    try {
        if (await cluster.getApplicationSet(appset)) return undefined;
        // none: deleted (the checks say how it comes back), or a cluster with no Argo CD at all (another kubeconfig),
        // or Argo CD's own namespace deleted by hand, which took Argo CD with it
        if (await cluster.hasCrd("applicationsets.argoproj.io")) {
            const home = await cluster.getNamespace(ARGOCD_NAMESPACE);
            if (home && !home.metadata?.deletionTimestamp) return undefined;
            return `the namespace ${ARGOCD_NAMESPACE} is ${home ? "being deleted" : "gone"} (kubectl delete namespace ${ARGOCD_NAMESPACE}?): Argo CD ran in it, with its project default and the lab's ApplicationSet; nothing brings it back by hand: set the lab up again (the lab's reset, then the lab again)`;
        }
        return `${cluster.where ?? "the cluster"} answers but has no Argo CD (no CRD applicationsets.argoproj.io): a kubeconfig of another cluster? give the lab's with --kubeconfig FILE`;
    } catch (e) {
        return messageOf(e);
    }
}

/**
 * The hint for a lab's ApplicationSet missing from a cluster that answers: deleted, or the cluster of the
 * other lab (each served lab has its own), which says so when it holds that lab's ApplicationSet.
 */
export async function missingAppSetHint(
    c: ClusterPort,
    mine: string,
    file: string,
    other: { lab: string; appset: string },
): Promise<string> {
    // applied into another namespace (appset.yaml without namespace: argocd): Argo CD reads its own namespace only
    const elsewhere = (await c.listApplicationSets().catch(() => [])).find(
        (s) => s.metadata.name === mine && s.metadata.namespace !== ARGOCD_NAMESPACE,
    );
    if (elsewhere)
        return `the ApplicationSet ${mine} is in namespace ${elsewhere.metadata.namespace}, where Argo CD does not look (it reads ${ARGOCD_NAMESPACE} only): set metadata.namespace: ${ARGOCD_NAMESPACE} in ${file}, kubectl apply -f ${file}, then kubectl delete applicationset ${mine} -n ${elsewhere.metadata.namespace}`;
    const theirs = await c.getApplicationSet(other.appset).catch(() => null);
    return theirs
        ? `${c.where ?? "the cluster"} has no ApplicationSet ${mine} but the ${other.lab} lab's ${other.appset}: the kubeconfig of the other lab? give this lab's with --kubeconfig FILE (if it is this lab's cluster, kubectl apply -f ${file} brings ${mine} back)`
        : `the ApplicationSet ${mine} is not in the cluster (deleted?): kubectl apply -f ${file} brings it back`;
}

export const CLUSTER_ANSWERS = "the cluster answers";

/** "the cluster answers", from `step` on whenever there is a cluster to ask. */
export function clusterAnswers<W extends LiveWorld>(step: number): Check<W> {
    return {
        step,
        name: CLUSTER_ANSWERS,
        applies: (through, w) => through >= step && !!w.cluster,
        run: async (w) =>
            w.clusterError
                ? {
                      ok: false,
                      expected: "an answer from the Kubernetes API",
                      found: w.clusterError,
                      hint: `${w.clusterError}; or --offline to grade the files and repository only`,
                  }
                : true,
    };
}

/** A check of the live cluster at `step`: it runs only when the cluster answers. */
export function liveCheck<W extends LiveWorld>(
    step: number | ((w: W) => number),
    name: string | ((w: W) => string),
    run: (c: ClusterPort, w: W) => Promise<Outcome | boolean | null>,
    opts: { yieldsToLaterSteps?: boolean } = {},
): Check<W> {
    return {
        step,
        name,
        live: true,
        ...opts,
        applies: (through, w) => through >= (typeof step === "number" ? step : step(w)) && !!w.cluster && !w.clusterError,
        run: (w) => run(w.cluster!, w),
    };
}

/**
 * Each stack output equals its result file (`output` names the output of a result), when the stack's
 * outputs were given; not run while the file is missing or unreadable (its own checks say so).
 */
export function stackOutputChecks<N extends string, W extends LiveWorld>(o: {
    names: readonly N[];
    stepOf: Record<N, number>;
    output: (name: N) => string;
    result: (w: W, name: N) => unknown;
}): Check<W>[] {
    return o.names.map((name) => ({
        step: o.stepOf[name],
        name: `stack output ${o.output(name)} equals ${name}.json`,
        applies: (through, w) => o.stepOf[name] <= through && !!w.stackOutputs,
        run: async (w) => {
            const value = o.result(w, name);
            return value === undefined || value === null ? null : eq(value, w.stackOutputs?.[o.output(name)] ?? null);
        },
    }));
}
