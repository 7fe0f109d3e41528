/**
 * Pure manifest builders: the objects the lab applies, as plain data. No I/O, no Pulumi.
 */
import { stringify } from "yaml";
import { APPSET_NAME, ARGOCD_NAMESPACE, REPO_URL } from "./layout";

// ---------------------------------------------------------------------------------------------
// The shop ApplicationSet (LAB-SPEC.md Part 1, step 2)

/** One list-generator element. Argo CD requires every value to be a string. */
export interface ShopElement {
    env: "dev" | "prod";
    revision: string;
}

export const INITIAL_ELEMENTS: ShopElement[] = [
    { env: "dev", revision: "main" },
    { env: "prod", revision: "main" },
];

export interface ShopAppSetOptions {
    name?: string;
    namespace?: string;
    repoURL?: string;
    elements?: ShopElement[];
}

export function shopApplicationSet(opts: ShopAppSetOptions = {}): any {
    const elements = (opts.elements ?? INITIAL_ELEMENTS).map((e) => ({ env: String(e.env), revision: String(e.revision) }));
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "ApplicationSet",
        metadata: { name: opts.name ?? APPSET_NAME, namespace: opts.namespace ?? ARGOCD_NAMESPACE },
        spec: {
            generators: [{ list: { elements } }],
            template: {
                metadata: { name: "shop-{{env}}" },
                spec: {
                    project: "default",
                    source: { repoURL: opts.repoURL ?? REPO_URL, targetRevision: "{{revision}}", path: "envs/{{env}}" },
                    destination: { server: "https://kubernetes.default.svc", namespace: "shop-{{env}}" },
                    syncPolicy: {
                        automated: { prune: true, selfHeal: true },
                        syncOptions: ["CreateNamespace=true"],
                    },
                },
            },
        },
    };
}

/** The list elements of an ApplicationSet object (live or generated), or a clear error. */
export function listElements(appset: any): ShopElement[] {
    const els = appset?.spec?.generators?.[0]?.list?.elements;
    if (!Array.isArray(els)) {
        throw new Error(`ApplicationSet ${appset?.metadata?.name ?? "?"} has no list generator at spec.generators[0].list.elements`);
    }
    return els;
}

export function toYaml(obj: unknown): string {
    return stringify(obj, { lineWidth: 0 });
}

// ---------------------------------------------------------------------------------------------
// Argo CD install

export const ARGOCD_VERSION = "v3.5.1";
export const ARGOCD_INSTALL_URL = `https://raw.githubusercontent.com/argoproj/argo-cd/${ARGOCD_VERSION}/manifests/install.yaml`;
export const PROGRESSIVE_SYNCS_KEY = "applicationsetcontroller.enable.progressive.syncs";

/**
 * argocd-cmd-params-cm with progressive syncs on. It is applied on its own, before the install,
 * so the ApplicationSet controller reads the key when it first starts (the key is read from the
 * environment at start-up; changing it later needs a restart). The install overlay deletes the
 * upstream (empty) copy so the two never fight over it.
 */
export function argoCdCmdParams(): any {
    return {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
            name: "argocd-cmd-params-cm",
            namespace: ARGOCD_NAMESPACE,
            labels: { "app.kubernetes.io/name": "argocd-cmd-params-cm", "app.kubernetes.io/part-of": "argocd" },
        },
        data: { [PROGRESSIVE_SYNCS_KEY]: "true" },
    };
}

/** The workloads that must be ready before the lab can use Argo CD. */
export const ARGOCD_WORKLOADS = [
    { kind: "Deployment", name: "argocd-repo-server" },
    { kind: "StatefulSet", name: "argocd-application-controller" },
    { kind: "Deployment", name: "argocd-applicationset-controller" },
] as const;

// ---------------------------------------------------------------------------------------------
// The git daemon

export const GITSRV_NAMESPACE = "gitsrv";
export const GITD_NAME = "gitd";
export const GITD_PORT = 9418;
/**
 * Debian bookworm's `git` package ships /usr/lib/git-core/git-daemon; the official
 * buildpack-deps "scm" variant is Debian plus git and nothing of ours. (alpine/git does not
 * contain git-daemon: on Alpine it is a separate package.)
 */
export const GITD_IMAGE = "docker.io/library/buildpack-deps:bookworm-scm";
/** Where the bare repositories are mounted inside the Pod. */
export const GITD_MOUNT = "/srv/bare";

/**
 * The git daemon's command line: serve every repository under the mount, read-only.
 * upload-pack only (receive-pack is off by default and may not be switched on per repository).
 */
export function gitDaemonArgs(base = GITD_MOUNT, port = GITD_PORT, listen = "0.0.0.0"): string[] {
    return [
        "daemon",
        "--verbose",
        "--export-all",
        "--reuseaddr",
        `--listen=${listen}`,
        `--port=${port}`,
        `--base-path=${base}`,
        "--forbid-override=receive-pack",
        base,
    ];
}

/**
 * Environment of the daemon. It runs as nobody (65534) on a repository owned by root, so git's
 * "dubious ownership" check needs `safe.directory=*`; it is honoured from command-line config,
 * which GIT_CONFIG_COUNT/KEY/VALUE is.
 */
export const GITD_ENV: Record<string, string> = {
    HOME: "/tmp",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "safe.directory",
    GIT_CONFIG_VALUE_0: "*",
};

export function gitDaemonDeployment(opts: { hostPath: string; image?: string }): any {
    const labels = { "app.kubernetes.io/name": GITD_NAME, "app.kubernetes.io/part-of": "gitops-lab" };
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: GITD_NAME, namespace: GITSRV_NAMESPACE, labels },
        spec: {
            replicas: 1,
            selector: { matchLabels: labels },
            template: {
                metadata: { labels },
                spec: {
                    securityContext: { runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534 },
                    containers: [
                        {
                            name: "git-daemon",
                            image: opts.image ?? GITD_IMAGE,
                            command: ["git"],
                            args: gitDaemonArgs(),
                            env: Object.entries(GITD_ENV).map(([name, value]) => ({ name, value })),
                            ports: [{ name: "git", containerPort: GITD_PORT }],
                            readinessProbe: { tcpSocket: { port: GITD_PORT }, periodSeconds: 2 },
                            securityContext: {
                                allowPrivilegeEscalation: false,
                                readOnlyRootFilesystem: true,
                                capabilities: { drop: ["ALL"] },
                            },
                            volumeMounts: [
                                { name: "bare", mountPath: GITD_MOUNT, readOnly: true },
                                { name: "tmp", mountPath: "/tmp" },
                            ],
                        },
                    ],
                    volumes: [
                        // DirectoryOrCreate: with solveThrough 0 the learner creates the bare repo later
                        { name: "bare", hostPath: { path: opts.hostPath, type: "DirectoryOrCreate" } },
                        { name: "tmp", emptyDir: {} },
                    ],
                },
            },
        },
    };
}

export function gitDaemonService(): any {
    return {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: GITD_NAME, namespace: GITSRV_NAMESPACE },
        spec: {
            selector: { "app.kubernetes.io/name": GITD_NAME, "app.kubernetes.io/part-of": "gitops-lab" },
            ports: [{ name: "git", port: GITD_PORT, targetPort: GITD_PORT }],
        },
    };
}
