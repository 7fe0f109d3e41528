/**
 * The Pulumi tier of `npm run test:real`: the user's own commands (`gitops-lab up`, `preview`,
 * `refresh`, `destroy`, `outputs`, each in its own process as a user runs them) through the real
 * Pulumi engine v3.248.0 and the kubernetes provider 4.25.0, both built from Go modules
 * (realplane/pulumiBuild.ts), with index.ts as an inline program, against the real control plane
 * (Kubernetes with KWOK's nodes, the real Argo CD v3.5.1) adopted through kubeconfigPath. Both labs
 * and the rollout doctor are on; the tenants lab runs its step 1 (its stall needs hook Pods that
 * really fail, which KWOK's stages do not make).
 */
import * as assert from "assert";
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";
import { labLayout } from "../../lab/shop/layout";
import { tenantsLayout } from "../../lab/tenants/layout";
import { RealLab, startRealLab } from "../../realplane/realLab";
import { buildPulumi } from "../../realplane/pulumiBuild";
import { BIN } from "../helpers/cli";
import { expect, holds } from "../helpers/expect";

const PROJECT = path.resolve(__dirname, "..", "..");
const STACK_NAME = `test-${process.pid}`;
const devStackFile = fs.readFileSync(path.join(PROJECT, "Pulumi.dev.yaml"), "utf8");

/** The dynamic providers' processes on this host (the plugin's sh and its Node), from /proc. */
function providerProcesses(): { pid: number; args: string }[] {
    const found: { pid: number; args: string }[] = [];
    for (const e of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(e)) continue;
        let args = "";
        try {
            args = fs.readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0").join(" ");
        } catch {
            continue; // gone meanwhile
        }
        if (/pulumi-resource-pulumi-nodejs|cmd\/dynamic-provider/.test(args)) found.push({ pid: Number(e), args });
    }
    return found;
}

interface Run {
    code: number | null;
    signal: NodeJS.Signals | null;
    out: string;
}

/** One `gitops-lab` command in its own process (and process group), its output shown as it comes; `until` may kill it early. */
function gitopsLab(args: string[], env: NodeJS.ProcessEnv, opts: { timeoutMs?: number; killWhen?: (out: string) => boolean } = {}): Promise<Run> {
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
            for (const l of String(d).split("\n")) if (l.trim()) console.log(`    | ${l}`);
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

describe("the Pulumi engine on the real control plane (gitops-lab up / preview / refresh / destroy)", function () {
    this.timeout(3_600_000);
    let root: string;
    let lab: RealLab;
    let kubeconfigFile: string;
    let env: NodeJS.ProcessEnv;
    let configFile: string;
    const kubectl = (...args: string[]) => execFileSync("kubectl", ["--kubeconfig", kubeconfigFile, ...args], { encoding: "utf8" });
    const namespaces = () => kubectl("get", "namespaces", "-o", "jsonpath={.items[*].metadata.name}").split(/\s+/).filter(Boolean).sort();
    const writeConfig = (values: Record<string, string | number | boolean>) =>
        fs.writeFileSync(configFile, stringify({ config: Object.fromEntries(Object.entries(values).map(([k, v]) => [`gitops-lab:${k}`, v])) }));
    const baseConfig = () => ({ root, kubeconfigPath: kubeconfigFile, tenantsLab: true, tenantsSolveThrough: 1, rolloutDoctor: "on", syncTimeoutSeconds: 180 });
    const stackResources = () => {
        const dir = path.join(env.PULUMI_BACKEND_URL!.slice("file://".length), ".pulumi", "stacks", "gitops-lab");
        const file = path.join(dir, `${STACK_NAME}.json`);
        return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")).checkpoint.latest?.resources ?? []).length : 0;
    };

    before(async () => {
        await buildPulumi((l) => console.log(`  [pulumi] ${l}`));
        root = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lab-"));
        fs.chmodSync(root, 0o755);
        lab = await startRealLab(root, (l) => console.log(`  ${l}`));
        kubeconfigFile = path.join(root, "kubeconfig");
        fs.writeFileSync(kubeconfigFile, lab.kubeconfig);
        const state = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-state-"));
        configFile = path.join(state, "Pulumi.test.yaml");
        // the CLI built from Go modules (none on PATH here), the lab's own backend and passphrase
        // a stack of its own: creating it writes Pulumi.<stack>.yaml beside Pulumi.yaml (removed after), never Pulumi.dev.yaml
        env = { ...process.env, PULUMI_BACKEND_URL: `file://${state}`, PULUMI_CONFIG_PASSPHRASE: "", GITOPS_LAB_STACK: STACK_NAME };
    });
    // each test starts from an empty stack: one that failed half-way is destroyed after it
    afterEach(async () => {
        if (stackResources() > 0) await gitopsLab(["destroy", "--config-file", configFile], env);
    });
    after(async () => {
        await lab?.stop();
        fs.rmSync(path.join(PROJECT, `Pulumi.${STACK_NAME}.yaml`), { force: true });
        assert.strictEqual(fs.readFileSync(path.join(PROJECT, "Pulumi.dev.yaml"), "utf8"), devStackFile, "Pulumi.dev.yaml is untouched");
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

    it("up solves both labs (outputs equal the result files, verify 100% live); a second up changes nothing; refresh finds no drift; solveThrough 4 -> 8 resumes, lowering it is refused; destroy leaves only what was there before", async () => {
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
        const shop = labLayout(root);
        for (const name of ["incident", "pin", "drift", "promote", "revert", "report"]) {
            assert.deepStrictEqual(outs[name], JSON.parse(fs.readFileSync(path.join(shop.workDir, `${name}.json`), "utf8")), `the stack output ${name} equals ${name}.json`);
        }
        assert.strictEqual(outs.completedThrough, 8);
        assert.strictEqual(outs.tenantsCompletedThrough, 1);
        assert.strictEqual(outs.argocdMode, "found");
        const outputsFile = path.join(root, "outputs.json");
        fs.writeFileSync(outputsFile, JSON.stringify(outs));
        const shopVerify = await gitopsLab(["verify", "--root", root, "--kubeconfig", kubeconfigFile, "--stack-outputs", outputsFile], env);
        assert.strictEqual(shopVerify.code, 0, shopVerify.out);
        assert.match(shopVerify.out, /files, repository and cluster/);
        const tenantsVerify = await gitopsLab(["verify", "--lab", "tenants", "--through", "1", "--root", root, "--kubeconfig", kubeconfigFile], env);
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
        assert.match(r.out, /solveThrough is 3, but the lab on this host is at step 8 and steps cannot be undone/);
        assert.strictEqual(stackResources(), resources, "nothing changed");

        // destroy: nothing of the lab is left, and what the adopted cluster had before is still there
        writeConfig({ ...baseConfig(), solveThrough: 8 });
        r = await gitopsLab(["destroy", "--config-file", configFile], env);
        assert.strictEqual(r.code, 0, r.out);
        assert.deepStrictEqual(namespaces(), had.namespaces);
        assert.strictEqual(kubectl("get", "crd", "-o", "name"), had.crds, "Argo CD's CRDs, found in the cluster, are still there");
        assert.strictEqual(kubectl("get", "applications", "-A", "-o", "name"), "");
        for (const p of [shop.bareRepo, shop.clone, shop.workDir, tenantsLayout(root).workDir, tenantsLayout(root).bareRepo]) assert.ok(!fs.existsSync(p), `${p} is gone`);
        assert.strictEqual(stackResources(), 0);
    });

    it("up killed with SIGKILL in the middle of the scenario: the next up finishes the lab, saying in one line what it cleared; destroy then leaves nothing", async () => {
        writeConfig({ ...baseConfig(), tenantsLab: false, rolloutDoctor: "off", solveThrough: 8 });
        const before = new Set(providerProcesses().map((p) => p.pid));
        const killed = await gitopsLab(["up", "--config-file", configFile], env, { killWhen: (out) => /\[step 4 pin\] start/.test(out) });
        assert.strictEqual(killed.signal, "SIGKILL", `the run was killed in the scenario:\n${killed.out}`);
        // the engine started the dynamic providers in a process group of their own, so the kill missed them: they leave on their own
        const left = () => providerProcesses().filter((p) => !before.has(p.pid));
        await expect(holds("no dynamic provider process outlives the killed engine", () => left().length === 0, left), { timeoutMs: 30_000 });
        const r = await gitopsLab(["up", "--config-file", configFile], env);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.out, /\[lab\] (the stack was locked by PID \d+, which is gone|the last run was interrupted with \d+ operations? pending)/);
        const outputs = await gitopsLab(["outputs"], env);
        assert.strictEqual(JSON.parse(outputs.out.slice(outputs.out.indexOf("{"))).completedThrough, 8);
        const d = await gitopsLab(["destroy", "--config-file", configFile], env);
        assert.strictEqual(d.code, 0, d.out);
        assert.strictEqual(kubectl("get", "applications", "-A", "-o", "name"), "");
        assert.strictEqual(stackResources(), 0);
    });
});
