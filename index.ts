/**
 * The lab: stack configuration wired to the components. Nothing here touches the host;
 * every change happens inside a resource's create, update or delete.
 */
import * as fs from "fs";
import * as path from "path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ArgoCd } from "./components/argocd";
import { GitDaemon } from "./components/gitDaemon";
import { foundInCluster } from "./program/foundInCluster";
import { K3s, K3S_KUBECONFIG } from "./components/k3s";
import { LabReset } from "./components/labReset";
import { Scenario } from "./components/scenario";
import { ShopAppSet } from "./components/shopAppSet";
import { RolloutDoctor } from "./components/rolloutDoctor";
import { ShopRepo } from "./components/shopRepo";
import { TenantsLab } from "./components/tenantsLab";
import { DOCTOR_NAMESPACE } from "./lab/doctor/inCluster";
import { PROGRESSIVE_SYNCS_KEY } from "./lab/platform/argocd";
import { CONFIG_KEYS, parseStackConfig } from "./lab/platform/stackConfig";
import { GITD_URL_PREFIX, GITSRV_NAMESPACE } from "./lab/platform/gitDaemon";
import { refuseLowerStep } from "./lab/kit/steps";
import { SHOP_NAMESPACES } from "./lab/shop/appset";
import { shopLayout, REPO_URL } from "./lab/shop/layout";
import { shopLabProgress } from "./lab/shop/solve";
import { shopSteps } from "./lab/shop/steps";
import { nextStepOf } from "./lab/grader/steps";
import { tenantsSteps } from "./lab/tenants/steps";
import { PLATFORM_REPO_URL, TENANTS, tenantsLayout } from "./lab/tenants/layout";
import { tenantsLabProgress } from "./lab/tenants/solve";
import { imagesNeedAWay, k3sBinary } from "./lab/platform/images";

// every key through the one schema (lab/platform/stackConfig.ts): a bad value is one line naming it
const config = new pulumi.Config();
const cfg = parseStackConfig(
    Object.fromEntries(CONFIG_KEYS.map((k) => [k, config.get(k)])),
    `the configuration of stack ${pulumi.getStack()}`,
);
const root = cfg.root;
const layout = shopLayout(root);
const solveThrough = cfg.solveThrough;
// dropping the lab's resources would tear the lab down: steps cannot be undone (reading the files changes nothing)
refuseLowerStep({
    lab: "the lab on this host",
    done: shopLabProgress(layout),
    through: solveThrough,
    asked: "solveThrough",
    fix: (done) => `Set it back (pulumi config set solveThrough ${done}), or start over with pulumi destroy and pulumi up`,
});

const tenantsEnabled = cfg.tenantsLab;
const tenantsThrough = cfg.tenantsSolveThrough;
if (tenantsEnabled) {
    refuseLowerStep({
        lab: "the tenants lab on this host",
        done: tenantsLabProgress(tenantsLayout(root)),
        through: tenantsThrough,
        asked: "tenantsSolveThrough",
        fix: (done) => `Set it back (pulumi config set tenantsSolveThrough ${done}), or start over with pulumi destroy and pulumi up`,
    });
}

const labNamespaces: string[] = [...SHOP_NAMESPACES, ...(tenantsEnabled ? TENANTS : [])];
const doctorEnabled = cfg.rolloutDoctor === "on" || (cfg.rolloutDoctor === "auto" && tenantsEnabled);

// what an adopted cluster had before this stack is used, never removed (a read: a preview changes nothing)
const kubeconfigPath = cfg.kubeconfigPath || undefined;
const found = foundInCluster(kubeconfigPath ?? (fs.existsSync(K3S_KUBECONFIG) ? K3S_KUBECONFIG : undefined), [
    GITSRV_NAMESPACE,
    DOCTOR_NAMESPACE,
    ...labNamespaces,
]);
if (found.argocd && tenantsEnabled && !found.progressiveSyncs) {
    throw new Error(
        `the Argo CD found in the cluster has progressive syncs off, and the tenants lab needs them: set ${PROGRESSIVE_SYNCS_KEY}: "true" in argocd/argocd-cmd-params-cm and restart its ApplicationSet controller, or set tenantsLab false`,
    );
}

// an adopted cluster gets the tenants lab's images through a registry, or k3s's containerd when the host has k3s
if (tenantsEnabled && kubeconfigPath && !cfg.imageRegistry && !fs.existsSync(k3sBinary())) throw new Error(imagesNeedAWay());

const k3s = new K3s("k3s", {
    version: cfg.k3sVersion,
    kubeconfigPath,
    readyTimeoutSeconds: cfg.k3sReadyTimeoutSeconds,
});
const provider = new k8s.Provider("lab", { kubeconfig: k3s.kubeconfig, enableServerSideApply: true });
const argocd = new ArgoCd("argocd", {
    provider,
    kubeconfig: k3s.kubeconfig,
    readyTimeoutSeconds: cfg.argocdReadyTimeoutSeconds,
    version: cfg.argocdVersion,
    found: found.argocd,
});
const gitd = new GitDaemon("gitd", {
    provider,
    kubeconfig: k3s.kubeconfig,
    hostPath: layout.bareDir,
    image: cfg.gitDaemonImage,
    readyTimeoutSeconds: cfg.gitDaemonReadyTimeoutSeconds,
    namespaceFound: found.namespaces.includes(GITSRV_NAMESPACE),
});

// destroy takes this down before Argo CD and the git daemon: whatever of the labs is in Argo CD, made by
// the stack or by a learner's hand, and the labs' namespaces (the labs' own deletes run before it)
const reset = new LabReset("lab-reset", {
    kubeconfig: k3s.kubeconfig,
    namespaces: labNamespaces,
    namespacesFound: found.namespaces.filter((n) => labNamespaces.includes(n)),
    repoPrefix: GITD_URL_PREFIX,
    argocdInstalled: !found.argocd,
    deleteTimeoutSeconds: cfg.destroyTimeoutSeconds,
    after: [argocd, gitd],
});

// step 1 runs kubectl kustomize: on a fresh host kubectl exists only once k3s's installer linked it
const repo = solveThrough >= 1 ? new ShopRepo("shop-repo", { root, after: [k3s] }) : undefined;
const appset =
    repo && solveThrough >= 2
        ? new ShopAppSet("shop", {
              kubeconfig: k3s.kubeconfig,
              root,
              deleteTimeoutSeconds: cfg.destroyTimeoutSeconds,
              after: [argocd, gitd, repo, reset],
          })
        : undefined;
const scenario =
    appset && solveThrough >= 2
        ? new Scenario("scenario", {
              kubeconfig: k3s.kubeconfig,
              root,
              solveThrough,
              syncTimeoutSeconds: cfg.syncTimeoutSeconds,
              after: [appset],
          })
        : undefined;

// Part 2 stands beside Part 1: it needs Argo CD (progressive syncs on) and the git daemon, not the shop lab
const tenants = tenantsEnabled
    ? new TenantsLab("tenants", {
          kubeconfig: k3s.kubeconfig,
          root,
          solveThrough: tenantsThrough,
          imageRegistry: cfg.imageRegistry,
          waitTimeoutSeconds: cfg.tenantsWaitTimeoutSeconds,
          deleteTimeoutSeconds: cfg.destroyTimeoutSeconds,
          after: [argocd, gitd, k3s, reset],
      })
    : undefined;

// the alert where the rollouts run: doctor --watch in the cluster (with the tenants lab, or on its own)
const doctor = doctorEnabled
    ? new RolloutDoctor("rollout-doctor", {
          kubeconfig: k3s.kubeconfig,
          provider,
          after: [argocd],
          namespaceFound: found.namespaces.includes(DOCTOR_NAMESPACE),
      })
    : undefined;

export const kubeconfig = k3s.kubeconfig;
export const clusterMode = k3s.mode;
export const argocdMode = argocd.mode;
export const argocdUi = argocd.ui;
export const argocdAdminPassword = argocd.adminPassword;
export const bareRepo = layout.bareRepo;
export const clone = layout.clone;
export const resultsDir = layout.workDir;
export const repoUrl = REPO_URL;
export const initialCommit = repo?.initialCommit ?? null;
export const applicationSet = appset ? pulumi.interpolate`${appset.namespace}/${appset.name}` : null;
export const completedThrough = scenario?.completedThrough ?? Math.min(solveThrough, 1);
export const incident = scenario?.incident ?? null;
export const pin = scenario?.pin ?? null;
export const drift = scenario?.drift ?? null;
export const promote = scenario?.promote ?? null;
export const revert = scenario?.revert ?? null;
export const report = scenario?.report ?? null;
export const tenantsRepoUrl = tenantsEnabled ? PLATFORM_REPO_URL : null;
export const tenantsCompletedThrough = tenants?.completedThrough ?? null;
// the hand-over: what the learner does next in each lab (null once every step is done), as `up` ends by saying
const verifyCmd = (lab: string) =>
    `npx gitops-lab verify${lab === "tenants" ? " --lab tenants" : ""}${root === "/" ? "" : ` --root ${root}`}`;
const handOver = (lab: "shop" | "tenants", at: number) =>
    nextStepOf(lab === "shop" ? shopSteps(layout) : tenantsSteps(tenantsLayout(root)), at, {
        inFull: path.join(__dirname, "docs", `${lab}-lab.md`),
        verify: verifyCmd(lab),
    });
export const nextStep = pulumi.output(completedThrough).apply((at) => handOver("shop", at));
export const tenantsNextStep = tenants ? tenants.completedThrough.apply((at) => handOver("tenants", at)) : null;
export const tenantsStall = tenants?.stall ?? null;
export const tenantsRecovery = tenants?.recovery ?? null;
export const rolloutDoctorMetrics = doctor?.metricsService ?? null;
export const rolloutDoctorPrometheusRule = doctor?.prometheusRuleApplied ?? null;
