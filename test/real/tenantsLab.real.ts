/**
 * The tenants lab on the real control plane, as far as it goes there: the real Argo CD v3.5.1
 * (git files generator, RollingSync, PreSync hooks) and the real Job and Deployment controllers,
 * with KWOK's default stages (every Pod becomes ready; a Job's Pods complete). The lab's step 1 and a
 * release rolled out through the lab's own code, step by step. KWOK's default stages never fail a
 * hook, so the stall itself (and the hook's log) is not reproduced here: that needs KWOK stages
 * chosen by the tenant's settings and KWOK's log support (not built).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { APPSET_REFRESH_ANNOTATION } from "../../lab/argo/application";
import { run } from "../../lab/ports/exec";
import { KubeCluster } from "../../lab/ports/cluster";
import { pollUntil } from "../../lab/ports/wait";
import { RELEASES, TENANTS, tenantsLayout } from "../../lab/tenants/layout";
import { RELEASE_LABEL, tenantFile, tenantPath } from "../../lab/tenants/repoFiles";
import { solveTenantsLab } from "../../lab/tenants/solve";
import { startRealLab } from "../../realplane/realLab";

describe("the tenants lab on the real control plane (Kubernetes with KWOK, Argo CD v3.5.1)", function () {
    this.timeout(1_800_000);

    it("builds the lab and rolls out its first release, then a new one, one tenant per step, with the PreSync hook Jobs run by the real Job controller", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "real-tenants-"));
        const lab = await startRealLab(root, (l) => console.log(`  ${l}`));
        try {
            const cluster = new KubeCluster(lab.kubeconfig);
            const layout = tenantsLayout(root);
            await solveTenantsLab({ layout, cluster, log: (l) => !l.includes("…") && console.log(`  ${l}`), timeouts: { rolloutMs: 600_000 } }, 1);
            for (const t of TENANTS) {
                const app = await cluster.getApplication(t);
                assert.strictEqual(app.spec.syncPolicy.automated.enabled, false, `${t}: automated.enabled written by RollingSync`);
                const job = (await cluster.listJobs(t)).find((j) => j.metadata.name === "site-setup");
                assert.ok((job?.status?.conditions ?? []).some((c: any) => c.type === "Complete" && c.status === "True"), `${t}: the PreSync hook Job completed`);
            }

            // a release for every tenant in one commit, the ApplicationSet refreshed (as the scenario does)
            const clone = layout.clone;
            for (const t of TENANTS) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            await run("git", ["-C", clone, "commit", "--quiet", "-am", `every tenant at ${RELEASES.fixed}`]);
            await run("git", ["-C", clone, "push", "--quiet", "origin", "HEAD:refs/heads/main"]);
            await cluster.annotateApplicationSet("tenants", { [APPSET_REFRESH_ANNOTATION]: "true" });
            const done = await pollUntil(
                async () => {
                    const set = await cluster.getApplicationSet("tenants");
                    const cond = (set?.status?.conditions ?? []).find((c: any) => c.type === "RolloutProgressing");
                    const releases = await Promise.all(TENANTS.map(async (t) => (await cluster.getWorkload("Deployment", t, "site"))?.spec?.template?.metadata?.labels?.[RELEASE_LABEL]));
                    return cond?.status === "False" && releases.every((r) => r === RELEASES.fixed) ? set : undefined;
                },
                { timeoutMs: 600_000, intervalMs: 1_000, describe: () => `the rollout of ${RELEASES.fixed} did not complete within 600 s` },
            );
            // one tenant per step: each became Healthy no earlier than the tenant of the step before it
            const order = TENANTS.map((t) => done.status.applicationStatus.find((s: any) => s.application === t));
            assert.deepStrictEqual(order.map((s: any) => `${s.step}:${s.status}`), ["1:Healthy", "2:Healthy", "3:Healthy", "4:Healthy"]);
            const times = order.map((s: any) => Date.parse(s.lastTransitionTime));
            for (let i = 1; i < times.length; i++) assert.ok(times[i] >= times[i - 1], `step ${i + 1} Healthy before step ${i}: ${JSON.stringify(order)}`);
        } finally {
            await lab.stop();
        }
    });
});
