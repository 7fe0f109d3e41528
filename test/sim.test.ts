/**
 * The Argo CD simulation's own behaviour, one unit at a time, so the scenario tests stand on a
 * double that behaves like v3.5.1 (docs/argocd-v3.5.1.md).
 */
import { inClusterGitUrl } from "../lab/platform/gitDaemon";
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REFRESH_ANNOTATION } from "../lab/argo/application";
import { applyShopAppSet, shopApplicationSet } from "../lab/shop/appset";
import { addMissingResource } from "../lab/shop/edits";
import { expect, expectConsistently, failed, holds, pending, succeeded } from "./helpers/expect";
import { kubeconfigAt, labAt, LabAt } from "./helpers/labAt";
import { isServedKubeconfig } from "../sim/servedFiles";
import { run } from "../lab/ports/exec";
import { generateApplications, gitFileParams, renderTemplate } from "../sim/generators";
import { spawn, spawnSync } from "child_process";
import * as http from "http";
import { FakeKube, ROOT_CA_CONFIGMAP } from "../sim/fakeApi";
import { acceptedCrds, ARGOCD_CRD_NAMES } from "../sim/argoCrds";
import { jsonPatch, mergePatch } from "../sim/patch";
import { all, appAtRevision, appExists, appHasCondition, appHasNoConditions, appSyncedTo } from "./helpers/expectations";
import { withRevisionHistory } from "../sim/revisionHistory";
import { procStat } from "../lab/ports/proc";
import { acquireRootLock, lockFile } from "../lab/ports/lock";
import { RenderError, RepoServer } from "../sim/repoServer";
import { asKustomizeError, kustomizeBuild } from "../lab/ports/kustomize";
import { git } from "./helpers/git";

async function pushCommit(at: LabAt, file: string, content: string, message: string): Promise<string> {
    const clone = at.lab.layout.clone;
    fs.writeFileSync(path.join(clone, file), content);
    await git(["add", file], clone);
    await git(["commit", "--quiet", "-m", message], clone);
    await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], clone);
    return git(["rev-parse", "HEAD"], clone);
}

const app = (at: LabAt, name = "shop-dev") => at.lab.kube.get("Application", "argocd", name);

describe("Argo CD simulation: ApplicationSet controller", () => {
    it("renders {{key}} from the element and leaves an unknown key literally", () => {
        assert.deepStrictEqual(renderTemplate({ a: "shop-{{env}}", b: ["{{revision}}", "{{nope}}"] }, { env: "dev", revision: "main" }), {
            a: "shop-dev",
            b: ["main", "{{nope}}"],
        });
    });

    it("with goTemplate, renders {{.key}} and {{.a.b}}, <no value> for a missing key, and refuses what it cannot render", () => {
        assert.deepStrictEqual(
            renderTemplate({ a: "conf-{{.ring}}", b: ["{{ .path.base }}", "{{.nope}}"] }, { ring: "s", path: { base: "v1" } }, true),
            { a: "conf-s", b: ["v1", "<no value>"] },
        );
        const [file] = gitFileParams("tenants/mandant-a.yaml", "tenant: mandant-a\n", true); // the git files generator's Go-template flavour
        assert.strictEqual(
            renderTemplate("{{.path.basename}}/{{.tenant}} in {{ .path.path }}", file, true),
            "tenants/mandant-a in tenants",
        );
        assert.throws(
            () => renderTemplate("{{ .ring | upper }}", { ring: "s" }, true),
            // a RenderError: the ApplicationSet's ErrorOccurred condition, as a generation error is
            (e: any) => e instanceof RenderError && /Go templates only, not \{\{ \.ring \| upper \}\}/.test(e.message),
        );
    });

    it("generates one Application per list element, owned by the ApplicationSet", () => {
        const a = { ...shopApplicationSet(), metadata: { name: "shop", namespace: "argocd", uid: "u1" } };
        const apps = generateApplications(a);
        assert.deepStrictEqual(
            apps.map((x) => x.metadata.name),
            ["shop-dev", "shop-prod"],
        );
        assert.strictEqual(apps[1].spec!.destination!.namespace, "shop-prod");
        assert.strictEqual(apps[1].metadata.ownerReferences![0].uid, "u1");
    });

    it("rejects list element values that are not strings", () => {
        const a: any = shopApplicationSet();
        a.spec.generators[0].list.elements[0].revision = 1;
        assert.throws(() => generateApplications(a), /must be a string/);
    });

    describe("on a cluster", function () {
        this.timeout(60_000);
        let at: LabAt;
        beforeEach(async () => {
            at = await labAt(1);
            await applyShopAppSet(at.cluster, at.lab.layout, shopApplicationSet());
        });
        afterEach(async () => at.stop());

        it("given a generated Application, when someone edits its spec by hand, then the ApplicationSet controller puts the template's spec back", async () => {
            await expect(appExists(() => app(at, "shop-prod"), "shop-prod"));
            at.lab.kube.put(
                {
                    ...app(at, "shop-prod")!,
                    spec: {
                        ...app(at, "shop-prod")!.spec,
                        source: { ...app(at, "shop-prod")!.spec!.source, targetRevision: "release/prod" },
                    },
                },
                "client",
            );
            await expect(
                holds(
                    "targetRevision back to main",
                    () => app(at, "shop-prod")!.spec!.source!.targetRevision === "main",
                    () => app(at, "shop-prod")!.spec!.source,
                ),
            );
        });
    });
});

describe("Argo CD simulation: an Application is one ApplicationSet's", function () {
    this.timeout(60_000);
    let at: LabAt;
    beforeEach(async () => (at = await labAt(2)));
    afterEach(async () => at.stop());
    const set = (ns: string, name = "shop") => at.lab.kube.get("ApplicationSet", ns, name);

    it("an Application another ApplicationSet owns is left as it is (SetControllerReference refuses it)", async () => {
        const before = JSON.stringify(app(at, "shop-dev")!.spec);
        const pin = shopApplicationSet();
        pin.metadata.name = "shop-pin";
        for (const e of pin.spec!.generators![0].list!.elements!) e.revision = "pinned";
        at.lab.kube.put(pin, "client");
        await expect(
            holds(
                "ErrorOccurred: Object argocd/shop-dev is already owned by another ApplicationSet controller shop",
                () =>
                    !!set("argocd", "shop-pin")?.status?.conditions?.some(
                        (c) =>
                            c.type === "ErrorOccurred" &&
                            c.status === "True" &&
                            c.reason === "UpdateApplicationError" &&
                            c.message === "Object argocd/shop-dev is already owned by another ApplicationSet controller shop",
                    ),
                () => set("argocd", "shop-pin")?.status,
            ),
        );
        assert.strictEqual(set("argocd", "shop-pin")!.status!.conditions!.find((c) => c.type === "ResourcesUpToDate")?.status, "False");
        for (const name of ["shop-dev", "shop-prod"])
            assert.deepStrictEqual(
                app(at, name)!.metadata.ownerReferences!.map((r) => r.name),
                ["shop"],
                `${name} is still the shop ApplicationSet's alone`,
            );
        assert.strictEqual(JSON.stringify(app(at, "shop-dev")!.spec), before, "shop-dev's spec untouched");
        // and the pin's deletion takes nothing of shop's with it
        at.lab.kube.remove("ApplicationSet", "argocd", "shop-pin", "client");
        await at.lab.argo.apps.idle();
        assert.ok(app(at, "shop-dev") && app(at, "shop-prod"), "shop's Applications stay");
    });
});

describe("Argo CD simulation: ApplicationSets the controller does not take", function () {
    this.timeout(60_000);
    let at: LabAt;
    beforeEach(async () => (at = await labAt(1)));
    afterEach(async () => at.stop());
    const set = (ns: string, name = "shop") => at.lab.kube.get("ApplicationSet", ns, name);

    it("an Application of a project that does not exist is not generated (validateGeneratedApplications)", async () => {
        const wrong = shopApplicationSet();
        wrong.spec!.template!.spec!.project = "shop";
        at.lab.kube.put(wrong, "client");
        await expect(
            holds(
                "ErrorOccurred: application references project shop which does not exist",
                () =>
                    !!set("argocd")?.status?.conditions?.some(
                        (c) =>
                            c.type === "ErrorOccurred" &&
                            c.status === "True" &&
                            c.reason === "ApplicationValidationError" &&
                            c.message === "application references project shop which does not exist (and 1 more)",
                    ),
                () => set("argocd")?.status,
            ),
        );
        assert.deepStrictEqual(at.lab.kube.list("Application", "argocd"), []);
        assert.strictEqual(set("argocd")!.status!.conditions!.find((c) => c.type === "ResourcesUpToDate")?.status, "False");
    });

    it("an Application for a cluster Argo CD does not know is not generated", async () => {
        const wrong = shopApplicationSet();
        wrong.spec!.template!.spec!.destination = { server: "https://kubernetes.default.svc:443", namespace: "shop-{{env}}" };
        at.lab.kube.put(wrong, "client");
        await expect(
            holds(
                "ErrorOccurred: application destination spec is invalid",
                () =>
                    !!set("argocd")?.status?.conditions?.some(
                        (c) =>
                            c.type === "ErrorOccurred" &&
                            c.reason === "ApplicationValidationError" &&
                            c.message ===
                                'application destination spec is invalid: error getting cluster by server "https://kubernetes.default.svc:443": rpc error: code = NotFound desc = cluster "https://kubernetes.default.svc:443" not found (and 1 more)',
                    ),
                () => set("argocd")?.status,
            ),
        );
        assert.deepStrictEqual(at.lab.kube.list("Application", "argocd"), []);
    });

    it("an Application whose namespace is missing, without CreateNamespace: its sync fails, the namespace named", async () => {
        const set = shopApplicationSet();
        set.spec!.template!.spec!.syncPolicy!.syncOptions = [];
        at.lab.kube.put(set, "client");
        await expect(
            holds(
                'shop-dev\'s sync Failed: namespaces "shop-dev" not found',
                () => {
                    const op = at.lab.kube.get("Application", "argocd", "shop-dev")?.status?.operationState;
                    // retried as an automated sync is (its retry limit), then Failed
                    return (
                        op?.phase === "Failed" &&
                        (op.message ?? "").startsWith('one or more objects failed to apply, reason: namespaces "shop-dev" not found')
                    );
                },
                () => at.lab.kube.get("Application", "argocd", "shop-dev")?.status?.operationState,
            ),
        );
    });

    it("CreateNamespace makes the destination's namespace only: an object naming another fails its sync", async () => {
        const { clone } = at.lab.layout;
        fs.appendFileSync(path.join(clone, "base/kustomization.yaml"), "namespace: shop\n");
        await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-am", "base in namespace shop"], clone);
        await git(["push", "--quiet", "origin", "HEAD:main"], clone);
        at.lab.kube.put(shopApplicationSet(), "client");
        await expect(
            holds(
                'shop-dev\'s sync Failed: namespaces "shop" not found',
                () => {
                    const op = at.lab.kube.get("Application", "argocd", "shop-dev")?.status?.operationState;
                    return op?.phase === "Failed" && (op.message ?? "").includes('namespaces "shop" not found');
                },
                () => at.lab.kube.get("Application", "argocd", "shop-dev")?.status?.operationState,
            ),
        );
        assert.ok(at.lab.kube.get("Namespace", undefined, "shop-dev"), "the destination's namespace is made");
        assert.strictEqual(at.lab.kube.get("Namespace", undefined, "shop"), undefined, "the object's own is not");
    });

    it("a repoURL without git's default port reaches the same git daemon", async () => {
        const set = shopApplicationSet();
        set.spec!.template!.spec!.source!.repoURL = set.spec!.template!.spec!.source!.repoURL!.replace(":9418/", "/");
        at.lab.kube.put(set, "client");
        await expect(appSyncedTo(() => at.lab.kube.get("Application", "argocd", "shop-dev")));
    });

    // the repo-server Pod's DNS search list (argocd.svc.cluster.local, svc.cluster.local, cluster.local) completes the
    // Service's shorter names
    it("a repoURL naming the git daemon's Service by a shorter name reaches it", async () => {
        const set = shopApplicationSet();
        set.spec!.template!.spec!.source!.repoURL = set.spec!.template!.spec!.source!.repoURL!.replace(".svc.cluster.local", ".svc");
        at.lab.kube.put(set, "client");
        await expect(appSyncedTo(() => at.lab.kube.get("Application", "argocd", "shop-dev")));
        assert.strictEqual(inClusterGitUrl("git://gitd.gitsrv/shop-envs.git"), "git://gitd.gitsrv.svc.cluster.local:9418/shop-envs.git");
        assert.strictEqual(inClusterGitUrl("git://gitd/shop-envs.git"), "git://gitd/shop-envs.git", "not from the argocd namespace");
    });

    it("a repoURL that is a path on this machine is no repository to the repo-server's Pod", async () => {
        const set = shopApplicationSet();
        set.spec!.template!.spec!.source!.repoURL = at.lab.layout.bareRepo;
        at.lab.kube.put(set, "client");
        await expect(appHasCondition(() => at.lab.kube.get("Application", "argocd", "shop-dev"), "ComparisonError"));
        const cond = at.lab.kube
            .get("Application", "argocd", "shop-dev")!
            .status!.conditions!.find((c: any) => c.type === "ComparisonError");
        assert.match(cond!.message!, /failed to list refs: repository not found$/);
    });

    it("a destination by the name in-cluster, or its server with a trailing slash, is generated", async () => {
        for (const destination of [{ name: "in-cluster" }, { server: "https://kubernetes.default.svc/" }]) {
            const named = shopApplicationSet();
            named.spec!.template!.spec!.destination = { ...destination, namespace: "shop-{{env}}" };
            at.lab.kube.put(named, "client");
            await expect(appExists(() => at.lab.kube.get("Application", "argocd", "shop-prod"), "shop-prod"));
            at.lab.kube.remove("ApplicationSet", "argocd", "shop", "client");
            await at.lab.argo.apps.idle();
        }
    });

    it("a template with no name generates nothing (v3.6.2's validateGeneratedApplications)", async () => {
        const nameless = shopApplicationSet();
        delete nameless.spec!.template!.metadata!.name;
        at.lab.kube.put(nameless, "client");
        await expect(
            holds(
                "ErrorOccurred: an application with no name",
                () =>
                    !!set("argocd")?.status?.conditions?.some(
                        (c) =>
                            c.type === "ErrorOccurred" &&
                            c.status === "True" &&
                            /contains an application with no name/.test(c.message ?? ""),
                    ),
                () => set("argocd")?.status,
            ),
        );
        assert.deepStrictEqual(at.lab.kube.list("Application", "argocd"), []);
    });

    it("an Application of several sources is a ComparisonError, not a crash", async () => {
        const app = generateApplications({ ...shopApplicationSet(), metadata: { name: "shop", namespace: "argocd", uid: "u" } })[0];
        const source = app.spec!.source!;
        app.spec = { ...app.spec, source: undefined, sources: [source, source] };
        app.metadata.ownerReferences = undefined;
        at.lab.kube.put(app, "client");
        await expect(appHasCondition(() => at.lab.kube.get("Application", "argocd", app.metadata.name), "ComparisonError", /one source/));
    });

    it("an Application whose project is deleted is an InvalidSpecError, until the project is back", async () => {
        at.lab.kube.put(shopApplicationSet(), "client");
        const dev = () => at.lab.kube.get("Application", "argocd", "shop-dev");
        await expect(appSyncedTo(dev));
        const project = at.lab.kube.get("AppProject", "argocd", "default")!;
        at.lab.kube.remove("AppProject", "argocd", "default", "client");
        await expect(appHasCondition(dev, "InvalidSpecError", /^Application referencing project default which does not exist$/));
        assert.strictEqual(dev()!.status!.sync!.status, "Unknown");
        at.lab.kube.put({ ...project, metadata: { name: "default", namespace: "argocd" } }, "client");
        await expect(appHasNoConditions(dev));
    });

    it("an ApplicationSet outside argocd is not reconciled (the install watches its own namespace)", async () => {
        const elsewhere = shopApplicationSet();
        elsewhere.metadata = { ...elsewhere.metadata, name: "shop-elsewhere", namespace: "default" };
        at.lab.kube.put(elsewhere, "client");
        at.lab.kube.put(shopApplicationSet(), "client");
        await expect(appExists(() => at.lab.kube.get("Application", "argocd", "shop-prod"), "shop-prod"));
        assert.deepStrictEqual(at.lab.kube.list("Application", "default"), []);
        assert.strictEqual(set("default", "shop-elsewhere")!.status, undefined);
    });
});

describe("Argo CD simulation: fake Kubernetes API patches", () => {
    it("merge patch deletes with null and merges objects", () => {
        assert.deepStrictEqual(mergePatch({ a: 1, b: { c: 2, d: 3 } }, { b: { c: null, e: 4 } }), { a: 1, b: { d: 3, e: 4 } });
    });
    it("JSON patch with a failing test changes nothing", () => {
        const doc = { l: [{ env: "dev" }] };
        assert.throws(
            () =>
                jsonPatch(doc, [
                    { op: "test", path: "/l/0/env", value: "prod" },
                    { op: "replace", path: "/l/0/env", value: "x" },
                ]),
            /test failed/,
        );
        assert.deepStrictEqual(doc, { l: [{ env: "dev" }] });
    });
    it("JSON patch errors are the API server's 422 Invalid, saying what failed where", () => {
        const doc = { l: [{ env: "dev" }], m: { a: 1 } };
        const answer = (ops: any[]) => {
            try {
                return JSON.stringify(jsonPatch(doc, ops));
            } catch (e: any) {
                return `${e.status ?? e.code} ${e.message}`;
            }
        };
        assert.deepStrictEqual(
            [
                answer([{ op: "replace", path: "/x/y", value: 1 }]),
                answer([{ op: "remove", path: "/m/b" }]),
                answer([{ op: "bogus", path: "/m" }]),
                answer([{ op: "add", path: "m", value: 1 }]),
                answer([{ op: "add", path: "/l/-", value: { env: "x" } }]),
            ],
            [
                "422 replace: path /x/y does not exist",
                "422 remove: path /m/b does not exist",
                "422 unsupported JSON patch op bogus",
                "422 bad JSON pointer m",
                '{"l":[{"env":"dev"},{"env":"x"}],"m":{"a":1}}',
            ],
        );
        assert.deepStrictEqual(doc, { l: [{ env: "dev" }], m: { a: 1 } });
    });
});

describe("Argo CD simulation: application controller", function () {
    this.timeout(60_000);
    let at: LabAt;
    beforeEach(async () => (at = await labAt(2)));
    afterEach(async () => at.stop());

    const refresh = (name: string, kind: "normal" | "hard") => at.cluster.annotateApplication(name, { [REFRESH_ANNOTATION]: kind });
    const breakDev = async () =>
        pushCommit(
            at,
            "envs/dev/kustomization.yaml",
            addMissingResource(fs.readFileSync(path.join(at.lab.layout.clone, "envs/dev/kustomization.yaml"), "utf8")),
            "break dev",
        );

    // given a second Application rendering shop-prod's ConfigMap into the same namespace, then each comparison that
    // finds the object tracked by the other says so (controller/state.go's SharedResourceWarning)
    it("two Applications managing one object: SharedResourceWarning", async () => {
        const prod = app(at, "shop-prod")!;
        await at.cluster.putCustomObject(
            {
                apiVersion: "argoproj.io/v1alpha1",
                kind: "Application",
                metadata: { name: "shop-copy", namespace: "argocd" },
                spec: { project: "default", source: prod.spec!.source, destination: prod.spec!.destination, syncPolicy: { automated: {} } },
            },
            "applications",
        );
        const warned = (name: string) => () =>
            (app(at, name)?.status?.conditions ?? []).some(
                (c: any) =>
                    c.type === "SharedResourceWarning" &&
                    /^ConfigMap\/shop-config is part of applications (shop-copy and shop-prod|shop-prod and shop-copy)$/.test(c.message),
            );
        await expect(
            holds("one of the two warns", () => warned("shop-copy")() || warned("shop-prod")()),
            { timeoutMs: 30_000 },
        );
        // the other gone: no object is shared, and the warning goes with the next comparison
        at.lab.kube.remove("Application", "argocd", "shop-copy", "client");
        await refresh("shop-prod", "normal");
        await expect(
            holds("shop-prod warns no more", () => !warned("shop-prod")()),
            { timeoutMs: 30_000 },
        );
    });

    // given a new commit, when nothing refreshes, then the app stays at the old one (Git is polled every few minutes);
    // when refreshed, then it moves and the annotation is removed
    it("a new commit waits for the poll or a refresh", async () => {
        const before = app(at)!.status!.sync!.revision;
        const sha = await pushCommit(at, "README.md", "docs\n", "docs only");
        // for 10 reconcile delays nothing looks at Git
        await expectConsistently(
            appAtRevision(() => app(at), before!),
            { forMs: 500 },
        );
        await refresh("shop-dev", "normal");
        await expect(
            all(
                appAtRevision(() => app(at), sha),
                holds("refresh annotation removed", () => !app(at)!.metadata.annotations?.[REFRESH_ANNOTATION]),
            ),
        );
        assert.strictEqual(
            app(at)!.status!.operationState!.syncResult!.revision,
            before,
            "identical manifests: Synced at the new commit without a new operation",
        );
    });

    // given a commit that cannot render, when refreshed, then a ComparisonError with v3.5.1's message (its checkout as
    // <path to cached source>), sync Unknown and the literal revision
    it("a render error is v3.5.1's ComparisonError", async () => {
        await breakDev();
        await refresh("shop-dev", "normal");
        await expect(appHasCondition(() => app(at), "ComparisonError"));
        const cond = app(at)!.status!.conditions!.find((c: any) => c.type === "ComparisonError");
        assert.match(
            cond!.message!,
            // the checkout's folder as the real repo-server's sanitizer writes it (seen so on the real node: test/real/shopLab.real.ts)
            /^Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = `kustomize build <path to cached source>\/envs\/dev` failed exit status 1: Error: accumulating resources: accumulation err='accumulating resources from 'missing\.yaml': evalsymlink failure on '<path to cached source>\/envs\/dev\/missing\.yaml' : lstat <path to cached source>\/envs\/dev\/missing\.yaml: no such file or directory'/,
        );
        assert.strictEqual(app(at)!.status!.sync!.status, "Unknown");
        assert.strictEqual(app(at)!.status!.sync!.revision, "main");
    });

    // given a commit that cannot render, when a sync is asked by hand (kubectl patch of operation), then it is not carried
    // out: phase Error with the conditions' message, no retry count named, no history entry (controller/sync.go,
    // argo.FormatAppConditions; appcontroller.go names retries only after some)
    it("a sync by hand of a commit that cannot render ends Error", async () => {
        await breakDev();
        await refresh("shop-dev", "normal");
        await expect(appHasCondition(() => app(at), "ComparisonError"));
        const history = app(at)!.status!.history!.length;
        at.lab.kube.put({ ...app(at)!, operation: { initiatedBy: { username: "learner" }, sync: {} } }, "client");
        await expect(holds("the operation done", () => !app(at)?.operation && app(at)?.status?.operationState?.phase !== "Running"));
        const state = app(at)!.status!.operationState!;
        assert.strictEqual(state.phase, "Error");
        assert.match(state.message!, /^ComparisonError: Failed to load target state: .*missing\.yaml/);
        assert.doesNotMatch(state.message!, /retried/);
        assert.strictEqual(app(at)!.status!.history!.length, history, "no history entry");
    });

    // given a render error that failed 3 times, when refreshed again, then the error is cached; a hard refresh bypasses
    // the cache; the revert heals it
    it("a render error is cached; a hard refresh bypasses", async () => {
        await breakDev();
        // three failures, then the fourth comparison gets the cached error
        for (let i = 0; i < 4; i++) {
            await refresh("shop-dev", "normal");
            // the annotation goes when the comparison it asked for is persisted
            await expect(holds("the refresh handled", () => !app(at)!.metadata.annotations?.[REFRESH_ANNOTATION]));
        }
        assert.match(app(at)!.status!.conditions![0].message!, /Manifest generation error \(cached\)/);
        await refresh("shop-dev", "hard");
        await expect(
            holds(
                "a fresh (uncached) error",
                () =>
                    !/Manifest generation error \(cached\)/.test(
                        app(at)!.status!.conditions?.[0]?.message ?? "Manifest generation error (cached)",
                    ),
            ),
        );
        await git(["revert", "--no-edit", "HEAD"], at.lab.layout.clone);
        await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], at.lab.layout.clone);
        await refresh("shop-dev", "hard");
        await expect(
            all(
                appSyncedTo(() => app(at)),
                appHasNoConditions(() => app(at)),
            ),
        );
    });

    // given selfHeal, when a managed object drifts twice, then it is repaired in place (uid kept), the first time
    // without backoff and the repeat after it
    it("selfHeal repairs drift in place, then backs off", async () => {
        const uid = at.lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.metadata.uid;
        const level = () => at.lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.data!.LOG_LEVEL;
        for (let i = 0; i < 2; i++) {
            await at.cluster.patchConfigMapData("shop-prod", "shop-config", { LOG_LEVEL: "debug" });
            await expect(holds("LOG_LEVEL warn again", () => level() === "warn"));
        }
        // the backoffs the controller chose (none after a sync to a new revision, then FAST's 400 ms), not wall-clock measurements
        assert.deepStrictEqual(at.lab.argo.apps.selfHealDelays, [0, 400]);
        assert.strictEqual(at.lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.metadata.uid, uid);
    });

    // a namespace deleted by hand takes its objects with it; each deletion is a watch event on a managed object, as on a
    // real cluster, so selfHeal makes them again (CreateNamespace makes the namespace)
    it("a namespace deleted by hand is made again by selfHeal", async () => {
        await at.cluster.deleteNamespace("shop-dev");
        await expect(
            holds("shop-dev's shop-config made again", () => !!at.lab.kube.get("ConfigMap", "shop-dev", "shop-config")),
            { timeoutMs: 30_000 },
        );
        assert.ok(!at.lab.kube.get("Namespace", undefined, "shop-dev")?.metadata?.deletionTimestamp);
    });

    // given a sync asked by hand with a branch (operation.sync.revision: main), then its result names the commit, as
    // controller/sync.go writes it (the doctor reads a failed sync by it)
    it("a sync asked with a branch names its commit in the result", async () => {
        const sha = await git(["rev-parse", "HEAD"], at.lab.layout.clone);
        const a = app(at, "shop-dev")!;
        at.lab.kube.put({ ...a, operation: { initiatedBy: { username: "learner" }, sync: { revision: "main" } } }, "client");
        await expect(
            holds(
                "the sync's result at main's commit",
                () => !app(at, "shop-dev")?.operation && app(at, "shop-dev")?.status?.operationState?.syncResult?.revision === sha,
            ),
        );
        assert.strictEqual(app(at, "shop-dev")?.status?.operationState?.operation?.sync?.revision, "main", "the operation as asked");
    });

    // given an object the source rendered and no longer does, then it is OutOfSync with requiresPruning while prune is
    // off, and a sync with prune deletes it (controller/state.go: targetObj == nil && liveObj != nil)
    it("an object taken out of the source is pruned", async () => {
        const kustomization = path.join(at.lab.layout.clone, "envs/dev/kustomization.yaml");
        const before = fs.readFileSync(kustomization, "utf8");
        await pushCommit(
            at,
            "envs/dev/extra.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop-extra\ndata:\n  NOTE: x\n",
            "extra file",
        );
        await pushCommit(at, "envs/dev/kustomization.yaml", before.replace("  - ../../base", "  - ../../base\n  - extra.yaml"), "extra");
        await refresh("shop-dev", "normal");
        const extra = () => at.lab.kube.get("ConfigMap", "shop-dev", "shop-extra");
        await expect(holds("shop-extra made", () => !!extra()));
        // prune off on shop-dev (the ApplicationSet controller stopped, else it would put the template's back)
        at.lab.argo.appsets.stop();
        const a = app(at, "shop-dev")!;
        at.lab.kube.put(
            {
                ...a,
                spec: { ...a.spec, syncPolicy: { ...a.spec!.syncPolicy, automated: { ...a.spec!.syncPolicy!.automated, prune: false } } },
            },
            "test",
        );
        await pushCommit(at, "envs/dev/kustomization.yaml", before, "extra out");
        await refresh("shop-dev", "normal");
        const entry = () => (app(at, "shop-dev")?.status?.resources ?? []).find((r) => r.name === "shop-extra");
        await expect(
            holds(
                "shop-extra OutOfSync, requiring pruning",
                () => entry()?.requiresPruning === true && app(at, "shop-dev")?.status?.sync?.status === "OutOfSync",
            ),
        );
        assert.ok(extra(), "kept while prune is off");
        const off = app(at, "shop-dev")!;
        at.lab.kube.put(
            {
                ...off,
                spec: {
                    ...off.spec,
                    syncPolicy: { ...off.spec!.syncPolicy, automated: { ...off.spec!.syncPolicy!.automated, prune: true } },
                },
            },
            "test",
        );
        await refresh("shop-dev", "normal");
        await expect(
            holds(
                "shop-extra pruned, shop-dev Synced",
                () => !extra() && !entry() && app(at, "shop-dev")?.status?.sync?.status === "Synced",
            ),
        );
    });

    it("given automated sync disabled on the Application (as RollingSync sets it), when a managed object drifts, then nothing repairs it", async () => {
        at.lab.argo.appsets.stop(); // else the ApplicationSet controller would put the template's spec back
        const a = app(at, "shop-prod");
        at.lab.kube.put(
            {
                ...a!,
                spec: {
                    ...a!.spec,
                    syncPolicy: { ...a!.spec!.syncPolicy, automated: { ...a!.spec!.syncPolicy!.automated, enabled: false } },
                },
            },
            "rollout-test",
        );
        await at.cluster.patchConfigMapData("shop-prod", "shop-config", { LOG_LEVEL: "debug" });
        // longer than a comparison and an operation of the simulation (FAST: 50 + 20 + 50 ms)
        await expectConsistently(
            holds("LOG_LEVEL stays debug", () => at.lab.kube.get("ConfigMap", "shop-prod", "shop-config")!.data!.LOG_LEVEL === "debug"),
            { forMs: 800 },
        );
        assert.deepStrictEqual(at.lab.argo.apps.selfHealDelays, [], "no repair was even scheduled");
    });
});

describe("Argo CD simulation: the repo-server's kustomize runs (remembered by content)", function () {
    this.timeout(60_000);

    it("kubectl kustomize's error of several lines (klog's err=< block) is said as the kustomize binary says it", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klog-block-"));
        try {
            fs.writeFileSync(path.join(dir, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n");
            fs.writeFileSync(path.join(dir, "kustomization.yaml"), "resources:\n- cm.yaml\npatches:\n- path: missing.yaml\n");
            const r = spawnSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
            assert.match(r.stderr, /"command failed" err=<\n/, "kubectl writes it as a klog block");
            const said = asKustomizeError(r.stderr);
            assert.match(
                said,
                /^Error: trouble configuring builtin PatchTransformer with config: `\npath: missing\.yaml\n`: failed to get the patch file/,
            );
            assert.doesNotMatch(said, /run\.go|command failed|\t/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    // util/git/client.go lsRemote: a short name as a branch or tag, or the full ref name itself
    it("resolves a branch by its short name and by its full ref", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "resolve-ref-"));
        const bare = path.join(dir, "repo.git");
        const work = path.join(dir, "work");
        await git(["init", "--quiet", "--bare", bare]);
        await git(["init", "--quiet", "-b", "main", work]);
        await git(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "c"], work);
        await git(["push", "--quiet", bare, "HEAD:refs/heads/release/prod"], work);
        const sha = await git(["rev-parse", "HEAD"], work);
        // (the repository as the cluster names it, mapped to the folder: a path itself is no repository to the repo-server's Pod)
        const url = "git://gitd.test:9418/repo.git";
        const rs = new RepoServer((u) => (u === url ? bare : u));
        try {
            assert.strictEqual(await rs.resolve(url, "release/prod"), sha);
            assert.strictEqual(await rs.resolve(url, "refs/heads/release/prod"), sha);
            await assert.rejects(rs.resolve(url, "heads/release/prod"), /unable to resolve 'heads\/release\/prod' to a commit SHA/);
        } finally {
            rs.close();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    // given two commits of the same files (as two labs built apart make), then kustomize runs once; a hard refresh, or
    // other files, run it again
    it("kustomize runs once per files, unless hard", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "render-memo-"));
        const bare = path.join(dir, "repo.git");
        const work = path.join(dir, "work");
        await git(["init", "--quiet", "--bare", bare]);
        await git(["init", "--quiet", "-b", "main", work]);
        const nonce = `${process.pid}-${Date.now()}`; // content no other test renders (the memo is shared by the run's workers)
        const commit = async (value: string, date: string) => {
            fs.writeFileSync(path.join(work, "kustomization.yaml"), "resources:\n- cm.yaml\n");
            fs.writeFileSync(
                path.join(work, "cm.yaml"),
                `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: memo\ndata:\n  nonce: "${nonce}"\n  value: "${value}"\n`,
            );
            await git(["add", "-A"], work);
            await git(
                ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "c", `--date=${date}`],
                work,
            );
            const sha = await git(["rev-parse", "HEAD"], work);
            await git(["push", "--quiet", "--force", bare, `HEAD:refs/heads/b-${sha}`], work);
            return sha;
        };
        // a kubectl that counts its runs
        const counter = path.join(dir, "runs");
        const kubectl = path.join(dir, "kubectl");
        fs.writeFileSync(kubectl, `#!/bin/sh\necho run >> ${counter}\nexec kubectl "$@"\n`, { mode: 0o755 });
        const runs = () => (fs.existsSync(counter) ? fs.readFileSync(counter, "utf8").split("\n").filter(Boolean).length : 0);
        const a = await commit("one", "2026-01-01T00:00:00Z");
        const b = await commit("one", "2026-01-02T00:00:00Z");
        assert.notStrictEqual(a, b);
        const rs = new RepoServer((u) => u, kubectl);
        try {
            const first = await rs.render(bare, a, ".", { hard: false });
            const again = await rs.render(bare, b, ".", { hard: false });
            assert.deepStrictEqual([runs(), again], [1, first]);
            assert.strictEqual((first[0].data as Record<string, string>).value, "one");
            await rs.render(bare, b, ".", { hard: true });
            assert.strictEqual(runs(), 2);
            const c = await commit("two", "2026-01-03T00:00:00Z");
            assert.strictEqual(((await rs.render(bare, c, ".", { hard: false }))[0].data as Record<string, string>).value, "two");
            assert.strictEqual(runs(), 3);
            // a path naming a file: refused before kustomize runs, as util/app/path Path refuses it
            await assert.rejects(
                rs.render(bare, c, "cm.yaml", { hard: false }),
                /rpc error: code = Unknown desc = cm\.yaml: app path is not a directory$/,
            );
            // one that is not there (envs/{{revision}} rendered as envs/main), absolute, or outside the checkout: each so
            for (const [p, why] of [
                ["envs/main", "app path does not exist"],
                ["/envs", "app path is absolute"],
                ["../outside", "app path outside root"],
            ])
                await assert.rejects(
                    rs.render(bare, c, p, { hard: false }),
                    new RegExp(`rpc error: code = Unknown desc = ${p.replace(/[./]/g, "\\$&")}: ${why}$`),
                );
            assert.strictEqual(runs(), 3);
        } finally {
            rs.close();
        }
    });

    it("given a checkout whose symbolic link now points elsewhere, then kustomize runs again (the link's target is part of the content)", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "render-link-"));
        const checkout = path.join(dir, "checkout");
        const nonce = `${process.pid}-${Date.now()}`;
        for (const v of ["one", "two"]) {
            fs.mkdirSync(path.join(checkout, v), { recursive: true });
            fs.writeFileSync(path.join(checkout, v, "kustomization.yaml"), "resources:\n- cm.yaml\n");
            fs.writeFileSync(
                path.join(checkout, v, "cm.yaml"),
                `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: memo\ndata:\n  nonce: "${nonce}"\n  value: "${v}"\n`,
            );
        }
        fs.mkdirSync(path.join(checkout, "app"));
        fs.writeFileSync(path.join(checkout, "app", "kustomization.yaml"), "resources:\n- ../base\n");
        fs.symlinkSync("one", path.join(checkout, "base"));
        const value = async () => ((await kustomizeBuild(path.join(checkout, "app"), "kubectl", { checkout }))[0] as any).data.value;
        assert.strictEqual(await value(), "one");
        fs.rmSync(path.join(checkout, "base"));
        fs.symlinkSync("two", path.join(checkout, "base"));
        assert.strictEqual(await value(), "two");
    });
});

describe("two served labs' kubeconfigs merged (KUBECONFIG=a:b)", function () {
    this.timeout(60_000);
    // given two labs, each with its kubeconfig, when merged, then kubectl lists a context for each, and each is a served lab's
    it("are two contexts, each its lab's", async () => {
        const [a, b] = [await labAt(1), await labAt(1)];
        try {
            const files = [kubeconfigAt(a), kubeconfigAt(b)];
            const names = (
                await run("kubectl", ["config", "get-contexts", "-o", "name"], { env: { ...process.env, KUBECONFIG: files.join(":") } })
            ).stdout
                .split("\n")
                .filter(Boolean)
                .sort();
            assert.strictEqual(names.length, 2, names.join(", "));
            for (const n of names) assert.match(n, /^gitops-lab-sim-lab-at-\w+-[0-9a-f]{4}$/);
            assert.ok(files.every(isServedKubeconfig));
        } finally {
            await Promise.all([a.stop(), b.stop()]);
        }
    });
});

describe("the fake API server's watch from a resourceVersion (as kubectl delete --wait and get -w use it)", function () {
    this.timeout(30_000);
    let kube: FakeKube;
    let base: string;
    before(async () => {
        kube = new FakeKube();
        base = await kube.start();
    });
    after(async () => kube.stop());

    const cm = (name: string, v: string) => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: "default" },
        data: { v },
    });
    /** Opens a watch on ConfigMaps and collects its event lines until `stop()`; `opened` when the server has answered with its headers. */
    function watch(query: string): { lines: string[]; opened: Promise<void>; stop: () => void } {
        const lines: string[] = [];
        let buffered = "";
        let open: () => void;
        const opened = new Promise<void>((r) => (open = r));
        const req = http.get(`${base}/api/v1/namespaces/default/configmaps?watch=true${query}`, (res) => {
            open();
            res.on("data", (d) => {
                buffered += d;
                for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
                    lines.push(buffered.slice(0, i));
                    buffered = buffered.slice(i + 1);
                }
            });
        });
        req.on("error", () => undefined); // ended by stop()
        return { lines, opened, stop: () => req.destroy() };
    }
    const events = (lines: string[]) => lines.map((l) => JSON.parse(l)).map((e) => `${e.type} ${e.object.metadata?.name ?? e.object.code}`);

    // given an object deleted after a list, when a watch opens from the list's resourceVersion, then it gets the
    // deletion (with a resourceVersion of its own) and nothing from before
    it("a watch from a list's resourceVersion sees a deletion between", async () => {
        kube.put(cm("before", "1"), "client");
        kube.put(cm("gone", "1"), "client");
        const listed = Number(kube.list("ConfigMap", "default").reduce((m, o) => Math.max(m, Number(o.metadata.resourceVersion)), 0));
        kube.remove("ConfigMap", "default", "gone", "client");
        const w = watch(`&resourceVersion=${listed}`);
        try {
            await expect(
                holds(
                    "the deletion replayed",
                    () => events(w.lines).includes("DELETED gone"),
                    () => w.lines,
                ),
            );
            assert.deepStrictEqual(events(w.lines), ["DELETED gone"]);
            assert.ok(Number(JSON.parse(w.lines[0]).object.metadata.resourceVersion) > listed);
            kube.put(cm("after", "1"), "client");
            await expect(
                holds(
                    "a later change follows",
                    () => events(w.lines).includes("ADDED after"),
                    () => w.lines,
                ),
            );
        } finally {
            w.stop();
        }
    });

    it("given a watch without a resourceVersion, then it gets only later changes", async () => {
        kube.put(cm("earlier", "1"), "client");
        const w = watch("");
        try {
            await w.opened;
            kube.put(cm("earlier", "2"), "client");
            await expect(
                holds(
                    "the later change",
                    () => w.lines.length > 0,
                    () => w.lines,
                ),
            );
            assert.deepStrictEqual(events(w.lines), ["MODIFIED earlier"]);
        } finally {
            w.stop();
        }
    });

    it("given a resourceVersion older than the changes it keeps, then the watch ends with 410 Expired, as the API server's does", async () => {
        const old = Number(kube.put(cm("churn", "0"), "client").metadata.resourceVersion);
        for (let i = 1; i <= 1100; i++) kube.put(cm("churn", String(i)), "client");
        const w = watch(`&resourceVersion=${old}`);
        try {
            await expect(
                holds(
                    "the ERROR event",
                    () => w.lines.length > 0,
                    () => w.lines,
                ),
            );
            const e = JSON.parse(w.lines[0]);
            assert.deepStrictEqual([e.type, e.object.code, e.object.reason], ["ERROR", 410, "Expired"]);
        } finally {
            w.stop();
        }
    });
});

describe("the simulated API server's store", function () {
    it("hands out copies: a ConfigMap's keys come back as written (even __proto__), and changing a copy changes nothing stored", () => {
        const kube = new FakeKube();
        const data = JSON.parse('{"__proto__":"a key","plain":"v"}');
        kube.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "keys", namespace: "default" }, data }, "client");
        const got = kube.get("ConfigMap", "default", "keys");
        assert.deepStrictEqual(Object.keys(got!.data!), ["__proto__", "plain"]);
        assert.strictEqual(Object.getOwnPropertyDescriptor(got!.data, "__proto__")?.value, "a key");
        got!.data!.plain = "changed";
        assert.strictEqual(kube.list("ConfigMap", "default").find((o) => o.metadata.name === "keys")!.data!.plain, "v");
    });

    // as kube-controller-manager's root CA publisher writes it (the real tier compares it with the real one)
    it("answers a body it cannot decode, a PUT without one and a CRD's missing field as the API server does", async () => {
        const kube = new FakeKube();
        const base = await kube.start();
        try {
            const send = (method: string, p: string, body?: string, type = "application/json") =>
                new Promise<{ code: number; message: string }>((resolve, reject) => {
                    const req = http.request(`${base}${p}`, { method, headers: { "content-type": type } }, (res) => {
                        let text = "";
                        res.on("data", (d) => (text += d));
                        res.on("end", () => resolve({ code: res.statusCode ?? 0, message: JSON.parse(text).message }));
                    });
                    req.on("error", reject);
                    req.end(body);
                });
            kube.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kept", namespace: "default" }, data: { a: "1" } }, "setup");
            const garbled = await send("POST", "/api/v1/namespaces/default/configmaps", "{not json");
            assert.strictEqual(garbled.code, 400, garbled.message);
            assert.match(garbled.message, /^the request's body cannot be decoded: /);
            const empty = await send("PUT", "/api/v1/namespaces/default/configmaps/kept");
            assert.strictEqual(empty.code, 400, empty.message);
            assert.deepStrictEqual(kube.get("ConfigMap", "default", "kept")!.data, { a: "1" }, "nothing replaced");
            // an update naming a resourceVersion the object has moved past (a file saved from get -o yaml): 409, nothing changed
            const stale = kube.get("ConfigMap", "default", "kept")!.metadata.resourceVersion;
            kube.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kept", namespace: "default" }, data: { a: "2" } }, "setup");
            const conflict =
                'Operation cannot be fulfilled on configmaps "kept": the object has been modified; please apply your changes to the latest version and try again';
            for (const [method, body, type] of [
                [
                    "PUT",
                    {
                        apiVersion: "v1",
                        kind: "ConfigMap",
                        metadata: { name: "kept", namespace: "default", resourceVersion: stale },
                        data: { a: "3" },
                    },
                    "application/json",
                ],
                ["PATCH", { metadata: { resourceVersion: stale }, data: { a: "3" } }, "application/merge-patch+json"],
            ] as const) {
                const r = await send(method, "/api/v1/namespaces/default/configmaps/kept", JSON.stringify(body), type);
                assert.deepStrictEqual(r, { code: 409, message: conflict }, method);
            }
            assert.deepStrictEqual(kube.get("ConfigMap", "default", "kept")!.data, { a: "2" }, "nothing replaced by a stale update");
            const set = shopApplicationSet();
            delete set.spec!.template!.spec!.project;
            const invalid = await send("POST", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applicationsets", JSON.stringify(set));
            assert.deepStrictEqual(invalid, {
                code: 422,
                message: 'ApplicationSet.argoproj.io "shop" is invalid: spec.template.spec.project: Required value',
            });
            // a field of another type than the CRD declares (a quoted "true" for a boolean): refused, nothing stored
            const typed = shopApplicationSet();
            (typed.spec!.template!.spec!.syncPolicy!.automated as { prune?: unknown }).prune = "true";
            const wrongType = await send("POST", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applicationsets", JSON.stringify(typed));
            assert.deepStrictEqual(wrongType, {
                code: 422,
                message:
                    'ApplicationSet.argoproj.io "shop" is invalid: spec.template.spec.syncPolicy.automated.prune: Invalid value: "string": spec.template.spec.syncPolicy.automated.prune in body must be of type boolean: "string"',
            });
            assert.strictEqual(kube.get("ApplicationSet", "argocd", "shop"), undefined, "nothing stored");
            // stored so before (not through the API): an update that leaves the value as it was is taken (ratcheting), one
            // that writes it anew is checked
            kube.put(typed, "setup");
            const stored = kube.get("ApplicationSet", "argocd", "shop")!;
            const labelled = { ...stored, metadata: { ...stored.metadata, labels: { team: "shop" } } };
            const put = (obj: unknown) =>
                send("PUT", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applicationsets/shop", JSON.stringify(obj));
            // a custom resource's PUT names the version it replaces (kubectl replace of a file without one): 422
            assert.deepStrictEqual(await put({ ...labelled, metadata: { ...labelled.metadata, resourceVersion: undefined } }), {
                code: 422,
                message:
                    'applicationsets.argoproj.io "shop" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
            });
            assert.strictEqual((await put(labelled)).code, 200, "an unchanged wrong type does not refuse the update");
            const again = kube.get("ApplicationSet", "argocd", "shop")!;
            (again.spec!.template!.spec!.syncPolicy!.automated as { prune?: unknown }).prune = "false";
            assert.match((await put(again)).message, /automated\.prune in body must be of type boolean/, "a changed one is checked");
            // a list is atomic: one element added to it checks every element again, the one stored before too
            const listed = kube.get("ApplicationSet", "argocd", "shop")!;
            (listed.spec!.template!.spec!.syncPolicy as { syncOptions?: unknown[] }).syncOptions = [true];
            kube.put(listed, "setup");
            const grown = kube.get("ApplicationSet", "argocd", "shop")!;
            (grown.spec!.template!.spec!.syncPolicy as { syncOptions?: unknown[] }).syncOptions = [true, "CreateNamespace=true"];
            assert.match((await put(grown)).message, /syncOptions\[0\] in body must be of type string/);
        } finally {
            await kube.stop();
        }
    });

    it("given a new namespace, then kube-root-ca.crt is published in it, put back when changed or deleted, and gone with the namespace", () => {
        const kube = new FakeKube();
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "mandant-b" } }, "client");
        const cm = kube.get("ConfigMap", "mandant-b", ROOT_CA_CONFIGMAP);
        assert.ok(cm, "published");
        assert.deepStrictEqual(Object.keys(cm.data!), ["ca.crt"]);
        assert.match(
            cm.metadata.annotations!["kubernetes.io/description"],
            /^Contains a CA bundle that can be used to verify the kube-apiserver/,
        );
        // its data changed by a client (a drift made on the wrong ConfigMap): the publisher puts it back, the same object
        kube.put({ ...cm, data: { ...cm.data, LOG_LEVEL: "debug" } }, "client");
        const reset = kube.get("ConfigMap", "mandant-b", ROOT_CA_CONFIGMAP)!;
        assert.deepStrictEqual([Object.keys(reset.data!), reset.metadata.uid], [["ca.crt"], cm.metadata.uid]);
        kube.remove("ConfigMap", "mandant-b", ROOT_CA_CONFIGMAP, "client");
        const again = kube.get("ConfigMap", "mandant-b", ROOT_CA_CONFIGMAP);
        assert.ok(again && again.metadata.uid !== cm.metadata.uid, "put back, a new object");
        kube.remove("Namespace", undefined, "mandant-b", "client");
        assert.strictEqual(kube.get("Namespace", undefined, "mandant-b"), undefined, "the namespace went: nothing was put back in it");
        assert.strictEqual(kube.get("ConfigMap", "mandant-b", ROOT_CA_CONFIGMAP), undefined);
    });
});

describe("objects the simulated API server builds at their first read (FakeKube.provide: Argo CD's CRDs)", () => {
    const crd = (name: string) => ({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name } });

    // given provided CRDs, then a read of another CRD builds nothing, a get of one or a list builds them once, and a
    // dump leaves out those as built
    it("provided CRDs are built once, on demand", () => {
        const kube = new FakeKube();
        let built = 0;
        kube.provide("CustomResourceDefinition", ["a.example.org", "b.example.org"], () => {
            built++;
            return [crd("a.example.org"), crd("b.example.org")];
        });
        assert.strictEqual(kube.get("CustomResourceDefinition", undefined, "prometheusrules.monitoring.coreos.com"), undefined);
        assert.strictEqual(built, 0);
        assert.ok(kube.get("CustomResourceDefinition", undefined, "b.example.org"));
        assert.deepStrictEqual(
            kube.list("CustomResourceDefinition").map((o) => o.metadata.name),
            ["a.example.org", "b.example.org"],
        );
        assert.strictEqual(built, 1);
        kube.put(crd("c.example.org"), "client");
        kube.put({ ...crd("b.example.org"), metadata: { name: "b.example.org", labels: { changed: "yes" } } }, "client");
        const restored = new FakeKube();
        restored.load(kube.dump());
        assert.deepStrictEqual(
            restored.list("CustomResourceDefinition").map((o) => o.metadata.name),
            ["b.example.org", "c.example.org"],
            "the one as built left out, the changed one and the other kept",
        );
    });

    it("given the simulated lab's, then they are the install's three CRDs, Established, created when the cluster started", () => {
        const kube = new FakeKube();
        kube.provide("CustomResourceDefinition", ARGOCD_CRD_NAMES, acceptedCrds());
        const crds = kube.list("CustomResourceDefinition");
        assert.deepStrictEqual(
            crds.map((c) => c.metadata.name),
            ARGOCD_CRD_NAMES,
        );
        for (const c of crds) {
            assert.ok(
                c.status!.conditions!.some((x: any) => x.type === "Established" && x.status === "True"),
                c.metadata.name,
            );
            assert.deepStrictEqual(c.spec.conversion, { strategy: "None" });
            assert.strictEqual(c.metadata.creationTimestamp, c.status!.conditions![0].lastTransitionTime);
        }
    });
});

describe("the simulated cluster saved to a file (simulate's resume)", function () {
    this.timeout(30_000);
    const cm = (v: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "saved", namespace: "default" }, data: { v } });
    const savedValue = (file: string) => {
        const k = new FakeKube();
        k.load(fs.readFileSync(file, "utf8"));
        return k.get("ConfigMap", "default", "saved")?.data?.v;
    };

    const saved = async (everyMs: number) => {
        const kube = new FakeKube();
        const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "persist-")), "cluster.json");
        kube.persistTo(file, everyMs);
        return { kube, file, base: await kube.start() };
    };

    it("given a change a client is answered about, then it is in the file before the answer; a stop saves the rest, and nothing after it", async () => {
        const { kube, file, base } = await saved(3_600_000); // the controllers' timer never fires here
        kube.put(cm("1"), "setup");
        // the answer's bytes come after the save: the file is read as soon as they arrive
        const seen = await new Promise<string | undefined>((resolve, reject) =>
            http
                .get(`${base}/api/v1/namespaces/default/configmaps/saved`, (res) =>
                    res.once("data", () => resolve(savedValue(file))).resume(),
                )
                .on("error", reject),
        );
        assert.strictEqual(seen, "1");
        kube.put(cm("2"), "a-controller");
        assert.strictEqual(savedValue(file), "1", "a controller's change no client heard of waits for the timer");
        await kube.stop();
        assert.strictEqual(savedValue(file), "2", "the stop saved it");
        fs.rmSync(file); // as a reset does after the stop
        kube.put(cm("3"), "a-controller");
        await kube.stop();
        assert.ok(!fs.existsSync(file), "nothing saved after the stop");
    });

    it("given a controller's own change, then it is saved within the interval", async () => {
        const { kube, file } = await saved(50);
        try {
            kube.put(cm("by-controller"), "a-controller");
            await expect(
                holds(
                    "the controller's change saved",
                    () => savedValue(file) === "by-controller",
                    () => savedValue(file),
                ),
                { timeoutMs: 10_000 },
            );
        } finally {
            await kube.stop();
        }
    });

    it("given a file that cannot be written, then a client's request fails with the reason (500) instead of hearing of an unsaved change", async () => {
        const { kube, file, base } = await saved(3_600_000);
        try {
            fs.rmSync(path.dirname(file), { recursive: true }); // the folder is gone: the next save fails
            kube.put(cm("unsaved"), "a-controller");
            const answer = await new Promise<{ code?: number; body: string }>((resolve, reject) =>
                http
                    .get(`${base}/api/v1/namespaces/default/configmaps/saved`, (res) => {
                        let body = "";
                        res.on("data", (d) => (body += d)).on("end", () => resolve({ code: res.statusCode, body }));
                    })
                    .on("error", reject),
            );
            assert.strictEqual(answer.code, 500);
            assert.match(
                JSON.parse(answer.body).message,
                /^the simulated cluster could not be saved: its folder \S+ is gone \(deleted while served\?\); stop this served lab \(Ctrl-C\) and build it again$/,
            );
        } finally {
            await kube.stop().catch(() => undefined); // its last save fails too
        }
    });
});

describe("the root lock (one simulate per root)", function () {
    this.timeout(30_000);

    it("given four processes taking the same locks at the same instant, then each lock has exactly one holder", async () => {
        // each child, once all are started, takes 500 locks in the same order as fast as it can, says which it
        // got, and stays alive (so no lock is judged stale) until its stdin ends
        const LOCKS = 500;
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lock-race-"));
        const script = `
            const { acquireLockFile } = require(${JSON.stringify(path.join(__dirname, "..", "lab", "ports", "lock"))});
            console.log("ready");
            process.stdin.once("data", () => {
                const got = [];
                for (let i = 0; i < ${LOCKS}; i++) {
                    try { acquireLockFile(require("path").join(process.argv[1], "l" + i), (pid) => "held by " + pid); got.push(i); }
                    catch (e) { if (!/^held by/.test(e.message)) { console.log(JSON.stringify({ error: e.message })); process.exit(1); } }
                }
                console.log(JSON.stringify({ got }));
            });`;
        const children = [0, 1, 2, 3].map(() =>
            spawn(process.execPath, ["-r", path.join(__dirname, "..", "loader", "register.js"), "-e", script, dir], {
                stdio: ["pipe", "pipe", "inherit"],
            }),
        );
        /** The child's next line on stdout. */
        const lines = children.map((child) => {
            let out = "";
            const waiting: ((line: string) => void)[] = [];
            const queued: string[] = [];
            child.stdout!.on("data", (d) => {
                out += d;
                for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
                    const line = out.slice(0, nl);
                    out = out.slice(nl + 1);
                    const w = waiting.shift();
                    if (w) w(line);
                    else queued.push(line);
                }
            });
            return () =>
                new Promise<string>((resolve, reject) => {
                    const q = queued.shift();
                    if (q !== undefined) return resolve(q);
                    waiting.push(resolve);
                    child.once("exit", (code) => reject(new Error(`a child ended (${code}) before answering`)));
                });
        });
        try {
            assert.deepStrictEqual(await Promise.all(lines.map((next) => next())), ["ready", "ready", "ready", "ready"]);
            for (const child of children) child.stdin!.write("go\n");
            const answers: { got?: number[]; error?: string }[] = (await Promise.all(lines.map((next) => next()))).map((l) =>
                JSON.parse(l),
            );
            for (const a of answers) assert.strictEqual(a.error, undefined);
            const holders = new Map<number, number>();
            for (const a of answers) for (const i of a.got!) holders.set(i, (holders.get(i) ?? 0) + 1);
            const wrong = [...Array(LOCKS).keys()].filter((i) => holders.get(i) !== 1);
            assert.deepStrictEqual(
                wrong.map((i) => `l${i}: ${holders.get(i) ?? 0} holders`),
                [],
            );
        } finally {
            for (const child of children) child.stdin!.end();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("given a lock held by a process killed but not yet reaped (a zombie), then the next run takes it over", async () => {
        // sh starts a child that ends a second later, and by then has become a sleep that never reaps
        // it: the child stays a zombie
        const parent = spawn("sh", ["-c", "sleep 1 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
        try {
            const zombie = await new Promise<number>((resolve) => parent.stdout!.once("data", (d) => resolve(Number(String(d).trim()))));
            const state = () => procStat(zombie)?.state;
            // reaped (no state) can never become a zombie: stop at once
            await expect(() =>
                state() === "Z"
                    ? succeeded("a zombie")
                    : state() === undefined
                      ? failed("the child was reaped")
                      : pending(`state ${state()}`),
            );
            const root = fs.mkdtempSync(path.join(os.tmpdir(), "lock-"));
            fs.writeFileSync(lockFile(root), `${zombie}\n`);
            const lock = acquireRootLock(root);
            try {
                assert.match(lock.note ?? "", new RegExp(`took over the lock of PID ${zombie}, which is gone`));
            } finally {
                lock.release();
            }
        } finally {
            parent.kill("SIGKILL");
        }
    });
});

describe("a root's lock whose PID another process has now", () => {
    it("is taken over (the start time tells them apart); the holder itself still holds it", async () => {
        const other = spawn("sleep", ["60"], { stdio: "ignore" });
        let root = fs.mkdtempSync(path.join(os.tmpdir(), "lock-reused-"));
        try {
            const started = procStat(other.pid!)!.startTime;
            // written by an earlier process with that PID, started at another time (a run killed, the PID given again)
            fs.writeFileSync(lockFile(root), `${other.pid}\n\n${started + 1}\n`);
            const lock = acquireRootLock(root);
            try {
                assert.match(
                    lock.note ?? "",
                    new RegExp(`took over the lock of PID ${other.pid}, which is gone \\(its PID now another process's\\)`),
                );
                assert.deepStrictEqual(fs.readFileSync(lockFile(root), "utf8").split("\n").slice(0, 3), [
                    String(process.pid),
                    "",
                    String(procStat(process.pid)!.startTime),
                ]);
                // what the holder says it does, rewritten whole
                lock.say("serving");
                assert.strictEqual(fs.readFileSync(lockFile(root), "utf8").split("\n")[1], "serving");
            } finally {
                lock.release();
            }
            assert.strictEqual(fs.existsSync(lockFile(root)), false);
            // a lock of the older form (no start time) written before that process started (an hour ago): gone too
            fs.writeFileSync(lockFile(root), `${other.pid}\n`);
            const hourAgo = new Date(Date.now() - 3_600_000);
            fs.utimesSync(lockFile(root), hourAgo, hourAgo);
            const older = acquireRootLock(root);
            try {
                assert.match(older.note ?? "", new RegExp(`took over the lock of PID ${other.pid}, which is gone`));
            } finally {
                older.release();
            }
            // the same PID with its own start time: held
            fs.writeFileSync(lockFile(root), `${other.pid}\n\n${started}\n`);
            assert.throws(() => acquireRootLock(root), new RegExp(`is in use by another gitops-lab simulate \\(PID ${other.pid}\\)`));
            // held by a run that is stopping (a signal, or its npx gone): said so, to be run again once it has ended
            fs.writeFileSync(lockFile(root), `${other.pid}\nstopping\n${started}\n`);
            assert.throws(
                () => acquireRootLock(root),
                new RegExp(
                    `is in use by a gitops-lab simulate that is stopping \\(PID ${other.pid}; it saves the simulated cluster and ends\\): run again in a few seconds, once it has ended$`,
                ),
            );
            // held by it in another folder (its device and inode), and copied here with that folder (cp -a of a served
            // root): not this one's
            const here = () => {
                const st = fs.statSync(root);
                return `${st.dev}:${st.ino}`;
            };
            fs.writeFileSync(lockFile(root), `${other.pid}\nserving\n${started}\n${fs.statSync(os.tmpdir()).dev}:1\n`);
            const copied = acquireRootLock(root);
            try {
                assert.match(
                    copied.note ?? "",
                    new RegExp(
                        `took over the lock copied here with this folder from another \\(PID ${other.pid} holds that one's, not this\\)`,
                    ),
                );
                assert.strictEqual(fs.readFileSync(lockFile(root), "utf8").split("\n")[3], here(), "the folder it is in");
            } finally {
                copied.release();
            }
            // in this folder, moved since (mv keeps its inode): held
            const written = here();
            const moved = `${root}-moved`;
            fs.renameSync(root, moved);
            root = moved;
            fs.writeFileSync(lockFile(root), `${other.pid}\n\n${started}\n${written}\n`);
            assert.throws(() => acquireRootLock(root), new RegExp(`is in use by another gitops-lab simulate \\(PID ${other.pid}\\)`));
        } finally {
            other.kill("SIGKILL");
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("a root's lock held by a suspended run", () => {
    it("says the run is suspended (fg it, or kill it), not to wait for its end", async () => {
        const child = spawn("sleep", ["60"], { stdio: "ignore" });
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "lock-stopped-"));
        try {
            child.kill("SIGSTOP");
            await expect(holds("the run suspended", () => procStat(child.pid!)?.state === "T"));
            fs.writeFileSync(lockFile(root), `${child.pid}\n`);
            assert.throws(
                () => acquireRootLock(root),
                new RegExp(
                    `is in use by a gitops-lab simulate that is suspended \\(PID ${child.pid}, Ctrl-Z\\?\\): fg it in its terminal, or kill ${child.pid}`,
                ),
            );
        } finally {
            child.kill("SIGKILL");
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("the simulated application controller's revision history, as v3.5.1's Test_appStateManager_persistRevisionHistory (controller/state_test.go)", () => {
    // given entries added one by one, then 10 are kept by default, the limit is followed up and down, a negative one
    // keeps none, and each id is the last one's + 1
    it("history keeps its limit, ids counting on", () => {
        const app: any = { spec: {}, status: {} };
        const add = (deployStartedAt = "") => {
            app.status.history = withRevisionHistory(app, { revision: "my-revision", deployStartedAt });
        };
        const lengths: number[] = [];
        for (let i = 0; i < 11; i++) {
            add();
            lengths.push(app.status.history.length);
        }
        assert.deepStrictEqual(lengths, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10], "default limit is 10");
        app.spec.revisionHistoryLimit = 11;
        add();
        assert.strictEqual(app.status.history.length, 11, "increase limit");
        app.spec.revisionHistoryLimit = 9;
        add();
        assert.strictEqual(app.status.history.length, 9, "decrease limit");
        add("2026-01-01T00:00:00Z");
        assert.strictEqual(app.status.history.at(-1).deployStartedAt, "2026-01-01T00:00:00Z");
        const ids = app.status.history.map((h: any) => h.id);
        assert.deepStrictEqual(ids, [5, 6, 7, 8, 9, 10, 11, 12, 13], "ids go on from the last one, past the cut");
        app.spec.revisionHistoryLimit = -1;
        add();
        assert.deepStrictEqual(app.status.history, [], "negative limit to 0");
    });
});
