/** gitops-lab build-real-plane: the real control plane's binaries, built from Go modules into a cache (realplane/). */
import { binPath, BINARIES, buildRealPlane, cacheDir } from "../realplane/build";
import { REAL_PLANE } from "../realplane/versions";
import { Command, EXIT } from "./command";

export const buildRealPlaneCommand: Command = {
    name: "build-real-plane",
    summary: "build Kubernetes, etcd, KWOK, kustomize and Argo CD v3.5.1 from Go modules for the real test tier (cached)",
    usage: "build-real-plane",
    details: [`needs Go and the Go module proxy; the first build takes about 25 minutes; binaries in ${cacheDir()}/bin`],
    options: {},
    async run() {
        const t0 = Date.now();
        console.log(`real plane: Kubernetes ${REAL_PLANE.kubernetes}, etcd ${REAL_PLANE.etcd}, KWOK ${REAL_PLANE.kwok}, kustomize ${REAL_PLANE.kustomize}, Argo CD ${REAL_PLANE.argocd} (gitops-engine ${REAL_PLANE.gitopsEngine}, see realplane/versions.ts)`);
        await buildRealPlane((l) => console.log(`[real-plane] ${l}`));
        for (const b of BINARIES) console.log(`  ${binPath(b)}`);
        console.log(`ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        return EXIT.OK;
    },
};
