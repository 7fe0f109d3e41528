import * as pulumi from "@pulumi/pulumi";
import { ARGOCD_NAMESPACE } from "../lab/argo/application";
import { shopApplicationSet } from "../lab/shop/appset";
import { APPSET_NAME, REPO_URL } from "../lab/shop/layout";
import { labModule, PROJECT_DIR } from "../program/labModule";
import type { ApplicationSet } from "../lab/argo/types";

export interface ShopAppSetArgs {
    /** The cluster's kubeconfig (secret). */
    kubeconfig: pulumi.Input<string>;
    /** Prefix of the lab's host paths ("/" on a lab host): appset.yaml goes to <root>/root/cnpa-env/. */
    root: string;
    /** The repository URL Argo CD reads (default git://gitd.gitsrv.svc.cluster.local:9418/shop-envs.git). */
    repoURL?: pulumi.Input<string>;
    /** On destroy, how long to wait for Argo CD to delete the Applications before removing their finalizers by hand (default 120 s). */
    deleteTimeoutSeconds?: number;
    /** What must exist first: Argo CD (its CRDs and controllers), the repository, the git daemon. */
    after?: pulumi.Resource[];
}

/**
 * Runs in the engine's dynamic provider process. It has no `read`: `pulumi refresh` keeps the
 * recorded state, and an update re-applies only the template, never the list elements, so a pin
 * of prod to release/prod made by the scenario (or a learner) survives `pulumi up --refresh`.
 */
export interface ShopAppSetInputs {
    kubeconfig: string;
    root: string;
    /** On delete: how long to wait for Argo CD to delete the Applications before removing their finalizers by hand. */
    deleteTimeoutSeconds?: number;
    /** The ApplicationSet manifest as first applied. */
    manifest: ApplicationSet;
}
export type ShopAppSetOutputs = ShopAppSetInputs & { name: string; namespace: string };

async function applyAppSet(inputs: ShopAppSetInputs): Promise<{ id: string; outs: ShopAppSetOutputs }> {
    const { KubeCluster } = labModule(PROJECT_DIR, "cluster");
    const { shopLayout } = labModule(PROJECT_DIR, "layout");
    const { applyShopAppSet } = labModule(PROJECT_DIR, "shopAppSet");
    await applyShopAppSet(new KubeCluster(inputs.kubeconfig), shopLayout(inputs.root), inputs.manifest, (l: string) =>
        console.log(`[appset] ${l}`),
    );
    const m = inputs.manifest.metadata;
    return { id: `${m.namespace}/${m.name}`, outs: { ...inputs, name: m.name, namespace: m.namespace ?? "argocd" } };
}

export const shopAppSetProvider: pulumi.dynamic.ResourceProvider<ShopAppSetInputs, ShopAppSetOutputs> = {
    // the methods call module functions, never the provider object: it is not in the serialized closure
    create: applyAppSet,
    async update(_id, _olds, news) {
        return { outs: (await applyAppSet(news)).outs };
    },
    async delete(_id, props) {
        const { KubeCluster } = labModule(PROJECT_DIR, "cluster");
        const { shopLayout } = labModule(PROJECT_DIR, "layout");
        const { deleteShopAppSet } = labModule(PROJECT_DIR, "shopAppSet");
        // waits until Argo CD has deleted the Applications: Argo CD is uninstalled only after this returns
        await deleteShopAppSet(
            new KubeCluster(props.kubeconfig),
            shopLayout(props.root),
            props.name,
            props.namespace,
            (l: string) => console.log(`[appset] ${l}`),
            {
                timeoutMs: (props.deleteTimeoutSeconds ?? 120) * 1000,
            },
        );
    },
};

class ShopAppSetResource extends pulumi.dynamic.Resource {
    declare readonly name: pulumi.Output<string>;
    declare readonly namespace: pulumi.Output<string>;
    declare readonly manifest: pulumi.Output<ApplicationSet>;
    constructor(
        name: string,
        args: { kubeconfig: pulumi.Input<string>; root: string; manifest: pulumi.Input<ApplicationSet>; deleteTimeoutSeconds: number },
        opts?: pulumi.CustomResourceOptions,
    ) {
        super(shopAppSetProvider, name, { ...args, name: undefined, namespace: undefined }, opts);
    }
}

/** Step 2's ApplicationSet `shop` in argocd (dev and prod, both on main), also written to appset.yaml. */
export class ShopAppSet extends pulumi.ComponentResource {
    readonly name: pulumi.Output<string>;
    readonly namespace: pulumi.Output<string>;
    /** The manifest as first applied (the elements may change later: see README). */
    readonly manifest: pulumi.Output<ApplicationSet>;

    constructor(name: string, args: ShopAppSetArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:ShopAppSet", name, {}, opts);
        const manifest = pulumi
            .output(args.repoURL ?? REPO_URL)
            .apply((repoURL) => shopApplicationSet({ name: APPSET_NAME, namespace: ARGOCD_NAMESPACE, repoURL }));
        const res = new ShopAppSetResource(
            `${name}-appset`,
            { kubeconfig: args.kubeconfig, root: args.root, manifest, deleteTimeoutSeconds: args.deleteTimeoutSeconds ?? 120 },
            { parent: this, dependsOn: args.after, additionalSecretOutputs: ["kubeconfig"] },
        );
        this.name = res.name;
        this.namespace = res.namespace;
        this.manifest = res.manifest;
        this.registerOutputs({ name: this.name, namespace: this.namespace, manifest: this.manifest });
    }
}
