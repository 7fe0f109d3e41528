/** Stack configuration defaults (the same values stand in Pulumi.yaml; a test keeps them equal). */
import { DEFAULT_ARGOCD_VERSION } from "./argocd";
import { GITD_IMAGE } from "./gitDaemon";

export const DEFAULTS = {
    root: "/",
    solveThrough: 8,
    k3sVersion: "v1.36.4+k3s1",
    argocdVersion: DEFAULT_ARGOCD_VERSION as string,
    gitDaemonImage: GITD_IMAGE,
    syncTimeoutSeconds: 300,
    k3sReadyTimeoutSeconds: 300,
    argocdReadyTimeoutSeconds: 600,
    gitDaemonReadyTimeoutSeconds: 300,
    destroyTimeoutSeconds: 120,
    tenantsLab: false,
    tenantsSolveThrough: 3,
    tenantsWaitTimeoutSeconds: 900,
    imageRegistry: "",
    rolloutDoctor: "auto",
};
