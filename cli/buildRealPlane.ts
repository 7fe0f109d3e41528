/**
 * gitops-lab build-real-plane: the real tier's binaries, built from Go modules into a cache: the
 * control plane (realplane/build.ts) and the Pulumi CLI with the kubernetes provider
 * (realplane/pulumiBuild.ts). Each build says what it builds, about how long it takes, and a line a
 * minute while it runs.
 */
import { binPath, BINARIES, buildRealPlane, cacheDir } from "../realplane/build";
import { checkPlaneTools } from "../realplane/plane";
import { buildPulumi, pulumiBinPath, PULUMI_BINARIES, pulumiCacheDir } from "../realplane/pulumiBuild";
import { PULUMI, REAL_PLANE } from "../realplane/versions";
import { Command, EXIT } from "./command";

export const buildRealPlaneCommand: Command = {
    name: "build-real-plane",
    summary: "build Kubernetes, etcd, KWOK, kustomize, Argo CD v3.5.1, the Pulumi CLI and its kubernetes provider from Go modules for the real test tier (cached)",
    usage: "build-real-plane",
    details: [
        "needs Go and the Go module proxy; from cold caches about 60 minutes on 2 cores (the plane about 40, the CLI 17, the provider 20), then nothing",
        `plane binaries in ${cacheDir()}/bin; Pulumi's in ${pulumiCacheDir()}/bin`,
    ],
    options: {},
    async run() {
        const t0 = Date.now();
        await checkPlaneTools(true);
        console.log(`real plane: Kubernetes ${REAL_PLANE.kubernetes}, etcd ${REAL_PLANE.etcd}, KWOK ${REAL_PLANE.kwok}, kustomize ${REAL_PLANE.kustomize}, Argo CD ${REAL_PLANE.argocd} (gitops-engine ${REAL_PLANE.gitopsEngine}, see realplane/versions.ts)`);
        console.log(`Pulumi: the CLI ${PULUMI.cli}, the kubernetes provider ${PULUMI.kubernetes} (module ${PULUMI.kubernetesModule})`);
        // both at once: Go's builds leave a core idle part of the time, so together they take about as long as the longer
        await Promise.all([buildRealPlane((l) => console.log(`[real-plane] ${l}`)), buildPulumi((l) => console.log(`[pulumi] ${l}`))]);
        for (const b of BINARIES) console.log(`  ${binPath(b)}`);
        for (const b of PULUMI_BINARIES) console.log(`  ${pulumiBinPath(b)}`);
        console.log(`ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        return EXIT.OK;
    },
};
