import * as pulumi from "@pulumi/pulumi";
import { labModule, PROJECT_DIR } from "../program/labModule";

export interface LabResetArgs {
    /** The cluster's kubeconfig (secret). */
    kubeconfig: pulumi.Input<string>;
    /** The namespaces the labs deploy to (shop-dev, shop-prod, the tenants'). */
    namespaces: string[];
    /** Of those, the ones the cluster had before the stack: never deleted (recorded when first seen). */
    namespacesFound: string[];
    /** The start of the URL of every repository the lab's git daemon serves. */
    repoPrefix: string;
    /** Whether the stack installed Argo CD (then it goes after this, and no Application may keep a finalizer). */
    argocdInstalled: boolean;
    /** On destroy, the deadline for all of it (default 120 s). */
    deleteTimeoutSeconds?: number;
    /** Argo CD and the git daemon: the reset runs while both still run (destroy takes this down first). */
    after?: pulumi.Resource[];
}

/** What the provider keeps in the state: `kept` is recorded once, so a namespace the lab made is never read as found later. */
export interface LabResetProps {
    kubeconfig: string;
    namespaces: string[];
    kept: string[];
    repoPrefix: string;
    argocdInstalled: boolean;
    deleteTimeoutSeconds: number;
}
type Inputs = Omit<LabResetProps, "kept"> & { namespacesFound: string[] };

/** The first sight of each namespace decides: found before the stack, or the lab's. */
function record(news: Inputs, olds?: LabResetProps): LabResetProps {
    const known = olds?.namespaces ?? [];
    const newlyFound = news.namespacesFound.filter((n) => !known.includes(n));
    const { namespacesFound: _found, ...rest } = news;
    return { ...rest, kept: [...new Set([...(olds?.kept ?? []), ...newlyFound])].filter((n) => news.namespaces.includes(n)) };
}

export const labResetProvider: pulumi.dynamic.ResourceProvider<Inputs, LabResetProps> = {
    async create(news) {
        return { id: "lab-reset", outs: record(news) };
    },
    async update(_id, olds, news) {
        return { outs: record(news, olds as unknown as LabResetProps) };
    },
    async delete(_id, props) {
        const { KubeCluster } = labModule(PROJECT_DIR, "cluster");
        const { resetLabObjects } = labModule(PROJECT_DIR, "reset");
        await resetLabObjects(
            new KubeCluster(props.kubeconfig),
            {
                namespaces: props.namespaces,
                kept: props.kept,
                repoPrefix: props.repoPrefix,
                argocdGoes: props.argocdInstalled,
            },
            (l: string) => console.log(`[lab-reset] ${l}`),
            { timeoutMs: props.deleteTimeoutSeconds * 1000 },
        );
    },
};

class LabResetResource extends pulumi.dynamic.Resource {
    declare readonly kept: pulumi.Output<string[]>;
    constructor(name: string, inputs: pulumi.Inputs, opts?: pulumi.CustomResourceOptions) {
        super(labResetProvider, name, { ...inputs, kept: undefined }, opts);
    }
}

/**
 * Nothing on `up`; on `destroy`, before Argo CD and the git daemon go, whatever of the labs is in
 * Argo CD (the stack's or a learner's ApplicationSets and Applications) and the labs' namespaces
 * (lab/argo/reset.ts): a lab done by hand resets like a solved one.
 */
export class LabReset extends pulumi.ComponentResource {
    /** The labs' namespaces that were there before the stack (kept by destroy). */
    readonly kept: pulumi.Output<string[]>;

    constructor(name: string, args: LabResetArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:LabReset", name, {}, opts);
        const inputs = {
            kubeconfig: args.kubeconfig,
            namespaces: args.namespaces,
            namespacesFound: args.namespacesFound,
            repoPrefix: args.repoPrefix,
            argocdInstalled: args.argocdInstalled,
            deleteTimeoutSeconds: args.deleteTimeoutSeconds ?? 120,
        };
        const res = new LabResetResource(`${name}-objects`, inputs, {
            parent: this,
            dependsOn: args.after,
            additionalSecretOutputs: ["kubeconfig"],
        });
        this.kept = res.kept;
        this.registerOutputs({ kept: this.kept });
    }
}
