/**
 * The tenants lab on the real control plane: the real Argo CD v3.5.1 (git files generator,
 * RollingSync, PreSync hooks), the real Job and Deployment controllers, and the hook Pods run for
 * real (realplane/hookPods.ts: their script by /bin/sh as nobody, their outcome and log written
 * through the API as a kubelet would; every other Pod on KWOK's stages). Given the lab run through
 * its three steps as `simulate --lab tenants --cluster real` runs it, with the rollout doctor run as
 * its own ServiceAccount during the stall, then: the stall at step 2 is mandant-b's hook script's
 * failure, named from the real Pod log; the doctor names it with its ClusterRole and nothing more;
 * the recovery completes and verify grades 100% live; and the rollout's trace matches the
 * simulation's at v3.5.1's timings, or the difference is written down below with its reason.
 */
import * as assert from "assert";
import { execFile, execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { gunzipSync } from "zlib";
import { parse } from "yaml";
import { doctorBundle } from "../../components/rolloutDoctor";
import { DOCTOR_NAME, DOCTOR_NAMESPACE, DOCTOR_RBAC_RULES, rolloutDoctorManifests } from "../../lab/doctor/inCluster";
import { KubeCluster } from "../../lab/ports/cluster";
import { freePort } from "../../sim/gitDaemon";
import { pollUntil } from "../../lab/ports/wait";
import { RELEASES, TENANTS, tenantsLayout } from "../../lab/tenants/layout";
import { TenantsResults } from "../../lab/tenants/results";
import { solveTenantsLab } from "../../lab/tenants/solve";
import { RealLab, startRealLab } from "../../realplane/realLab";
import { CliResult, runMain } from "../helpers/cli";
import { marker, Phase, PHASES, RolloutTrace, simulatedTrace, TraceRecorder, watchPlane } from "../helpers/rolloutTrace";

/** The hook script's own error (gitrepo/tenants/releases/1.2.0/code/setup.sh). */
const HOOK_ERROR = /config\/system\/settings\.php is not writable/;

interface DoctorRun {
    stdout: string;
    stderr: string;
    metrics: string;
    events: any[];
}

/**
 * The doctor's bundle as the component runs it, against the real plane: as the ServiceAccount
 * `name` (a token from the TokenRequest API, with `rules` bound to it), through the in-cluster
 * environment (the token and CA at /var/run/secrets/kubernetes.io/serviceaccount in a mount
 * namespace of its own, KUBERNETES_SERVICE_HOST/PORT pointed at the plane, no kubeconfig anywhere),
 * as nobody, `--watch` with its metrics served, until a round has posted RolloutStuck.
 */
async function doctorAs(lab: RealLab, name: string, rules: any[], dir: string): Promise<DoctorRun> {
    const kubeconfigFile = lab.plane.kubeconfigFile;
    const kubectl = (args: string[], input?: string) => execFileSync("kubectl", ["--kubeconfig", kubeconfigFile, ...args], { encoding: "utf8", input });
    const b = doctorBundle();
    // the component's own objects; under another name (and rules) for the negative control
    const objs = rolloutDoctorManifests({ bundleGzBase64: b.gzBase64, bundleDigest: b.digest })
        .filter((o) => ["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"].includes(o.kind))
        .map((o) =>
            o.kind === "Namespace"
                ? o
                : {
                      ...o,
                      metadata: { ...o.metadata, name },
                      ...(o.kind === "ClusterRole" ? { rules } : {}),
                      ...(o.kind === "ClusterRoleBinding" ? { roleRef: { ...o.roleRef, name }, subjects: [{ ...o.subjects[0], name }] } : {}),
                  },
        );
    kubectl(["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: objs }));
    const token = kubectl(["create", "token", name, "-n", DOCTOR_NAMESPACE, "--duration", "1h"]).trim();
    const kc = parse(fs.readFileSync(kubeconfigFile, "utf8"));
    const cluster = kc.clusters[0].cluster;
    const server = new URL(cluster.server);
    const sa = fs.mkdtempSync(path.join(dir, `${name}-sa-`));
    fs.chmodSync(sa, 0o755);
    fs.writeFileSync(path.join(sa, "token"), token, { mode: 0o600 });
    fs.writeFileSync(path.join(sa, "ca.crt"), cluster["certificate-authority-data"] ? Buffer.from(cluster["certificate-authority-data"], "base64") : fs.readFileSync(cluster["certificate-authority"]), { mode: 0o600 });
    const work = fs.mkdtempSync(path.join(dir, `${name}-work-`));
    fs.chmodSync(work, 0o755);
    const js = path.join(work, "doctor.js");
    fs.writeFileSync(js, gunzipSync(Buffer.from(b.gzBase64, "base64")), { mode: 0o644 });
    const port = await freePort();
    const saDir = "/var/run/secrets/kubernetes.io/serviceaccount";
    // as the kubelet mounts it: the service account's files at their path, on a tmpfs over /var/run (wherever that
    // link leads) in this process's mount namespace only, readable by the doctor's user there and nowhere else
    const script = `run=$(readlink -f /var/run) && mount -t tmpfs -o mode=0755 none "$run" && mkdir -p ${saDir} && cp "$1/token" "$1/ca.crt" ${saDir}/ && chmod 0644 ${saDir}/token ${saDir}/ca.crt && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$2" "$3" --watch --interval 2 --appset tenants --metrics-port "$4"`;
    const child = spawn("unshare", ["--mount", "--propagation", "private", "sh", "-c", script, "doctor", sa, process.execPath, js, String(port)], {
        cwd: work,
        env: { PATH: process.env.PATH, HOME: work, KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
        stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    try {
        await pollUntil(
            async () => {
                if (child.exitCode !== null) throw new Error(`the doctor exited ${child.exitCode}: ${stderr}`);
                return /RolloutStuck/.test(stdout) ? true : undefined;
            },
            { timeoutMs: 120_000, intervalMs: 500, describe: () => `the doctor as ${name} posted no RolloutStuck within 120 s; stdout: ${stdout}; stderr: ${stderr}` },
        );
        const metrics = await new Promise<string>((resolve, reject) =>
            http.get(`http://127.0.0.1:${port}/metrics`, (res) => {
                let body = "";
                res.on("data", (d) => (body += d));
                res.on("end", () => resolve(body));
            }).on("error", reject),
        );
        const events = JSON.parse(kubectl(["get", "events", "-n", "argocd", "--field-selector", "involvedObject.kind=ApplicationSet,involvedObject.name=tenants,reason=RolloutStuck", "-o", "json"])).items;
        return { stdout, stderr, metrics, events };
    } finally {
        child.kill("SIGTERM");
        await exited;
    }
}

/**
 * Where the real Argo CD and the simulation differ in the trace's transitions, and why. Anything
 * else that differs fails the test: a difference is either fixed in the simulation or written down
 * here. (The interleaving of the two controllers' writes varies from run to run on either side, so
 * the trace is compared as transitions of each controller's own fields, not as joint states.)
 */
const EXPLAINED: Record<string, string> = {
    "step Pending -> Waiting":
        "the real ApplicationSet controller can write a new Application's entry Pending before the application controller's first comparison; when it arrives, the entry sees a revision where there was none and goes back to Waiting (progressive_sync.go, pending changes). After the fix the same race can set mandant-b Pending, then Waiting when mandant-a's new comparison lands. In the simulation the first comparison comes first, at its timings",
    "step Waiting -> Progressing":
        "follows from the race above: a sync started while its entry was Pending ends after the entry went back to Waiting, and a Waiting entry whose Application is Synced but not yet Healthy moves to Progressing ('Application resource has synced, updating status to Progressing'). The simulation has the rule (sim/rollingSync.ts) but its timings did not reach it",
    "sync OutOfSync/Missing -> Synced/Healthy":
        "KWOK makes a Pod ready the moment it is scheduled, so a new site is Healthy by the first comparison after its sync; the simulated one-replica rollout takes 5 s (rolloutMs, our estimate for a real node)",
    "sync OutOfSync/Healthy -> Synced/Healthy": "the same for an updated site: KWOK's new Pod is ready at once, so the comparison after the sync finds the Deployment rolled out; the simulated rollout shows Progressing first",
};

/** Each dimension's transitions over every tenant's states (`sync/health/operation/step`): "sync A -> B", "operation A -> B", "step A -> B". */
function transitions(t: RolloutTrace): Set<string> {
    const out = new Set<string>();
    const dims: [string, (s: string[]) => string][] = [
        ["sync", (s) => `${s[0]}/${s[1]}`],
        ["operation", (s) => s[2]],
        ["step", (s) => s[3]],
    ];
    for (const states of Object.values(t.states)) {
        for (const [name, pick] of dims) {
            const seq = states.map((x) => pick(x.split("/"))).filter((v, i, a) => i === 0 || v !== a[i - 1]);
            for (let i = 1; i < seq.length; i++) out.add(`${name} ${seq[i - 1]} -> ${seq[i]}`);
        }
    }
    return out;
}

/** The hook Jobs created during the sync of `tenant` that gave up (from its start to its Failed), from the trace's log. */
function hookJobsOfGivenUpSync(t: RolloutTrace, tenant: string): number | undefined {
    const failed = t.log.findIndex((l) => new RegExp(`^stall \\S+ ${tenant} operation Failed retry 5:`).test(l));
    if (failed < 0) return undefined;
    let start = failed;
    while (start > 0 && !new RegExp(`^stall \\S+ ${tenant} sync started`).test(t.log[start])) start--;
    return t.log.slice(start, failed).filter((l) => new RegExp(`^stall \\S+ ${tenant} hook Job created$`).test(l)).length;
}

describe("the tenants lab on the real control plane (Kubernetes with KWOK, Argo CD v3.5.1, hook Pods run for real)", function () {
    this.timeout(3_600_000);
    let root: string;
    let lab: RealLab;
    let results: TenantsResults;
    let trace: RolloutTrace;
    let doctor: DoctorRun;
    let doctorWithoutLogs: DoctorRun;
    let kubectlLogs: string;
    let verified: CliResult;
    let hookRuns: string[];

    before(async function () {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "real-tenants-"));
        lab = await startRealLab(root, (l) => console.log(`  ${l}`));
        const rec = new TraceRecorder(() => Date.now());
        const watch = await watchPlane(lab.kubeconfig, rec);
        const mark = marker(rec);
        const cluster = new KubeCluster(lab.kubeconfig);
        const layout = tenantsLayout(root);
        const ctx = { layout, cluster, log: (l: string) => (mark(l), !l.includes("…") && console.log(`  ${l}`)) };
        try {
            await solveTenantsLab(ctx, 2);
            // during the stall (mandant-b's sync retries for minutes): the learner's kubectl logs, and the doctor as its ServiceAccount
            const failed = (await cluster.listPods("mandant-b")).filter((p: any) => p.status?.phase === "Failed");
            assert.ok(failed.length, "no failed hook Pod in mandant-b");
            kubectlLogs = execFileSync("kubectl", ["--kubeconfig", lab.plane.kubeconfigFile, "logs", "-n", "mandant-b", failed[0].metadata.name], { encoding: "utf8" });
            doctor = await doctorAs(lab, DOCTOR_NAME, DOCTOR_RBAC_RULES, root);
            doctorWithoutLogs = await doctorAs(lab, `${DOCTOR_NAME}-no-logs`, DOCTOR_RBAC_RULES.filter((r) => !r.resources.includes("pods/log")), root);
            results = await solveTenantsLab(ctx, 3);
            const kubeconfigFile = path.join(root, "kubeconfig");
            fs.writeFileSync(kubeconfigFile, lab.kubeconfig, { mode: 0o600 });
            verified = await runMain("verify", ["--lab", "tenants", "--root", root, "--kubeconfig", kubeconfigFile]);
            trace = rec.trace;
            hookRuns = [...lab.plane.hookRuns()];
        } finally {
            watch.stop();
            console.log(`  the real plane's trace:\n    ${rec.trace.log.join("\n    ")}`);
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
        // the script ran: mandant-b's Pods exited 1, every other tenant's exited 0
        assert.ok(hookRuns.some((r) => /^mandant-b\/site-setup-\w+ exit 1$/.test(r)), hookRuns.join("; "));
        assert.ok(hookRuns.some((r) => /^mandant-a\/site-setup-\w+ exit 0$/.test(r)), hookRuns.join("; "));
        // and kubectl logs shows it, through the API server's pods/log and KWOK's kubelet endpoint
        assert.match(kubectlLogs, /^site-setup: release 1\.2\.0 for tenant mandant-b$/m);
        assert.match(kubectlLogs, HOOK_ERROR);
    });

    it("the doctor, as its ServiceAccount with the component's ClusterRole and nothing more, names the stall from the Pod log, posts its Event and serves its metrics", () => {
        assert.doesNotMatch(doctor.stderr, /forbidden|HTTP 403|cannot read/i, doctor.stderr);
        assert.match(doctor.stdout, /RolloutStuck argocd\/tenants: .*step 2 of 4.*mandant-b/);
        assert.match(doctor.stdout, HOOK_ERROR);
        assert.ok(doctor.events.some((e) => e.type === "Warning" && HOOK_ERROR.test(e.message)), JSON.stringify(doctor.events.map((e) => e.message)));
        assert.match(doctor.metrics, /^gitops_lab_rollout_stuck\{[^}]*application="mandant-b"[^}]*\} 1$/m);
        // the negative control: the same ServiceAccount without pods/log cannot name the hook's error (so a missing permission fails the assertions above)
        assert.match(doctorWithoutLogs.stdout, /RolloutStuck argocd\/tenants: .*mandant-b/);
        assert.doesNotMatch(doctorWithoutLogs.stdout, HOOK_ERROR);
    });

    it("step 3: the recovery completes and verify --lab tenants grades the lab 100% on the live cluster", () => {
        const recovery = results.recovery!;
        assert.strictEqual(recovery.release, RELEASES.fixed);
        assert.deepStrictEqual(recovery.running, Object.fromEntries(TENANTS.map((t) => [t, RELEASES.fixed])));
        assert.strictEqual(verified.code, 0, `${verified.stdout}\n${verified.stderr}`);
        assert.match(verified.stdout, /^\d+ passed, 0 failed$/m);
        console.log(`  recovery order (first sync of ${RELEASES.fixed}): ${trace.recoveryOrder.join(", ")}; silently skipped: ${trace.skipped.join(", ") || "none"}`);
    });

    it("the trace (transitions, who synced and ran hooks in each phase, mandant-b's give-up) matches the simulation's at v3.5.1's timings, or the difference is explained", async () => {
        const sim = await simulatedTrace();
        const counts = (t: RolloutTrace) => PHASES.map((p: Phase) => `${p}: hook Jobs ${JSON.stringify(t.hookJobs[p])}, syncs ${JSON.stringify(t.syncs[p])}`).join("\n    ");
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
            const who = (c: Record<string, number>) => Object.keys(c).filter((t) => c[t] > 0).join(", ");
            if (who(trace.syncs[p]) !== who(sim.syncs[p])) differences.push(`${p}: synced ${who(trace.syncs[p])} on the real plane, ${who(sim.syncs[p])} in the simulation`);
            if (who(trace.hookJobs[p]) !== who(sim.hookJobs[p])) differences.push(`${p}: hook Jobs of ${who(trace.hookJobs[p])} on the real plane, of ${who(sim.hookJobs[p])} in the simulation`);
        }
        // mandant-b's sync that gave up: six attempts, the hook Job run by three (each retry after a run fails at once on the last attempt's stored result)
        const real = hookJobsOfGivenUpSync(trace, "mandant-b");
        const simulated = hookJobsOfGivenUpSync(sim, "mandant-b");
        if (real !== 3 || simulated !== 3) differences.push(`mandant-b's given-up sync ran its hook Job ${real} times on the real plane, ${simulated} in the simulation (3 expected)`);
        assert.deepStrictEqual(differences, []);
    });
});
