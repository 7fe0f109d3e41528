import * as path from "path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ARGOCD_NAMESPACE } from "../lab/argo/application";
import { argoCdCmdParams, ARGOCD_WORKLOADS } from "../lab/platform/argocd";
import type { WorkloadRef } from "../lab/platform/readiness";
import { labModule, PROJECT_DIR } from "./labModule";

export interface ArgoCdArgs {
    /** The Kubernetes provider of the lab cluster (server-side apply on). */
    provider: k8s.Provider;
    /** The cluster's kubeconfig (secret), for the readiness check. */
    kubeconfig: pulumi.Input<string>;
    /** The kustomization that pins the upstream install (default components/argocd-install). */
    installDir?: string;
    /** How long to wait for the controllers (default 600 s). */
    readyTimeoutSeconds?: number;
}

/** What the engine stores for a readiness wait. */
export interface WorkloadsReadyInputs {
    kubeconfig: string;
    namespace: string;
    workloads: readonly WorkloadRef[];
    timeoutSeconds: number;
}
export type WorkloadsReadyOutputs = WorkloadsReadyInputs & { ready: boolean };

/** The dynamic provider that waits for Argo CD's controllers; runs in the engine's provider process. */
async function waitReady(inputs: WorkloadsReadyInputs): Promise<{ id: string; outs: WorkloadsReadyOutputs }> {
    const { KubeCluster } = labModule(PROJECT_DIR, "cluster");
    const { waitWorkloadsReady } = labModule(PROJECT_DIR, "readiness");
    await waitWorkloadsReady(new KubeCluster(inputs.kubeconfig), inputs.namespace, inputs.workloads, inputs.timeoutSeconds * 1000, (l: string) => console.log(`[argocd] ${l}`));
    return { id: `${inputs.namespace}-ready`, outs: { ...inputs, ready: true } };
}

export const workloadsReadyProvider: pulumi.dynamic.ResourceProvider<WorkloadsReadyInputs, WorkloadsReadyOutputs> = {
    create: waitReady,
    async update(_id, _olds, news) {
        return { outs: (await waitReady(news)).outs };
    },
    async delete() {
        /* nothing to undo: it only waited */
    },
};

class WorkloadsReady extends pulumi.dynamic.Resource {
    declare readonly ready: pulumi.Output<boolean>;
    constructor(name: string, args: { kubeconfig: pulumi.Input<string>; namespace: string; workloads: readonly WorkloadRef[]; timeoutSeconds: number }, opts?: pulumi.CustomResourceOptions) {
        super(workloadsReadyProvider, name, { ...args, ready: undefined }, opts);
    }
}

/**
 * Argo CD v3.5.1 (upstream non-HA install, pinned) in namespace argocd, with progressive syncs
 * switched on for the RollingSync lab. Ready only when the repo-server, the application
 * controller and the ApplicationSet controller are.
 */
export class ArgoCd extends pulumi.ComponentResource {
    /** The namespace Argo CD runs in (argocd). */
    readonly namespace: pulumi.Output<string>;
    /** Resolves when the controllers are ready: depend on the component to use Argo CD's CRDs. */
    readonly ready: pulumi.Output<boolean>;

    constructor(name: string, args: ArgoCdArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:ArgoCd", name, {}, opts);
        const k = { parent: this, provider: args.provider };

        const ns = new k8s.core.v1.Namespace(`${name}-ns`, { metadata: { name: ARGOCD_NAMESPACE } }, k);
        const params = argoCdCmdParams();
        const cmdParams = new k8s.core.v1.ConfigMap(`${name}-cmd-params`, { metadata: params.metadata, data: params.data }, { ...k, dependsOn: [ns] });
        const install = new k8s.kustomize.v2.Directory(
            `${name}-install`,
            { directory: args.installDir ?? path.join(PROJECT_DIR, "components", "argocd-install"), namespace: ARGOCD_NAMESPACE },
            { ...k, dependsOn: [cmdParams] },
        );
        const ready = new WorkloadsReady(
            `${name}-ready`,
            { kubeconfig: args.kubeconfig, namespace: ARGOCD_NAMESPACE, workloads: ARGOCD_WORKLOADS, timeoutSeconds: args.readyTimeoutSeconds ?? 600 },
            { parent: this, dependsOn: [install], additionalSecretOutputs: ["kubeconfig"] },
        );
        this.namespace = ns.metadata.name;
        this.ready = ready.ready;
        this.registerOutputs({ namespace: this.namespace, ready: this.ready });
    }
}
