/**
 * The Argo CD v3.5.1 simulation: the ApplicationSet controller, the application controller and the
 * repo-server over a FakeKube, reading a real git daemon and rendering with real kustomize.
 * Each behaviour lives in its own unit (appsetController.ts, appController.ts, repoServer.ts)
 * with its own tests; Part 2 of the lab (RollingSync, PreSync hook Jobs) adds units beside them.
 */
import { AppController, AppControllerOptions, REALISTIC } from "./appController";
import { AppSetController } from "./appsetController";
import { FakeKube } from "./fakeApi";
import { RepoServer } from "./repoServer";

export interface ArgoSimOptions extends Partial<AppControllerOptions> {
    /** How long the ApplicationSet controller takes to (re)generate Applications. */
    generateDelayMs?: number;
    /** Maps the in-cluster repoURL to the loopback git daemon's URL. */
    urlFor: (repoURL: string) => string;
    kubectl?: string;
    /** The repo-server's working directory (default: a new temporary one). */
    cacheDir?: string;
}

/** Timings that keep Argo CD's behaviour (poll only every few minutes, selfHeal after a delay) but run tests fast. */
export const FAST: AppControllerOptions & { generateDelayMs: number } = {
    generateDelayMs: 150,
    reconcileDelayMs: 50,
    pollIntervalMs: 180_000,
    selfHealDelayMs: 300,
    selfHealBackoffMs: 400,
    selfHealBackoffCapMs: 5_000,
};

export class ArgoSim {
    readonly repo: RepoServer;
    readonly appsets: AppSetController;
    readonly apps: AppController;

    constructor(readonly kube: FakeKube, opts: ArgoSimOptions) {
        const { urlFor, kubectl, generateDelayMs, cacheDir, ...timings } = opts;
        this.repo = new RepoServer(urlFor, kubectl, cacheDir);
        this.appsets = new AppSetController(kube, generateDelayMs ?? 0);
        this.apps = new AppController(kube, this.repo, { ...REALISTIC, ...timings });
    }

    start() {
        this.appsets.start();
        this.apps.start();
    }

    async stop() {
        this.appsets.stop();
        await this.apps.stop();
        this.repo.close();
        if (this.apps.errors.length) throw new Error(`the Argo CD simulation failed: ${this.apps.errors.map((e) => e.stack).join("\n")}`);
    }
}
