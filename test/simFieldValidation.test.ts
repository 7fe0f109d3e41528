/**
 * What the simulated API server refuses or prunes of a custom resource, as apiextensions-apiserver
 * does: a field the CRD's schema does not declare (kubectl's strict field validation refuses it; a
 * client that asks for none gets it pruned with a warning; a server-side apply cannot type it) and a
 * name that is no DNS subdomain (a generated Application's too). The real kubectl against the served lab.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as http from "http";
import { stringify } from "yaml";
import { run, RunError } from "../lab/ports/exec";
import { shopApplicationSet } from "../lab/shop/appset";
import { installCrds } from "../sim/argoCrds";
import { FakeKube } from "../sim/fakeApi";
import { expect, holds } from "./helpers/expect";
import { labAt, LabAt } from "./helpers/labAt";

const APPSETS = "/apis/argoproj.io/v1alpha1/namespaces/argocd/applicationsets";

/** An ApplicationSet with `automated` one level too high: under its own spec.syncPolicy (the template's field). */
function automatedOnTheAppSet() {
    const set = shopApplicationSet();
    (set.spec as Record<string, unknown>).syncPolicy = { automated: { selfHeal: true } };
    return set;
}

describe("the simulated API server's field validation of custom resources", function () {
    this.timeout(120_000);
    let kube: FakeKube;
    let base: string;
    let dir: string;
    let kubeconfig: string;
    beforeEach(async () => {
        kube = new FakeKube();
        base = await kube.start();
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "fieldvalidation-"));
        kubeconfig = path.join(dir, "kubeconfig");
        fs.writeFileSync(kubeconfig, kube.kubeconfig(base));
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "argocd" } }, "setup");
    });
    afterEach(async () => {
        await kube.stop();
        fs.rmSync(dir, { recursive: true, force: true });
    });
    const kubectl = async (...args: string[]) => {
        try {
            const out = await run("kubectl", ["--kubeconfig", kubeconfig, ...args]);
            return { ok: true, out: out.stdout + out.stderr };
        } catch (e) {
            if (!(e instanceof RunError)) throw e;
            return { ok: false, out: e.stderr };
        }
    };
    const file = (name: string, obj: unknown) => {
        const f = path.join(dir, name);
        fs.writeFileSync(f, stringify(obj));
        return f;
    };
    const send = (method: string, p: string, body: unknown, ctype = "application/json") =>
        new Promise<{ code: number; body: { message?: string; spec?: Record<string, unknown> }; warning?: string | string[] }>(
            (resolve, reject) => {
                const req = http.request(`${base}${p}`, { method, headers: { "content-type": ctype } }, (res) => {
                    let text = "";
                    res.on("data", (d) => (text += d));
                    res.on("end", () => resolve({ code: res.statusCode ?? 0, body: JSON.parse(text), warning: res.headers.warning }));
                });
                req.on("error", reject);
                req.end(typeof body === "string" ? body : JSON.stringify(body));
            },
        );

    it("kubectl apply of an undeclared field is refused, naming it, and nothing is stored", async () => {
        const got = await kubectl("apply", "-f", file("appset.yaml", automatedOnTheAppSet()));
        assert.strictEqual(got.ok, false, got.out);
        assert.match(
            got.out,
            /ApplicationSet in version "v1alpha1" cannot be handled as a ApplicationSet: strict decoding error: unknown field "spec\.syncPolicy\.automated"/,
        );
        assert.strictEqual(kube.get("ApplicationSet", "argocd", "shop"), undefined);
    });

    it("a field of a later release (v3.6's oci generator) is refused by a cluster simulated as v3.5.1, and taken as v3.6.2", async () => {
        const set: { spec: { generators: unknown[] } } = shopApplicationSet() as never;
        set.spec.generators = [{ oci: { repoURL: "oci://registry.lab.internal/shop", revision: "1.0.0", directories: [{ path: "*" }] } }];
        kube.crds = () => installCrds("v3.5.1");
        const old = await kubectl("apply", "-f", file("appset.yaml", set));
        assert.strictEqual(old.ok, false, old.out);
        assert.match(old.out, /strict decoding error: unknown field "spec\.generators\[0\]\.oci"/);
        assert.strictEqual(kube.get("ApplicationSet", "argocd", "shop"), undefined);
        kube.crds = () => installCrds("v3.6.2");
        const now = await kubectl("apply", "-f", file("appset.yaml", set));
        assert.strictEqual(now.ok, true, now.out);
        assert.strictEqual(
            (kube.get("ApplicationSet", "argocd", "shop")!.spec!.generators as { oci?: object }[])[0].oci !== undefined,
            true,
        );
    });

    it("kubectl apply over a stored ApplicationSet with an undeclared field is refused, and the stored one kept", async () => {
        assert.strictEqual((await kubectl("apply", "-f", file("ok.yaml", shopApplicationSet()))).ok, true);
        const got = await kubectl("apply", "-f", file("appset.yaml", automatedOnTheAppSet()));
        assert.strictEqual(got.ok, false, got.out);
        // a merge patch: refused as the patch handler words it (422, the patched object as its value)
        assert.match(got.out, /patch: Invalid value: ".*": strict decoding error: unknown field "spec\.syncPolicy\.automated"/);
        assert.strictEqual(kube.get("ApplicationSet", "argocd", "shop")!.spec!.syncPolicy, undefined);
    });

    it("kubectl apply --validate=warn: the field pruned, and warned of; --validate=false: pruned silently", async () => {
        const warned = await kubectl("apply", "--validate=warn", "-f", file("appset.yaml", automatedOnTheAppSet()));
        assert.strictEqual(warned.ok, true, warned.out);
        assert.match(warned.out, /Warning: unknown field "spec\.syncPolicy\.automated"/);
        assert.deepStrictEqual(kube.get("ApplicationSet", "argocd", "shop")!.spec!.syncPolicy, {}, "not stored");
        const quiet = await kubectl(
            "apply",
            "--validate=false",
            "-f",
            file("other.yaml", { ...automatedOnTheAppSet(), metadata: { name: "quiet", namespace: "argocd" } }),
        );
        assert.strictEqual(quiet.ok, true, quiet.out);
        assert.doesNotMatch(quiet.out, /Warning/);
        assert.deepStrictEqual(kube.get("ApplicationSet", "argocd", "quiet")!.spec!.syncPolicy, {}, "not stored");
        const sent = await send("POST", `${APPSETS}?fieldValidation=Warn`, { ...automatedOnTheAppSet(), metadata: { name: "other" } });
        assert.strictEqual(sent.code, 201);
        assert.strictEqual(sent.warning, '299 - "unknown field \\"spec.syncPolicy.automated\\""');
        assert.deepStrictEqual(sent.body.spec!.syncPolicy, {}, "pruned from what is stored and answered");
    });

    it("a server-side apply of an undeclared field cannot be typed (500, as the API server answers it)", async () => {
        const got = await kubectl("apply", "--server-side", "-f", file("appset.yaml", automatedOnTheAppSet()));
        assert.strictEqual(got.ok, false, got.out);
        assert.match(
            got.out,
            /Error from server: failed to create typed patch object \(argocd\/shop; argoproj\.io\/v1alpha1, Kind=ApplicationSet\): \.spec\.syncPolicy\.automated: field not declared in schema/,
        );
        assert.strictEqual(kube.get("ApplicationSet", "argocd", "shop"), undefined);
    });

    it("a key ObjectMeta does not have (metadata.label for labels) is refused too", async () => {
        const set = shopApplicationSet();
        (set.metadata as unknown as Record<string, unknown>).label = { team: "blue" };
        const got = await kubectl("apply", "-f", file("appset.yaml", set));
        assert.strictEqual(got.ok, false, got.out);
        assert.match(got.out, /strict decoding error: unknown field "metadata\.label"/);
    });

    it("fields the schema keeps open are stored: a list element's own keys, labels", async () => {
        const set = shopApplicationSet();
        set.spec!.generators![0].list!.elements!.push({ env: "qa", team: "blue" } as never);
        set.spec!.template!.metadata!.labels = { team: "{{team}}" };
        assert.strictEqual((await kubectl("apply", "-f", file("appset.yaml", set))).ok, true);
        const stored = kube.get("ApplicationSet", "argocd", "shop")!;
        assert.deepStrictEqual(stored.spec!.generators![0].list!.elements!.at(-1), { env: "qa", team: "blue" });
        assert.deepStrictEqual(stored.spec!.template!.metadata!.labels, { team: "{{team}}" });
    });

    // not field validation, but the same server's answer to a kubectl habit: Argo CD's workloads are the simulate process
    it("kubectl rollout restart of argocd-repo-server is NotFound, saying why", async () => {
        const r = await kubectl("-n", "argocd", "rollout", "restart", "deployment", "argocd-repo-server");
        assert.ok(!r.ok, r.out);
        assert.match(
            r.out,
            /deployments\.apps "argocd-repo-server" not found \(the simulated cluster has no Argo CD or git daemon workloads: the simulate process runs them; a refresh is `kubectl -n argocd annotate app NAME argocd\.argoproj\.io\/refresh=normal`/,
        );
        const own = await kubectl("-n", "argocd", "rollout", "restart", "deployment", "site");
        assert.match(own.out, /deployments\.apps "site" not found\s*$/, "a name of the lab's own gets the API server's answer alone");
        const config = await kubectl("-n", "argocd", "get", "configmap", "argocd-cm");
        assert.match(config.out, /configmaps "argocd-cm" not found\s*$/, "a ConfigMap is no workload: the answer alone");
    });

    // given a Job running (not suspended), when its Pod template is patched, then 422 "field is immutable", nothing
    // stored (pkg/apis/batch/validation ValidateJobSpecUpdate); its backoffLimit may change
    it("a Job's Pod template is immutable; its backoffLimit is not", async () => {
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "mandant-b" } }, "setup");
        const template = { spec: { restartPolicy: "Never", containers: [{ name: "setup", image: "site:1.2.0", command: ["/setup"] }] } };
        kube.put(
            {
                apiVersion: "batch/v1",
                kind: "Job",
                metadata: { name: "site-setup", namespace: "mandant-b" },
                spec: { backoffLimit: 1, template },
            },
            "setup",
        );
        const patchJob = (patch: object) =>
            kubectl("-n", "mandant-b", "patch", "job", "site-setup", "--type", "merge", "-p", JSON.stringify(patch));
        const got = await patchJob({ spec: { template: { spec: { containers: [{ name: "setup", command: ["/bin/true"] }] } } } });
        assert.strictEqual(got.ok, false, got.out);
        assert.match(
            got.out,
            /The Job "site-setup" is invalid: spec\.template: Invalid value: core\.PodTemplateSpec\{…\}: field is immutable/,
        );
        assert.deepStrictEqual((kube.get("Job", "mandant-b", "site-setup") as any).spec.template, template);
        const limit = await patchJob({ spec: { backoffLimit: 3 } });
        assert.ok(limit.ok, limit.out);
        assert.strictEqual((kube.get("Job", "mandant-b", "site-setup") as any).spec.backoffLimit, 3);
    });

    // given a name that is no DNS label (a Namespace's) or subdomain (any other kind's), when created, then 422 Invalid
    // with the API server's words (ValidateObjectMeta's NameIsDNSLabel / NameIsDNSSubdomain), nothing stored
    it("a Namespace named shop_dev, a ConfigMap named Bad_Name: refused as the API server refuses them", async () => {
        const ns = await kubectl("apply", "-f", file("ns.yaml", { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop_dev" } }));
        assert.strictEqual(ns.ok, false, ns.out);
        assert.match(
            ns.out,
            /The Namespace "shop_dev" is invalid: metadata\.name: Invalid value: "shop_dev": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'/,
        );
        assert.strictEqual(kube.get("Namespace", undefined, "shop_dev"), undefined);
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop-dev" } }, "setup");
        const cm = await kubectl(
            "apply",
            "-f",
            file("cm.yaml", {
                apiVersion: "v1",
                kind: "ConfigMap",
                metadata: { name: "Bad_Name", namespace: "shop-dev" },
                data: { a: "b" },
            }),
        );
        assert.match(
            cm.out,
            /The ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
        );
    });

    // given a ConfigMap stored with immutable: true, when its data is patched, then 422 Forbidden, nothing stored
    // (pkg/apis/core/validation ValidateConfigMapUpdate); its labels may change
    it("an immutable ConfigMap's data cannot change; its labels can", async () => {
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop-prod" } }, "setup");
        const data = { FEATURE_CHECKOUT_V2: "off", LOG_LEVEL: "info" };
        kube.put(
            { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "shop-config", namespace: "shop-prod" }, immutable: true, data },
            "setup",
        );
        const patch = (p: object) =>
            kubectl("-n", "shop-prod", "patch", "configmap", "shop-config", "--type", "merge", "-p", JSON.stringify(p));
        const got = await patch({ data: { LOG_LEVEL: "debug" } });
        assert.strictEqual(got.ok, false, got.out);
        assert.match(got.out, /The ConfigMap "shop-config" is invalid: data: Forbidden: field is immutable when `immutable` is set/);
        assert.deepStrictEqual((kube.get("ConfigMap", "shop-prod", "shop-config") as any).data, data);
        const flag = await patch({ immutable: false });
        assert.match(flag.out, /immutable: Forbidden: field is immutable when `immutable` is set/);
        const labels = await patch({ metadata: { labels: { team: "blue" } } });
        assert.ok(labels.ok, labels.out);
    });

    // given an ApplicationSet's Application, when the ApplicationSet is deleted with --cascade=orphan, then the
    // Application stays without its owner reference; a plain delete takes it with it (the garbage collector)
    it("kubectl delete --cascade=orphan keeps the dependents", async () => {
        const owner = (name: string) =>
            kube.put(
                { apiVersion: "argoproj.io/v1alpha1", kind: "ApplicationSet", metadata: { name, namespace: "argocd" }, spec: {} },
                "setup",
            );
        const dependent = (name: string, set: { metadata: { name: string; uid?: string } }) =>
            kube.put(
                {
                    apiVersion: "argoproj.io/v1alpha1",
                    kind: "Application",
                    metadata: {
                        name,
                        namespace: "argocd",
                        ownerReferences: [
                            { apiVersion: "argoproj.io/v1alpha1", kind: "ApplicationSet", name: set.metadata.name, uid: set.metadata.uid! },
                        ],
                    },
                    spec: { project: "default", destination: { namespace: name }, source: { repoURL: "git://gitd/x.git", path: "." } },
                },
                "setup",
            );
        dependent("kept", owner("tenants"));
        const orphaned = await kubectl("-n", "argocd", "delete", "applicationset", "tenants", "--cascade=orphan");
        assert.ok(orphaned.ok, orphaned.out);
        assert.strictEqual(kube.get("ApplicationSet", "argocd", "tenants"), undefined);
        const kept = kube.get("Application", "argocd", "kept");
        assert.ok(kept, "the Application stays");
        assert.deepStrictEqual(kept.metadata.ownerReferences, undefined);
        dependent("collected", owner("shop"));
        const plain = await kubectl("-n", "argocd", "delete", "applicationset", "shop");
        assert.ok(plain.ok, plain.out);
        assert.strictEqual(kube.get("Application", "argocd", "collected"), undefined);
    });

    it("an Application whose name is no DNS subdomain is refused (422)", async () => {
        const app = {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Application",
            metadata: { name: "shop-{{env}}", namespace: "argocd" },
            spec: {
                project: "default",
                destination: { server: "https://kubernetes.default.svc", namespace: "shop" },
                source: { repoURL: "git://gitd/shop-envs.git", path: "." },
            },
        };
        const got = await kubectl("apply", "-f", file("app.yaml", app));
        assert.strictEqual(got.ok, false, got.out);
        assert.match(
            got.out,
            /The Application "shop-\{\{env\}\}" is invalid: metadata\.name: Invalid value: "shop-\{\{env\}\}": a lowercase RFC 1123 subdomain/,
        );
        assert.deepStrictEqual(kube.list("Application", "argocd"), []);
    });
});

describe("the simulated API server's dry runs (kubectl --dry-run=server, kubectl diff)", function () {
    this.timeout(120_000);
    let kube: FakeKube;
    let dir: string;
    let kubectl: (...args: string[]) => Promise<{ ok: boolean; out: string; code?: number | string }>;
    beforeEach(async () => {
        kube = new FakeKube();
        const base = await kube.start();
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "dryrun-"));
        const kubeconfig = path.join(dir, "kubeconfig");
        fs.writeFileSync(kubeconfig, kube.kubeconfig(base));
        kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "argocd" } }, "setup");
        kube.put(shopApplicationSet(), "setup");
        kubectl = async (...args) => {
            try {
                const out = await run("kubectl", ["--kubeconfig", kubeconfig, ...args]);
                return { ok: true, out: out.stdout + out.stderr };
            } catch (e) {
                if (!(e instanceof RunError)) throw e;
                return { ok: false, out: e.stdout + e.stderr, code: e.code };
            }
        };
    });
    afterEach(async () => {
        await kube.stop();
        fs.rmSync(dir, { recursive: true, force: true });
    });
    const file = (obj: unknown) => {
        const f = path.join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
        fs.writeFileSync(f, stringify(obj));
        return f;
    };
    const pinned = () => {
        const set = shopApplicationSet();
        set.spec!.generators![0].list!.elements![1] = { env: "prod", revision: "release/prod" } as never;
        return set;
    };
    const prodRevision = () => JSON.stringify(kube.get("ApplicationSet", "argocd", "shop")!.spec!.generators![0].list!.elements![1]);

    it("kubectl diff shows the change and stores nothing", async () => {
        const before = prodRevision();
        const rv = kube.get("ApplicationSet", "argocd", "shop")!.metadata.resourceVersion;
        const got = await kubectl("diff", "-f", file(pinned()));
        assert.strictEqual(got.ok, false, "kubectl diff exits 1 when there is a difference");
        assert.match(got.out, /^\+\s+revision: release\/prod$/m);
        assert.strictEqual(prodRevision(), before, "the live ApplicationSet is as it was");
        assert.strictEqual(kube.get("ApplicationSet", "argocd", "shop")!.metadata.resourceVersion, rv, "not even written again");
    });

    it("kubectl apply, create and delete --dry-run=server answer as the write would, and change nothing", async () => {
        const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "trial-dry" } };
        const created = await kubectl("apply", "--dry-run=server", "-f", file(ns));
        assert.strictEqual(created.ok, true, created.out);
        assert.match(created.out, /namespace\/trial-dry created \(server dry run\)/);
        assert.strictEqual(kube.get("Namespace", undefined, "trial-dry"), undefined);
        const before = prodRevision();
        const applied = await kubectl("apply", "--dry-run=server", "-f", file(pinned()));
        assert.match(applied.out, /applicationset\.argoproj\.io\/shop configured \(server dry run\)/);
        assert.strictEqual(prodRevision(), before);
        const deleted = await kubectl("delete", "--dry-run=server", "-n", "argocd", "applicationset", "shop");
        assert.match(deleted.out, /deleted \(server dry run\)/);
        assert.ok(kube.get("ApplicationSet", "argocd", "shop"), "still there");
        assert.strictEqual(kube.get("ApplicationSet", "argocd", "shop")!.metadata.deletionTimestamp, undefined);
        // a namespace: answered as a delete is, and left as it is
        const nsDelete = await kubectl("delete", "--dry-run=server", "namespace", "argocd");
        assert.match(nsDelete.out, /namespace "argocd" deleted \(server dry run\)/);
        assert.strictEqual(kube.get("Namespace", undefined, "argocd")!.metadata.deletionTimestamp, undefined);
    });

    it("a dry run still answers what the write would be refused for", async () => {
        const set: { spec: Record<string, unknown> } = shopApplicationSet() as never;
        set.spec.syncPolicy = { automated: {} };
        const got = await kubectl("apply", "--dry-run=server", "-f", file(set));
        assert.strictEqual(got.ok, false, got.out);
        assert.match(got.out, /strict decoding error: unknown field "spec\.syncPolicy\.automated"/);
    });
});

describe("Argo CD simulation: a generated Application the API server refuses", function () {
    this.timeout(60_000);
    let at: LabAt;
    beforeEach(async () => (at = await labAt(1)));
    afterEach(async () => at.stop());

    it("an element without the template's key: its Application is not created, the ApplicationSet says why", async () => {
        const set = shopApplicationSet();
        set.spec!.generators![0].list!.elements!.push({ enviroment: "qa" } as never);
        at.lab.kube.put(set, "client");
        const appset = () => at.lab.kube.get("ApplicationSet", "argocd", "shop");
        await expect(
            holds(
                "ErrorOccurred: UpdateApplicationError with the API server's 422",
                () =>
                    !!appset()?.status?.conditions?.some(
                        (c) =>
                            c.type === "ErrorOccurred" &&
                            c.status === "True" &&
                            c.reason === "UpdateApplicationError" &&
                            (c.message ?? "").startsWith('Application.argoproj.io "shop-{{env}}" is invalid: metadata.name: Invalid value'),
                    ),
                () => appset()?.status,
            ),
        );
        assert.deepStrictEqual(
            at.lab.kube
                .list("Application", "argocd")
                .map((a) => a.metadata.name)
                .sort(),
            ["shop-dev", "shop-prod"],
            "the others are created; none named {{env}}",
        );
    });
});
