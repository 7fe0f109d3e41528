import * as pulumi from "@pulumi/pulumi";
import type { WorkloadRef } from "../lab/platform/readiness";
import { labModule, PROJECT_DIR } from "../program/labModule";

/** What the engine stores for a readiness wait. */
export interface WorkloadsReadyInputs {
    kubeconfig: string;
    namespace: string;
    workloads: readonly WorkloadRef[];
    timeoutSeconds: number;
    /** Give up on a Pod stuck in ErrImagePull/ImagePullBackOff/CrashLoopBackOff after this long. */
    hopelessAfterSeconds: number;
    /** Prefix of the progress lines, e.g. "argocd". */
    label: string;
    /** A Secret's key (of the same namespace) to read once ready, e.g. a password a workload wrote at its start. */
    readSecret?: { name: string; key: string };
}
export type WorkloadsReadyOutputs = WorkloadsReadyInputs & { ready: boolean; secretValue: string | null };

/** Runs in the engine's dynamic provider process: waits, printing progress, with its own deadline. */
async function waitReady(inputs: WorkloadsReadyInputs): Promise<{ id: string; outs: WorkloadsReadyOutputs }> {
    const { KubeCluster } = labModule(PROJECT_DIR, "cluster");
    const { waitWorkloadsReady } = labModule(PROJECT_DIR, "readiness");
    const cluster = new KubeCluster(inputs.kubeconfig);
    await waitWorkloadsReady(cluster, inputs.namespace, inputs.workloads, {
        timeoutMs: inputs.timeoutSeconds * 1000,
        hopelessAfterMs: inputs.hopelessAfterSeconds * 1000,
        log: (l: string) => console.log(`[${inputs.label}] ${l}`),
    });
    const secretValue = inputs.readSecret
        ? await cluster.getSecretValue(inputs.namespace, inputs.readSecret.name, inputs.readSecret.key)
        : null;
    return { id: `${inputs.namespace}-ready`, outs: { ...inputs, ready: true, secretValue } };
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

/**
 * Waits until Deployments/StatefulSets of one namespace are ready, then reads one key of a Secret
 * there if asked (a secret output). This deadline is the one that holds: the resources it waits for
 * are applied with pulumi-kubernetes' own await off.
 */
export class WorkloadsReady extends pulumi.dynamic.Resource {
    declare readonly ready: pulumi.Output<boolean>;
    /** The value of readSecret once ready (secret); null without readSecret, or when the Secret has no such key. */
    declare readonly secretValue: pulumi.Output<string | null>;
    constructor(
        name: string,
        args: {
            kubeconfig: pulumi.Input<string>;
            namespace: string;
            workloads: readonly WorkloadRef[];
            timeoutSeconds: number;
            hopelessAfterSeconds?: number;
            label: string;
            readSecret?: { name: string; key: string };
        },
        opts?: pulumi.CustomResourceOptions,
    ) {
        super(
            workloadsReadyProvider,
            name,
            { hopelessAfterSeconds: 90, ...args, ready: undefined, secretValue: undefined },
            { ...opts, additionalSecretOutputs: ["kubeconfig", "secretValue"] },
        );
    }
}
