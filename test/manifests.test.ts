/** The manifests the lab generates, checked against Argo CD v3.5.1's own schemas and install. */
import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { parse, parseAllDocuments } from "yaml";
import { run } from "../lab/ports/exec";
import { REPO_URL } from "../lab/shop/layout";
import {
    argoCdCmdParams,
    argoCdInstallDir,
    ARGOCD_RELEASES,
    ARGOCD_VERSIONS,
    ARGOCD_WORKLOADS,
    PROGRESSIVE_SYNCS_KEY,
} from "../lab/platform/argocd";
import { toYaml } from "../lab/ports/files";
import { listElements, shopApplicationSet } from "../lab/shop/appset";
import { appsetFileContent } from "../lab/shop/appset";
import { crdValidator } from "./helpers/upstream";

describe("the shop ApplicationSet (step 2)", () => {
    const validate = crdValidator("ApplicationSet");

    it("validates against the ApplicationSet CRD schema of v3.5.1", () => {
        assert.deepStrictEqual(validate(shopApplicationSet()), []);
        assert.deepStrictEqual(
            validate(
                parse(
                    appsetFileContent(shopApplicationSet(), [
                        { env: "dev", revision: "main" },
                        { env: "prod", revision: "release/prod" },
                    ]),
                ),
            ),
            [],
        );
    });

    it("the validator rejects what the CRD rejects (a number where a string belongs, missing required fields)", () => {
        const bad: any = shopApplicationSet();
        bad.spec.template.spec.source.targetRevision = 5;
        assert.ok(
            validate(bad).some((e) => e.includes("targetRevision")),
            "targetRevision must be a string",
        );
        const missing: any = shopApplicationSet();
        delete missing.spec.template.spec.destination;
        delete missing.spec.template.spec.project;
        assert.ok(validate(missing).length > 0, "template.spec.project and destination are required");
    });

    it("is exactly what step 2 specifies, field by field", () => {
        const a: any = shopApplicationSet();
        assert.strictEqual(a.apiVersion, "argoproj.io/v1alpha1");
        assert.strictEqual(a.kind, "ApplicationSet");
        assert.deepStrictEqual(a.metadata, { name: "shop", namespace: "argocd" });
        assert.deepStrictEqual(a.spec.generators, [
            {
                list: {
                    elements: [
                        { env: "dev", revision: "main" },
                        { env: "prod", revision: "main" },
                    ],
                },
            },
        ]);
        for (const el of a.spec.generators[0].list.elements) for (const v of Object.values(el)) assert.strictEqual(typeof v, "string");
        assert.strictEqual(a.spec.goTemplate, undefined, "fasttemplate {{...}} as in Argo CD's list example");
        assert.deepStrictEqual(a.spec.template, {
            metadata: { name: "shop-{{env}}" },
            spec: {
                project: "default",
                source: { repoURL: REPO_URL, targetRevision: "{{revision}}", path: "envs/{{env}}" },
                destination: { server: "https://kubernetes.default.svc", namespace: "shop-{{env}}" },
                syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ["CreateNamespace=true"] },
            },
        });
        assert.strictEqual(REPO_URL, "git://gitd.gitsrv.svc.cluster.local:9418/shop-envs.git");
    });

    it("appset.yaml is the applied manifest, with the live elements", () => {
        const text = appsetFileContent(shopApplicationSet(), [
            { env: "dev", revision: "main" },
            { env: "prod", revision: "release/prod" },
        ]);
        const back = parse(text);
        assert.deepStrictEqual(back.spec.template, shopApplicationSet().spec?.template);
        assert.deepStrictEqual(back.spec.generators[0].list.elements[1], { env: "prod", revision: "release/prod" });
        assert.strictEqual(toYaml(shopApplicationSet()), appsetFileContent(shopApplicationSet(), listElements(shopApplicationSet())));
    });
});

for (const version of ARGOCD_VERSIONS)
    describe(`the Argo CD ${version} install, as the ArgoCd component applies it`, function () {
        this.timeout(120_000);
        const overlayDir = argoCdInstallDir(version);
        let rendered: any[];

        before(async () => {
            // the component's own kustomization, as it is: it names the shipped install.yaml, nothing remote
            const { stdout } = await run("kubectl", ["kustomize", overlayDir]);
            rendered = [
                argoCdCmdParams(),
                ...parseAllDocuments(stdout)
                    .map((d) => d.toJSON())
                    .filter(Boolean),
            ];
        });

        it("pins the version: upstream's install.yaml at the tag, nothing fetched", () => {
            const digest = createHash("sha256")
                .update(fs.readFileSync(path.join(overlayDir, "install.yaml")))
                .digest("hex");
            assert.strictEqual(digest, ARGOCD_RELEASES[version].installSha256);
            const kustomization = parse(fs.readFileSync(path.join(overlayDir, "kustomization.yaml"), "utf8"));
            assert.deepStrictEqual(kustomization.resources, ["install.yaml"]);
            const images = rendered
                .filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet")
                .flatMap((o) => o.spec.template.spec.containers.map((c: any) => c.image));
            const argocd = images.filter((i) => i.startsWith("quay.io/argoproj/argocd:"));
            assert.ok(argocd.length > 0, images.join(", "));
            assert.deepStrictEqual([...new Set(argocd)], [`quay.io/argoproj/argocd:${version}`], "every Argo CD image at the version");
        });

        it("has argocd-cmd-params-cm exactly once, with progressive syncs on", () => {
            const cms = rendered.filter((o) => o.kind === "ConfigMap" && o.metadata.name === "argocd-cmd-params-cm");
            assert.strictEqual(cms.length, 1, "the upstream copy is deleted by the overlay; the component's own copy remains");
            assert.strictEqual(cms[0].data[PROGRESSIVE_SYNCS_KEY], "true");
            assert.strictEqual(cms[0].metadata.namespace, "argocd");
        });

        it("the ApplicationSet controller reads the key from that ConfigMap", () => {
            const ctrl = rendered.find((o) => o.kind === "Deployment" && o.metadata.name === "argocd-applicationset-controller");
            const env = ctrl.spec.template.spec.containers[0].env.find(
                (e: any) => e.valueFrom?.configMapKeyRef?.key === PROGRESSIVE_SYNCS_KEY,
            );
            assert.strictEqual(env?.valueFrom.configMapKeyRef.name, "argocd-cmd-params-cm");
        });

        it("contains the three CRDs and the controllers the lab waits for", () => {
            const crds = rendered
                .filter((o) => o.kind === "CustomResourceDefinition")
                .map((o) => o.metadata.name)
                .sort();
            assert.deepStrictEqual(crds, ["applications.argoproj.io", "applicationsets.argoproj.io", "appprojects.argoproj.io"]);
            for (const w of ARGOCD_WORKLOADS) {
                assert.ok(
                    rendered.some((o) => o.kind === w.kind && o.metadata.name === w.name),
                    `${w.kind}/${w.name}`,
                );
            }
        });

        it("puts every namespaced object in argocd", () => {
            const clusterScoped = new Set(["CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Namespace"]);
            const namespaced = rendered.filter((o) => !clusterScoped.has(o.kind));
            assert.ok(namespaced.length > 20);
            const elsewhere = namespaced.filter((o) => o.metadata.namespace !== "argocd").map((o) => `${o.kind}/${o.metadata.name}`);
            assert.deepStrictEqual(elsewhere, []);
        });
    });
