/**
 * The second tier (`npm run test:real`): the shop lab on the real node (realnode/: each Argo CD
 * release the real tier runs, installed from its pinned manifest, the git daemon a Pod, every Pod a
 * container), graded by
 * verify, and its Applications' status transitions compared with the simulated cluster's for the
 * same scenario.
 * Needs root and what `gitops-lab build-real-plane` builds. Not part of `npm test`.
 */
import * as assert from "assert";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { KubeCluster } from "../../lab/ports/cluster";
import { run } from "../../lab/ports/exec";
import { pollUntil } from "../../lab/ports/wait";
import { verify } from "../../lab/shop/checks";
import { solveShopLab } from "../../lab/shop/solve";
import { GO_TOOLCHAIN_ARGOCD_3_6 } from "../../realplane/versions";
import { argoCdInstallDir, ARGOCD_RELEASES, ARGOCD_VERSIONS } from "../../lab/platform/argocd";
import { keepWatching } from "../../realplane/watch";
import { solveSimulatedLab, startSimulatedLab } from "../../sim/simulatedLab";
import { startNodeLabIn } from "../helpers/nodeLab";
import { REAL_ARGOCD_VERSIONS } from "../../realplane/versions";
import type { Application } from "../../lab/argo/types";

/** Every distinct (sync status, operation phase) an Application showed, in order, from a watch. */
type Transitions = Record<string, string[]>;

async function recorder(kubeconfig: string): Promise<{ transitions: Transitions; stop(): void }> {
    const transitions: Transitions = {};
    // connected before the scenario begins
    const watch = await keepWatching<Application>(
        kubeconfig,
        "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications",
        {},
        (_type, app) => {
            const key = `${app.status?.sync?.status || "-"}/${app.status?.operationState?.phase || "-"}`;
            const list = (transitions[app.metadata.name] ??= []);
            if (list[list.length - 1] !== key) list.push(key);
        },
    );
    return { transitions, stop: () => watch.stop() };
}

/** What a learner's `kubectl get` prints for the lab's objects: each command's table, ages left out (they differ by when each ran). */
const TABLE_COMMANDS = [
    ["get", "applications", "-n", "argocd"],
    ["get", "applications", "-n", "argocd", "-o", "wide"],
    ["get", "configmap", "shop-config", "-n", "shop-prod"],
    ["get", "namespaces", "shop-dev", "shop-prod"],
    ["get", "applicationsets", "-n", "argocd"],
];
// asynchronous: the simulated API answers from this very process
async function tablesOf(kubeconfigFile: string): Promise<Record<string, string[][]>> {
    const out: Record<string, string[][]> = {};
    for (const args of TABLE_COMMANDS) {
        const lines = (await run("kubectl", ["--kubeconfig", kubeconfigFile, ...args])).stdout
            .trim()
            .split("\n")
            .map((l) => l.split(/ {2,}/));
        const age = lines[0].indexOf("AGE");
        out[args.join(" ")] = lines.map((cells) => cells.filter((_, i) => i !== age));
    }
    return out;
}

/**
 * Where the simulation and the real Argo CD may differ in what a watch sees, and why. Everything
 * else that differs fails the test, so a difference is either fixed in the simulation or written
 * down here.
 */
const EXPLAINED: Record<string, string> = {
    "-/-": "an Application is created with no status; the simulation's first write may coalesce with the generation",
    "OutOfSync/-":
        "before its first operation: the real controller writes the comparison and the operation separately, the simulation in one write",
    "Unknown/-": "a ComparisonError before any operation: only when step 7's error is compared before an operation ran",
    "OutOfSync/Succeeded":
        "the real controller can persist an OutOfSync comparison while the last operation's Succeeded state stands (seen around the drift's selfHeal and a new commit); the simulation sets the next operation first, clearing that state — not modelled yet",
    "-/Running":
        "a new Application's first operation: the real controller's operation queue may persist Running before its status queue persists the first comparison; the simulation writes the comparison first",
};

describe("the shop lab on the real node (each Argo CD the real tier runs, installed as the stack installs it, every Pod a container)", function () {
    this.timeout(3_600_000);

    it("every install.yaml the lab ships is byte for byte upstream's, as the Go module proxy serves it (checksummed by the Go checksum database)", async () => {
        const { moduleDir } = await import("../../realplane/build");
        for (const version of ARGOCD_VERSIONS) {
            // a module whose go.mod asks for a newer Go is downloaded with that toolchain (the proxy serves it)
            const env = ARGOCD_RELEASES[version].minor === "3.6" ? { GOTOOLCHAIN: GO_TOOLCHAIN_ARGOCD_3_6 } : {};
            const upstream = fs.readFileSync(
                path.join(await moduleDir(`github.com/argoproj/argo-cd/v3@${version}`, env), "manifests", "install.yaml"),
            );
            const shipped = fs.readFileSync(path.join(argoCdInstallDir(version), "install.yaml"));
            assert.ok(shipped.equals(upstream), `components/argocd-install/${version}/install.yaml differs from the module's`);
        }
    });

    // Argo CD installed as the stack installs it, the git daemon a Pod; verify reads the files, the repository and the live cluster
    for (const version of REAL_ARGOCD_VERSIONS)
        it(`on ${version}: the shop lab graded 100%, its transitions as the simulation's or explained`, async () => {
            const { root: realRoot, lab } = await startNodeLabIn("real-lab", version);
            let real: Transitions;
            let realTables: Record<string, string[][]>;
            let simTables: Record<string, string[][]>;
            try {
                const rec = await recorder(lab.kubeconfig);
                const cluster = new KubeCluster(lab.kubeconfig);
                const run = await solveShopLab({ layout: lab.layout, cluster }, 8);
                assert.strictEqual(run.results.report?.prod_tracks, "release/prod");
                const checks = await verify({ layout: lab.layout, through: 8, cluster });
                assert.deepStrictEqual(
                    checks.filter((c) => !c.ok).map((c) => `${c.check}: ${c.found}`),
                    [],
                );
                assert.ok(checks.some((c) => c.check === "live shop-prod is synced to promote.to" && c.ok));
                // the real kubectl against the node, as a learner uses it
                const kubeconfigFile = lab.kubeconfigFile;
                const kubectl = (...args: string[]) =>
                    execFileSync("kubectl", ["--kubeconfig", kubeconfigFile, ...args], { encoding: "utf8" });
                assert.match(kubectl("api-resources"), /^applications +app,apps +argoproj\.io\/v1alpha1 +true +Application$/m);
                assert.deepStrictEqual(kubectl("get", "applications", "-n", "argocd", "-o", "name").trim().split("\n"), [
                    "application.argoproj.io/shop-dev",
                    "application.argoproj.io/shop-prod",
                ]);
                kubectl("patch", "cm", "shop-config", "-n", "shop-prod", "--type", "merge", "-p", '{"data":{"LOG_LEVEL":"debug"}}');
                await pollUntil(
                    async () =>
                        kubectl("get", "cm", "shop-config", "-n", "shop-prod", "-o", "jsonpath={.data.LOG_LEVEL}") === "warn"
                            ? true
                            : undefined,
                    {
                        timeoutMs: 120_000,
                        intervalMs: 500,
                        describe: () => "the real Argo CD's selfHeal did not put LOG_LEVEL back within 120 s",
                    },
                );
                kubectl("annotate", "app", "shop-dev", "-n", "argocd", "argocd.argoproj.io/refresh=hard", "--overwrite");
                await pollUntil(
                    async () =>
                        !kubectl("get", "app", "shop-dev", "-n", "argocd", "-o", "jsonpath={.metadata.annotations}").includes("refresh")
                            ? true
                            : undefined,
                    {
                        timeoutMs: 120_000,
                        intervalMs: 500,
                        describe: () => "the real Argo CD did not handle the refresh annotation within 120 s",
                    },
                );
                const uid = kubectl("get", "app", "shop-dev", "-n", "argocd", "-o", "jsonpath={.metadata.uid}");
                kubectl("delete", "app", "shop-dev", "-n", "argocd", "--timeout=120s"); // the resources finalizer, honoured by the real controller
                await pollUntil(
                    async () => {
                        const now = execFileSync(
                            "kubectl",
                            [
                                "--kubeconfig",
                                kubeconfigFile,
                                "get",
                                "app",
                                "shop-dev",
                                "-n",
                                "argocd",
                                "-o",
                                "jsonpath={.metadata.uid}",
                                "--ignore-not-found",
                            ],
                            { encoding: "utf8" },
                        );
                        return now && now !== uid ? true : undefined;
                    },
                    {
                        timeoutMs: 120_000,
                        intervalMs: 500,
                        describe: () => "the ApplicationSet did not generate shop-dev again within 120 s",
                    },
                );
                // the one generated again syncs by itself (automated): its tables are compared once it has, not while it is new
                await pollUntil(
                    async () =>
                        kubectl(
                            "get",
                            "app",
                            "shop-dev",
                            "-n",
                            "argocd",
                            "-o",
                            "jsonpath={.status.sync.status}/{.status.health.status}",
                        ) === "Synced/Healthy"
                            ? true
                            : undefined,
                    {
                        timeoutMs: 180_000,
                        intervalMs: 500,
                        describe: () => "shop-dev, generated again, was not Synced and Healthy within 180 s",
                    },
                );
                // the rollout doctor's manifests are valid for the real API server (a server-side dry run: every field of every kind, strictly),
                // applied server-side as the program's provider does: the bundle's ConfigMap is too big for a client-side apply's annotation (256 KiB)
                const { doctorBundle } = await import("../../components/rolloutDoctor");
                const { rolloutDoctorManifests } = await import("../../lab/doctor/inCluster");
                const b = doctorBundle();
                const objs = rolloutDoctorManifests({ bundleGzBase64: b.gzBase64, bundleDigest: b.digest, namespace: "argocd" }).filter(
                    (o) => o.kind !== "Namespace",
                );
                const manifests = path.join(realRoot, "rollout-doctor.json");
                fs.writeFileSync(manifests, JSON.stringify({ apiVersion: "v1", kind: "List", items: objs }));
                assert.match(
                    kubectl(
                        "apply",
                        "--server-side",
                        "--field-manager=gitops-lab",
                        "--dry-run=server",
                        "--validate=strict",
                        "-f",
                        manifests,
                    ),
                    /deployment\.apps\/rollout-doctor serverside-applied \(server dry run\)/,
                );
                rec.stop();
                real = rec.transitions;
                realTables = await tablesOf(kubeconfigFile);
            } finally {
                await lab.stop();
            }

            const simRoot = fs.mkdtempSync(path.join(os.tmpdir(), "sim-lab-"));
            const sim = await startSimulatedLab(simRoot, { argocdVersion: version });
            let simulated: Transitions;
            try {
                const rec = await recorder(sim.kubeconfig);
                await solveSimulatedLab(sim, 8);
                rec.stop();
                simulated = rec.transitions;
                const simKubeconfig = path.join(simRoot, "kubeconfig");
                fs.writeFileSync(simKubeconfig, sim.kubeconfig);
                simTables = await tablesOf(simKubeconfig);
            } finally {
                await sim.stop();
            }

            assert.ok(
                Object.keys(real).length === 2 && Object.keys(simulated).length === 2,
                `both runs recorded both Applications: ${JSON.stringify({ real, simulated })}`,
            );
            // states either side showed on any Application: the order and which app shows a passing state depend on timing
            const seen = (t: Transitions) => new Set(Object.values(t).flat());
            const r = seen(real);
            const s = seen(simulated);
            const differences: string[] = [];
            for (const k of r) if (!s.has(k) && !EXPLAINED[k]) differences.push(`the real Argo CD showed ${k}, the simulation never did`);
            for (const k of s) if (!r.has(k) && !EXPLAINED[k]) differences.push(`the simulation showed ${k}, the real Argo CD never did`);
            console.log(`  real:      ${JSON.stringify(real)}\n  simulated: ${JSON.stringify(simulated)}`);
            assert.deepStrictEqual(differences, []);
            // kubectl's tables: the same columns, and the same values for the same objects (but the revision, a different commit in each run)
            const noRevision = (t: Record<string, string[][]>) => ({
                ...t,
                "get applications -n argocd -o wide": t["get applications -n argocd -o wide"].map((r) => r.filter((_, i) => i !== 3)),
            });
            assert.deepStrictEqual(noRevision(simTables!), noRevision(realTables!));
        });
});
