import type { KubeObject } from "../argo/types";
/**
 * The in-cluster git server: `git daemon` in namespace gitsrv serving the host's bare repositories
 * read-only, as nobody. Pure manifest builders; the GitDaemon component applies them.
 */

export const GITSRV_NAMESPACE = "gitsrv";
export const GITD_NAME = "gitd";
export const GITD_PORT = 9418;
/** The start of the URL of every repository the git daemon serves, as Argo CD reads them. */
export const GITD_URL_PREFIX = `git://${GITD_NAME}.${GITSRV_NAMESPACE}.svc.cluster.local:${GITD_PORT}/`;

/**
 * A repoURL as Argo CD's repo-server reaches it: the git daemon's Service by a shorter name (gitd.gitsrv, gitd.gitsrv.svc,
 * which the Pod's DNS search list, svc.cluster.local and cluster.local, completes), or with its default port left out,
 * written as the full one; any other URL as it is.
 */
export function inClusterGitUrl(url: string): string {
    const m = new RegExp(`^git://${GITD_NAME}\\.${GITSRV_NAMESPACE}(?:\\.svc(?:\\.cluster\\.local)?)?\\.?(?::${GITD_PORT})?/(.*)$`).exec(
        url,
    );
    return m ? `${GITD_URL_PREFIX}${m[1]}` : url;
}
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

export function gitDaemonDeployment(opts: { hostPath: string; image?: string }): KubeObject {
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

export function gitDaemonService(): KubeObject {
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
