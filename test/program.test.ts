/**
 * Layer 1: the Pulumi program under mocks. What each component registers, with which inputs and
 * options, and what the stack exports.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";
import { DEFAULTS } from "../lab/platform/defaults";
import { REPO_URL } from "../lab/shop/layout";
import { argoCdCmdParams, DEFAULT_ARGOCD_VERSION, PROGRESSIVE_SYNCS_KEY } from "../lab/platform/argocd";
import { handOverLines } from "../cli/up";
import { GITD_IMAGE } from "../lab/platform/gitDaemon";
import { shopApplicationSet } from "../lab/shop/appset";
import { readRepoFiles } from "../lab/shop/repoFiles";
import { startFakeKubeThread } from "./helpers/fakeKubeThread";
import { isSecretInput, ProgramRun, runProgram, valueOf } from "./helpers/pulumiMocks";

const KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n";
const SHA = "a".repeat(40);

function mockState(a: pulumi.runtime.MockResourceArgs): Record<string, any> {
    if (a.type === "command:local:Command") return { stdout: a.name.endsWith("kubeconfig") ? KUBECONFIG : "installed\n" };
    if (a.name === "shop-repo-git") return { initialCommit: SHA, bareRepo: "/x/srv/bare/shop-envs.git", clone: "/x/root/cnpa-env/repo" };
    if (a.name === "shop-appset") return { name: "shop", namespace: "argocd" };
    if (a.name === "argocd-ready") return { ready: true, secretValue: a.inputs.readSecret ? "gen3rated" : null };
    if (a.name === "tenants-run")
        return { completedThrough: Number(a.inputs.solveThrough), stall: { appset: "argocd/tenants" }, recovery: null };
    if (a.name === "scenario-run")
        return {
            completedThrough: Number(a.inputs.solveThrough),
            incident: { commit: SHA, dev_value: "on", prod_value: "on" },
            pin: null,
            drift: null,
            promote: null,
            revert: null,
            report: null,
        };
    return {};
}

const dependsOnNames = (r: { opts: any }) => ([] as any[]).concat(r.opts.dependsOn ?? []).map((d: any) => d.__name);

describe("the Pulumi program (mocks)", function () {
    let run: ProgramRun;
    before(async () => {
        run = await runProgram({ root: "/tmp/lab-root", solveThrough: "8", k3sVersion: "v1.33.5+k3s1" }, mockState);
    });

    it("installs k3s with a Command that is deleted before it is replaced, and uninstalls only what it installed", () => {
        const install = run.byName("k3s-install");
        assert.strictEqual(install.type, "command:local:Command");
        assert.strictEqual(install.opts.deleteBeforeReplace, true);
        assert.deepStrictEqual(install.inputs.environment, { K3S_VERSION: "v1.33.5+k3s1" });
        assert.match(install.inputs.create, /if \[ -x "\$bin\/k3s" \]/, "skips the install when k3s is already there");
        assert.match(install.inputs.create, /bin=\$\{GITOPS_LAB_K3S_BIN:-\/usr\/local\/bin\}/);
        assert.match(install.inputs.delete, /k3s-installed-by-stack/, "the uninstall is conditional on the stack's marker");
        assert.ok(
            !install.inputs.create.includes("v1.33.5"),
            "the version reaches the script through the environment, not the script text",
        );
        const ready = run.byName("k3s-ready");
        assert.match(ready.inputs.create, /\/readyz/);
        assert.deepStrictEqual(dependsOnNames(ready), ["k3s-install"]);
    });

    it("keeps the kubeconfig secret, in the stack output and in every dynamic resource's inputs", async () => {
        assert.strictEqual(await pulumi.isSecret(run.outputs.kubeconfig), true);
        assert.strictEqual(await valueOf(run.outputs.kubeconfig), KUBECONFIG);
        assert.deepStrictEqual(run.byName("k3s-kubeconfig").opts.additionalSecretOutputs, ["stdout"]);
        for (const name of ["argocd-ready", "gitd-ready", "shop-appset", "scenario-run"]) {
            const r = run.byName(name);
            assert.strictEqual(await isSecretInput(r.inputs.kubeconfig), true, `${name}'s kubeconfig input is secret`);
            assert.ok(r.opts.additionalSecretOutputs?.includes("kubeconfig"), `${name} keeps kubeconfig secret in its outputs`);
        }
    });

    it("applies Argo CD server-side: argocd-cmd-params-cm (progressive syncs on) first, then the pinned install, then waits for the controllers", async () => {
        const provider = run.byName("lab");
        assert.strictEqual(provider.type, "pulumi:providers:kubernetes");
        assert.strictEqual(String(await valueOf(provider.inputs.enableServerSideApply)), "true");
        const cm = run.byName("argocd-cmd-params");
        assert.deepStrictEqual(await valueOf(cm.inputs.data), { [PROGRESSIVE_SYNCS_KEY]: "true" });
        assert.strictEqual((await valueOf(cm.inputs.metadata)).namespace, "argocd");
        const install = run.byName("argocd-install");
        assert.strictEqual(install.type, "kubernetes:kustomize/v2:Directory");
        assert.strictEqual(install.inputs.directory, path.join(__dirname, "..", "components", "argocd-install", DEFAULT_ARGOCD_VERSION));
        assert.deepStrictEqual(dependsOnNames(install), ["argocd-cmd-params"]);
        const ready = run.byName("argocd-ready");
        assert.deepStrictEqual(dependsOnNames(ready), ["argocd-install"]);
        assert.deepStrictEqual(
            ready.inputs.workloads.map((w: any) => w.name),
            ["argocd-repo-server", "argocd-application-controller", "argocd-applicationset-controller", "argocd-server"],
        );
    });

    it("exports how to open the UI and, as a secret, the admin password argocd-server wrote, read after the wait", async () => {
        assert.match(
            await valueOf(run.outputs.argocdUi),
            /^kubectl -n argocd port-forward svc\/argocd-server 8080:443, then open https:\/\/localhost:8080 \(user admin/,
        );
        assert.ok(pulumi.isSecret(run.outputs.argocdAdminPassword), "the password is a secret output");
        assert.strictEqual(await valueOf(run.outputs.argocdAdminPassword), "gen3rated");
        assert.deepStrictEqual(
            run.byName("argocd-ready").inputs.readSecret,
            { name: "argocd-initial-admin-secret", key: "password" },
            "read by the wait once argocd-server is ready",
        );
    });

    it("runs git daemon read-only, as nobody, from the pinned image, with a TCP readiness probe", async () => {
        const dep = run.byName("gitd-deployment");
        const spec = await valueOf(dep.inputs.spec);
        const pod = spec.template.spec;
        const c = pod.containers[0];
        assert.strictEqual(c.image, GITD_IMAGE);
        assert.deepStrictEqual(c.command, ["git"]);
        assert.ok(
            c.args.includes("--export-all") &&
                c.args.includes("--base-path=/srv/bare") &&
                c.args.includes("--forbid-override=receive-pack"),
        );
        assert.ok(!c.args.some((a: string) => a.includes("enable=receive-pack")), "no pushes to the in-cluster daemon");
        assert.deepStrictEqual(c.readinessProbe.tcpSocket, { port: 9418 });
        assert.strictEqual(pod.securityContext.runAsNonRoot, true);
        assert.strictEqual(pod.securityContext.runAsUser, 65534);
        assert.strictEqual(c.volumeMounts.find((m: any) => m.mountPath === "/srv/bare").readOnly, true);
        assert.strictEqual(pod.volumes.find((v: any) => v.name === "bare").hostPath.path, "/tmp/lab-root/srv/bare");
        const svc = await valueOf(run.byName("gitd-service").inputs.spec);
        assert.deepStrictEqual(
            svc.ports.map((p: any) => p.port),
            [9418],
        );
        assert.strictEqual((await valueOf(run.byName("gitd-service").inputs.metadata)).name, "gitd");
        assert.strictEqual((await valueOf(run.byName("gitd-ns").inputs.metadata)).name, "gitsrv");
    });

    it("builds the shop repo from gitrepo/ under the configured root", async () => {
        const repo = run.byName("shop-repo-git");
        assert.strictEqual(repo.type, "pulumi-nodejs:dynamic:Resource");
        assert.strictEqual(repo.inputs.root, "/tmp/lab-root");
        assert.deepStrictEqual(repo.inputs.files, readRepoFiles());
        assert.strictEqual(typeof repo.inputs.__provider, "string", "the provider was serialized");
    });

    it("resets by-hand work before Argo CD and the git daemon go", async () => {
        const r = run.byName("lab-reset-objects");
        assert.deepStrictEqual(dependsOnNames(r).sort(), ["argocd", "gitd"], "destroyed before them");
        assert.deepStrictEqual(
            {
                namespaces: r.inputs.namespaces,
                found: r.inputs.namespacesFound,
                prefix: r.inputs.repoPrefix,
                argocd: r.inputs.argocdInstalled,
                timeout: r.inputs.deleteTimeoutSeconds,
            },
            {
                namespaces: ["shop-dev", "shop-prod"],
                found: [],
                prefix: "git://gitd.gitsrv.svc.cluster.local:9418/",
                argocd: true,
                timeout: 120,
            },
        );
        assert.strictEqual(await isSecretInput(r.inputs.kubeconfig), true);
    });

    it("applies the step-2 ApplicationSet only after Argo CD, the git daemon and the repository", async () => {
        const appset = run.byName("shop-appset");
        assert.deepStrictEqual(await valueOf(appset.inputs.manifest), shopApplicationSet());
        assert.deepStrictEqual(dependsOnNames(appset).sort(), ["argocd", "gitd", "lab-reset", "shop-repo"]);
        assert.deepStrictEqual(dependsOnNames(run.byName("scenario-run")), ["shop"]);
    });

    it("orders every resource that uses a host tool or the cluster after the k3s install (as the engine receives the dependencies)", () => {
        const install = run.sent.find((r) => r.name === "k3s-install");
        assert.ok(install, "k3s-install was registered");
        const byUrn = new Map(run.sent.map((r) => [r.urn, r]));
        const closure = (urn: string, seen = new Set<string>()): Set<string> => {
            for (const d of byUrn.get(urn)?.waitsFor ?? []) if (!seen.has(d)) closure(d, seen.add(d));
            return seen;
        };
        const custom = run.sent.filter((r) => r.custom && r.urn !== install!.urn);
        assert.ok(custom.length >= 12, `${custom.length} resources`);
        const unordered = custom.filter((r) => !closure(r.urn).has(install!.urn)).map((r) => r.name);
        assert.deepStrictEqual(unordered, []);
        // and step 1 in particular, which runs kubectl kustomize on the host
        assert.ok(closure(run.sent.find((r) => r.name === "shop-repo-git")!.urn).has(install!.urn));
    });

    it("applies the Argo CD install and the git daemon with pulumi-kubernetes' awaits off, and waits for them with the lab's own deadlines", async () => {
        assert.strictEqual(await valueOf(run.byName("argocd-install").inputs.skipAwait), true);
        for (const name of ["gitd-deployment", "gitd-service"]) {
            // the Service's await would wait up to 10 minutes for a ready Pod, before the lab's wait could say why there is none
            assert.strictEqual((await valueOf(run.byName(name).inputs.metadata)).annotations["pulumi.com/skipAwait"], "true", name);
        }
        assert.strictEqual(run.byName("argocd-ready").inputs.timeoutSeconds, DEFAULTS.argocdReadyTimeoutSeconds);
        const gitdReady = run.byName("gitd-ready");
        assert.strictEqual(gitdReady.inputs.timeoutSeconds, DEFAULTS.gitDaemonReadyTimeoutSeconds);
        assert.deepStrictEqual(gitdReady.inputs.workloads, [{ kind: "Deployment", name: "gitd" }]);
        assert.deepStrictEqual(dependsOnNames(gitdReady).sort(), ["gitd-deployment", "gitd-service"]);
    });

    it("gives the ApplicationSet's delete the destroy deadline, and Argo CD is destroyed only after it (the ApplicationSet depends on Argo CD)", () => {
        const appset = run.byName("shop-appset");
        assert.strictEqual(appset.inputs.deleteTimeoutSeconds, DEFAULTS.destroyTimeoutSeconds);
        assert.ok(dependsOnNames(appset).includes("argocd"));
    });

    it("exports the paths, the repo URL, the initial commit and the ApplicationSet", async () => {
        assert.strictEqual(await valueOf(run.outputs.bareRepo), "/tmp/lab-root/srv/bare/shop-envs.git");
        assert.strictEqual(await valueOf(run.outputs.clone), "/tmp/lab-root/root/cnpa-env/repo");
        assert.strictEqual(await valueOf(run.outputs.resultsDir), "/tmp/lab-root/root/cnpa-env");
        assert.strictEqual(await valueOf(run.outputs.repoUrl), REPO_URL);
        assert.strictEqual(await valueOf(run.outputs.initialCommit), SHA);
        assert.strictEqual(await valueOf(run.outputs.applicationSet), "argocd/shop");
        assert.strictEqual(await valueOf(run.outputs.completedThrough), 8);
        assert.strictEqual(await valueOf(run.outputs.nextStep), null, "every step done: nothing to hand over");
        assert.deepStrictEqual(await valueOf(run.outputs.incident), { commit: SHA, dev_value: "on", prod_value: "on" });
    });
});

describe("solveThrough and cluster adoption (mocks)", function () {
    it("solveThrough 0 builds the environment only: no repository, no ApplicationSet, no scenario", async () => {
        const run = await runProgram({ root: "/tmp/lab-root", solveThrough: "0" }, mockState);
        const names = run.resources.map((r) => r.name);
        for (const n of ["k3s-install", "argocd-install", "gitd-deployment"]) assert.ok(names.includes(n), n);
        for (const n of ["shop-repo-git", "shop-appset", "scenario-run"]) assert.ok(!names.includes(n), `${n} is not created`);
        assert.strictEqual(await valueOf(run.outputs.completedThrough), 0);
        // the hand-over: step 1 is the learner's, what it asks, where it is written, how it is graded
        const next = await valueOf(run.outputs.nextStep);
        assert.deepStrictEqual(
            { step: next.step, name: next.name, inFull: next.inFull, verify: next.verify },
            {
                step: 1,
                name: "repo",
                inFull: path.join(__dirname, "..", "docs", "shop-lab.md"),
                verify: "npx gitops-lab verify --root /tmp/lab-root --step 1",
            },
        );
        assert.match(next.ask, /^create the bare repository \/tmp\/lab-root\/srv\/bare\/shop-envs\.git, /);
        assert.deepStrictEqual(handOverLines({ nextStep: { value: next }, tenantsNextStep: { value: null } }), [
            `the shop lab is yours from step 1 repo: ${next.ask}`,
            `  step 1 in full: ${next.inFull}; when it is done: npx gitops-lab verify --root /tmp/lab-root --step 1`,
        ]);
    });

    it("argocdVersion picks that version's pinned install", async () => {
        const run = await runProgram({ root: "/tmp/lab-root", solveThrough: "0", argocdVersion: "v3.6.2" }, mockState);
        const dir = run.byName("argocd-install").inputs.directory;
        assert.strictEqual(dir, path.join(__dirname, "..", "components", "argocd-install", "v3.6.2"));
    });

    it("solveThrough 1 adds the repository, not the ApplicationSet", async () => {
        const names = (await runProgram({ root: "/tmp/lab-root", solveThrough: "1" }, mockState)).resources.map((r) => r.name);
        assert.ok(names.includes("shop-repo-git"));
        assert.ok(!names.includes("shop-appset") && !names.includes("scenario-run"));
    });

    it("kubeconfigPath adopts an existing cluster: no k3s commands, the file's content as a secret", async () => {
        const file = path.join(fs.mkdtempSync(path.join(require("os").tmpdir(), "kc-")), "config");
        // the program reads the adopted cluster (what it had before the stack): an API that answers kubectl
        const kube = await startFakeKubeThread([]);
        fs.writeFileSync(file, kube.kubeconfig);
        const run = await runProgram({ root: "/tmp/lab-root", solveThrough: "0", kubeconfigPath: file }, mockState).finally(() =>
            kube.stop(),
        );
        assert.ok(!run.resources.some((r) => r.type === "command:local:Command"));
        assert.strictEqual(await valueOf(run.outputs.kubeconfig), kube.kubeconfig);
        assert.strictEqual(await pulumi.isSecret(run.outputs.kubeconfig), true);
        assert.strictEqual(await valueOf(run.outputs.clusterMode), "external");
    });

    it("refuses a solveThrough below the step the lab on the host has reached (dropping resources would tear it down)", async () => {
        const root = fs.mkdtempSync(path.join(require("os").tmpdir(), "lab-done-"));
        fs.mkdirSync(path.join(root, "root", "cnpa-env"), { recursive: true });
        // every step's file, as a lab at step 8 has them (a lone later file does not move the lab past the missing ones)
        for (const f of ["incident", "pin", "drift", "promote", "revert", "report"])
            fs.writeFileSync(path.join(root, "root", "cnpa-env", `${f}.json`), "{}");
        await runProgram({ root, solveThrough: "8" }, mockState); // the same or more is fine
        await assert.rejects(
            runProgram({ root, solveThrough: "1" }, mockState),
            /the lab on this host is at step 8 already and steps cannot be undone \(solveThrough 1 asked\).*pulumi config set solveThrough 8/s,
        );
    });

    it("refuses a k3s version that is not a release tag, saying how to set it", async () => {
        await assert.rejects(
            runProgram({ root: "/tmp/lab-root", solveThrough: "0", k3sVersion: "latest; rm -rf /" }, mockState),
            /gitops-lab:k3sVersion is "latest; rm -rf \/"; allowed: a k3s release tag like v1\.36\.4\+k3s1 \(pulumi config set k3sVersion/s,
        );
    });

    it("keeps the defaults in Pulumi.yaml and in the program the same", () => {
        const project = parse(fs.readFileSync(path.join(__dirname, "..", "Pulumi.yaml"), "utf8"));
        for (const [k, v] of Object.entries(DEFAULTS)) {
            assert.strictEqual(project.config[k]?.default, v, `Pulumi.yaml config.${k}.default`);
        }
        assert.strictEqual(argoCdCmdParams().data[PROGRESSIVE_SYNCS_KEY], "true");
    });

    it("gives every key declared in Pulumi.yaml a default (a declared key without one is required by the CLI)", () => {
        const project = parse(fs.readFileSync(path.join(__dirname, "..", "Pulumi.yaml"), "utf8"));
        for (const [k, v] of Object.entries<any>(project.config)) assert.ok("default" in v, `Pulumi.yaml config.${k} has no default`);
    });
});

describe("tenantsLab (mocks)", function () {
    it("is off by default: no tenants lab resource, its outputs null", async () => {
        const run = await runProgram({ root: "/tmp/lab-root", solveThrough: "0" }, mockState);
        assert.ok(!run.resources.some((r) => r.name === "tenants-run"));
        assert.strictEqual(await valueOf(run.outputs.tenantsStall), null);
        assert.strictEqual(await valueOf(run.outputs.tenantsRecovery), null);
    });

    it("tenantsLab: true adds Part 2 after Argo CD and the git daemon (not after the shop lab), with its kubeconfig secret and the outputs", async () => {
        const run = await runProgram({ root: "/tmp/lab-root", solveThrough: "0", tenantsLab: "true", tenantsSolveThrough: "2" }, mockState);
        const r = run.byName("tenants-run");
        assert.deepStrictEqual(
            {
                root: r.inputs.root,
                solveThrough: r.inputs.solveThrough,
                deleteTimeoutSeconds: r.inputs.deleteTimeoutSeconds,
                stallMs: r.inputs.timeouts.stallMs,
            },
            { root: "/tmp/lab-root", solveThrough: 2, deleteTimeoutSeconds: 120, stallMs: 900_000 },
        );
        assert.strictEqual(await isSecretInput(r.inputs.kubeconfig), true);
        assert.ok(r.opts.additionalSecretOutputs?.includes("kubeconfig"));
        assert.deepStrictEqual(dependsOnNames(r).sort(), ["argocd", "gitd", "k3s", "lab-reset"]);
        assert.deepStrictEqual(await valueOf(run.outputs.tenantsStall), { appset: "argocd/tenants" });
        assert.strictEqual(await valueOf(run.outputs.tenantsRecovery), null);
        assert.strictEqual(await valueOf(run.outputs.tenantsRepoUrl), "git://gitd.gitsrv.svc.cluster.local:9418/platform.git");
    });

    it("refuses a tenantsSolveThrough outside 1-3 and below the step the tenants lab on the host has reached", async () => {
        await assert.rejects(
            runProgram({ root: "/tmp/lab-root", solveThrough: "0", tenantsLab: "true", tenantsSolveThrough: "4" }, mockState),
            /tenantsSolveThrough/,
        );
        const root = fs.mkdtempSync(path.join(require("os").tmpdir(), "tenants-done-"));
        fs.mkdirSync(path.join(root, "root", "tenants-lab"), { recursive: true });
        for (const f of ["stall", "recovery"]) fs.writeFileSync(path.join(root, "root", "tenants-lab", `${f}.json`), "{}");
        await assert.rejects(
            runProgram({ root, solveThrough: "0", tenantsLab: "true", tenantsSolveThrough: "2" }, mockState),
            /the tenants lab on this host is at step 3 already and steps cannot be undone \(tenantsSolveThrough 2 asked\).*pulumi config set tenantsSolveThrough 3/s,
        );
    });
});

describe("rolloutDoctor (mocks)", function () {
    const doctorNames = (run: ProgramRun) => run.resources.filter((r) => r.type === "gitops-lab:index:RolloutDoctor").map((r) => r.name);
    it("auto: deployed with the tenants lab, not without it", async () => {
        assert.deepStrictEqual(doctorNames(await runProgram({ root: "/tmp/lab-root", solveThrough: "0" }, mockState)), []);
        const run = await runProgram({ root: "/tmp/lab-root", solveThrough: "0", tenantsLab: "true" }, mockState);
        assert.deepStrictEqual(doctorNames(run), ["rollout-doctor"]);
        const group = run.byName("rollout-doctor-manifests");
        const objs = await valueOf(group.inputs.objs);
        assert.deepStrictEqual(
            objs.map((o: any) => o.kind),
            [
                "Namespace",
                "ServiceAccount",
                "ClusterRole",
                "ClusterRoleBinding",
                "Role",
                "RoleBinding",
                "ConfigMap",
                "Deployment",
                "Service",
            ],
        );
        assert.deepStrictEqual(dependsOnNames(group), ["argocd"]);
        assert.strictEqual(await valueOf(run.outputs.rolloutDoctorMetrics), "rollout-doctor/rollout-doctor:9464");
        assert.strictEqual(await isSecretInput(run.byName("rollout-doctor-prometheusrule").inputs.kubeconfig), true);
    });

    it("on: usable on its own, against an adopted cluster, without either lab; a bad value is refused", async () => {
        const run = await runProgram({ root: "/tmp/lab-root", solveThrough: "0", rolloutDoctor: "on" }, mockState);
        assert.deepStrictEqual(doctorNames(run), ["rollout-doctor"]);
        assert.deepStrictEqual(
            doctorNames(
                await runProgram({ root: "/tmp/lab-root", solveThrough: "0", tenantsLab: "true", rolloutDoctor: "off" }, mockState),
            ),
            [],
        );
        await assert.rejects(
            runProgram({ root: "/tmp/lab-root", solveThrough: "0", rolloutDoctor: "yes" }, mockState),
            /gitops-lab:rolloutDoctor is "yes"; allowed: auto, on or off/,
        );
    });
});
