import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ARGOCD_NAMESPACE } from "../lab/argo/application";
import {
    argoCdCmdParams,
    argoCdInstallDir,
    ArgoCdVersion,
    ARGOCD_UI,
    ARGOCD_WORKLOADS,
    INITIAL_ADMIN_SECRET,
} from "../lab/platform/argocd";
import { CREATED_BY } from "../lab/platform/found";
import { PROJECT_DIR } from "../program/labModule";
import { WorkloadsReady } from "./workloadsReady";

export interface ArgoCdArgs {
    /** The Kubernetes provider of the lab cluster (server-side apply on). */
    provider: k8s.Provider;
    /** The cluster's kubeconfig (secret), for the readiness check. */
    kubeconfig: pulumi.Input<string>;
    /** The Argo CD version to install (default DEFAULT_ARGOCD_VERSION): its pinned install in components/argocd-install/<version>. */
    version?: ArgoCdVersion;
    /** Another kustomization to apply instead (tests). */
    installDir?: string;
    /** How long to wait for the controllers (default 600 s). */
    readyTimeoutSeconds?: number;
    /**
     * An Argo CD the adopted cluster had before this stack (program/foundInCluster.ts): used as it is,
     * nothing applied, nothing removed on destroy.
     */
    found?: boolean;
}

/**
 * Argo CD (upstream non-HA install of the chosen version, pinned) in namespace argocd, with progressive syncs
 * switched on for the RollingSync lab. Ready only when the repo-server, the application
 * controller, the ApplicationSet controller and argocd-server are; the wait then reads the admin
 * password argocd-server generated.
 */
export class ArgoCd extends pulumi.ComponentResource {
    /** The namespace Argo CD runs in (argocd). */
    readonly namespace: pulumi.Output<string>;
    /** Resolves when the controllers and the server are ready: depend on the component to use Argo CD's CRDs. */
    readonly ready: pulumi.Output<boolean>;
    /** "installed" by this stack, or "found" in the adopted cluster (and left there on destroy). */
    readonly mode: pulumi.Output<string>;
    /** How to open the UI from the lab host (a port-forward to argocd-server). */
    readonly ui: pulumi.Output<string>;
    /** The admin user's initial password (secret), as argocd-server generated it; null for a found Argo CD. */
    readonly adminPassword: pulumi.Output<string | null>;

    constructor(name: string, args: ArgoCdArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:ArgoCd", name, {}, opts);
        const k = { parent: this, provider: args.provider };
        this.mode = pulumi.output(args.found ? "found" : "installed");
        this.ui = pulumi.output(ARGOCD_UI);
        if (args.found) {
            // used, not owned: the lab needs its CRDs and controllers, which the adopted cluster runs its own way
            this.namespace = pulumi.output(ARGOCD_NAMESPACE);
            this.ready = pulumi.output(true);
            this.adminPassword = pulumi.output(null);
            this.registerOutputs({
                namespace: this.namespace,
                ready: this.ready,
                mode: this.mode,
                ui: this.ui,
                adminPassword: this.adminPassword,
            });
            return;
        }

        const ns = new k8s.core.v1.Namespace(
            `${name}-ns`,
            { metadata: { name: ARGOCD_NAMESPACE, labels: { [CREATED_BY.key]: CREATED_BY.value } } },
            k,
        );
        const params = argoCdCmdParams();
        const cmdParams = new k8s.core.v1.ConfigMap(
            `${name}-cmd-params`,
            { metadata: params.metadata, data: params.data },
            { ...k, dependsOn: [ns] },
        );
        const install = new k8s.kustomize.v2.Directory(
            `${name}-install`,
            // skipAwait: the readiness wait below, with argocdReadyTimeoutSeconds, is the deadline that holds
            {
                directory: args.installDir ?? argoCdInstallDir(args.version, PROJECT_DIR),
                namespace: ARGOCD_NAMESPACE,
                skipAwait: true,
            },
            { ...k, dependsOn: [cmdParams] },
        );
        const ready = new WorkloadsReady(
            `${name}-ready`,
            {
                kubeconfig: args.kubeconfig,
                namespace: ARGOCD_NAMESPACE,
                workloads: ARGOCD_WORKLOADS,
                timeoutSeconds: args.readyTimeoutSeconds ?? 600,
                label: "argocd",
                // written by argocd-server before it is ready, which the wait includes: read there, never owned (a
                // Secret.get would fail at preview, before argocd-server exists)
                readSecret: { name: INITIAL_ADMIN_SECRET, key: "password" },
            },
            { parent: this, dependsOn: [install] },
        );
        this.adminPassword = pulumi.secret(ready.secretValue);
        this.namespace = ns.metadata.name;
        this.ready = ready.ready;
        this.registerOutputs({
            namespace: this.namespace,
            ready: this.ready,
            mode: this.mode,
            ui: this.ui,
            adminPassword: this.adminPassword,
        });
    }
}
