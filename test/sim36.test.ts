/**
 * The simulated Argo CD as v3.6.2 against v3.5: the reconcile gate (ensureApplicationsReconciled) and a
 * RollingSync with no steps, end to end over the simulated API, with the doctor reading it live.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ARGOCD_NAMESPACE, REFRESH_ANNOTATION } from "../lab/argo/application";
import { diagnose } from "../lab/doctor/diagnose";
import { readLive } from "../lab/doctor/watch";
import { ArgoCdVersion } from "../lab/platform/argocd";
import { createLabRepo } from "../lab/platform/labRepo";
import { KubeCluster } from "../lab/ports/cluster";
import { run } from "../lab/ports/exec";
import { REPO_URL } from "../lab/shop/layout";
import { ACTOR } from "../sim/appsetController";
import { APPSET_METRICS_PATH } from "../sim/argocd";
import { progressiveSyncCounts } from "../lab/argo/appsetMetrics";
import { AppSetMetrics } from "../sim/appsetMetrics";
import { gaveUpMessage, retryingMessage } from "../sim/operationMessages";
import { SimulatedLab, startSimulatedLab } from "../sim/simulatedLab";
import { expect, holds } from "./helpers/expect";
import { respecFiles, ringAppSet } from "./helpers/ringAppSet";

const URL = REPO_URL.replace(/[^/]+$/, "gate.git");
const SET = "gate";
/** Two rings, a step each, both at respec/v1 of the test's repository. */
const gateAppSet = (steps = [{ rings: ["a"] }, { rings: ["b"] }]) =>
    ringAppSet({ repoURL: URL, name: SET, rings: ["a", "b"], steps, appName: "gate-{{.ring}}", path: "respec/v1", prune: true });

async function labOf(version: ArgoCdVersion): Promise<{ lab: SimulatedLab; cluster: KubeCluster; clone: string; root: string }> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), `sim36-${version}-`));
    const lab = await startSimulatedLab(root, { argocdVersion: version });
    const { bareDir, workDir } = lab.layout;
    const clone = path.join(workDir, "gate");
    await createLabRepo(
        { bareDir, bareRepo: path.join(bareDir, "gate.git"), workDir, clone },
        { owner: "sim36-test", initialMessage: "v1" },
        respecFiles(),
    );
    return { lab, cluster: new KubeCluster(lab.kubeconfig), clone, root };
}

for (const version of ["v3.6.2", "v3.5.8"] as ArgoCdVersion[]) {
    const gated = version === "v3.6.2";
    describe(`the simulated Argo CD ${version}: a commit under RollingSync`, function () {
        this.timeout(120_000);
        let t: Awaited<ReturnType<typeof labOf>>;
        const app = (ring: string) => t.lab.kube.get("Application", ARGOCD_NAMESPACE, `gate-${ring}`);
        before(async () => (t = await labOf(version)));
        after(async () => {
            await t?.lab.stop();
            if (t?.root) fs.rmSync(t.root, { recursive: true, force: true });
        });

        it(gated ? "its CRDs are v3.6's: the oci generator is known" : "its CRDs are its own release's: no oci generator (v3.6's)", () => {
            type Node = { properties?: Record<string, Node>; items?: Node };
            const generatorsOf = (crd: unknown) =>
                (crd as { spec: { versions: { schema: { openAPIV3Schema: Node } }[] } }).spec.versions[0].schema.openAPIV3Schema.properties!
                    .spec!.properties!.generators!.items!.properties!;
            const checked = t.lab.kube.crds().find((c) => c.spec.names.kind === "ApplicationSet");
            const served = t.lab.kube.get("CustomResourceDefinition", undefined, "applicationsets.argoproj.io");
            assert.deepStrictEqual(["oci" in generatorsOf(checked), "oci" in generatorsOf(served)], [gated, gated]);
        });

        it(gated ? "a's step waits until b is reconciled, refreshed by the gate" : "a's step moves at once, b untouched", async () => {
            await t.cluster.createApplicationSet(gateAppSet());
            const rolledOut = () => t.lab.kube.get("ApplicationSet", ARGOCD_NAMESPACE, SET)?.status?.conditions;
            await expect(
                holds(
                    "both rings rolled out",
                    () => ["a", "b"].every((r) => app(r)?.status?.operationState?.phase === "Succeeded"),
                    () => rolledOut(),
                ),
                { timeoutMs: 60_000, intervalMs: 50 },
            );
            assert.strictEqual(
                rolledOut()?.some((c: any) => c.type === "InvalidRolloutConfig" && c.status === "False"),
                gated,
                "3.6 writes InvalidRolloutConfig with every pass, 3.5 never",
            );
            // the ApplicationSet controller's refreshes of b, and the time each was asked for
            const asked: number[] = [];
            // every time b was reconciled (its status.reconciledAt as written)
            const reconciled: number[] = [];
            const unsubscribe = t.lab.kube.onChange((c) => {
                if (c.kind !== "Application" || c.obj.metadata.name !== "gate-b") return;
                if (
                    c.actor === ACTOR &&
                    c.obj.metadata.annotations?.[REFRESH_ANNOTATION] &&
                    !c.old?.metadata?.annotations?.[REFRESH_ANNOTATION]
                )
                    asked.push(t.lab.argo.clock.now());
                const at = c.obj.status?.reconciledAt;
                if (at && at !== c.old?.status?.reconciledAt) reconciled.push(Date.parse(at));
            });
            try {
                fs.writeFileSync(
                    path.join(t.clone, "respec/v1/configmap.yaml"),
                    "apiVersion: v1\nkind: ConfigMap\nmetadata: { name: respec }\ndata: { version: v1b }\n",
                );
                const git = (args: string[]) =>
                    run("git", ["-c", "user.name=t", "-c", "user.email=t@example.org", ...args], { cwd: t.clone });
                await git(["commit", "-qam", "v1b"]);
                await git(["push", "-q", "origin", "HEAD"]);
                const head = (await git(["rev-parse", "HEAD"])).stdout.trim();
                // only a learns of the commit: nobody refreshes b, and the poll is minutes away
                await t.cluster.annotateApplication("gate-a", { [REFRESH_ANNOTATION]: "hard" });
                await expect(
                    holds(
                        "gate-a synced to the new commit",
                        () =>
                            app("a")?.status?.operationState?.phase === "Succeeded" &&
                            app("a")?.status?.operationState?.syncResult?.revision === head,
                        () => [app("a")?.status?.sync, app("a")?.status?.operationState?.phase],
                    ),
                    { timeoutMs: 60_000, intervalMs: 50 },
                );
                const started = Date.parse(app("a")!.status!.operationState!.startedAt!);
                if (gated) {
                    assert.ok(asked.length >= 1, "the gate asked for b's refresh");
                    assert.ok(started >= asked[0], "a's sync started after the gate asked for b's refresh");
                    assert.ok(
                        reconciled.some((r) => r >= asked[0] && r <= started),
                        "and after b was reconciled since the gate asked (a later reconcile of b may follow)",
                    );
                } else assert.deepStrictEqual(asked, [], "3.5 has no gate: nobody refreshes b");
                // the controller's metrics, as kubectl get --raw reads them through its Service
                const kubeconfig = path.join(t.root, "kubeconfig");
                fs.writeFileSync(kubeconfig, t.lab.kubeconfig);
                const metrics = (await run("kubectl", ["--kubeconfig", kubeconfig, "get", "--raw", APPSET_METRICS_PATH])).stdout;
                if (gated) {
                    assert.match(
                        metrics,
                        /^argocd_appset_progressive_sync_app_status\{name="gate",namespace="argocd",progressiveStatus="Healthy",step="1"\} 1$/m,
                    );
                    assert.match(
                        metrics,
                        /^argocd_appset_progressive_sync_app_status\{name="gate",namespace="argocd",progressiveStatus="\w+",step="2"\} 1$/m,
                    );
                    assert.match(
                        metrics,
                        /^argocd_appset_progressive_sync_syncs_triggered_total\{name="gate",namespace="argocd",step="1"\} [1-9]\d*$/m,
                    );
                    assert.match(metrics, /^argocd_appset_app_refresh_total\{name="gate",namespace="argocd"\} [1-9]\d*$/m);
                    assert.match(
                        metrics,
                        /^argocd_appset_progressive_sync_detection_to_trigger_seconds_count\{name="gate",namespace="argocd"\} [1-9]\d*$/m,
                    );
                } else assert.strictEqual(metrics, "", "3.5 has none of the progressive sync series");
            } finally {
                unsubscribe();
            }
        });
    });

    describe(`the simulated Argo CD ${version}: a RollingSync with no steps`, function () {
        this.timeout(120_000);
        let t: Awaited<ReturnType<typeof labOf>>;
        before(async () => (t = await labOf(version)));
        after(async () => {
            await t?.lab.stop();
            if (t?.root) fs.rmSync(t.root, { recursive: true, force: true });
        });

        it(gated ? "is refused: ErrorOccurred, nothing generated" : "rolls nothing out: each Application syncs itself", async () => {
            await t.cluster.createApplicationSet(gateAppSet([]));
            const set = () => t.lab.kube.get("ApplicationSet", ARGOCD_NAMESPACE, SET);
            if (gated) {
                await expect(
                    holds(
                        "ErrorOccurred: No steps defined for rollout",
                        () => !!set()?.status?.conditions?.some((c: any) => c.reason === "ApplicationSetRolloutError"),
                        () => set()?.status,
                    ),
                );
                assert.deepStrictEqual(t.lab.kube.list("Application", ARGOCD_NAMESPACE), [], "no Application is generated");
            } else {
                await expect(
                    holds(
                        "both Applications synced by their own automated policy",
                        () =>
                            ["a", "b"].every(
                                (r) => t.lab.kube.get("Application", ARGOCD_NAMESPACE, `gate-${r}`)?.status?.sync?.status === "Synced",
                            ),
                        () => t.lab.kube.list("Application", ARGOCD_NAMESPACE).map((a: any) => a.status?.sync),
                    ),
                    { timeoutMs: 60_000 },
                );
            }
            const [d] = diagnose(await readLive(t.cluster), { now: new Date(t.lab.argo.clock.now()), stuckAfterSeconds: 600 });
            assert.deepStrictEqual(
                d.findings.map((f) => f.kind),
                [gated ? "RolloutError" : "NoSteps"],
            );
        });
    });
}

describe("the simulated ApplicationSet controller's metrics, as client_golang writes them", () => {
    it("a family once it has a series; a histogram's buckets by le, then its sum and count", () => {
        const m = new AppSetMetrics();
        assert.strictEqual(m.text(), "");
        m.detectionToTrigger("argocd", "tenants", 0.12);
        m.setAppStatus("argocd", "tenants", [
            { step: "1", status: "Healthy" },
            { step: "1", status: "Healthy" },
            { step: "2", status: "Pending" },
        ]);
        const lines = m.text().trim().split("\n");
        assert.deepStrictEqual(
            lines.filter((l) => l.startsWith("argocd_appset_progressive_sync_app_status")),
            [
                'argocd_appset_progressive_sync_app_status{name="tenants",namespace="argocd",progressiveStatus="Healthy",step="1"} 2',
                'argocd_appset_progressive_sync_app_status{name="tenants",namespace="argocd",progressiveStatus="Pending",step="2"} 1',
            ],
        );
        const hist = lines.filter((l) => l.startsWith("argocd_appset_progressive_sync_detection_to_trigger_seconds"));
        assert.deepStrictEqual(
            hist.map((l) => l.replace(/\{.*\}/, (labels) => /le="([^"]+)"/.exec(labels)?.[1] ?? "")),
            [
                "argocd_appset_progressive_sync_detection_to_trigger_seconds_bucket0.05 0",
                "argocd_appset_progressive_sync_detection_to_trigger_seconds_bucket0.1 0",
                "argocd_appset_progressive_sync_detection_to_trigger_seconds_bucket0.15 1",
                "argocd_appset_progressive_sync_detection_to_trigger_seconds_bucket0.5 1",
                "argocd_appset_progressive_sync_detection_to_trigger_seconds_bucket1 1",
                "argocd_appset_progressive_sync_detection_to_trigger_seconds_bucket5 1",
                "argocd_appset_progressive_sync_detection_to_trigger_seconds_bucket+Inf 1",
                "argocd_appset_progressive_sync_detection_to_trigger_seconds_sum 0.12",
                "argocd_appset_progressive_sync_detection_to_trigger_seconds_count 1",
            ],
        );
        assert.ok(!lines.some((l) => l.includes("syncs_triggered")), "no series, no family");
    });

    it("the doctor reads back each step's count, escaped names too", () => {
        const m = new AppSetMetrics();
        m.setAppStatus("argocd", 'odd "set"', [{ step: "1", status: "Healthy" }]);
        m.setAppStatus("argocd", "tenants", [
            { step: "2", status: "Progressing" },
            { step: "2", status: "Waiting" },
            { step: "2", status: "Waiting" },
        ]);
        assert.deepStrictEqual(progressiveSyncCounts(`# HELP x\n${m.text()}`), [
            { namespace: "argocd", name: 'odd "set"', step: "1", status: "Healthy", count: 1 },
            { namespace: "argocd", name: "tenants", step: "2", status: "Progressing", count: 1 },
            { namespace: "argocd", name: "tenants", step: "2", status: "Waiting", count: 2 },
        ]);
    });
});

// appcontroller.go's processRequestedAppOperation: v3.5.1 writes the retry's time as time.Kitchen, v3.6.2 as
// RFC 3339 in UTC; both name the retries of the last attempt only when there were some
describe("Argo CD 3.6 simulation: an operation's retry messages", () => {
    const at = Date.UTC(2026, 11, 7, 14, 3, 27, 450);
    it("the retry's time as each release writes it", () => {
        assert.strictEqual(retryingMessage("3.5", "failed", 2, at), "failed. Retrying attempt #2 at 2:03PM.");
        assert.strictEqual(retryingMessage("3.6", "failed", 2, at), "failed. Retrying attempt #2 at 2026-12-07T14:03:27Z.");
    });
    it("the retries named only after some", () => {
        assert.strictEqual(gaveUpMessage("failed", 5), "failed (retried 5 times).");
        assert.strictEqual(gaveUpMessage("ComparisonError: x", 0), "ComparisonError: x");
    });
});
