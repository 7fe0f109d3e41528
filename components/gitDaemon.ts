import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { CREATED_BY } from "../lab/platform/found";
import { gitDaemonDeployment, gitDaemonService, GITD_IMAGE, GITD_NAME, GITSRV_NAMESPACE } from "../lab/platform/gitDaemon";
import { WorkloadsReady } from "./workloadsReady";
import type { KubeObject } from "../lab/argo/types";

export interface GitDaemonArgs {
    /** The Kubernetes provider of the lab cluster. */
    provider: k8s.Provider;
    /** The cluster's kubeconfig (secret), for the readiness wait. */
    kubeconfig: pulumi.Input<string>;
    /** Host directory with the bare repositories (mounted read-only), e.g. /srv/bare. */
    hostPath: string;
    /** Image with `git daemon` in it (default: Debian bookworm's git, see lab/platform/gitDaemon.ts). */
    image?: string;
    /** How long to wait for the daemon's Pod to be ready (default 300 s). */
    readyTimeoutSeconds?: number;
    /** The namespace was in the adopted cluster before this stack: used, not created, never removed. */
    namespaceFound?: boolean;
}

/**
 * The in-cluster git server: `git daemon` in namespace gitsrv serving the host's bare
 * repositories read-only at git://gitd.gitsrv.svc.cluster.local:9418/<repo>. Ready only when its
 * Deployment is (with a deadline of its own, and an early end on an image that cannot be pulled).
 */
export class GitDaemon extends pulumi.ComponentResource {
    /** The in-cluster base URL, git://gitd.gitsrv.svc.cluster.local:9418 */
    readonly baseUrl: pulumi.Output<string>;
    /** Resolves when the daemon's Pod is ready. */
    readonly ready: pulumi.Output<boolean>;

    constructor(name: string, args: GitDaemonArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:GitDaemon", name, {}, opts);
        const k = { parent: this, provider: args.provider };
        const ns = args.namespaceFound
            ? []
            : [
                  new k8s.core.v1.Namespace(
                      `${name}-ns`,
                      { metadata: { name: GITSRV_NAMESPACE, labels: { [CREATED_BY.key]: CREATED_BY.value } } },
                      k,
                  ),
              ];
        const dep = gitDaemonDeployment({ hostPath: args.hostPath, image: args.image ?? GITD_IMAGE });
        // pulumi-kubernetes' own awaits are off: the readiness wait below is the deadline that holds (the Service's
        // would wait up to 10 minutes for a ready Pod behind it before the lab's wait could say why there is none)
        // the lab's plain manifests (lab/platform/gitDaemon.ts) as Pulumi's input types
        const skipAwait = (m: KubeObject["metadata"]): k8s.types.input.meta.v1.ObjectMeta => ({
            name: m?.name,
            namespace: m?.namespace,
            labels: m?.labels,
            annotations: { ...(m?.annotations ?? {}), "pulumi.com/skipAwait": "true" },
        });
        const metadata = skipAwait(dep.metadata);
        const deployment = new k8s.apps.v1.Deployment(
            `${name}-deployment`,
            { metadata, spec: dep.spec as k8s.types.input.apps.v1.DeploymentSpec },
            { ...k, dependsOn: ns },
        );
        const svc = gitDaemonService();
        const service = new k8s.core.v1.Service(
            `${name}-service`,
            { metadata: skipAwait(svc.metadata), spec: svc.spec as k8s.types.input.core.v1.ServiceSpec },
            { ...k, dependsOn: ns },
        );
        const ready = new WorkloadsReady(
            `${name}-ready`,
            {
                kubeconfig: args.kubeconfig,
                namespace: GITSRV_NAMESPACE,
                workloads: [{ kind: "Deployment", name: GITD_NAME }],
                timeoutSeconds: args.readyTimeoutSeconds ?? 300,
                label: "gitd",
            },
            { parent: this, dependsOn: [deployment, service] },
        );
        this.baseUrl = pulumi.interpolate`git://${service.metadata.name}.${service.metadata.namespace}.svc.cluster.local:9418`;
        this.ready = ready.ready;
        this.registerOutputs({ baseUrl: this.baseUrl, ready: this.ready });
    }
}
