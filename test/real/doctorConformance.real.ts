/**
 * The rollout doctor's findings on what the real Argo CD v3.5.1 writes (realnode/: Argo CD installed
 * as the stack installs it, the git daemon a Pod), beside the dumps of test/doctorFindings.test.ts.
 * Given an ApplicationSet whose RollingSync steps leave one Application to no step, select another
 * twice and a third step nothing, with a first step of `maxUpdate: 1` whose first Application never
 * becomes Healthy (its Pod can be scheduled on no node), then the doctor, reading the live cluster
 * with only the node's kubeconfig, names each by its finding: NotSelected, SelectedTwice, EmptyStep
 * and MaxUpdateHolding, with the Application and step Argo CD's own status gives.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ARGOCD_NAMESPACE } from "../../lab/argo/application";
import { createLabRepo } from "../../lab/platform/labRepo";
import { KubeCluster } from "../../lab/ports/cluster";
import { toYaml } from "../../lab/ports/files";
import { pollUntil } from "../../lab/ports/wait";
import { NodeLab, startNodeLab } from "../../realnode/lab";
import { runMain } from "../helpers/cli";

const APPSET = "conformance";
const REPO_URL = "git://gitd.gitsrv.svc.cluster.local:9418/conformance.git";
const RING = "gitops-lab.test/ring";

/** The repository: ring a is a Deployment whose Pod no node takes (Progressing for an hour), the others one ConfigMap each. */
function repoFiles(): Record<string, string> {
    const configMap = (ring: string) => toYaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `ring-${ring}` }, data: { ring } });
    return {
        "rings/a/deployment.yaml": toYaml({
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: "never-ready" },
            spec: {
                replicas: 1,
                progressDeadlineSeconds: 3600,
                selector: { matchLabels: { app: "never-ready" } },
                template: {
                    metadata: { labels: { app: "never-ready" } },
                    spec: {
                        nodeSelector: { "gitops-lab.test/no-such-node": "true" },
                        containers: [{ name: "c", image: "busybox:1.37.0", command: ["sleep", "3600"] }],
                    },
                },
            },
        }),
        ...Object.fromEntries(["b", "c", "d"].map((r) => [`rings/${r}/configmap.yaml`, configMap(r)])),
    };
}

/**
 * Step 1: rings a and b, one at a time (a never becomes Healthy, so b is held); step 2: rings b
 * (again) and c; step 3: a ring that does not exist. Ring d is in no step.
 */
function appSet(): any {
    const step = (values: string[], maxUpdate?: number) => ({
        matchExpressions: [{ key: RING, operator: "In", values }],
        ...(maxUpdate ? { maxUpdate } : {}),
    });
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "ApplicationSet",
        metadata: { name: APPSET, namespace: ARGOCD_NAMESPACE },
        spec: {
            goTemplate: true,
            generators: [{ list: { elements: ["a", "b", "c", "d"].map((ring) => ({ ring })) } }],
            strategy: { type: "RollingSync", rollingSync: { steps: [step(["a", "b"], 1), step(["b", "c"]), step(["zz"])] } },
            template: {
                metadata: { name: "conf-{{.ring}}", labels: { [RING]: "{{.ring}}" } },
                spec: {
                    project: "default",
                    source: { repoURL: REPO_URL, targetRevision: "main", path: "rings/{{.ring}}" },
                    destination: { server: "https://kubernetes.default.svc", namespace: "conf-{{.ring}}" },
                    syncPolicy: { automated: { prune: true }, syncOptions: ["CreateNamespace=true"] },
                },
            },
        },
    };
}

describe("the rollout doctor on the real node's Argo CD v3.5.1: a RollingSync configuration and a step held by maxUpdate, each named by its finding", function () {
    this.timeout(1_800_000);
    let root: string;
    let lab: NodeLab;
    let findings: any[];
    let entries: any[];

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "real-conformance-"));
        fs.chmodSync(root, 0o755);
        lab = await startNodeLab(root, {
            nodeRoot: fs.mkdtempSync(path.join(os.tmpdir(), "real-conformance-node-")),
            log: (l) => console.log(`  ${l}`),
        });
        const { bareDir, workDir } = lab.layout;
        await createLabRepo(
            { bareDir, bareRepo: path.join(bareDir, "conformance.git"), workDir, clone: path.join(workDir, "conformance") },
            { owner: "conformance-test", initialMessage: "rings a-d" },
            repoFiles(),
            (l) => console.log(`  [repo] ${l}`),
        );
        const cluster = new KubeCluster(lab.kubeconfig);
        await cluster.createApplicationSet(appSet());
        // until Argo CD has placed the Applications and started step 1 (conf-a Progressing), and the doctor names the hold
        let last = "";
        findings = await pollUntil(
            async () => {
                const r = await runMain("doctor", ["--kubeconfig", lab.kubeconfigFile, "--appset", APPSET, "--json", "--stuck-after", "0"]);
                last = r.stdout || r.stderr;
                if (!r.stdout.trim().startsWith("{")) return undefined;
                const d = JSON.parse(r.stdout).applicationSets?.[0];
                return d?.findings?.some((f: any) => f.kind === "MaxUpdateHolding") ? d.findings : undefined;
            },
            { timeoutMs: 600_000, intervalMs: 5_000, describe: () => `the doctor never named MaxUpdateHolding; last answer:\n${last}` },
        );
        entries = (await cluster.getApplicationSet(APPSET, ARGOCD_NAMESPACE))?.status?.applicationStatus ?? [];
        console.log(`  Argo CD's rollout entries: ${JSON.stringify(entries.map((e) => [e.application, e.step, e.status]))}`);
        console.log(
            `  the doctor's findings:\n    ${findings.map((f) => `${f.kind} ${f.application ?? "-"} step ${f.step}: ${f.message}`).join("\n    ")}`,
        );
    });

    after(async () => {
        await lab?.stop();
        if (root) fs.rmSync(root, { recursive: true, force: true });
    });

    const found = (kind: string) => findings.filter((f) => f.kind === kind).map((f) => `${f.application ?? "-"}@${f.step}`);

    it("given ring d in no step, then Argo CD gives conf-d step -1 and the doctor names it NotSelected", () => {
        const d = entries.find((e) => e.application === "conf-d");
        assert.ok(d, `Argo CD wrote no entry for conf-d: ${JSON.stringify(entries)}`);
        assert.strictEqual(String(d.step), "-1");
        assert.deepStrictEqual(found("NotSelected"), ["conf-d@-1"]);
    });

    it("given ring b in steps 1 and 2, then Argo CD places conf-b in step 1 and the doctor names it SelectedTwice at step 1", () => {
        assert.strictEqual(String(entries.find((e) => e.application === "conf-b")?.step), "1");
        assert.deepStrictEqual(found("SelectedTwice"), ["conf-b@1"]);
    });

    it("given step 3 matching no ring, then the doctor names it EmptyStep", () => {
        assert.deepStrictEqual(found("EmptyStep"), ["-@3"]);
    });

    it("given step 1's maxUpdate 1 and conf-a never Healthy, then Argo CD keeps conf-b Waiting and the doctor names the hold, 1/1 in step 1", () => {
        assert.strictEqual(entries.find((e) => e.application === "conf-a")?.status, "Progressing");
        assert.strictEqual(entries.find((e) => e.application === "conf-b")?.status, "Waiting");
        assert.deepStrictEqual(found("MaxUpdateHolding"), ["conf-b@1"]);
        assert.match(
            findings.find((f) => f.kind === "MaxUpdateHolding").message,
            /1\/1 in step 1 \(maxUpdate 1\) are updating: conf-a \(Progressing\)/,
        );
    });
});
