/**
 * The Argo CD v3.5.1 simulation: the ApplicationSet controller, the application controller and the
 * repo-server over a FakeKube, reading a real git daemon and rendering with real kustomize, every
 * delay on one clock (sim/clock.ts) from one profile (sim/profiles.ts). Each behaviour lives in its
 * own unit (appsetController.ts, appController.ts, repoServer.ts) with its own tests.
 */
import { AppController } from "./appController";
import { AppSetController } from "./appsetController";
import { realSimClock, SimClock } from "./clock";
import { FakeKube } from "./fakeApi";
import { ArgoTimings, FAST } from "./profiles";
import { RepoServer } from "./repoServer";

export interface ArgoSimOptions extends Partial<ArgoTimings> {
    /** Maps the in-cluster repoURL to the loopback git daemon's URL. */
    urlFor: (repoURL: string) => string;
    kubectl?: string;
    /** The repo-server's working directory (default: a new temporary one). */
    cacheDir?: string;
    /** The clock every delay is on (default: the real one). */
    clock?: SimClock;
}

export class ArgoSim {
    readonly repo: RepoServer;
    readonly appsets: AppSetController;
    readonly apps: AppController;
    readonly clock: SimClock;
    readonly timings: ArgoTimings;

    constructor(readonly kube: FakeKube, opts: ArgoSimOptions) {
        const { urlFor, kubectl, cacheDir, clock, ...timings } = opts;
        this.timings = { ...FAST, ...timings };
        this.clock = clock ?? realSimClock();
        this.repo = new RepoServer(urlFor, kubectl, cacheDir, { now: () => this.clock.now(), revisionCacheMs: this.timings.revisionCacheMs });
        this.appsets = new AppSetController(kube, this.timings.generateDelayMs, this.clock);
        this.apps = new AppController(kube, this.repo, this.timings, this.clock);
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
