/**
 * The served simulation's answers beside the real node's, for requests a learner makes by hand on
 * the served lab (docs/simulate.md lists what still differs). The node runs Argo CD v3.6.2 (the default release) installed
 * as the stack installs it; the simulated side is the simulated lab `simulate --serve` starts
 * (startSimulatedLab, as v3.6.2 too), with the same Application put on both sides. Given the same kubectl command,
 * then the same answer: Argo CD's CRDs as the install leaves them; kubectl's default patch (strategic merge) on an
 * Application refused with 415, while a ConfigMap takes it; a field the release's CRD does not declare (a misplaced
 * one) refused under kubectl's strict validation, a field of the release's own (v3.6's oci generator) taken; a server
 * dry run and kubectl diff that change nothing.
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

describe("the served simulation's answers beside the real node's (Argo CD v3.6.2 installed as the stack installs it)", function () {
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

    /** The same manifest applied on both sides (kubectl names the file in its answer). */
    const applyBoth = async (name: string, obj: object, ...flags: string[]) => {
        const file = path.join(root, name);
        fs.writeFileSync(file, toYaml(obj));
        return { real: await kubectl("real", "apply", ...flags, "-f", file), sim: await kubectl("sim", "apply", ...flags, "-f", file) };
    };

    it("given a field the release's CRD does not declare (automated one level too high), then both refuse it alike; v3.6's oci generator both take", async () => {
        const misplaced = {
            ...PROBE,
            metadata: { ...PROBE.metadata, name: "served-probe-strict" },
            spec: { ...PROBE.spec, automated: {} },
        };
        const a = await applyBoth("strict.yaml", misplaced);
        assert.strictEqual(a.real.code, 1, a.real.out);
        assert.match(a.real.out, /strict decoding error: unknown field "spec\.automated"/);
        assert.deepStrictEqual(a.sim, a.real);
        const oci = {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "ApplicationSet",
            metadata: { name: "served-probe-oci", namespace: ARGOCD_NAMESPACE },
            spec: {
                generators: [{ oci: { repoURL: "oci://registry.lab.internal/shop", revision: "1.0.0" } }],
                template: { metadata: { name: "oci-{{.path.basename}}" }, spec: PROBE.spec },
            },
        };
        // a server dry run: the generator is v3.6.2's (v3.5's CRDs refuse it: the fast tier, from upstream's own CRD files), nothing made
        const b = await applyBoth("oci.yaml", oci, "--dry-run=server");
        assert.strictEqual(b.real.code, 0, b.real.out);
        assert.match(b.real.out, /applicationset\.argoproj\.io\/served-probe-oci created \(server dry run\)/);
        assert.deepStrictEqual(b.sim, b.real);
    });

    it("given kubectl apply --dry-run=server and kubectl diff of a change, then both answer alike and neither changes", async () => {
        const changed = { ...CONFIG_MAP, data: { a: "2" } };
        const dry = await applyBoth("dry.yaml", changed, "--dry-run=server");
        assert.strictEqual(dry.real.code, 0, dry.real.out);
        assert.deepStrictEqual(dry.sim, dry.real);
        for (const side of ["real", "sim"] as const) {
            const diff = await kubectl(side, "diff", "-f", path.join(root, "dry.yaml"));
            assert.strictEqual(diff.code, 1, `${side}: kubectl diff exits 1 on a difference: ${diff.out}`);
            const live = await kubectl(side, "get", "configmap", CONFIG_MAP.metadata.name, "-n", "default", "-o", "jsonpath={.data.a}");
            assert.strictEqual(live.out, "1", `${side}: the ConfigMap is as it was`);
        }
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
