/**
 * The Argo CD installs the lab offers (upstream non-HA manifests, pinned) and what the lab needs of
 * them: progressive syncs switched on, and the workloads that must be ready before a lab can use it.
 */
import * as path from "path";
import { ARGOCD_NAMESPACE } from "../argo/application";

/** One Argo CD release the lab offers: its install shipped in components/argocd-install/<version>/. */
export interface ArgoCdRelease {
    /** The minor whose behaviour the simulation and the doctor know it by. */
    minor: "3.5" | "3.6";
    /** The commit of the tag, where it is known here (the Go module proxy serves the tag, not its commit). */
    commit?: string;
    /**
     * The SHA-256 of its install.yaml as shipped: upstream's `manifests/install.yaml` at the tag. The
     * fast tier checks the shipped file against it; the real tier checks the file byte for byte against
     * the Argo CD module the Go module proxy serves at the tag (whose hash the Go checksum database
     * publishes).
     */
    installSha256: string;
}

/**
 * Every Argo CD version the lab installs, newest first: `argocdVersion` takes one of these. v3.5.1 is
 * the one the real tier runs (realplane/versions.ts); the others are offered from their shipped
 * manifests and known to the simulation by their minor (docs/upgrading.md says how one is added).
 */
export const ARGOCD_RELEASES = {
    "v3.6.2": {
        minor: "3.6",
        installSha256: "c948064d38294d857712ef78444768749a14293613098932f8533e37d067a2a2",
    },
    "v3.5.8": {
        minor: "3.5",
        installSha256: "948e7e3a70b03130f70e4c02ee2357c1cc97fb766674b6bddaed0f537cd5a00f",
    },
    "v3.5.1": {
        minor: "3.5",
        commit: "109ca7ca71139e514114499d294a492e7910a965",
        installSha256: "795a3a972224da6a7f9d32c3e946445f062b60fb46028476715affeb688236e3",
    },
} as const satisfies Record<string, ArgoCdRelease>;
export type ArgoCdVersion = keyof typeof ARGOCD_RELEASES;
export const ARGOCD_VERSIONS = Object.keys(ARGOCD_RELEASES) as ArgoCdVersion[];

/** The version `up` installs and `simulate` simulates unless told otherwise: the one the real tier proves live. */
export const DEFAULT_ARGOCD_VERSION: ArgoCdVersion = "v3.6.2";

export const isArgoCdVersion = (v: unknown): v is ArgoCdVersion => typeof v === "string" && Object.hasOwn(ARGOCD_RELEASES, v);

/** The kustomization that applies a version's pinned install (components/argocd-install/<version>). */
export const argoCdInstallDir = (version: ArgoCdVersion = DEFAULT_ARGOCD_VERSION, projectDir = path.join(__dirname, "..", "..")) =>
    path.join(projectDir, "components", "argocd-install", version);

export const PROGRESSIVE_SYNCS_KEY = "applicationsetcontroller.enable.progressive.syncs";

/**
 * argocd-cmd-params-cm with progressive syncs on. It is applied on its own, before the install,
 * so the ApplicationSet controller reads the key when it first starts (the key is read from the
 * environment at start-up; changing it later needs a restart). The install overlay deletes the
 * upstream (empty) copy so the two never fight over it.
 */
export function argoCdCmdParams(): {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    data: Record<string, string>;
} {
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

/** The workloads that must be ready before the lab can use Argo CD (argocd-server: the UI, and the initial admin password it writes). */
export const ARGOCD_WORKLOADS = [
    { kind: "Deployment", name: "argocd-repo-server" },
    { kind: "StatefulSet", name: "argocd-application-controller" },
    { kind: "Deployment", name: "argocd-applicationset-controller" },
    { kind: "Deployment", name: "argocd-server" },
] as const;

/** The Secret argocd-server writes on its first start with the admin user's generated password (key `password`). */
export const INITIAL_ADMIN_SECRET = "argocd-initial-admin-secret";

/** How a learner opens the UI from the lab host: a port-forward to argocd-server, then the local URL (user admin). */
export const ARGOCD_UI =
    "kubectl -n argocd port-forward svc/argocd-server 8080:443, then open https://localhost:8080 (user admin; the certificate is argocd-server's own, self-signed)";
