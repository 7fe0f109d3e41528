/**
 * gitops-lab build-real-plane: the real tier's binaries, built from Go modules into a cache: the
 * control plane (realplane/build.ts) and the Pulumi CLI with the kubernetes provider
 * (realplane/pulumiBuild.ts), and Prometheus's promtool for the alert rules' tests (realplane/promtoolBuild.ts). Each build says what it builds, about how long it takes, and a line a
 * minute while it runs.
 */
import { binPath, BINARIES, buildRealPlane, cacheDir } from "../realplane/build";
import { checkPlaneTools } from "../realplane/plane";
import { buildPromtool, promtoolPath } from "../realplane/promtoolBuild";
import { buildPulumi, pulumiBinPath, PULUMI_BINARIES, pulumiCacheDir } from "../realplane/pulumiBuild";
import { PROMETHEUS, PULUMI, REAL_PLANE } from "../realplane/versions";
import { Command, EXIT } from "./command";

export const buildRealPlaneCommand: Command = {
    name: "build-real-plane",
    summary: "build Kubernetes, etcd, KWOK, kustomize, Argo CD v3.5.1, the Pulumi CLI, its kubernetes provider and promtool from Go modules for the real test tier (cached)",
    usage: "build-real-plane",
    details: [
        "needs Go and the Go module proxy; from cold caches about 60 minutes on 2 cores (the plane about 40, the CLI 17, the provider 20, promtool 12), then nothing",
        `plane binaries in ${cacheDir()}/bin; Pulumi's in ${pulumiCacheDir()}/bin; promtool at ${promtoolPath()}`,
    ],
    options: {},
    async run() {
        const t0 = Date.now();
        await checkPlaneTools(true);
        console.log(`real plane: Kubernetes ${REAL_PLANE.kubernetes}, etcd ${REAL_PLANE.etcd}, KWOK ${REAL_PLANE.kwok}, kustomize ${REAL_PLANE.kustomize}, Argo CD ${REAL_PLANE.argocd} (gitops-engine ${REAL_PLANE.gitopsEngine}, see realplane/versions.ts)`);
        console.log(`Pulumi: the CLI ${PULUMI.cli}, the kubernetes provider ${PULUMI.kubernetes} (module ${PULUMI.kubernetesModule}); promtool of Prometheus ${PROMETHEUS.version} (module ${PROMETHEUS.module})`);
        // both at once: Go's builds leave a core idle part of the time, so together they take about as long as the longer
        await Promise.all([buildRealPlane((l) => console.log(`[real-plane] ${l}`)), buildPulumi((l) => console.log(`[pulumi] ${l}`)).then(() => buildPromtool((l) => console.log(`[promtool] ${l}`)))]);
        for (const b of BINARIES) console.log(`  ${binPath(b)}`);
        for (const b of PULUMI_BINARIES) console.log(`  ${pulumiBinPath(b)}`);
        console.log(`  ${promtoolPath()}`);
        console.log(`ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        return EXIT.OK;
    },
};
