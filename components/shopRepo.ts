import * as pulumi from "@pulumi/pulumi";
import { readRepoFiles } from "../lab/shop/repoFiles";
import { labModule, PROJECT_DIR } from "../program/labModule";

export interface ShopRepoArgs {
    /** Prefix of the lab's host paths: "/" on a lab host (bare repo /srv/bare/shop-envs.git, clone /root/cnpa-env/repo). */
    root: string;
    /** Repository path -> content of the first commit (default: the files in gitrepo/shop/). */
    files?: Record<string, string>;
    /** What must exist first: the k3s install (step 1 runs kubectl, which k3s's installer puts on the host). */
    after?: pulumi.Resource[];
}

/** What the engine stores for step 1. */
export interface ShopRepoInputs {
    root: string;
    files: Record<string, string>;
}
export type ShopRepoOutputs = ShopRepoInputs & { initialCommit: string; bareRepo: string; clone: string };

/** Runs in the engine's dynamic provider process (see labModule.ts). */
export const shopRepoProvider: pulumi.dynamic.ResourceProvider<ShopRepoInputs, ShopRepoOutputs> = {
    async create(inputs) {
        const { shopLayout } = labModule(PROJECT_DIR, "layout");
        const { createShopRepo } = labModule(PROJECT_DIR, "shopRepo");
        const layout = shopLayout(inputs.root);
        const { initialCommit } = await createShopRepo(layout, inputs.files, (l: string) => console.log(`[shop-repo] ${l}`));
        return { id: layout.bareRepo, outs: { ...inputs, initialCommit, bareRepo: layout.bareRepo, clone: layout.clone } };
    },
    async diff(_id, olds, news) {
        // a new root is a new repository elsewhere; new files do not rewrite history (the first commit stays)
        const replaces = olds.root !== news.root ? ["root"] : [];
        return {
            changes: replaces.length > 0 || JSON.stringify(olds.files) !== JSON.stringify(news.files),
            replaces,
            deleteBeforeReplace: true,
        };
    },
    async update(_id, olds, news) {
        console.log("[shop-repo] gitrepo/shop/ changed, but the repository's history belongs to the lab now: nothing was pushed");
        return { outs: { ...olds, files: news.files } };
    },
    async delete(_id, props) {
        const { shopLayout } = labModule(PROJECT_DIR, "layout");
        const { deleteShopRepo } = labModule(PROJECT_DIR, "shopRepo");
        await deleteShopRepo(shopLayout(props.root), (l: string) => console.log(`[shop-repo] ${l}`));
    },
};

class ShopRepoResource extends pulumi.dynamic.Resource {
    declare readonly initialCommit: pulumi.Output<string>;
    declare readonly bareRepo: pulumi.Output<string>;
    declare readonly clone: pulumi.Output<string>;
    constructor(name: string, args: { root: string; files: Record<string, string> }, opts?: pulumi.CustomResourceOptions) {
        super(shopRepoProvider, name, { ...args, initialCommit: undefined, bareRepo: undefined, clone: undefined }, opts);
    }
}

/**
 * Step 1: the bare repository, the working clone and the first commit on main (base and the
 * dev/prod overlays from gitrepo/shop/, checked with kubectl kustomize before the push).
 */
export class ShopRepo extends pulumi.ComponentResource {
    /** SHA of the first commit on main. */
    readonly initialCommit: pulumi.Output<string>;
    readonly bareRepo: pulumi.Output<string>;
    readonly clone: pulumi.Output<string>;

    constructor(name: string, args: ShopRepoArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:ShopRepo", name, {}, opts);
        const repo = new ShopRepoResource(
            `${name}-git`,
            { root: args.root, files: args.files ?? readRepoFiles() },
            { parent: this, dependsOn: args.after },
        );
        this.initialCommit = repo.initialCommit;
        this.bareRepo = repo.bareRepo;
        this.clone = repo.clone;
        this.registerOutputs({ initialCommit: this.initialCommit, bareRepo: this.bareRepo, clone: this.clone });
    }
}
