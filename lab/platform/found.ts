/**
 * What an adopted cluster had before this stack: an Argo CD, or a namespace the lab would create.
 * The stack uses what it found and never removes it (`pulumi destroy` removes what `up` created);
 * what it creates itself carries CREATED_BY, so a later run tells the two apart.
 */
import { PROGRESSIVE_SYNCS_KEY } from "./argocd";

/** The label on every namespace the stack creates. */
export const CREATED_BY = { key: "gitops-lab.dev/created-by", value: "pulumi-stack" } as const;

/** What the reads of a cluster returned (nothing when there is no cluster yet). */
export interface ClusterReads {
    /** The namespaces that exist among those asked for, with their labels. */
    namespaces: { name: string; labels: Record<string, string> }[];
    /** Whether Argo CD's Application CRD exists. */
    applicationCrd: boolean;
    /** argocd/argocd-cmd-params-cm's data, when it exists. */
    cmdParams?: Record<string, string>;
}

export interface Found {
    /** An Argo CD this stack did not install: used as it is, never removed. */
    argocd: boolean;
    /** Whether that Argo CD has progressive syncs on (the tenants lab needs them). */
    progressiveSyncs: boolean;
    /** Namespaces the lab would create that were there before it (used, never removed). */
    namespaces: string[];
}

const ours = (labels: Record<string, string>) => labels[CREATED_BY.key] === CREATED_BY.value;

export function foundBeforeStack(reads: ClusterReads, argocdNamespace: string): Found {
    const argoNs = reads.namespaces.find((n) => n.name === argocdNamespace);
    const argocd = argoNs ? !ours(argoNs.labels) : reads.applicationCrd;
    if (argocd && !argoNs) {
        throw new Error(
            `the cluster has Argo CD's CRDs but no ${argocdNamespace} namespace: the lab uses an Argo CD in ${argocdNamespace} only; install it there, or adopt a cluster without Argo CD`,
        );
    }
    return {
        argocd,
        progressiveSyncs: reads.cmdParams?.[PROGRESSIVE_SYNCS_KEY] === "true",
        namespaces: reads.namespaces.filter((n) => n.name !== argocdNamespace && !ours(n.labels)).map((n) => n.name),
    };
}
