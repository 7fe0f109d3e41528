/**
 * gitops-lab build-real-plane: the real tier's binaries, built from Go modules into a cache: the
 * control plane (realplane/build.ts) and the Pulumi CLI with the kubernetes provider
 * (realplane/pulumiBuild.ts), and Prometheus's promtool for the alert rules' tests (realplane/promtoolBuild.ts). Each build says what it builds, about how long it takes, and a line a
 * minute while it runs.
 */
import { argoCdBuildDir, binPath, BINARIES, buildArgoCd, buildRealPlane, cacheDir } from "../realplane/build";
import { checkPlaneTools } from "../realplane/tools";
import { buildPromtool, promtoolPath } from "../realplane/promtoolBuild";
import { buildPulumi, pulumiBinPath, PULUMI_BINARIES, pulumiCacheDir } from "../realplane/pulumiBuild";
import { PROMETHEUS, PULUMI, REAL_ARGOCD, REAL_ARGOCD_VERSIONS, REAL_PLANE } from "../realplane/versions";
import { buildRealNode, nodeBinPath, NODE_BINARIES, nodeCacheDir } from "../realnode/build";
import { buildImageLayers, imageRecipes, imagesCacheDir, needsBuiltFiles } from "../realnode/images";
import { Command, EXIT, stringOption, UsageError } from "./command";

export const buildRealPlaneCommand: Command = {
    name: "build-real-plane",
    summary:
        "build the real tiers' programs from Go modules (Kubernetes, etcd, kustomize, each Argo CD the real tier runs, containerd, CoreDNS, the Pulumi CLI, its kubernetes provider, promtool) and the real node's images from Debian's packages (cached)",
    usage: "build-real-plane [--only node|pulumi]",
    details: [
        "needs Go and the Go module proxy, and mmdebstrap with Debian's mirror; from cold caches about 40 minutes on 2 cores, then seconds",
        `plane binaries in ${cacheDir()}/bin; the node's in ${nodeCacheDir()}/bin; its images' layers in ${imagesCacheDir()}; Pulumi's in ${pulumiCacheDir()}/bin; promtool at ${promtoolPath()}`,
        "--only PART         node: what the real node and its Argo CD releases need (npm run test:real:node); pulumi: the Pulumi CLI, its kubernetes provider and promtool (npm run test:real:pulumi). CI runs the two at once, so the node's tests start before Pulumi's build ends",
    ],
    options: { only: { type: "string" } },
    async run(values) {
        const only = stringOption(values, "only");
        if (only !== undefined && only !== "node" && only !== "pulumi")
            throw new UsageError(`--only takes node or pulumi, not "${only}" (see gitops-lab build-real-plane --help)`);
        const node = only !== "pulumi";
        const pulumi = only !== "node";
        const t0 = Date.now();
        await checkPlaneTools(true);
        console.log(
            `real plane: Kubernetes ${REAL_PLANE.kubernetes}, etcd ${REAL_PLANE.etcd}; ${REAL_ARGOCD_VERSIONS.map((v) => `Argo CD ${v} (kustomize ${REAL_ARGOCD[v].kustomize}, gitops-engine ${REAL_ARGOCD[v].gitopsEngine.version})`).join(", ")}; see realplane/versions.ts`,
        );
        console.log(
            `Pulumi: the CLI ${PULUMI.cli}, the kubernetes provider ${PULUMI.kubernetes} (module ${PULUMI.kubernetesModule}); promtool of Prometheus ${PROMETHEUS.version} (module ${PROMETHEUS.module})`,
        );
        // at once: Go's builds leave a core idle part of the time, so together they take about as long as the longest;
        // the images made of Debian's packages alone start at once too (mmdebstrap mostly waits for the mirror),
        // those with the plane's or the node's binaries once those are built
        const buildNode = async () => {
            const recipes = imageRecipes();
            // the Argo CD releases (each with its own toolchain and kustomize) beside the plane and the node
            const binaries = Promise.all([
                buildRealPlane((l) => console.log(`[real-plane] ${l}`)).then(() => buildRealNode((l) => console.log(`[real-node] ${l}`))),
                (async () => {
                    for (const v of REAL_ARGOCD_VERSIONS) await buildArgoCd(v, (l) => console.log(`[argocd ${v}] ${l}`));
                })(),
            ]);
            const images = (rs: typeof recipes) => buildImageLayers(rs, (l) => console.log(`[images] ${l}`));
            await Promise.all([
                binaries,
                images(recipes.filter((r) => !needsBuiltFiles(r))),
                binaries.then(() => images(recipes.filter(needsBuiltFiles))),
            ]);
        };
        const buildPulumiTools = () =>
            buildPulumi((l) => console.log(`[pulumi] ${l}`)).then(() => buildPromtool((l) => console.log(`[promtool] ${l}`)));
        await Promise.all([node ? buildNode() : undefined, pulumi ? buildPulumiTools() : undefined]);
        if (node) {
            for (const b of BINARIES) console.log(`  ${binPath(b)}`);
            for (const b of NODE_BINARIES) console.log(`  ${nodeBinPath(b)}`);
            for (const v of REAL_ARGOCD_VERSIONS) console.log(`  ${argoCdBuildDir(v)}/bin/{argocd,kustomize}`);
        }
        if (pulumi) {
            for (const b of PULUMI_BINARIES) console.log(`  ${pulumiBinPath(b)}`);
            console.log(`  ${promtoolPath()}`);
        }
        console.log(`ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        return EXIT.OK;
    },
};
