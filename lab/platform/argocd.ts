/**
 * The Argo CD install the lab pins (v3.5.1, upstream non-HA manifests) and what the lab needs of it:
 * progressive syncs switched on, and the workloads that must be ready before a lab can use it.
 */
import { ARGOCD_NAMESPACE } from "../argo/application";

export const ARGOCD_VERSION = "v3.5.1";
/** Where components/argocd-install/install.yaml comes from: upstream's release manifest at the tag. */
export const ARGOCD_INSTALL_URL = `https://raw.githubusercontent.com/argoproj/argo-cd/${ARGOCD_VERSION}/manifests/install.yaml`;
/**
 * The SHA-256 of that file as shipped (components/argocd-install/install.yaml). The real tier checks
 * that it equals `manifests/install.yaml` of the Argo CD module the Go module proxy serves at the tag,
 * whose hash the Go checksum database publishes; the fast tier checks the shipped file against this.
 */
export const ARGOCD_INSTALL_SHA256 = "795a3a972224da6a7f9d32c3e946445f062b60fb46028476715affeb688236e3";
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
