/**
 * On an adopted cluster, what was there before the stack is used, never owned: `pulumi destroy`
 * removes what `up` created and nothing it found (an Argo CD, the lab's namespaces).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { foundInCluster } from "../program/foundInCluster";
import { PROGRESSIVE_SYNCS_KEY } from "../lab/platform/argocd";
import { CREATED_BY, foundBeforeStack } from "../lab/platform/found";
import { FakeKubeThread, startFakeKubeThread } from "./helpers/fakeKubeThread";
import { runProgram, valueOf } from "./helpers/pulumiMocks";

const ns = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels } });
const OURS = { [CREATED_BY.key]: CREATED_BY.value };
const applicationCrd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "applications.argoproj.io" },
    spec: {
        group: "argoproj.io",
        names: { kind: "Application", plural: "applications" },
        scope: "Namespaced",
        versions: [{ name: "v1alpha1", served: true, storage: true }],
    },
};
const cmdParams = (on: boolean) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "argocd-cmd-params-cm", namespace: "argocd" },
    data: on ? { [PROGRESSIVE_SYNCS_KEY]: "true" } : {},
});

describe("what an adopted cluster had before the stack (lab/platform/found.ts)", () => {
    it("an argocd namespace the stack did not label is a found Argo CD; one it labelled is its own", () => {
        assert.strictEqual(foundBeforeStack({ namespaces: [{ name: "argocd", labels: {} }], applicationCrd: true }, "argocd").argocd, true);
        assert.strictEqual(
            foundBeforeStack({ namespaces: [{ name: "argocd", labels: OURS }], applicationCrd: true }, "argocd").argocd,
            false,
        );
        assert.strictEqual(foundBeforeStack({ namespaces: [], applicationCrd: false }, "argocd").argocd, false);
    });

    it("namespaces the lab would create are found unless the stack labelled them", () => {
        const f = foundBeforeStack(
            {
                namespaces: [
                    { name: "gitsrv", labels: {} },
                    { name: "rollout-doctor", labels: OURS },
                ],
                applicationCrd: false,
            },
            "argocd",
        );
        assert.deepStrictEqual(f.namespaces, ["gitsrv"]);
    });

    it("refuses Argo CD's CRDs without its namespace, in one line saying what to do", () => {
        assert.throws(
            () => foundBeforeStack({ namespaces: [], applicationCrd: true }, "argocd"),
            /^Error: the cluster has Argo CD's CRDs but no argocd namespace: .*install it there, or adopt a cluster without Argo CD$/,
        );
    });
});

describe("the program on an adopted cluster (Pulumi mocks, the cluster read through the real kubectl)", function () {
    this.timeout(120_000);
    let kube: FakeKubeThread | undefined;
    afterEach(async () => {
        await kube?.stop();
        kube = undefined;
    });
    const kubeconfigFile = (text: string) => {
        const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "found-")), "kubeconfig");
        fs.writeFileSync(file, text);
        return file;
    };

    // given an Argo CD and a gitsrv namespace already there, then the stack declares neither: nothing of theirs is
    // created, so destroy removes nothing of theirs
    it("found Argo CD and gitsrv are not the stack's", async () => {
        kube = await startFakeKubeThread([ns("argocd"), ns("gitsrv"), applicationCrd, cmdParams(true)]);
        const file = kubeconfigFile(kube.kubeconfig);
        assert.deepStrictEqual(foundInCluster(file, ["gitsrv"]), { argocd: true, progressiveSyncs: true, namespaces: ["gitsrv"] });
        const run = await runProgram({ root: "/tmp/lab-root", solveThrough: "0", kubeconfigPath: file });
        const declared = run.resources.map((r) => `${r.type}:${r.name}`);
        assert.ok(!declared.some((d) => d.startsWith("kubernetes:core/v1:Namespace")), declared.join("\n"));
        assert.ok(!declared.some((d) => d.includes("argocd-install") || d.includes("argocd-cmd-params")), declared.join("\n"));
        assert.ok(
            declared.some((d) => d.includes("gitd-deployment")),
            "the git daemon itself is the stack's",
        );
        assert.strictEqual(await valueOf(run.outputs.argocdMode), "found");
    });

    it("given a cluster without them, then the stack creates Argo CD and the namespaces, labelled as its own", async () => {
        kube = await startFakeKubeThread([]);
        const run = await runProgram({ root: "/tmp/lab-root", solveThrough: "0", kubeconfigPath: kubeconfigFile(kube.kubeconfig) });
        const namespaces = run.resources.filter((r) => r.type === "kubernetes:core/v1:Namespace");
        assert.deepStrictEqual(namespaces.map((n) => n.inputs.metadata.name).sort(), ["argocd", "gitsrv"]);
        for (const n of namespaces) assert.strictEqual(n.inputs.metadata.labels[CREATED_BY.key], CREATED_BY.value);
        assert.strictEqual(await valueOf(run.outputs.argocdMode), "installed");
    });

    it("given the stack's own Argo CD from an earlier up (its label), then it stays the stack's", async () => {
        kube = await startFakeKubeThread([ns("argocd", OURS), ns("gitsrv", OURS), applicationCrd, cmdParams(true)]);
        const run = await runProgram({ root: "/tmp/lab-root", solveThrough: "0", kubeconfigPath: kubeconfigFile(kube.kubeconfig) });
        assert.strictEqual(await valueOf(run.outputs.argocdMode), "installed");
        assert.ok(run.resources.some((r) => r.name === "argocd-ns"));
    });

    it("given a found Argo CD with progressive syncs off and the tenants lab on, then the program refuses in one line saying what to set", async () => {
        kube = await startFakeKubeThread([ns("argocd"), applicationCrd, cmdParams(false)]);
        await assert.rejects(
            runProgram({ root: "/tmp/lab-root", solveThrough: "0", tenantsLab: "true", kubeconfigPath: kubeconfigFile(kube.kubeconfig) }),
            /progressive syncs off.*applicationsetcontroller\.enable\.progressive\.syncs: "true" in argocd\/argocd-cmd-params-cm/,
        );
    });

    it("given an adopted cluster, no k3s and no imageRegistry, then the tenants lab asks for a registry", async () => {
        kube = await startFakeKubeThread([ns("argocd"), applicationCrd, cmdParams(true)]);
        const config = { root: "/tmp/lab-root", solveThrough: "0", tenantsLab: "true", kubeconfigPath: kubeconfigFile(kube.kubeconfig) };
        process.env.GITOPS_LAB_K3S_BIN = fs.mkdtempSync(path.join(os.tmpdir(), "no-k3s-"));
        try {
            await assert.rejects(
                runProgram(config),
                /release images .* need a way into the cluster .*pulumi config set imageRegistry http:\/\/host:port/,
            );
        } finally {
            delete process.env.GITOPS_LAB_K3S_BIN;
        }
    });

    it("given an adopted cluster, no k3s, an imageRegistry: the tenants lab is built", async () => {
        kube = await startFakeKubeThread([ns("argocd"), applicationCrd, cmdParams(true)]);
        const config = { root: "/tmp/lab-root", solveThrough: "0", tenantsLab: "true", kubeconfigPath: kubeconfigFile(kube.kubeconfig) };
        process.env.GITOPS_LAB_K3S_BIN = fs.mkdtempSync(path.join(os.tmpdir(), "no-k3s-"));
        try {
            const run = await runProgram({ ...config, imageRegistry: "http://127.0.0.1:5000" });
            assert.ok(run.resources.some((r) => r.name === "tenants"));
        } finally {
            delete process.env.GITOPS_LAB_K3S_BIN;
        }
    });

    it("given an adopted cluster that does not answer, then one line says so", async () => {
        const dead = kubeconfigFile(
            [
                "apiVersion: v1",
                "kind: Config",
                "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]",
                "users: [{name: u, user: {}}]",
                "contexts: [{name: c, context: {cluster: c, user: u}}]",
                "current-context: c",
                "",
            ].join("\n"),
        );
        await assert.rejects(
            runProgram({ root: "/tmp/lab-root", solveThrough: "0", kubeconfigPath: dead }),
            /cannot read the cluster of .* to see what it has before the lab \(.*\); is it running\?/,
        );
    });
});
