/**
 * The rollout doctor's findings on what each real Argo CD the real tier runs writes (v3.6.2 and v3.5.1;
 * realnode/: Argo CD installed
 * as the stack installs it, the git daemon a Pod), beside the dumps of test/doctorFindings.test.ts.
 * Given an ApplicationSet whose RollingSync steps leave one Application to no step, select another
 * twice and a third step nothing, with a first step of `maxUpdate: 1` whose first Application never
 * becomes Healthy (its Pod can be scheduled on no node), then the doctor, reading the live cluster
 * with only the node's kubeconfig, names each by its finding: NotSelected, SelectedTwice, EmptyStep
 * and MaxUpdateHolding, with the Application and step Argo CD's own status gives.
 * Given a second ApplicationSet whose one Application syncs without pruning, when a commit removes
 * one of its ConfigMaps, then Argo CD's rollout syncs it (the entry turns Progressing), the Application
 * stays Healthy and OutOfSync (the ConfigMap left to prune), the entry never turns Healthy, and the
 * doctor names it HealthyNotSynced.
 * Given a third whose one Application is rolled out (Healthy), when its list element's path changes
 * (no commit), then Argo CD (3.5 and 3.6 alike) takes the spec change for one that needs no sync, its entry stays Healthy,
 * no sync starts and the Application stays OutOfSync (#29240, the silent skip of #29410), and the
 * doctor names it HealthyOutOfSync.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { ARGOCD_NAMESPACE, REFRESH_ANNOTATION } from "../../lab/argo/application";
import { APPSET_METRICS, progressiveSyncCounts } from "../../lab/argo/appsetMetrics";
import { createLabRepo } from "../../lab/platform/labRepo";
import { KubeCluster } from "../../lab/ports/cluster";
import { CloneGit } from "../../lab/ports/git";
import { toYaml } from "../../lab/ports/files";
import { pollUntil } from "../../lab/ports/wait";
import { NodeLab } from "../../realnode/lab";
import { runMain } from "../helpers/cli";
import { RESPEC, respecAppSet, respecFiles, respecNewPath, ringAppSet } from "../helpers/ringAppSet";
import { expectConsistently, failed, succeeded } from "../helpers/expect";
import { REAL_ARGOCD_VERSIONS } from "../../realplane/versions";
import { ARGOCD_RELEASES } from "../../lab/platform/argocd";
import { startNodeLabIn } from "../helpers/nodeLab";

const APPSET = "conformance";
const REPO_URL = "git://gitd.gitsrv.svc.cluster.local:9418/conformance.git";
/** The ApplicationSet of one Application that syncs without pruning, and its Application. */
const PRUNELESS = "pruneless";
const PRUNELESS_APP = "pruneless-p";
const RESPEC_APP = RESPEC.app;

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
        "pruneless/keep.yaml": configMap("keep"),
        ...respecFiles(),
    };
}

/**
 * Step 1: rings a and b, one at a time (a never becomes Healthy, so b is held); step 2: rings b
 * (again) and c; step 3: a ring that does not exist. Ring d is in no step.
 */
const appSet = () =>
    ringAppSet({
        repoURL: REPO_URL,
        name: APPSET,
        rings: ["a", "b", "c", "d"],
        steps: [{ rings: ["a", "b"], maxUpdate: 1 }, { rings: ["b", "c"] }, { rings: ["zz"] }],
        appName: "conf-{{.ring}}",
        path: "rings/{{.ring}}",
        prune: true,
    });

/** One step, one Application (path pruneless/), automated sync without pruning. */
const prunelessAppSet = () =>
    ringAppSet({
        repoURL: REPO_URL,
        name: PRUNELESS,
        rings: ["p"],
        steps: [{ rings: ["p"] }],
        appName: "pruneless-{{.ring}}",
        path: "pruneless",
        prune: false,
    });

/** The doctor's findings of one ApplicationSet, read live with only the node's kubeconfig, once one of `kind` is among them. */
async function doctorNames(lab: NodeLab, appset: string, kind: string, message = /./): Promise<any[]> {
    let last = "";
    return pollUntil(
        async () => {
            const r = await runMain("doctor", ["--kubeconfig", lab.kubeconfigFile, "--appset", appset, "--json", "--stuck-after", "0"]);
            last = r.stdout || r.stderr;
            if (!r.stdout.trim().startsWith("{")) return undefined;
            const d = JSON.parse(r.stdout).applicationSets?.[0];
            return d?.findings?.some((f: any) => f.kind === kind && message.test(f.message)) ? d.findings : undefined;
        },
        {
            timeoutMs: 600_000,
            intervalMs: 5_000,
            describe: () => `the doctor never named ${kind} (${message}) in ${appset}; last answer:\n${last}`,
        },
    );
}

/** The findings of `kind` are one, of `appAtStep` ("app@step"), and its message says `message`. */
function namedOnly(findings: any[], kind: string, appAtStep: string, message: RegExp) {
    const named = findings.filter((f) => f.kind === kind);
    assert.deepStrictEqual(
        named.map((f) => `${f.application}@${f.step}`),
        [appAtStep],
    );
    assert.match(named[0].message, message);
}

const entriesOf = async (cluster: KubeCluster, appset: string): Promise<any[]> =>
    (await cluster.getApplicationSet(appset, ARGOCD_NAMESPACE))?.status?.applicationStatus ?? [];

const say = (findings: any[]) =>
    console.log(
        `  the doctor's findings:\n    ${findings.map((f) => `${f.kind} ${f.application ?? "-"} step ${f.step}: ${f.message}`).join("\n    ")}`,
    );

for (const version of REAL_ARGOCD_VERSIONS)
    describe(`the rollout doctor on the real node's Argo CD ${version}: a RollingSync configuration, a step held by maxUpdate, an Application Healthy but not Synced and one skipped, each named by its finding`, function () {
        this.timeout(1_800_000);
        let root: string;
        let lab: NodeLab;
        let cluster: KubeCluster;
        let findings: any[];
        /** 3.6's: the doctor's findings once they carry the InvalidRolloutConfig condition (written in its own status update). */
        let invalidFindings: any[] = [];
        let entries: any[];
        let removalSha: string;
        let prunelessFindings: any[];
        let prunelessEntries: any[];
        let prunelessApp: any;
        let respecFindings: any[];
        let respecEntries: any[];
        let respecApp: any;
        let respecOperationStarted: string;

        before(async () => {
            ({ root, lab } = await startNodeLabIn("real-conformance", version));
            const { bareDir, workDir } = lab.layout;
            await createLabRepo(
                { bareDir, bareRepo: path.join(bareDir, "conformance.git"), workDir, clone: path.join(workDir, "conformance") },
                { owner: "conformance-test", initialMessage: "rings a-d" },
                repoFiles(),
                (l) => console.log(`  [repo] ${l}`),
            );
            // the second ConfigMap of pruneless/, which a later commit removes
            const clone = new CloneGit(path.join(workDir, "conformance"));
            const extra = await clone.commitFiles(
                { "pruneless/extra.yaml": toYaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "extra" } }) },
                "pruneless: a second ConfigMap",
            );
            await clone.pushTo(extra, "main");
            cluster = new KubeCluster(lab.kubeconfig);
            await cluster.createApplicationSet(appSet());
            await cluster.createApplicationSet(prunelessAppSet());
            await cluster.createApplicationSet(respecAppSet(REPO_URL));
            // until Argo CD has placed the Applications and started step 1 (conf-a Progressing), and the doctor names the hold
            // (conf-a is Pending until its sync starts: the hold is named then too, so wait for it Progressing)
            findings = await doctorNames(lab, APPSET, "MaxUpdateHolding", /conf-a \(Progressing\)/);
            // 3.6's controller writes its InvalidRolloutConfig condition in an update of its own, which may come after the
            // entries the hold is read from (once seen without it): waited for on its own
            if (ARGOCD_RELEASES[version].minor === "3.6") invalidFindings = await doctorNames(lab, APPSET, "InvalidRolloutConfig");
            entries = await entriesOf(cluster, APPSET);
            console.log(`  Argo CD's rollout entries: ${JSON.stringify(entries.map((e) => [e.application, e.step, e.status]))}`);
            say(findings);

            // respec-s rolled out at the head of main (its entry Healthy: the ApplicationSet controller has seen it Synced and
            // Healthy there) with no sync left to run (a second one the rollout may have set would take the new path), then its
            // path changed; no commit lands until it has been watched (a new revision would sync it)
            let seen: any[] = [];
            const settled = await pollUntil(
                async () => {
                    seen = await entriesOf(cluster, RESPEC.appset);
                    const app = await cluster.getApplication(RESPEC_APP, ARGOCD_NAMESPACE);
                    const rolledOut = seen.some(
                        (e) => e.application === RESPEC_APP && e.status === "Healthy" && e.targetRevisions?.[0] === extra,
                    );
                    return rolledOut && !app?.operation && app?.status?.operationState?.phase === "Succeeded" ? app : undefined;
                },
                { timeoutMs: 600_000, intervalMs: 2_000, describe: () => `${RESPEC_APP} never rolled out: ${JSON.stringify(seen)}` },
            );
            respecOperationStarted = settled.status?.operationState?.startedAt ?? "";
            await cluster.jsonPatchApplicationSet(RESPEC.appset, respecNewPath);
            respecFindings = await doctorNames(lab, RESPEC.appset, "HealthyOutOfSync");
            // and it stays so: no sync starts and the entry stays Healthy (a minute: the comparisons that follow the spec change are done by then)
            await expectConsistently(
                async () => {
                    respecApp = await cluster.getApplication(RESPEC_APP, ARGOCD_NAMESPACE);
                    respecEntries = await entriesOf(cluster, RESPEC.appset);
                    const entry = respecEntries.find((e) => e.application === RESPEC_APP);
                    const started = respecApp?.status?.operationState?.startedAt;
                    return !respecApp?.operation && started === respecOperationStarted && entry?.status === "Healthy"
                        ? succeeded("no sync since the path changed, the entry Healthy")
                        : failed(
                              `a sync or a move: operation ${JSON.stringify(respecApp?.operation ?? null)}, started ${started}, entry ${JSON.stringify(entry)}`,
                          );
                },
                { forMs: 60_000, intervalMs: 5_000 },
            );
            console.log(
                `  ${RESPEC_APP}: sync ${respecApp?.status?.sync?.status} at ${respecApp?.status?.sync?.revision} (path ${respecApp?.spec?.source?.path}), entry ${JSON.stringify(respecEntries.map((e) => [e.application, e.status, e.message]))}`,
            );
            say(respecFindings);

            // pruneless-p rolled out (Healthy), then the commit that removes extra, and a refresh so Argo CD looks now
            await pollUntil(
                async () =>
                    (seen = await entriesOf(cluster, PRUNELESS)).find((e) => e.application === PRUNELESS_APP && e.status === "Healthy"),
                { timeoutMs: 600_000, intervalMs: 2_000, describe: () => `${PRUNELESS_APP} never rolled out: ${JSON.stringify(seen)}` },
            );
            const removal = await clone.revert(extra);
            await clone.pushTo(removal, "main");
            removalSha = removal;
            await cluster.annotateApplication(PRUNELESS_APP, { [REFRESH_ANNOTATION]: "normal" });
            prunelessFindings = await doctorNames(lab, PRUNELESS, "HealthyNotSynced");
            prunelessApp = await cluster.getApplication(PRUNELESS_APP, ARGOCD_NAMESPACE);
            prunelessEntries = await entriesOf(cluster, PRUNELESS);
            console.log(
                `  ${PRUNELESS}'s entries: ${JSON.stringify(prunelessEntries.map((e) => [e.application, e.step, e.status, e.message]))}`,
            );
            console.log(
                `  ${PRUNELESS_APP}: sync ${prunelessApp?.status?.sync?.status} at ${prunelessApp?.status?.sync?.revision}, health ${prunelessApp?.status?.health?.status}, operation ${prunelessApp?.status?.operationState?.phase}: ${prunelessApp?.status?.operationState?.message}`,
            );
            say(prunelessFindings);
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

        // 3.6 writes the condition; 3.5 has none to read (there the doctor finds the same from the steps alone, above)
        (ARGOCD_RELEASES[version].minor === "3.6" ? it : it.skip)(
            "on 3.6, Argo CD's InvalidRolloutConfig condition names conf-b, and the doctor reads it",
            () => {
                assert.match(
                    invalidFindings.find((f) => f.kind === "InvalidRolloutConfig")?.message ?? "",
                    /its InvalidRolloutConfig condition.*Application 'conf-b' is selected by multiple steps/,
                );
            },
        );

        // 3.6's controller serves the series; 3.5's has none (there the doctor reads the objects alone, as everywhere)
        (ARGOCD_RELEASES[version].minor === "3.6" ? it : it.skip)(
            "on 3.6, the controller's own metric counts step 1 as the simulation writes it, and the doctor's evidence has it",
            async () => {
                const text = await cluster.getServiceProxy(APPSET_METRICS.namespace, APPSET_METRICS.service, APPSET_METRICS.path, 30_000);
                // the sample lines as the simulated controller writes them (test/sim36.test.ts): label names, order, values
                assert.match(
                    text,
                    /^argocd_appset_progressive_sync_app_status\{name="conformance",namespace="argocd",progressiveStatus="\w+",step="1"\} [1-9]\d*$/m,
                );
                assert.ok(
                    progressiveSyncCounts(text).some((c) => c.name === APPSET && c.step === "1"),
                    "the doctor's reader finds the step",
                );
                const counted = findings
                    .find((f) => f.kind === "MaxUpdateHolding")
                    ?.evidence.find((e: any) => e.object.startsWith("Argo CD 3.6's metric "));
                assert.strictEqual(
                    counted?.object,
                    `Argo CD 3.6's metric argocd_appset_progressive_sync_app_status{namespace="argocd",name="${APPSET}",step="1"}`,
                );
                assert.match(counted.value, /Progressing 1/);
            },
        );

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

        it("given pruneless-p synced without pruning after a commit removed a ConfigMap, then Argo CD keeps its entry Progressing and the doctor names it HealthyNotSynced", () => {
            const entry = prunelessEntries.find((e) => e.application === PRUNELESS_APP);
            assert.strictEqual(entry?.status, "Progressing");
            assert.deepStrictEqual(entry?.targetRevisions, [removalSha]);
            assert.strictEqual(prunelessApp?.status?.health?.status, "Healthy");
            assert.strictEqual(prunelessApp?.status?.sync?.status, "OutOfSync");
            assert.strictEqual(prunelessApp?.status?.operationState?.phase, "Succeeded");
            namedOnly(prunelessFindings, "HealthyNotSynced", `${PRUNELESS_APP}@1`, /is Healthy but OutOfSync/);
        });

        it("given respec-s Healthy, when its element's path changes with no commit, then Argo CD keeps its entry Healthy and never syncs it, and the doctor names HealthyOutOfSync", () => {
            // #29240: the spec change is taken for one that needs no sync (Waiting -> Healthy on the Application's last status)
            const entry = respecEntries.find((e) => e.application === RESPEC_APP);
            assert.strictEqual(entry?.status, "Healthy");
            assert.strictEqual(respecApp?.spec?.source?.path, "respec/v2");
            assert.strictEqual(respecApp?.status?.sync?.status, "OutOfSync");
            namedOnly(
                respecFindings,
                "HealthyOutOfSync",
                `${RESPEC_APP}@1`,
                /was skipped: its entry is Healthy but it runs respec\/v1.*, not respec\/v2/,
            );
        });
    });
