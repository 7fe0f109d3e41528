/**
 * The tenants lab on the real node (realnode/): the real Argo CD the stack installs by default (git files generator,
 * RollingSync, PreSync hooks) installed as the stack installs it, the real Job and Deployment
 * controllers, and every Pod a container: the hook Job's Pods run setup.sh inside busybox:1.37.0
 * with the release's code mounted read-only, the git daemon is a Pod behind its Service. Given the
 * lab run through its three steps as `pulumi up` runs them, with the in-cluster rollout doctor
 * deployed during the stall (the component's own objects: its Deployment, its ServiceAccount and
 * ClusterRole), then: the stall at step 2 is mandant-b's hook script's failure, named from the Pod's
 * log, which the API server reads through the kubelet; the doctor's Pod names it with its ClusterRole
 * and nothing more; the recovery completes and verify grades 100% live; and the rollout's trace
 * matches the simulation's as that version at v3.5.1's timings, or the difference is written down with its
 * reason (test/helpers/rolloutTrace.ts). On 3.6 also: its InvalidRolloutConfig condition, and a RollingSync
 * with no steps refused.
 */
import * as assert from "assert";
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { doctorBundle } from "../../components/rolloutDoctor";
import { PLUGIN_FILE, pluginText } from "../../cli/kubectlPlugin";
import { DOCTOR_METRICS_PORT, DOCTOR_NAME, DOCTOR_NAMESPACE, DOCTOR_RBAC_RULES, rolloutDoctorManifests } from "../../lab/doctor/inCluster";
import { KubeCluster } from "../../lab/ports/cluster";
import { pollUntil } from "../../lab/ports/wait";
import { RELEASES, TENANTS, tenantsLayout } from "../../lab/tenants/layout";
import { TenantsResults } from "../../lab/tenants/results";
import { solveTenantsLab } from "../../lab/tenants/solve";
import { registryImages } from "../../lab/platform/images";
import { NodeLab } from "../../realnode/lab";
import { REAL_ARGOCD_DEFAULT } from "../../realplane/versions";
import { ARGOCD_NAMESPACE } from "../../lab/argo/application";
import { APPSET_METRICS } from "../../lab/argo/appsetMetrics";
import { diagnose } from "../../lab/doctor/diagnose";
import { readLive } from "../../lab/doctor/watch";
import { ARGOCD_RELEASES } from "../../lab/platform/argocd";
import { ringAppSet } from "../helpers/ringAppSet";
import { keepWatching } from "../../realplane/watch";
import { CliResult, runMain } from "../helpers/cli";
import {
    EXPLAINED,
    hookJobsOfGivenUpSync,
    marker,
    Phase,
    PHASES,
    RolloutTrace,
    simulatedTrace,
    TraceRecorder,
    transitions,
    watchPlane,
} from "../helpers/rolloutTrace";
import { startNodeLabIn } from "../helpers/nodeLab";
import type { Pod } from "../../lab/argo/types";

/** The hook script's own error (gitrepo/tenants/releases/1.2.0/code/setup.sh). */
const HOOK_ERROR = /config\/system\/settings\.php is not writable/;

interface DoctorRun {
    log: string;
    metrics: string;
    /** The ApplicationSet controller's /metrics through the service proxy, read as the doctor's ServiceAccount (its Role in argocd). */
    controllerMetrics: string;
    events: any[];
}

/**
 * The in-cluster doctor as the component deploys it (its Namespace, ServiceAccount, ClusterRole and
 * binding, bundle ConfigMap, Deployment and Service), in `namespace`, with `rules` in its ClusterRole
 * (named `name`): a Pod on the node as its ServiceAccount, every 2 s, until its log shows RolloutStuck;
 * then its log, its /metrics through the API server's Service proxy, and the Events it posted. Removed after.
 */
async function doctorPod(lab: NodeLab, namespace: string, name: string, rules: any[]): Promise<DoctorRun> {
    // stderr captured: the log is polled before the container has started, and the error is in the exception
    const kubectl = (args: string[], input?: string) =>
        execFileSync("kubectl", ["--kubeconfig", lab.kubeconfigFile, ...args], {
            encoding: "utf8",
            input,
            stdio: ["pipe", "pipe", "pipe"],
        });
    const b = doctorBundle();
    const objs = rolloutDoctorManifests({ bundleGzBase64: b.gzBase64, bundleDigest: b.digest, namespace, intervalSeconds: 2 }).map(
        (o: any) =>
            o.kind === "ClusterRole"
                ? { ...o, metadata: { ...o.metadata, name }, rules }
                : o.kind === "ClusterRoleBinding"
                  ? { ...o, metadata: { ...o.metadata, name }, roleRef: { ...o.roleRef, name } }
                  : o.kind === "Role"
                    ? { ...o, metadata: { ...o.metadata, name: `${name}-metrics` } }
                    : o.kind === "RoleBinding"
                      ? { ...o, metadata: { ...o.metadata, name: `${name}-metrics` }, roleRef: { ...o.roleRef, name: `${name}-metrics` } }
                      : o,
    );
    kubectl(["apply", "--server-side", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: objs }));
    const logs = () => {
        try {
            return kubectl(["logs", "-n", namespace, `deploy/${DOCTOR_NAME}`]);
        } catch {
            return ""; // not started yet
        }
    };
    try {
        await pollUntil(async () => (/RolloutStuck/.test(logs()) ? true : undefined), {
            timeoutMs: 180_000,
            intervalMs: 1_000,
            describe: () => `the doctor's Pod in ${namespace} logged no RolloutStuck within 180 s: ${logs()}`,
        });
        // through its Service: the Pod's endpoint is published once its readiness probe passes, which can come after its first log
        const metricsPath = `/api/v1/namespaces/${namespace}/services/${DOCTOR_NAME}:${DOCTOR_METRICS_PORT}/proxy/metrics`;
        let lastError = "";
        const metrics = await pollUntil(
            async () => {
                try {
                    return kubectl(["get", "--raw", metricsPath]);
                } catch (e: any) {
                    lastError = String(e.stderr ?? e.message).trim();
                    return undefined;
                }
            },
            {
                timeoutMs: 120_000,
                intervalMs: 1_000,
                describe: () => `the doctor's metrics in ${namespace} were not served through its Service within 120 s: ${lastError}`,
            },
        );
        // what the doctor reads of the controller's own metrics, as its ServiceAccount (impersonated): its Role allows it
        const controllerMetrics = kubectl([
            "get",
            "--raw",
            `/api/v1/namespaces/${APPSET_METRICS.namespace}/services/${APPSET_METRICS.service}/proxy/${APPSET_METRICS.path}`,
            `--as=system:serviceaccount:${namespace}:${DOCTOR_NAME}`,
        ]);
        const events = JSON.parse(
            kubectl([
                "get",
                "events",
                "-n",
                "argocd",
                "--field-selector",
                "involvedObject.kind=ApplicationSet,involvedObject.name=tenants,reason=RolloutStuck",
                "-o",
                "json",
            ]),
        ).items;
        return { log: logs(), metrics, controllerMetrics, events };
    } finally {
        kubectl(
            ["delete", "--wait=false", "-f", "-"],
            JSON.stringify({ apiVersion: "v1", kind: "List", items: objs.filter((o) => o.kind !== "Namespace") }),
        );
    }
}

const VERSION = REAL_ARGOCD_DEFAULT;
const IS_36 = ARGOCD_RELEASES[VERSION].minor === "3.6";

describe(`the tenants lab on the real node (Argo CD ${VERSION} installed as the stack installs it, every Pod a container)`, function () {
    this.timeout(3_600_000);
    let root: string;
    let lab: NodeLab;
    let results: TenantsResults;
    let trace: RolloutTrace;
    let doctor: DoctorRun;
    let doctorWithoutLogs: DoctorRun;
    let kubectlLogs: string;
    let plugin: { code: number | null; stdout: string; stderr: string };
    const racedAndFailed: string[] = [];
    let jobEvents: any[] = [];
    let verified: CliResult;
    let conditions: any[] = [];
    /** Each hook Pod's end, from a watch (`namespace/pod exit N`). */
    const hookRuns: string[] = [];

    before(async function () {
        ({ root, lab } = await startNodeLabIn("real-tenants"));
        const rec = new TraceRecorder(() => Date.now());
        const watch = await watchPlane(lab.kubeconfig, rec);
        const ended = new Set<string>();
        const pods = await keepWatching<Pod>(
            lab.kubeconfig,
            "/api/v1/pods",
            { labelSelector: "batch.kubernetes.io/job-name=site-setup" },
            (_type, pod) => {
                const t = pod.status?.containerStatuses?.[0]?.state?.terminated;
                const uid = pod.metadata.uid ?? "";
                if (t && !ended.has(uid)) {
                    ended.add(uid);
                    hookRuns.push(`${pod.metadata.namespace}/${pod.metadata.name} exit ${t.exitCode}`);
                }
            },
        );
        const mark = marker(rec);
        const cluster = new KubeCluster(lab.kubeconfig);
        const layout = tenantsLayout(root);
        const ctx = {
            layout,
            cluster,
            images: registryImages(`http://${lab.node.registry}`),
            log: (l: string) => (mark(l), !l.includes("…") && console.log(`  ${l}`)),
        };
        try {
            await solveTenantsLab(ctx, 2);
            // during the stall (mandant-b's sync retries for minutes): the learner's kubectl logs, and the doctor's Pod
            const failed = (await cluster.listPods("mandant-b")).filter((p: any) => p.status?.phase === "Failed");
            assert.ok(failed.length, "no failed hook Pod in mandant-b");
            kubectlLogs = execFileSync(
                "kubectl",
                ["--kubeconfig", lab.kubeconfigFile, "logs", "-n", "mandant-b", failed[0].metadata.name],
                { encoding: "utf8" },
            );
            // the real Job controller's Events on mandant-b's hook Job (the simulation writes the same: test/simWorkloads.test.ts)
            jobEvents = JSON.parse(
                execFileSync("kubectl", ["--kubeconfig", lab.kubeconfigFile, "get", "events", "-n", "mandant-b", "-o", "json"], {
                    encoding: "utf8",
                }),
            ).items.filter((e: any) => e.involvedObject?.kind === "Job" && e.involvedObject?.name === "site-setup");
            // the kubectl plugin, from a folder with nothing but it, with only the lab's kubeconfig
            const bin = fs.mkdtempSync(path.join(os.tmpdir(), "real-tenants-plugin-"));
            fs.writeFileSync(path.join(bin, PLUGIN_FILE), pluginText(doctorBundle().js), { mode: 0o755 });
            const kubectlDir = path.dirname(execFileSync("sh", ["-c", "command -v kubectl"], { encoding: "utf8" }).trim());
            // a tenant that raced ahead into 1.2.0 (v3.5.1 allows it) and whose hook Job has failed, as the plugin runs
            for (const other of ["mandant-c", "mandant-d"])
                if (
                    (await cluster.listJobs(other)).some((j: any) =>
                        (j.status?.conditions ?? []).some((c: any) => c.type === "Failed" && c.status === "True"),
                    )
                )
                    racedAndFailed.push(other);
            const run = spawnSync("kubectl", ["rollout-doctor", "--appset", "tenants"], {
                cwd: bin,
                encoding: "utf8",
                env: { PATH: [bin, path.dirname(process.execPath), kubectlDir].join(path.delimiter), KUBECONFIG: lab.kubeconfigFile },
                timeout: 120_000,
            });
            plugin = { code: run.status, stdout: run.stdout, stderr: run.stderr };
            fs.rmSync(bin, { recursive: true, force: true });
            doctor = await doctorPod(lab, DOCTOR_NAMESPACE, DOCTOR_NAME, DOCTOR_RBAC_RULES);
            doctorWithoutLogs = await doctorPod(
                lab,
                `${DOCTOR_NAMESPACE}-no-logs`,
                `${DOCTOR_NAME}-no-logs`,
                DOCTOR_RBAC_RULES.filter((r) => !r.resources.includes("pods/log")),
            );
            results = await solveTenantsLab(ctx, 3);
            conditions = (await cluster.getApplicationSet("tenants", ARGOCD_NAMESPACE))?.status?.conditions ?? [];
            verified = await runMain("verify", ["--lab", "tenants", "--root", root, "--kubeconfig", lab.kubeconfigFile]);
            trace = rec.trace;
        } finally {
            watch.stop();
            pods.stop();
            console.log(`  the real node's trace:\n    ${rec.trace.log.join("\n    ")}`);
        }
    });

    after(async () => {
        await lab?.stop();
        if (root) fs.rmSync(root, { recursive: true, force: true });
    });

    it("step 2: the rollout stalls at step 2 because mandant-b's hook script really failed; stall.json names its error, read from the real Pod log", () => {
        const stall = results.stall!;
        assert.strictEqual(stall.step, 2);
        assert.strictEqual(stall.blocking, "mandant-b");
        assert.strictEqual(stall.hook_job, "mandant-b/site-setup");
        assert.match(stall.hook_error, HOOK_ERROR);
        assert.deepStrictEqual(stall.passed, ["mandant-a"]);
        assert.deepStrictEqual(stall.waiting, ["mandant-c", "mandant-d"]);
        // the script ran in its container: mandant-b's Pods exited 1, mandant-a's 0
        assert.ok(
            hookRuns.some((r) => /^mandant-b\/site-setup-\w+ exit 1$/.test(r)),
            hookRuns.join("; "),
        );
        assert.ok(
            hookRuns.some((r) => /^mandant-a\/site-setup-\w+ exit 0$/.test(r)),
            hookRuns.join("; "),
        );
        // and kubectl logs shows it, through the API server's pods/log and the kubelet
        assert.match(kubectlLogs, /^site-setup: release 1\.2\.0 for tenant mandant-b$/m);
        assert.match(kubectlLogs, HOOK_ERROR);
    });

    it("the Job controller's Events on the failed hook Job are those the simulation writes: SuccessfulCreate per Pod, a Warning BackoffLimitExceeded", () => {
        const shown = jobEvents.map((e) => `${e.type} ${e.reason} (${e.source?.component || e.reportingComponent})`);
        assert.ok(shown.includes("Warning BackoffLimitExceeded (job-controller)"), shown.join("; "));
        assert.ok(shown.includes("Normal SuccessfulCreate (job-controller)"), shown.join("; "));
        const exceeded = jobEvents.find((e) => e.reason === "BackoffLimitExceeded");
        assert.strictEqual(exceeded.message, "Job has reached the specified backoff limit");
        assert.ok(
            jobEvents.filter((e) => e.reason === "SuccessfulCreate").every((e) => /^Created pod: site-setup-\w+$/.test(e.message)),
            shown.join("; "),
        );
    });

    it("kubectl rollout-doctor, with only the lab's kubeconfig, names the stall, the hook's error from the real Pod log, and every other tenant whose hook failed", () => {
        assert.strictEqual(plugin.code, 1, `${plugin.stdout}${plugin.stderr}`);
        assert.match(plugin.stdout, /^tenants: rollout stuck at step 2 of 4 .*mandant-b: PreSync hook Job mandant-b\/site-setup failed/);
        assert.match(plugin.stdout, HOOK_ERROR);
        assert.match(plugin.stdout, /^- SyncFailed: mandant-b \(step 2\): its own sync failed/m);
        // a tenant that raced ahead and whose own hook Job had failed is named as failing, not only as waiting
        for (const other of racedAndFailed)
            assert.match(plugin.stdout, new RegExp(`^- SyncFailed: ${other} \\(step \\d\\): its own sync failed`, "m"));
        if (racedAndFailed.length) console.log(`  raced ahead and failed on its own: ${racedAndFailed.join(", ")}`);
    });

    it("the doctor's Pod, as its ServiceAccount with the component's ClusterRole and nothing more, names the stall from the Pod log, posts its Event and serves its metrics", () => {
        assert.doesNotMatch(doctor.log, /forbidden|HTTP 403|cannot read/i, doctor.log);
        assert.match(doctor.log, /RolloutStuck argocd\/tenants: .*step 2 of 4.*mandant-b/);
        assert.match(doctor.log, HOOK_ERROR);
        assert.ok(
            doctor.events.some((e) => e.type === "Warning" && HOOK_ERROR.test(e.message)),
            JSON.stringify(doctor.events.map((e) => e.message)),
        );
        assert.match(doctor.metrics, /^gitops_lab_rollout_stuck\{[^}]*application="mandant-b"[^}]*\} 1$/m);
        // its Role in argocd lets it read the ApplicationSet controller's metrics (3.6's progressive-sync series are evidence)
        assert.match(doctor.controllerMetrics, IS_36 ? /^argocd_appset_progressive_sync_app_status\{/m : /^# TYPE argocd_appset_/m);
        // the negative control: the same ServiceAccount without pods/log cannot name the hook's error (so a missing permission fails the assertions above)
        assert.match(doctorWithoutLogs.log, /RolloutStuck argocd\/tenants: .*mandant-b/);
        assert.doesNotMatch(doctorWithoutLogs.log, HOOK_ERROR);
    });

    it("step 3: the recovery completes and verify --lab tenants grades the lab 100% on the live cluster", () => {
        const recovery = results.recovery!;
        assert.strictEqual(recovery.release, RELEASES.fixed);
        assert.deepStrictEqual(recovery.running, Object.fromEntries(TENANTS.map((t) => [t, RELEASES.fixed])));
        assert.strictEqual(verified.code, 0, `${verified.stdout}\n${verified.stderr}`);
        assert.match(verified.stdout, /^\d+ passed, 0 failed$/m);
        console.log(
            `  recovery order (first sync of ${RELEASES.fixed}): ${trace.recoveryOrder.join(", ")}; silently skipped: ${trace.skipped.join(", ") || "none"}`,
        );
    });

    it("the trace (transitions, who synced and ran hooks in each phase, mandant-b's give-up) matches the simulation's at v3.5.1's timings, or the difference is explained", async () => {
        const sim = await simulatedTrace(undefined, VERSION);
        const counts = (t: RolloutTrace) =>
            PHASES.map((p: Phase) => `${p}: hook Jobs ${JSON.stringify(t.hookJobs[p])}, syncs ${JSON.stringify(t.syncs[p])}`).join(
                "\n    ",
            );
        console.log(`  real:\n    ${counts(trace)}\n  simulated:\n    ${counts(sim)}`);
        console.log(`  simulated recovery order: ${sim.recoveryOrder.join(", ")}; silently skipped: ${sim.skipped.join(", ") || "none"}`);
        const r = transitions(trace);
        const s = transitions(sim);
        const differences: string[] = [];
        for (const k of r) if (!s.has(k) && !EXPLAINED[k]) differences.push(`the real Argo CD showed ${k}, the simulation never did`);
        for (const k of s) if (!r.has(k) && !EXPLAINED[k]) differences.push(`the simulation showed ${k}, the real Argo CD never did`);
        // who synced, and whose hook ran, in each phase (how often depends on timing on both sides: a sync started within the
        // second its entry went Pending is started again, whole-second times)
        for (const p of PHASES) {
            const who = (c: Record<string, number>) =>
                Object.keys(c)
                    .filter((t) => c[t] > 0)
                    .join(", ");
            if (who(trace.syncs[p]) !== who(sim.syncs[p]))
                differences.push(`${p}: synced ${who(trace.syncs[p])} on the real plane, ${who(sim.syncs[p])} in the simulation`);
            if (who(trace.hookJobs[p]) !== who(sim.hookJobs[p]))
                differences.push(
                    `${p}: hook Jobs of ${who(trace.hookJobs[p])} on the real plane, of ${who(sim.hookJobs[p])} in the simulation`,
                );
        }
        // mandant-b's sync that gave up: six attempts. On 3.5 the hook Job ran in three (each retry after a run fails at once on
        // the last attempt's stored result, kept by 3.5's merge patch of the operation state); 3.6 replaces the whole state,
        // so every attempt runs it (v3.6.2 appcontroller.go setOperationState)
        const expected = IS_36 ? 6 : 3;
        const real = hookJobsOfGivenUpSync(trace, "mandant-b");
        const simulated = hookJobsOfGivenUpSync(sim, "mandant-b");
        if (real !== expected || simulated !== expected)
            differences.push(
                `mandant-b's given-up sync ran its hook Job ${real} times on the real plane, ${simulated} in the simulation (${expected} expected)`,
            );
        assert.deepStrictEqual(differences, []);
    });

    // Argo CD 3.6's own: a version without them (3.5) has nothing to show (the default is 3.6.2)
    (IS_36 ? it : it.skip)("3.6's InvalidRolloutConfig condition: False, configured correctly", () => {
        const c = conditions.find((x) => x.type === "InvalidRolloutConfig");
        assert.deepStrictEqual(c && { status: c.status, reason: c.reason, message: c.message }, {
            status: "False",
            reason: "ApplicationSetValidRolloutConfig",
            message: "Rolling Sync Configured correctly",
        });
    });

    (IS_36 ? it : it.skip)("3.6 refuses a RollingSync with no steps, and the doctor names it", async () => {
        const cluster = new KubeCluster(lab.kubeconfig);
        const set = ringAppSet({
            repoURL: "git://gitd.gitsrv.svc.cluster.local:9418/platform.git",
            name: "nosteps",
            rings: ["x"],
            steps: [],
            appName: "nosteps-{{.ring}}",
            path: "tenants",
            prune: false,
        });
        await cluster.createApplicationSet(set);
        const cond = await pollUntil(
            async () =>
                ((await cluster.getApplicationSet("nosteps", ARGOCD_NAMESPACE))?.status?.conditions ?? []).find(
                    (c: any) => c.type === "ErrorOccurred" && c.status === "True",
                ),
            { timeoutMs: 120_000, intervalMs: 1_000, describe: () => "the ErrorOccurred condition of nosteps" },
        );
        assert.deepStrictEqual(
            { reason: cond.reason, message: cond.message },
            { reason: "ApplicationSetRolloutError", message: "No steps defined for rollout" },
        );
        assert.deepStrictEqual(
            (await cluster.listApplications(ARGOCD_NAMESPACE)).filter((a: any) => a.metadata.name.startsWith("nosteps")),
            [],
        );
        const [d] = diagnose(await readLive(cluster), { now: new Date(), stuckAfterSeconds: 600, appset: "nosteps" });
        assert.deepStrictEqual(
            d.findings.map((f) => f.kind),
            ["RolloutError"],
        );
        await cluster.deleteApplicationSet("nosteps", ARGOCD_NAMESPACE);
    });
});
