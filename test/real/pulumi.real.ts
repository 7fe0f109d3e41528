/**
 * The Pulumi tier of `npm run test:real`: the user's own commands (`gitops-lab up`, `preview`,
 * `refresh`, `destroy`, `outputs`, each in its own process as a user runs them) through the real
 * Pulumi engine v3.248.0 and the kubernetes provider 4.25.0, both built from Go modules
 * (realplane/pulumiBuild.ts), with index.ts as an inline program, against the real node (realnode/:
 * a bare cluster whose Pods are containers) adopted through kubeconfigPath, so the stack installs
 * Argo CD v3.5.1 from the pinned manifest and the git daemon Pod, as on a fresh k3s. Both labs and
 * the rollout doctor are on; the tenants lab runs its step 1 here (its stall and recovery take
 * minutes more and run in the tenants test through the same code).
 */
import * as assert from "assert";
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as https from "https";
import * as path from "path";
import { stringify } from "yaml";
import { GITD_URL_PREFIX } from "../../lab/platform/gitDaemon";
import { SHOP_NAMESPACES, shopApplicationSet } from "../../lab/shop/appset";
import { REPO_URL, shopLayout } from "../../lab/shop/layout";
import { tenantsLayout } from "../../lab/tenants/layout";
import { NODE } from "../../realnode/config";
import { RealNode, startRealNode } from "../../realnode/node";
import { installArgoCd, uninstallArgoCd } from "../../realnode/lab";
import { freePort } from "../../sim/gitDaemon";
import { buildPulumi } from "../../realplane/pulumiBuild";
import { BIN } from "../helpers/cli";
import { expect, holds } from "../helpers/expect";

const PROJECT = path.resolve(__dirname, "..", "..");
const STACK_NAME = `test-${process.pid}`;
const devStackFile = fs.readFileSync(path.join(PROJECT, "Pulumi.dev.yaml"), "utf8");

/** Every process that inherited this test's mark from the commands it ran (the engine, its plugins, the dynamic providers), from /proc. */
const MARK = `GITOPS_LAB_TEST_RUN=pulumi-${process.pid}`;
/** The dynamic providers among them (the plugin's sh and its Node). */
const providerProcesses = () => markedProcesses().filter((p) => /pulumi-resource-pulumi-nodejs|cmd\/dynamic-provider/.test(p.args));
function markedProcesses(): { pid: number; args: string }[] {
    const found: { pid: number; args: string }[] = [];
    for (const e of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
        try {
            if (!fs.readFileSync(`/proc/${e}/environ`, "utf8").split("\0").includes(MARK)) continue;
            found.push({ pid: Number(e), args: fs.readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0").join(" ") });
        } catch {
            continue; // gone meanwhile
        }
    }
    return found;
}

interface Run {
    code: number | null;
    signal: NodeJS.Signals | null;
    out: string;
}

/** One `gitops-lab` command in its own process (and process group), its output shown as it comes; `until` may kill it early. */
function gitopsLab(
    args: string[],
    env: NodeJS.ProcessEnv,
    opts: { timeoutMs?: number; killWhen?: (out: string) => boolean; quiet?: boolean } = {},
): Promise<Run> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, ...args], { cwd: PROJECT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let killed = false;
        const killGroup = () => {
            try {
                process.kill(-child.pid!, "SIGKILL"); // the CLI, the engine and its provider processes, at once
            } catch {
                /* gone */
            }
        };
        const onData = (d: Buffer) => {
            out += d;
            if (!opts.quiet) for (const l of String(d).split("\n")) if (l.trim()) console.log(`    | ${l}`);
            if (!killed && opts.killWhen?.(out)) {
                killed = true;
                killGroup();
            }
        };
        child.stdout!.on("data", onData);
        child.stderr!.on("data", onData);
        const timer = setTimeout(() => {
            killGroup();
            reject(new Error(`gitops-lab ${args.join(" ")} did not finish within ${(opts.timeoutMs ?? 900_000) / 1000} s`));
        }, opts.timeoutMs ?? 900_000);
        child.on("exit", (code, signal) => {
            clearTimeout(timer);
            resolve({ code, signal, out });
        });
    });
}

/** An HTTPS request to argocd-server (its certificate is its own, self-signed): status and body. */
function argocdApi(port: number, method: string, p: string, body?: any, token?: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
        const req = https.request(
            {
                host: "127.0.0.1",
                port,
                method,
                path: p,
                rejectUnauthorized: false,
                headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
            },
            (res) => {
                let data = "";
                res.on("data", (d) => (data += d));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, body: data }));
            },
        );
        req.on("error", reject);
        req.end(body === undefined ? undefined : JSON.stringify(body));
    });
}

describe("the Pulumi engine on the real node (gitops-lab up / preview / refresh / destroy)", function () {
    this.timeout(3_600_000);
    let root: string;
    let node: RealNode;
    let kubeconfigFile: string;
    let env: NodeJS.ProcessEnv;
    let configFile: string;
    const kubectl = (...args: string[]) => execFileSync("kubectl", ["--kubeconfig", kubeconfigFile, ...args], { encoding: "utf8" });
    const namespaces = () => kubectl("get", "namespaces", "-o", "jsonpath={.items[*].metadata.name}").split(/\s+/).filter(Boolean).sort();
    const writeConfig = (values: Record<string, string | number | boolean>) =>
        fs.writeFileSync(
            configFile,
            stringify({ config: Object.fromEntries(Object.entries(values).map(([k, v]) => [`gitops-lab:${k}`, v])) }),
        );
    const baseConfig = () => ({
        root,
        kubeconfigPath: kubeconfigFile,
        tenantsLab: true,
        tenantsSolveThrough: 1,
        // the node's registry mirrors registry.lab.internal: the tenants lab pushes its release images there
        imageRegistry: `http://${NODE.nodeIp}:${NODE.registryPort}`,
        rolloutDoctor: "on",
        syncTimeoutSeconds: 180,
    });
    const stackResources = () => {
        const dir = path.join(env.PULUMI_BACKEND_URL!.slice("file://".length), ".pulumi", "stacks", "gitops-lab");
        const file = path.join(dir, `${STACK_NAME}.json`);
        return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")).checkpoint.latest?.resources ?? []).length : 0;
    };

    before(async () => {
        await buildPulumi((l) => console.log(`  [pulumi] ${l}`));
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lab-"));
        fs.chmodSync(root, 0o755);
        node = await startRealNode({ root: fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-node-")), log: (l) => console.log(`  ${l}`) });
        kubeconfigFile = node.kubeconfigFile;
        const state = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-state-"));
        configFile = path.join(state, "Pulumi.test.yaml");
        // the CLI built from Go modules (none on PATH here), the lab's own backend and passphrase
        // a stack of its own: creating it writes Pulumi.<stack>.yaml beside Pulumi.yaml (removed after), never Pulumi.dev.yaml
        env = {
            ...process.env,
            PULUMI_BACKEND_URL: `file://${state}`,
            PULUMI_CONFIG_PASSPHRASE: "",
            GITOPS_LAB_STACK: STACK_NAME,
            [MARK.split("=")[0]]: MARK.split("=")[1],
        };
    });
    // each test starts from an empty stack: one that failed half-way is destroyed after it
    afterEach(async () => {
        if (stackResources() > 0) await gitopsLab(["destroy", "--config-file", configFile], env);
    });
    after(async () => {
        await node?.stop();
        fs.rmSync(path.join(PROJECT, `Pulumi.${STACK_NAME}.yaml`), { force: true });
        assert.strictEqual(fs.readFileSync(path.join(PROJECT, "Pulumi.dev.yaml"), "utf8"), devStackFile, "Pulumi.dev.yaml is untouched");
    });

    it("a state backend that cannot be read: one line naming it and PULUMI_BACKEND_URL", async () => {
        writeConfig({ ...baseConfig(), solveThrough: 8 });
        const r = await gitopsLab(["preview", "--config-file", configFile], { ...env, PULUMI_BACKEND_URL: "file:///dev/null/state" });
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.out,
            /^gitops-lab preview: the state backend file:\/\/\/dev\/null\/state could not be read for the stack \S+ \(pulumi: [^\n]*not a directory\); PULUMI_BACKEND_URL is set in your environment: unset it for the lab's own state \(file:\/\/\S+\/\.pulumi-state\), or mend it$/m,
        );
        assert.doesNotMatch(r.out, /stdout:|err\?:/);
    });

    it("preview on an empty stack lists the plan and changes nothing on the host or in the cluster", async () => {
        writeConfig({ ...baseConfig(), solveThrough: 8 });
        const before = { namespaces: namespaces(), files: fs.readdirSync(root).sort() };
        const r = await gitopsLab(["preview", "--config-file", configFile], env);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.out, /\+ +gitops-lab:index:Scenario +scenario +create/);
        assert.match(r.out, /\+ +gitops-lab:index:TenantsLab +tenants +create/);
        assert.match(r.out, /Resources:\s*\n\s*\+ \d+ to create/);
        assert.deepStrictEqual({ namespaces: namespaces(), files: fs.readdirSync(root).sort() }, before);
        assert.strictEqual(stackResources(), 0, "a preview records nothing");
    });

    // the outputs equal the result files and verify grades 100% live; lowering solveThrough is refused
    it("up solves both labs and resumes from step 4 to 8; a second up, a refresh and a lower solveThrough change nothing; destroy leaves what was there before", async () => {
        const had = { namespaces: namespaces(), crds: kubectl("get", "crd", "-o", "name") };
        writeConfig({ ...baseConfig(), solveThrough: 4 });
        let r = await gitopsLab(["up", "--config-file", configFile], env);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.out, /Pulumi CLI: .*built from Go modules/);
        assert.doesNotMatch(r.out, /warning: .*version/i, "the provider the program asks for is the one installed: no version warning");

        writeConfig({ ...baseConfig(), solveThrough: 8 });
        r = await gitopsLab(["up", "--config-file", configFile], env);
        assert.strictEqual(r.code, 0, r.out);

        // every stack output equals its result file; verify grades both labs live
        const outputs = await gitopsLab(["outputs"], env);
        assert.strictEqual(outputs.code, 0, outputs.out);
        const outs = JSON.parse(outputs.out.slice(outputs.out.indexOf("{")));
        const shop = shopLayout(root);
        for (const name of ["incident", "pin", "drift", "promote", "revert", "report"]) {
            assert.deepStrictEqual(
                outs[name],
                JSON.parse(fs.readFileSync(path.join(shop.workDir, `${name}.json`), "utf8")),
                `the stack output ${name} equals ${name}.json`,
            );
        }
        assert.strictEqual(outs.completedThrough, 8);
        assert.strictEqual(outs.tenantsCompletedThrough, 1);
        assert.strictEqual(outs.argocdMode, "installed", "nothing of Argo CD was on the node: the stack installed it");
        assert.strictEqual(outs.argocdAdminPassword, "[secret]");

        // the UI's way in, as the outputs say: the port-forward (on a port of its own), then the admin's login with the
        // password the secret output holds, and the lab's Applications through argocd-server's API
        const shown = await gitopsLab(["outputs", "--show-secrets"], env, { quiet: true }); // the password stays out of the log
        const password = JSON.parse(shown.out.slice(shown.out.indexOf("{"))).argocdAdminPassword;
        assert.match(password, /^\S{8,}$/);
        const stateDir = new URL(String(env.PULUMI_BACKEND_URL)).pathname;
        const inState = (fs.readdirSync(stateDir, { recursive: true }) as string[]).filter((f) => {
            const file = path.join(stateDir, f);
            return fs.statSync(file).isFile() && fs.readFileSync(file, "utf8").includes(password);
        });
        assert.deepStrictEqual(inState, [], "the password is stored encrypted (a secret output of the readiness wait), never in clear");
        const forwardCmd = String(outs.argocdUi).split(",")[0].split(" ");
        assert.deepStrictEqual(forwardCmd, ["kubectl", "-n", "argocd", "port-forward", "svc/argocd-server", "8080:443"]);
        const uiPort = await freePort();
        const forward = spawn("kubectl", ["--kubeconfig", kubeconfigFile, ...forwardCmd.slice(1, -1), `${uiPort}:443`], {
            stdio: ["ignore", "pipe", "pipe"],
        });
        try {
            await expect(
                holds(
                    "the port-forward answers",
                    async () => (await argocdApi(uiPort, "GET", "/healthz").catch(() => ({ status: 0 }))).status === 200,
                ),
                { timeoutMs: 30_000, intervalMs: 250 },
            );
            const login = await argocdApi(uiPort, "POST", "/api/v1/session", { username: "admin", password });
            assert.strictEqual(login.status, 200, login.body);
            const token = JSON.parse(login.body).token;
            const apps = JSON.parse((await argocdApi(uiPort, "GET", "/api/v1/applications", undefined, token)).body).items.map(
                (a: any) => `${a.metadata.name} ${a.status.sync.status} ${a.status.health.status}`,
            );
            assert.ok(apps.includes("shop-dev Synced Healthy") && apps.includes("shop-prod Synced Healthy"), apps.join("; "));
            const wrong = await argocdApi(uiPort, "POST", "/api/v1/session", { username: "admin", password: `${password}x` });
            assert.strictEqual(wrong.status, 401, "a wrong password is refused");
            const page = await argocdApi(uiPort, "GET", "/");
            console.log(`    argocd-server's / answers ${page.status}: ${page.body.slice(0, 200).replace(/\s+/g, " ")}`);
        } finally {
            forward.kill("SIGTERM");
        }
        const outputsFile = path.join(root, "outputs.json");
        fs.writeFileSync(outputsFile, JSON.stringify(outs));
        const shopVerify = await gitopsLab(["verify", "--root", root, "--kubeconfig", kubeconfigFile, "--stack-outputs", outputsFile], env);
        assert.strictEqual(shopVerify.code, 0, shopVerify.out);
        assert.match(shopVerify.out, /files, repository and cluster/);
        const tenantsVerify = await gitopsLab(
            ["verify", "--lab", "tenants", "--through", "1", "--root", root, "--kubeconfig", kubeconfigFile],
            env,
        );
        assert.strictEqual(tenantsVerify.code, 0, tenantsVerify.out);

        // a second up: no changes; a refresh: no drift, and the pin survives
        r = await gitopsLab(["up", "--config-file", configFile, "--expect-no-changes"], env);
        assert.strictEqual(r.code, 0, r.out);
        r = await gitopsLab(["refresh", "--config-file", configFile, "--expect-no-changes"], env);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(kubectl("get", "applicationset", "shop", "-n", "argocd", "-o", "json"), /release\/prod/);

        // lowering solveThrough is refused before any change
        const resources = stackResources();
        writeConfig({ ...baseConfig(), solveThrough: 3 });
        r = await gitopsLab(["up", "--config-file", configFile], env);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.out, /the lab on this host is at step 8 already and steps cannot be undone \(solveThrough 3 asked\)/);
        assert.strictEqual(stackResources(), resources, "nothing changed");

        // destroy: nothing of the lab is left, nor of Argo CD (the stack installed it): the bare cluster, as it was
        writeConfig({ ...baseConfig(), solveThrough: 8 });
        r = await gitopsLab(["destroy", "--config-file", configFile], env);
        assert.strictEqual(r.code, 0, r.out);
        assert.deepStrictEqual(namespaces(), had.namespaces);
        assert.strictEqual(kubectl("get", "crd", "-o", "name"), had.crds, "no CRD is left: Argo CD's went with it");
        assert.deepStrictEqual(
            kubectl("get", "pods", "-A", "-o", "jsonpath={.items[*].metadata.namespace}").split(/\s+/).filter(Boolean),
            ["kube-system"],
            "only the node's own CoreDNS runs",
        );
        for (const p of [shop.bareRepo, shop.clone, shop.workDir, tenantsLayout(root).workDir, tenantsLayout(root).bareRepo])
            assert.ok(!fs.existsSync(p), `${p} is gone`);
        assert.strictEqual(stackResources(), 0);
    });

    it("up killed with SIGKILL in the middle of the scenario: the next up finishes the lab, saying in one line what it cleared; destroy then leaves nothing", async () => {
        writeConfig({ ...baseConfig(), tenantsLab: false, rolloutDoctor: "off", solveThrough: 8 });
        const before = new Set(providerProcesses().map((p) => p.pid));
        const killed = await gitopsLab(["up", "--config-file", configFile], env, { killWhen: (out) => /\[step 4 pin\] start/.test(out) });
        assert.strictEqual(killed.signal, "SIGKILL", `the run was killed in the scenario:\n${killed.out}`);
        // the engine started the dynamic providers in a process group of their own, so the kill missed them: they leave on their own
        const left = () => providerProcesses().filter((p) => !before.has(p.pid));
        await expect(
            holds("no dynamic provider process outlives the killed engine", () => left().length === 0, left),
            { timeoutMs: 30_000 },
        );
        const r = await gitopsLab(["up", "--config-file", configFile], env);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(
            r.out,
            /\[lab\] (the stack was locked by PID \d+, which is gone|the last run was interrupted with \d+ operations? pending)/,
        );
        const outputs = await gitopsLab(["outputs"], env);
        assert.strictEqual(JSON.parse(outputs.out.slice(outputs.out.indexOf("{"))).completedThrough, 8);
        const d = await gitopsLab(["destroy", "--config-file", configFile], env);
        assert.strictEqual(d.code, 0, d.out);
        assert.strictEqual(kubectl("get", "namespace", "argocd", "--ignore-not-found", "-o", "name"), "");
        assert.strictEqual(stackResources(), 0);
    });

    it("a lab done by hand (the learner's ApplicationSet and a misnamed Application) destroys to the bare node", async () => {
        const had = { namespaces: namespaces(), crds: kubectl("get", "crd", "-o", "name") };
        writeConfig({ ...baseConfig(), tenantsLab: false, rolloutDoctor: "off", solveThrough: 1, destroyTimeoutSeconds: 120 });
        let r = await gitopsLab(["up", "--config-file", configFile], env);
        assert.strictEqual(r.code, 0, r.out);
        // step 2 by hand, as a learner does it: kubectl apply of the ApplicationSet, and an Application of their own, misnamed
        const mine = {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Application",
            metadata: { name: "shop-dve", namespace: "argocd", finalizers: ["resources-finalizer.argocd.argoproj.io"] },
            spec: {
                project: "default",
                source: { repoURL: `${GITD_URL_PREFIX}shop-envs.git`, targetRevision: "main", path: "overlays/dev" },
                destination: { server: "https://kubernetes.default.svc", namespace: "shop-dev" },
                syncPolicy: { automated: {}, syncOptions: ["CreateNamespace=true"] },
            },
        };
        const set = shopApplicationSet({ name: "shop", namespace: "argocd", repoURL: REPO_URL });
        execFileSync("kubectl", ["--kubeconfig", kubeconfigFile, "apply", "-f", "-"], {
            input: [set, mine].map((o) => stringify(o)).join("---\n"),
            encoding: "utf8",
        });
        await expect(
            holds("Argo CD made shop-dev and shop-prod", () => SHOP_NAMESPACES.every((n) => namespaces().includes(n))),
            { timeoutMs: 300_000, intervalMs: 2_000 },
        );
        r = await gitopsLab(["destroy", "--config-file", configFile], env, { timeoutMs: 300_000 });
        assert.strictEqual(r.code, 0, r.out);
        assert.match(
            r.out,
            /\[lab-reset\] took down ApplicationSets shop; Applications shop-dev, shop-dve, shop-prod; namespaces shop-dev, shop-prod/,
        );
        assert.deepStrictEqual(namespaces(), had.namespaces, "the bare node's namespaces, no more");
        assert.strictEqual(kubectl("get", "crd", "-o", "name"), had.crds, "Argo CD's CRDs are gone");
        assert.strictEqual(stackResources(), 0);
    });

    it("given the git daemon's image is one no registry has, then up ends at the git daemon's wait at once, naming the Pod, the image and the pull's failure", async () => {
        const image = "docker.io/library/buildpack-deps:bookworm-not-there";
        writeConfig({ ...baseConfig(), tenantsLab: false, rolloutDoctor: "off", solveThrough: 0, gitDaemonImage: image });
        const r = await gitopsLab(["up", "--config-file", configFile], env);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.out,
            new RegExp(
                `Pod gitsrv/gitd-\\S+, container git-daemon, image ${image.replace(/[.:]/g, "\\$&")}: (ErrImagePull|ImagePullBackOff) \\(.*not found.*\\): the registry has no such image`,
            ),
        );
        const events = kubectl("get", "events", "-n", "gitsrv", "-o", 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}');
        assert.match(events, /^Failed$/m);
    });

    it("given a node that already runs Argo CD (installed without the stack), then up uses it as found and destroy leaves it", async () => {
        await installArgoCd(kubeconfigFile, (l) => console.log(`  ${l}`));
        try {
            const had = { namespaces: namespaces(), crds: kubectl("get", "crd", "-o", "name") };
            writeConfig({ ...baseConfig(), tenantsLab: false, rolloutDoctor: "off", solveThrough: 2 });
            let r = await gitopsLab(["up", "--config-file", configFile], env);
            assert.strictEqual(r.code, 0, r.out);
            const outs = JSON.parse((await gitopsLab(["outputs", "--show-secrets"], env, { quiet: true })).out.replace(/^[^{]*/, ""));
            assert.strictEqual(outs.argocdMode, "found");
            assert.strictEqual(outs.argocdAdminPassword, null, "a found Argo CD's password is not the stack's to give");
            r = await gitopsLab(["destroy", "--config-file", configFile], env);
            assert.strictEqual(r.code, 0, r.out);
            assert.deepStrictEqual(namespaces(), had.namespaces, "argocd is still there");
            assert.strictEqual(kubectl("get", "crd", "-o", "name"), had.crds, "Argo CD's CRDs, found in the cluster, are still there");
        } finally {
            await uninstallArgoCd(kubeconfigFile);
        }
    });
});
