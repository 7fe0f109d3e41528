/**
 * The Argo CD simulation (v3.5 by default, v3.6 where `argocdVersion` says; where they differ is in
 * sim/rollingSync.ts and appsetController.ts): the ApplicationSet controller, the application controller and the
 * repo-server over a FakeKube, reading a real git daemon and rendering with real kustomize, every
 * delay on one clock (sim/clock.ts) from one profile (sim/profiles.ts). Each behaviour lives in its
 * own unit (appsetController.ts, appController.ts, repoServer.ts) with its own tests.
 */
import { AppController } from "./appController";
import { AppSetController } from "./appsetController";
import { realSimClock, SimClock } from "./clock";
import { FakeKube } from "./fakeApi";
import { ArgoTimings, FAST } from "./profiles";
import { ArgoCdVersion, ARGOCD_RELEASES, DEFAULT_ARGOCD_VERSION, PROGRESSIVE_SYNCS_KEY } from "../lab/platform/argocd";
import { shellPodRunner } from "./podRunner";
import { RepoServer } from "./repoServer";
import { PodRunner, Workloads } from "./workloads";

/** The ApplicationSet controller's metrics, through its Service's proxy (install.yaml: argocd-applicationset-controller, port metrics). */
export const APPSET_METRICS_PATH = "/api/v1/namespaces/argocd/services/argocd-applicationset-controller:metrics/proxy/metrics";

/** Where Argo CD reads its command parameters (install.yaml's argocd-cmd-params-cm). */
export const CMD_PARAMS_CM = "argocd-cmd-params-cm";

/** The project argocd-server makes at its start (server.go initializeDefaultProject): anything from anywhere to anywhere. */
const DEFAULT_PROJECT = {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "AppProject",
    metadata: { name: "default", namespace: "argocd" },
    spec: {
        sourceRepos: ["*"],
        destinations: [{ server: "*", namespace: "*" }],
        clusterResourceWhitelist: [{ group: "*", kind: "*" }],
    },
};

export interface ArgoSimOptions extends Partial<ArgoTimings> {
    /** Maps the in-cluster repoURL to the loopback git daemon's URL. */
    urlFor: (repoURL: string) => string;
    kubectl?: string;
    /** The repo-server's working directory (default: a new temporary one). */
    cacheDir?: string;
    /** The clock every delay is on (default: the real one). */
    clock?: SimClock;
    /** Where the simulated kubelet lays out Pods' volumes (nobody must be able to traverse it; default: the temp dir). */
    podDir?: string;
    /** How Pods' containers run (default: their /bin/sh command, for real). */
    podRunner?: PodRunner;
    /** The Argo CD version it behaves as (default DEFAULT_ARGOCD_VERSION): the behaviour of its minor (sim/rollingSync.ts). */
    argocdVersion?: ArgoCdVersion;
}

export class ArgoSim {
    readonly repo: RepoServer;
    readonly appsets: AppSetController;
    readonly apps: AppController;
    /** Kubernetes' own controllers the labs need (Jobs and their Pods, Deployments). */
    readonly workloads: Workloads;
    readonly clock: SimClock;
    readonly timings: ArgoTimings;
    readonly version: ArgoCdVersion;

    constructor(
        readonly kube: FakeKube,
        opts: ArgoSimOptions,
    ) {
        const { urlFor, kubectl, cacheDir, clock, podDir, podRunner, argocdVersion, ...timings } = opts;
        this.version = argocdVersion ?? DEFAULT_ARGOCD_VERSION;
        this.timings = { ...FAST, ...timings };
        this.clock = clock ?? realSimClock();
        this.repo = new RepoServer(urlFor, kubectl, cacheDir, {
            now: () => this.clock.now(),
            revisionCacheMs: this.timings.revisionCacheMs,
        });
        // read when the ApplicationSet controller starts, as its flag is
        const progressiveSyncs = kube.get("ConfigMap", "argocd", CMD_PARAMS_CM)?.data?.[PROGRESSIVE_SYNCS_KEY] === "true";
        this.appsets = new AppSetController(kube, {
            delayMs: this.timings.generateDelayMs,
            clock: this.clock,
            repo: this.repo,
            progressiveSyncs,
            wholeSecondTimes: this.timings.wholeSecondTimes,
            minor: ARGOCD_RELEASES[this.version].minor,
            refreshGraceMs: this.timings.refreshGraceMs,
        });
        this.apps = new AppController(kube, this.repo, this.timings, this.clock, ARGOCD_RELEASES[this.version].minor);
        this.workloads = new Workloads(kube, this.timings, this.clock, podRunner ?? shellPodRunner(podDir));
    }

    start() {
        // argocd-server makes the project every Application of the install names when it starts (server.go
        // initializeDefaultProject); the simulation has no server, so its start makes it
        if (!this.kube.get("AppProject", "argocd", "default")) this.kube.put(DEFAULT_PROJECT, "argocd-server");
        this.workloads.start();
        this.kube.proxied.set(APPSET_METRICS_PATH, () => this.appsets.metrics.text());
        this.appsets.start();
        this.apps.start();
    }

    async stop() {
        this.kube.proxied.delete(APPSET_METRICS_PATH);
        await this.appsets.stop();
        await this.apps.stop();
        await this.workloads.stop();
        this.repo.close();
        const errors = [...this.apps.errors, ...this.appsets.errors, ...this.workloads.errors];
        if (errors.length) throw new Error(`the Argo CD simulation failed: ${errors.map((e) => e.stack).join("\n")}`);
    }
}
