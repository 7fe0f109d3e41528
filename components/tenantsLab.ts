import * as pulumi from "@pulumi/pulumi";
import type { Recovery, Stall } from "../lab/tenants/results";
import type { TenantsTimeouts } from "../lab/tenants/scenario";
import { labModule, PROJECT_DIR } from "../program/labModule";
import { LabRunInputs, labRunProvider } from "../program/labRunProvider";

export interface TenantsLabArgs {
    /** The cluster's kubeconfig (secret). */
    kubeconfig: pulumi.Input<string>;
    /** Prefix of the lab's host paths ("/" on a lab host): /srv/bare/platform.git, /root/tenants-lab. */
    root: string;
    /** Carry the lab out through this step: 1 (built, first rollout complete), 2 (stall.json), 3 (recovery.json). */
    solveThrough: number;
    /** Deadline of each of the lab's waits (the first rollout, the stall, the recovery), in seconds (default 900). */
    waitTimeoutSeconds?: number;
    /**
     * Where the releases' site images go: a registry the cluster mirrors registry.lab.internal from
     * (http://host:port), or empty to import them into k3s's containerd (`k3s ctr images import`).
     */
    imageRegistry?: string;
    /** On destroy, how long to wait for Argo CD to delete the tenants' Applications before removing their finalizers by hand (default 120 s). */
    deleteTimeoutSeconds?: number;
    /** What must exist first: Argo CD (with progressive syncs on) and the git daemon. */
    after?: pulumi.Resource[];
}

/** What the engine stores: the inputs ... */
export interface TenantsLabInputs extends LabRunInputs {
    kubeconfig: string;
    imageRegistry: string;
    timeouts: Partial<TenantsTimeouts>;
    deleteTimeoutSeconds: number;
}

/**
 * Runs in the engine's dynamic provider process. create and update build the lab and carry it out
 * through `solveThrough`, resuming from what is on the host; delete takes it down in the reverse
 * order (results, ApplicationSet and tenants' namespaces after Argo CD's finalizer, repository).
 */
export const tenantsLabProvider = labRunProvider<TenantsLabInputs, { stall: Stall | null; recovery: Recovery | null }>({
    setting: "tenantsSolveThrough",
    // a new kubeconfig (a reinstalled cluster's) is stored too: delete must reach the cluster that is there
    rerunOn: ["kubeconfig", "imageRegistry", "timeouts", "deleteTimeoutSeconds"],
    async solve(inputs) {
        const { KubeCluster } = labModule(PROJECT_DIR, "cluster");
        const { tenantsLayout } = labModule(PROJECT_DIR, "tenantsLayout");
        const { solveTenantsLab } = labModule(PROJECT_DIR, "tenantsSolve");
        const { labImages } = labModule(PROJECT_DIR, "images");
        const layout = tenantsLayout(inputs.root);
        const results = await solveTenantsLab(
            {
                layout,
                cluster: new KubeCluster(inputs.kubeconfig),
                images: labImages(inputs.imageRegistry),
                log: (l: string) => console.log(l),
                timeouts: inputs.timeouts,
            },
            inputs.solveThrough,
        );
        return {
            id: layout.workDir,
            outs: { ...inputs, completedThrough: inputs.solveThrough, stall: results.stall ?? null, recovery: results.recovery ?? null },
        };
    },
    async remove(props) {
        const { KubeCluster } = labModule(PROJECT_DIR, "cluster");
        const { tenantsLayout } = labModule(PROJECT_DIR, "tenantsLayout");
        const { teardownTenantsLab } = labModule(PROJECT_DIR, "tenantsTeardown");
        // waits until Argo CD has deleted the Applications: Argo CD is uninstalled only after this returns
        await teardownTenantsLab(tenantsLayout(props.root), new KubeCluster(props.kubeconfig), (l: string) => console.log(l), {
            timeoutMs: props.deleteTimeoutSeconds * 1000,
        });
    },
});

class TenantsLabRun extends pulumi.dynamic.Resource {
    declare readonly completedThrough: pulumi.Output<number>;
    declare readonly stall: pulumi.Output<Stall | null>;
    declare readonly recovery: pulumi.Output<Recovery | null>;
    constructor(
        name: string,
        args: Omit<TenantsLabInputs, "kubeconfig"> & { kubeconfig: pulumi.Input<string> },
        opts?: pulumi.CustomResourceOptions,
    ) {
        // every output is declared and seeded, so the engine knows it before the first create
        super(tenantsLabProvider, name, { ...args, completedThrough: undefined, stall: undefined, recovery: undefined }, opts);
    }
}

/**
 * Part 2, the tenants lab: the platform repository (/srv/bare/platform.git), the tenants' data, the
 * `tenants` ApplicationSet (RollingSync, a step per tenant) with its first rollout complete, then
 * the stall (stall.json) and the recovery (recovery.json) in /root/tenants-lab.
 */
export class TenantsLab extends pulumi.ComponentResource {
    readonly completedThrough: pulumi.Output<number>;
    readonly stall: pulumi.Output<Stall | null>;
    readonly recovery: pulumi.Output<Recovery | null>;

    constructor(name: string, args: TenantsLabArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:TenantsLab", name, {}, opts);
        if (!Number.isInteger(args.solveThrough) || args.solveThrough < 1 || args.solveThrough > 3) {
            throw new Error(`tenantsSolveThrough must be 1, 2 or 3, got ${args.solveThrough}`);
        }
        const ms = (args.waitTimeoutSeconds ?? 900) * 1000;
        const run = new TenantsLabRun(
            `${name}-run`,
            {
                kubeconfig: args.kubeconfig,
                root: args.root,
                imageRegistry: args.imageRegistry ?? "",
                solveThrough: args.solveThrough,
                timeouts: { rolloutMs: ms, stallMs: ms, recoveryMs: ms },
                deleteTimeoutSeconds: args.deleteTimeoutSeconds ?? 120,
            },
            { parent: this, dependsOn: args.after, additionalSecretOutputs: ["kubeconfig"] },
        );
        this.completedThrough = run.completedThrough;
        this.stall = run.stall;
        this.recovery = run.recovery;
        this.registerOutputs({ completedThrough: this.completedThrough, stall: this.stall, recovery: this.recovery });
    }
}
