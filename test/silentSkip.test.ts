/**
 * The silent skip of v3.5.1 (#29240) in the simulated Argo CD, as the real node shows it
 * (test/real/doctorConformance.real.ts makes the same case): a rolled-out Application whose list
 * element gets a new path with no commit. The ApplicationSet controller judges the spec change on the
 * Application's last status (Synced, Healthy), takes it for one that needs no sync, and its entry is
 * Healthy before the new spec is even written; no sync ever starts.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ARGOCD_NAMESPACE } from "../lab/argo/application";
import { diagnose } from "../lab/doctor/diagnose";
import { readLive } from "../lab/doctor/watch";
import { createLabRepo } from "../lab/platform/labRepo";
import { KubeCluster } from "../lab/ports/cluster";
import { REPO_URL } from "../lab/shop/layout";
import { SimulatedLab, startSimulatedLab } from "../sim/simulatedLab";
import { expect, expectConsistently, holds } from "./helpers/expect";
import { RESPEC, respecAppSet, respecFiles, respecNewPath } from "./helpers/ringAppSet";

const APP = RESPEC.app;
/** The lab's in-cluster git daemon, serving the test's own repository. */
const RESPEC_URL = REPO_URL.replace(/[^/]+$/, "respec.git");

describe("the silent skip (#29240) in the simulated Argo CD, as v3.5.1 does it on the real node", function () {
    this.timeout(120_000);
    let root: string;
    let lab: SimulatedLab;
    let cluster: KubeCluster;
    const app = () => lab.kube.get("Application", ARGOCD_NAMESPACE, APP);
    const entry = () =>
        lab.kube.get("ApplicationSet", ARGOCD_NAMESPACE, RESPEC.appset)?.status?.applicationStatus?.find((e: any) => e.application === APP);

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "silent-skip-"));
        lab = await startSimulatedLab(root);
        const { bareDir, workDir } = lab.layout;
        await createLabRepo(
            { bareDir, bareRepo: path.join(bareDir, "respec.git"), workDir, clone: path.join(workDir, "respec") },
            { owner: "silent-skip-test", initialMessage: "respec v1 and v2" },
            respecFiles(),
        );
        cluster = new KubeCluster(lab.kubeconfig);
        await cluster.createApplicationSet(respecAppSet(RESPEC_URL));
    });
    after(async () => {
        await lab?.stop();
        if (root) fs.rmSync(root, { recursive: true, force: true });
    });

    // given respec-s rolled out, when its element's path changes, then its entry turns Healthy on the last status, no
    // sync starts, and the doctor names HealthyOutOfSync
    it("a changed path is skipped silently, and named", async () => {
        await expect(
            holds(
                "respec-s rolled out with no sync left to run",
                () => entry()?.status === "Healthy" && !app()?.operation && app()?.status?.operationState?.phase === "Succeeded",
                () => [entry(), app()?.status?.operationState?.phase],
            ),
            { timeoutMs: 60_000, intervalMs: 100 },
        );
        const started = app()!.status!.operationState!.startedAt;
        const rolledOut = entry()!.message;

        await cluster.jsonPatchApplicationSet(RESPEC.appset, respecNewPath);

        await expect(
            holds(
                "respec-s OutOfSync at respec/v2",
                () => app()?.spec?.source?.path === "respec/v2" && app()?.status?.sync?.status === "OutOfSync",
                () => app()?.status?.sync,
            ),
            { timeoutMs: 30_000, intervalMs: 100 },
        );
        // the message the real node's entry shows (progressive_sync.go: Waiting -> Healthy, "has synced")
        assert.notStrictEqual(rolledOut, entry()?.message, "the entry was judged again on the spec change");
        assert.strictEqual(entry()?.message, "Application resource has synced, updating status to Healthy");
        await expectConsistently(
            holds(
                "no sync since the path changed, and the entry Healthy",
                () => !app()?.operation && app()?.status?.operationState?.startedAt === started && entry()?.status === "Healthy",
                () => [app()?.operation, app()?.status?.operationState?.startedAt, entry()],
            ),
            { forMs: 3_000, intervalMs: 100 },
        );
        const d = diagnose(await readLive(cluster), { now: new Date(), stuckAfterSeconds: 0, appset: RESPEC.appset })[0];
        assert.deepStrictEqual(
            d.findings.filter((f) => f.kind === "HealthyOutOfSync").map((f) => `${f.application}@${f.step}`),
            [`${APP}@1`],
        );
    });
});
