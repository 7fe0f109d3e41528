import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { gitDaemonDeployment, gitDaemonService, GITD_IMAGE, GITSRV_NAMESPACE } from "../lab/platform/gitDaemon";

export interface GitDaemonArgs {
    /** The Kubernetes provider of the lab cluster. */
    provider: k8s.Provider;
    /** Host directory with the bare repositories (mounted read-only), e.g. /srv/bare. */
    hostPath: string;
    /** Image with `git daemon` in it (default: Debian bookworm's git, see lab/manifests.ts). */
    image?: string;
}

/**
 * The in-cluster git server: `git daemon` in namespace gitsrv serving the host's bare
 * repositories read-only at git://gitd.gitsrv.svc.cluster.local:9418/<repo>.
 */
export class GitDaemon extends pulumi.ComponentResource {
    /** The in-cluster base URL, git://gitd.gitsrv.svc.cluster.local:9418 */
    readonly baseUrl: pulumi.Output<string>;

    constructor(name: string, args: GitDaemonArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:GitDaemon", name, {}, opts);
        const k = { parent: this, provider: args.provider };
        const ns = new k8s.core.v1.Namespace(`${name}-ns`, { metadata: { name: GITSRV_NAMESPACE } }, k);
        const dep = gitDaemonDeployment({ hostPath: args.hostPath, image: args.image ?? GITD_IMAGE });
        const deployment = new k8s.apps.v1.Deployment(`${name}-deployment`, { metadata: dep.metadata, spec: dep.spec }, { ...k, dependsOn: [ns] });
        const svc = gitDaemonService();
        const service = new k8s.core.v1.Service(`${name}-service`, { metadata: svc.metadata, spec: svc.spec }, { ...k, dependsOn: [ns] });
        this.baseUrl = pulumi.interpolate`git://${service.metadata.name}.${service.metadata.namespace}.svc.cluster.local:9418`;
        this.registerOutputs({ baseUrl: this.baseUrl, deployment: deployment.metadata.name });
    }
}
