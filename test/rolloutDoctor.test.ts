/**
 * The rollout doctor in the cluster (components/rolloutDoctor.ts, lab/doctor/inCluster.ts): the
 * bundle runs with plain node, the manifests ask for least privilege, the PrometheusRule is applied
 * only where its CRD exists, and the kube-state-metrics alternative is well-formed.
 */
import * as assert from "assert";
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { gunzipSync } from "zlib";
import { parse, parseAllDocuments } from "yaml";
import { doctorBundle, prometheusRuleProvider } from "../components/rolloutDoctor";
import { benchDoctor } from "../cli/benchDoctor";
import { BUNDLE_KEY, DOCTOR_RBAC_RULES, rolloutDoctorManifests } from "../lab/doctor/inCluster";
import { KubeCluster } from "../lab/ports/cluster";
import { inClusterKubeconfig } from "../cli/kubeconfig";
import { FakeKube } from "../sim/fakeApi";
import { appSet, fieldReport } from "./helpers/rollout";
import { expect, pending, succeeded } from "./helpers/expect";
import { tenantsAt } from "./helpers/tenantsAt";
import { runMain } from "./helpers/cli";
import { DUMP_HINT_COMMAND } from "../cli/dumpFile";
import { run } from "../lab/ports/exec";

/** The kubectl on PATH (the plugin test gives kubectl a PATH of its own). */
const kubectlPath = () => spawnSync("sh", ["-c", "command -v kubectl"], { encoding: "utf8" }).stdout.trim();

/** The doctor's line at the tenants stall: the step, the blocking tenant, its hook Job and the hook's own error from its Pod's log. */
const STALL_NAMED =
    /rollout stuck at step 2 of 4 .* mandant-b: PreSync hook Job mandant-b\/site-setup failed .*"config\/system\/settings\.php is not writable\."/;

/**
 * Runs a doctor (the bundle, the plugin) until its output names the stall, and gives its last run.
 * Again and again because the simulation may still start a sync of mandant-b after it gave up (a
 * known difference from v3.5.1): its hook Job is then running, not failed. Not spawnSync: the
 * simulated API answers from this process.
 */
async function untilStallNamed(file: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }) {
    const once = () =>
        new Promise<{ code: number | null; stdout: string }>((resolve) => {
            const child = spawn(file, args, opts);
            let stdout = "";
            child.stdout.on("data", (d) => (stdout += d));
            child.on("exit", (code) => resolve({ code, stdout }));
        });
    let out = await once();
    await expect(async () => (STALL_NAMED.test(out.stdout) ? succeeded() : ((out = await once()), pending(out.stdout))), {
        timeoutMs: 60_000,
        intervalMs: 500,
    });
    return out;
}

/** The Prometheus Operator's CRD for PrometheusRules put in the cluster: "the operator is installed". */
const operatorInstalled = (kube: FakeKube) =>
    kube.put(
        {
            apiVersion: "apiextensions.k8s.io/v1",
            kind: "CustomResourceDefinition",
            metadata: { name: "prometheusrules.monitoring.coreos.com" },
        },
        "test",
    );

describe("the rollout doctor in the cluster", function () {
    this.timeout(120_000);
    let bundle: ReturnType<typeof doctorBundle>;
    let dir: string;
    before(() => {
        bundle = doctorBundle();
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "doctor-bundle-"));
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    const runBundle = (args: string[]) => {
        const file = path.join(dir, "doctor.js");
        fs.writeFileSync(file, gunzipSync(Buffer.from(bundle.gzBase64, "base64")));
        // plain node, from a directory with no node_modules: the bundle carries everything it needs
        return spawnSync(process.execPath, [file, ...args], { cwd: dir, encoding: "utf8", env: { PATH: process.env.PATH } });
    };

    it("the bundle is one file that plain node runs: --help, and a diagnosis from a dump", () => {
        const help = runBundle(["--help"]);
        assert.strictEqual(help.status, 0, help.stderr);
        assert.match(help.stdout, /^usage: gitops-lab doctor /);
        const dumpFile = path.join(dir, "bundle.json");
        fs.writeFileSync(dumpFile, JSON.stringify(fieldReport()));
        const r = runBundle(["doctor", "--from", dumpFile, "--json"]);
        assert.strictEqual(r.status, 1, r.stderr); // stuck
        assert.strictEqual(JSON.parse(r.stdout).applicationSets[0].state, "stuck");
    });

    it("the bundle, run as a process against the simulated tenants stall, names the hook's error from its Pod's log", async () => {
        const at = await tenantsAt(2);
        try {
            await at.givenUp(); // read once nothing moves: while a retry's hook Job runs, no failed one is there to name
            const file = path.join(dir, "doctor.js");
            fs.writeFileSync(file, gunzipSync(Buffer.from(bundle.gzBase64, "base64")));
            const kc = path.join(dir, "kubeconfig");
            fs.writeFileSync(kc, at.lab.kubeconfig);
            const out = await untilStallNamed(process.execPath, [file, "--kubeconfig", kc, "--appset", "tenants"], {
                cwd: dir,
                env: { PATH: process.env.PATH },
            });
            assert.strictEqual(out.code, 1, out.stdout);
            assert.match(out.stdout, STALL_NAMED);
        } finally {
            await at.stop();
        }
    });

    describe("as a kubectl plugin (gitops-lab kubectl-plugin)", () => {
        let bin: string;
        before(async () => {
            bin = fs.mkdtempSync(path.join(os.tmpdir(), "doctor-plugin-"));
            const r = await runMain("kubectl-plugin", ["--out", bin]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(r.stdout, /^wrote .*\/kubectl-rollout_doctor \(\d+ KB; it needs only node on PATH\)$/m);
        });
        after(() => fs.rmSync(bin, { recursive: true, force: true }));
        /** Only node, kubectl and the plugin on PATH; no HOME, so kubectl and the plugin know only what they are given. */
        const env = (extra: NodeJS.ProcessEnv = {}) => ({
            PATH: [bin, path.dirname(process.execPath), path.dirname(kubectlPath())].join(path.delimiter),
            ...extra,
        });

        it("is one executable file behind a node line, and kubectl lists it", () => {
            const file = path.join(bin, "kubectl-rollout_doctor");
            assert.ok(fs.statSync(file).mode & 0o100, "executable");
            assert.match(fs.readFileSync(file, "utf8").split("\n")[0], /^#!\/usr\/bin\/env node$/);
            const list = spawnSync("kubectl", ["plugin", "list"], { cwd: dir, encoding: "utf8", env: env() });
            assert.match(list.stdout, /kubectl-rollout_doctor/, list.stderr);
        });

        it("given a dump, when kubectl rollout-doctor --from reads it from a folder with no node_modules, then it names the stuck step and exits 1", () => {
            const dumpFile = path.join(dir, "plugin-bundle.json");
            fs.writeFileSync(dumpFile, JSON.stringify(fieldReport()));
            const r = spawnSync("kubectl", ["rollout-doctor", "--from", dumpFile], { cwd: dir, encoding: "utf8", env: env() });
            assert.strictEqual(r.status, 1, r.stderr);
            assert.match(r.stdout, /^tenants: rollout stuck at step 2 of 4 .* mandant-b: PreSync hook Job mandant-b\/site-setup failed/);
        });

        it("given kubectl's -n by habit, then the plugin answers as kubectl rollout-doctor, with what to give instead", () => {
            const r = spawnSync("kubectl", ["rollout-doctor", "-n", "argocd"], { cwd: dir, encoding: "utf8", env: env() });
            assert.strictEqual(r.status, 2, r.stderr);
            assert.match(
                r.stderr,
                /^kubectl rollout-doctor: Unknown option '-n': the doctor reads every namespace; to look at one ApplicationSet, --appset NAMESPACE\/NAME \(see kubectl rollout-doctor --help\)/,
            );
            // an option that goes with another, and the help itself: as kubectl rollout-doctor, where no gitops-lab may be
            const alone = spawnSync("kubectl", ["rollout-doctor", "--interval", "5"], { cwd: dir, encoding: "utf8", env: env() });
            assert.strictEqual(alone.status, 2, alone.stderr);
            assert.strictEqual(alone.stderr, "kubectl rollout-doctor: --interval goes with --watch (see kubectl rollout-doctor --help)\n");
            const help = spawnSync("kubectl", ["rollout-doctor", "--help"], { cwd: dir, encoding: "utf8", env: env() });
            assert.match(help.stdout, /^usage: kubectl rollout-doctor \[/);
        });

        // given the served tenants stall and only a kubeconfig (KUBECONFIG), when kubectl rollout-doctor runs, then it
        // names the hook's error from its Pod's log
        it("kubectl rollout-doctor names the hook's error", async () => {
            const at = await tenantsAt(2);
            try {
                await at.givenUp();
                const kc = path.join(dir, "plugin-kubeconfig");
                fs.writeFileSync(kc, at.lab.kubeconfig);
                const out = await untilStallNamed("kubectl", ["rollout-doctor", "--appset", "tenants"], {
                    cwd: dir,
                    env: env({ KUBECONFIG: kc }),
                });
                assert.strictEqual(out.code, 1, out.stdout);
            } finally {
                await at.stop();
            }
        });

        it("given the served stall, then the documented dump command answers and the doctor reads it", async () => {
            const at = await tenantsAt(2);
            try {
                await at.givenUp();
                const kc = path.join(dir, "dump-kubeconfig");
                fs.writeFileSync(kc, at.lab.kubeconfig);
                const [cmd, ...args] = DUMP_HINT_COMMAND.split(" ");
                const file = path.join(dir, "served-dump.json");
                // the simulation may start one more sync after the give-up (in progress, then failed again): dump until the stall shows
                let r = { code: null as number | null, out: "", stdout: "" };
                await expect(async () => {
                    // not spawnSync: the simulated API answers from this process
                    const dump = await run(cmd, args, { env: { ...process.env, KUBECONFIG: kc } });
                    const kinds = new Set(JSON.parse(dump.stdout).items.map((o: any) => o.kind));
                    assert.deepStrictEqual([...kinds].sort(), ["AppProject", "Application", "ApplicationSet", "Job", "Pod"]);
                    fs.writeFileSync(file, dump.stdout);
                    r = await runMain("doctor", ["--from", file]);
                    return /^tenants: rollout stuck at step 2 of 4 .* mandant-b: /.test(r.stdout) ? succeeded() : pending(r.stdout);
                });
                assert.strictEqual(r.code, 1, r.out);
            } finally {
                await at.stop();
            }
        });

        it("given a kubeconfig this user may not read first (k3s's is root's alone), then it goes on to ~/.kube/config, as kubectl does", function () {
            // run as nobody (setpriv), which only root can do: elsewhere there is no other user to be
            if (process.getuid?.() !== 0) this.skip(); // reason: switching to another user needs root
            // under /tmp itself: nobody must reach it (the run's own temporary folder is root's alone)
            const home = fs.mkdtempSync("/tmp/plugin-home-");
            fs.chmodSync(home, 0o755);
            fs.copyFileSync(path.join(bin, "kubectl-rollout_doctor"), path.join(home, "kubectl-rollout_doctor"));
            fs.chmodSync(path.join(home, "kubectl-rollout_doctor"), 0o755);
            const kubeconfigAt = (port: number) =>
                `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`;
            const secret = path.join(home, "root-only.yaml");
            fs.writeFileSync(secret, kubeconfigAt(1), { mode: 0o600 });
            fs.mkdirSync(path.join(home, ".kube"), { mode: 0o755 });
            fs.writeFileSync(path.join(home, ".kube", "config"), kubeconfigAt(2), { mode: 0o644 });
            try {
                const r = spawnSync(
                    "setpriv",
                    ["--reuid", "nobody", "--regid", "nogroup", "--clear-groups", path.join(home, "kubectl-rollout_doctor")],
                    { cwd: home, encoding: "utf8", env: { ...env(), HOME: home, KUBECONFIG: secret } },
                );
                assert.strictEqual(r.status, 1, `${r.stdout}${r.stderr}`);
                // the one it could read: the cluster at port 2 does not answer, and the line says so
                assert.match(r.stderr, /nothing answers at https:\/\/127\.0\.0\.1:2 /);
            } finally {
                fs.rmSync(home, { recursive: true, force: true });
            }
        });

        it("given a temporary file an interrupted run left (its process gone), then the next run removes it, and keeps one of a process that runs", async () => {
            const pidMax = Number(fs.readFileSync("/proc/sys/kernel/pid_max", "utf8"));
            const gone = path.join(bin, `.kubectl-rollout_doctor.${pidMax + 1}.tmp`);
            const running = path.join(bin, `.kubectl-rollout_doctor.${process.ppid}.tmp`);
            const other = path.join(bin, ".kubectl-rollout_doctor.notes");
            for (const f of [gone, running, other]) fs.writeFileSync(f, "half a plugin");
            const r = await runMain("kubectl-plugin", ["--out", bin]);
            assert.strictEqual(r.code, 0, r.out);
            assert.deepStrictEqual(
                [gone, running, other].map((f) => fs.existsSync(f)),
                [false, true, true],
            );
            for (const f of [running, other]) fs.rmSync(f);
        });

        it("given --out a folder that does not exist, then one line says so", async () => {
            const r = await runMain("kubectl-plugin", ["--out", path.join(bin, "missing")]);
            assert.strictEqual(r.code, 2);
            assert.match(r.stderr, /--out .*missing is not a directory; create it or name another/);
            assert.deepStrictEqual(fs.readdirSync(bin), ["kubectl-rollout_doctor"]);
        });
    });

    it("the bundle fits a ConfigMap (1 MiB) gzipped and base64-encoded", () => {
        assert.ok(Buffer.byteLength(bundle.gzBase64) < 1024 * 1024, `${Buffer.byteLength(bundle.gzBase64)} bytes`);
    });

    it("the manifests: least-privilege RBAC, the bundle from the ConfigMap, non-root, read-only root, a Service for /metrics", () => {
        const objs: any[] = rolloutDoctorManifests({ bundleGzBase64: bundle.gzBase64, bundleDigest: bundle.digest });
        const kinds = objs.map((o) => o.kind);
        assert.deepStrictEqual(kinds, [
            "Namespace",
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "ConfigMap",
            "Deployment",
            "Service",
        ]);
        const role = objs.find((o) => o.kind === "ClusterRole");
        assert.deepStrictEqual(role.rules, DOCTOR_RBAC_RULES);
        const granted = role.rules
            .flatMap((r: any) =>
                r.resources.flatMap((res: string) => r.verbs.map((v: string) => `${r.apiGroups[0] || "core"}/${res}:${v}`)),
            )
            .sort();
        assert.deepStrictEqual(granted, [
            "argoproj.io/applications:get",
            "argoproj.io/applications:list",
            "argoproj.io/applications:watch",
            "argoproj.io/applicationsets:get",
            "argoproj.io/applicationsets:list",
            "argoproj.io/applicationsets:watch",
            "argoproj.io/appprojects:list",
            "batch/jobs:list",
            "core/events:create",
            "core/pods/log:get",
            "core/pods:list",
        ]);
        const dep = objs.find((o) => o.kind === "Deployment");
        const c = dep.spec.template.spec.containers[0];
        assert.deepStrictEqual(
            [dep.spec.replicas, dep.spec.strategy],
            [1, { type: "Recreate" }],
            "one doctor posts the Events, even in a roll-out",
        );
        assert.match(c.image, /^docker\.io\/library\/node:20\.\d+\.\d+-alpine[\d.]+$/, "a pinned Node 20 image");
        assert.deepStrictEqual(
            [
                c.securityContext.readOnlyRootFilesystem,
                dep.spec.template.spec.securityContext.runAsNonRoot,
                dep.spec.template.spec.serviceAccountName,
            ],
            [true, true, "rollout-doctor"],
        );
        assert.ok(c.command.join(" ").includes(`gunzip -c /opt/doctor/${BUNDLE_KEY}`));
        assert.deepStrictEqual(c.args.slice(0, 1), ["--watch"]);
        const cm = objs.find((o) => o.kind === "ConfigMap");
        assert.strictEqual(cm.binaryData[BUNDLE_KEY], bundle.gzBase64);
        assert.strictEqual(objs.find((o) => o.kind === "Service").spec.ports[0].port, 9464);
        const binding = objs.find((o) => o.kind === "ClusterRoleBinding");
        assert.deepStrictEqual(binding.subjects, [{ kind: "ServiceAccount", name: "rollout-doctor", namespace: "rollout-doctor" }]);
        // in argocd only: the ApplicationSet controller's metrics through the service proxy, and nothing else
        const metricsRole = objs.find((o) => o.kind === "Role");
        assert.strictEqual(metricsRole.metadata.namespace, "argocd");
        assert.deepStrictEqual(metricsRole.rules, [
            {
                apiGroups: [""],
                resources: ["services/proxy"],
                resourceNames: ["argocd-applicationset-controller:metrics"],
                verbs: ["get"],
            },
        ]);
        const metricsBinding = objs.find((o) => o.kind === "RoleBinding");
        assert.strictEqual(metricsBinding.roleRef.name, metricsRole.metadata.name);
        assert.deepStrictEqual(metricsBinding.subjects, binding.subjects);
    });

    it("in a Pod the doctor finds its service account's kubeconfig, with the token read from its file", () => {
        const sa = fs.mkdtempSync(path.join(dir, "sa-"));
        fs.writeFileSync(path.join(sa, "token"), "t0ken");
        fs.writeFileSync(path.join(sa, "ca.crt"), "x");
        assert.strictEqual(inClusterKubeconfig({}, sa), null);
        const text = inClusterKubeconfig({ KUBERNETES_SERVICE_HOST: "10.43.0.1", KUBERNETES_SERVICE_PORT: "443" }, sa)!;
        const kc = parse(text);
        assert.strictEqual(kc.clusters[0].cluster.server, "https://10.43.0.1:443");
        assert.strictEqual(kc.users[0].user["auth-provider"].config.tokenFile, path.join(sa, "token"));
        assert.doesNotThrow(() => new KubeCluster(text));
    });

    it("the PrometheusRule is applied only where its CRD exists, and removed on delete", async () => {
        const kube = new FakeKube();
        const url = await kube.start();
        try {
            const kubeconfig = kube.kubeconfig(url);
            const rule = parse(fs.readFileSync(path.join(__dirname, "..", "lab", "doctor", "prometheusrule.yaml"), "utf8"));
            const without = await prometheusRuleProvider.create!({ kubeconfig, rule });
            assert.strictEqual(without.outs!.applied, false);
            assert.deepStrictEqual(kube.list("PrometheusRule"), []);
            operatorInstalled(kube);
            kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "argocd" } }, "test");
            const withCrd = await prometheusRuleProvider.create!({ kubeconfig, rule });
            assert.strictEqual(withCrd.outs!.applied, true);
            assert.strictEqual(
                (kube.get("PrometheusRule", "argocd", "gitops-lab-rollout-stuck")!.spec as any).groups[0].rules[0].alert,
                "RollingSyncRolloutStuck",
            );
            await prometheusRuleProvider.delete!("argocd/gitops-lab-rollout-stuck", withCrd.outs as any);
            assert.strictEqual(kube.get("PrometheusRule", "argocd", "gitops-lab-rollout-stuck"), undefined);
        } finally {
            await kube.stop();
        }
    });

    it("a PrometheusRule applied with kubectl where its CRD is not: no such kind, as a cluster without the operator answers", async () => {
        const kube = new FakeKube();
        const url = await kube.start();
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rule-"));
        try {
            const kubeconfig = path.join(dir, "kubeconfig");
            fs.writeFileSync(kubeconfig, kube.kubeconfig(url));
            kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "argocd" } }, "test");
            const rule = path.join(__dirname, "..", "lab", "doctor", "prometheusrule.yaml");
            const apply = () => run("kubectl", ["--kubeconfig", kubeconfig, "--cache-dir", path.join(dir, "cache"), "apply", "-f", rule]);
            await assert.rejects(apply(), /no matches for kind "PrometheusRule" in version "monitoring\.coreos\.com\/v1"/);
            assert.deepStrictEqual(kube.list("PrometheusRule"), []);
            operatorInstalled(kube);
            await apply();
            assert.ok(kube.get("PrometheusRule", "argocd", "gitops-lab-rollout-stuck"), "stored once its CRD is there");
        } finally {
            await kube.stop();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("the kube-state-metrics alternative: one series per Application of an ApplicationSet with its step and status, and a rule naming the step", () => {
        const cfg = parse(fs.readFileSync(path.join(__dirname, "..", "lab", "doctor", "kube-state-metrics.yaml"), "utf8"));
        const r = cfg.spec.resources[0];
        assert.deepStrictEqual(r.groupVersionKind, { group: "argoproj.io", version: "v1alpha1", kind: "ApplicationSet" });
        const g = r.metrics[0].each.gauge;
        assert.deepStrictEqual(
            { path: g.path, labels: Object.keys(g.labelsFromPath).sort(), value: g.valueFrom },
            { path: ["status", "applicationStatus"], labels: ["application", "status", "step"], value: ["step"] },
        );
        // the fields it reads are the ones v3.5.1 writes (the fixtures are checked against the CRD schema elsewhere)
        const entry = appSet("tenants", [{ name: "mandant-b", step: 2, status: "Progressing" }], { rolloutStep: 2 }).status
            .applicationStatus[0];
        for (const k of ["application", "step", "status"]) assert.ok(k in entry, k);
        // the Applications' sync operation: retries (0 without one) and phase
        const apps = cfg.spec.resources[1];
        assert.deepStrictEqual(apps.groupVersionKind, { group: "argoproj.io", version: "v1alpha1", kind: "Application" });
        assert.deepStrictEqual(
            apps.metrics.map((m: any) => [m.name, m.each.type, (m.each.gauge ?? m.each.stateSet).path.join(".")]),
            [
                ["sync_retries", "Gauge", "status.operationState.retryCount"],
                ["sync_phase", "StateSet", "status.operationState.phase"],
            ],
        );
        const [rule] = parseAllDocuments(
            fs.readFileSync(path.join(__dirname, "..", "lab", "doctor", "kube-state-metrics-rule.yaml"), "utf8"),
        ).map((d) => d.toJSON());
        const [failing, hang] = rule.spec.groups[0].rules;
        assert.deepStrictEqual(
            [failing.alert, failing.for, hang.alert, hang.for],
            ["RollingSyncStepFailing", "2m", "RollingSyncStepNotCompleting", "30m"],
        );
        for (const alert of [failing, hang]) {
            assert.match(alert.expr, /gitops_lab_appset_rollout_application_step\{status=~"Pending\|Progressing"\}/);
            assert.match(alert.annotations.summary, /stuck at step \{\{ \$labels\.step \}\}/);
        }
        // every series the fast alert reads is one the configuration exports (the timing is proven by promtool in the real tier)
        for (const name of ["gitops_lab_application_sync_phase", "gitops_lab_application_sync_retries"])
            assert.ok(
                failing.expr.includes(name) &&
                    apps.metricNamePrefix + "_" + apps.metrics.find((m: any) => name.endsWith(m.name)).name === name,
                name,
            );
    });

    // bench --doctor's machinery at a small scale: the synthetic stuck rollouts are found live and from a dump (the
    // README's figures come from the full scale)
    it("bench --doctor at a small scale", async () => {
        const r = await benchDoctor({ apps: 40, appsets: 4, pods: 80, stuck: 1 }, 1, () => {});
        assert.deepStrictEqual(
            { stuck: r.live.stuck, watchStuck: r.watch.stuck, rounds: r.live.rounds_s.length, fromApps: r.from.applications },
            { stuck: 1, watchStuck: 1, rounds: 1, fromApps: 80 },
        );
    });
});
