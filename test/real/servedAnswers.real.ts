/**
 * The served simulation's answers beside the real node's, for requests a learner makes by hand on
 * the served lab (docs/simulate.md lists what still differs). The node runs Argo CD v3.5.1 installed
 * as the stack installs it; the simulated side is the simulated lab `simulate --serve` starts
 * (startSimulatedLab), with the same Application put on both sides. Given the same kubectl command, then the same answer:
 * Argo CD's CRDs as the install leaves them, and kubectl's default patch (strategic merge) on an
 * Application refused with 415, while a ConfigMap takes it.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ARGOCD_NAMESPACE } from "../../lab/argo/application";
import { toYaml } from "../../lab/ports/files";
import { run } from "../../lab/ports/exec";
import { NodeLab } from "../../realnode/lab";
import { ARGOCD_CRD_NAMES } from "../../sim/argoCrds";
import { SimulatedLab, startSimulatedLab } from "../../sim/simulatedLab";
import { startNodeLabIn } from "../helpers/nodeLab";

/** An Application Argo CD leaves alone here: its repository is never read in this test. */
const PROBE = {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "Application",
    metadata: { name: "served-probe", namespace: ARGOCD_NAMESPACE },
    spec: {
        project: "default",
        source: { repoURL: "git://gitd.gitsrv.svc.cluster.local:9418/none.git", targetRevision: "main", path: "." },
        destination: { server: "https://kubernetes.default.svc", namespace: "served-probe" },
    },
};
const CONFIG_MAP = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "served-probe", namespace: "default" }, data: { a: "1" } };

describe("the served simulation's answers beside the real node's (Argo CD v3.5.1 installed as the stack installs it)", function () {
    this.timeout(1_800_000);
    let root: string;
    let lab: NodeLab;
    let sim: SimulatedLab;
    let simRoot: string;
    let simKubeconfig: string;

    /** kubectl against the real node or the simulation: its exit code and what it printed. */
    const kubectl = async (side: "real" | "sim", ...args: string[]): Promise<{ code: number; out: string }> => {
        const file = side === "real" ? lab.kubeconfigFile : simKubeconfig;
        try {
            const r = await run("kubectl", ["--kubeconfig", file, ...args], { timeoutMs: 60_000 });
            return { code: 0, out: r.stdout };
        } catch (e: any) {
            return { code: Number(e.exitCode ?? -1), out: String(e.stderr ?? e.message) };
        }
    };

    before(async () => {
        ({ root, lab } = await startNodeLabIn("real-served"));
        simRoot = fs.mkdtempSync(path.join(os.tmpdir(), "real-served-sim-"));
        sim = await startSimulatedLab(simRoot);
        if (!sim.kube.get("Namespace", undefined, "default"))
            sim.kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "default" } }, "installer");
        simKubeconfig = path.join(root, "sim.kubeconfig");
        fs.writeFileSync(simKubeconfig, sim.kubeconfig);
        const manifest = path.join(root, "probe.yaml");
        fs.writeFileSync(manifest, [PROBE, CONFIG_MAP].map((o) => toYaml(o)).join("---\n"));
        for (const side of ["real", "sim"] as const) {
            const r = await kubectl(side, "apply", "-f", manifest);
            assert.strictEqual(r.code, 0, `${side}: ${r.out}`);
        }
    });
    after(async () => {
        await sim?.stop();
        await lab?.stop();
        for (const dir of [root, simRoot]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it("given Argo CD installed, then kubectl get crd lists the same three CRDs, with the same group, scope, names, versions, conversion and the status apiextensions-apiserver writes", async () => {
        const names = async (side: "real" | "sim") =>
            (await kubectl(side, "get", "crd", "-o", "name")).out
                .trim()
                .split("\n")
                .filter((n) => n.endsWith(".argoproj.io"));
        assert.deepStrictEqual(await names("real"), await names("sim"));
        const shape = (c: any) => ({
            name: c.metadata.name,
            group: c.spec.group,
            scope: c.spec.scope,
            names: c.spec.names,
            versions: c.spec.versions.map((v: any) => `${v.name} served=${v.served} storage=${v.storage}`),
            conversion: c.spec.conversion,
            conditions: c.status.conditions.map((x: any) => `${x.type}=${x.status} ${x.reason}: ${x.message}`),
            acceptedNames: c.status.acceptedNames,
            storedVersions: c.status.storedVersions,
        });
        const shapes = async (side: "real" | "sim") => {
            const r = await kubectl(side, "get", "crd", ...ARGOCD_CRD_NAMES, "-o", "json");
            assert.strictEqual(r.code, 0, r.out.slice(0, 500));
            return JSON.parse(r.out).items.map(shape);
        };
        assert.deepStrictEqual(await shapes("sim"), await shapes("real"));
    });

    it("given kubectl patch's default (strategic merge) on an Application, then both refuse it with the same 415 answer; on a ConfigMap both apply it", async () => {
        const patch = ["-p", '{"metadata":{"labels":{"lab-note":"x"}}}'];
        const real = await kubectl("real", "patch", "application", PROBE.metadata.name, "-n", ARGOCD_NAMESPACE, ...patch);
        const simulated = await kubectl("sim", "patch", "application", PROBE.metadata.name, "-n", ARGOCD_NAMESPACE, ...patch);
        assert.strictEqual(real.code, 1, real.out);
        assert.match(real.out, /unknown format/);
        assert.deepStrictEqual(simulated, real);
        for (const side of ["real", "sim"] as const) {
            const r = await kubectl(side, "patch", "configmap", CONFIG_MAP.metadata.name, "-n", "default", ...patch);
            assert.strictEqual(r.code, 0, `${side}: ${r.out}`);
        }
    });
});
