import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { gzipSync } from "zlib";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";
import { DOCTOR_METRICS_PORT, DOCTOR_NAME, DOCTOR_NAMESPACE, rolloutDoctorManifests } from "../lab/doctor/inCluster";
import { labModule, PROJECT_DIR } from "../program/labModule";
import type { CustomObject } from "../lab/ports/cluster";

export interface RolloutDoctorArgs {
    /** The cluster's kubeconfig (secret); the PrometheusRule's check reads the cluster with it. */
    kubeconfig: pulumi.Input<string>;
    /** The Kubernetes provider of the cluster. */
    provider: k8s.Provider;
    /** The namespace the doctor runs in (default rollout-doctor). */
    namespace?: string;
    /** The Node image that runs the bundle (default the pinned node:20 alpine). */
    image?: string;
    /** Seconds between two rounds of the doctor (default 30). */
    intervalSeconds?: number;
    /** A step with no progress for longer is stuck (default 600). */
    stuckAfterSeconds?: number;
    /** What must exist first (Argo CD: its CRDs). */
    after?: pulumi.Resource[];
    /** The namespace was in the adopted cluster before this stack: used, not created, never removed. */
    namespaceFound?: boolean;
}

let bundled: { js: string; gzBase64: string; digest: string } | undefined;

/**
 * The doctor as one JavaScript file (esbuild, from cli/doctorMain.ts: the doctor alone, no Pulumi),
 * gzipped. Built in memory when the program runs: a preview writes nothing on the host. Built once a
 * process (about 2 s of CPU with the gzip): its sources do not change while it runs.
 */
export function doctorBundle(): { js: string; gzBase64: string; digest: string } {
    return (bundled ??= buildDoctorBundle());
}

function buildDoctorBundle(): { js: string; gzBase64: string; digest: string } {
    const esbuild: typeof import("esbuild") = require("esbuild");
    const out = esbuild.buildSync({
        entryPoints: [path.join(PROJECT_DIR, "cli", "doctorMain.ts")],
        bundle: true,
        platform: "node",
        target: "node20",
        format: "cjs",
        minify: true,
        write: false,
        logLevel: "silent",
        legalComments: "none",
    });
    const js = out.outputFiles[0].text;
    return {
        js,
        gzBase64: gzipSync(Buffer.from(js), { level: 9 }).toString("base64"),
        digest: createHash("sha256").update(js).digest("hex").slice(0, 16),
    };
}

/** What the engine stores for the PrometheusRule: the rule, and the cluster to check for its CRD. */
export interface PrometheusRuleInputs {
    kubeconfig: string;
    rule: CustomObject;
}
export type PrometheusRuleOutputs = PrometheusRuleInputs & { applied: boolean };

const PROMETHEUS_RULE_CRD = "prometheusrules.monitoring.coreos.com";

/** Applies the rule only where the Prometheus Operator's CRD exists; elsewhere the rule stays a file (lab/doctor/prometheusrule.yaml). */
async function applyRule(inputs: PrometheusRuleInputs): Promise<{ id: string; outs: PrometheusRuleOutputs }> {
    {
        const { KubeCluster } = labModule(PROJECT_DIR, "cluster");
        const cluster = new KubeCluster(inputs.kubeconfig);
        const m = inputs.rule.metadata;
        if (!(await cluster.hasCrd(PROMETHEUS_RULE_CRD))) {
            console.log(
                `[rollout-doctor] no ${PROMETHEUS_RULE_CRD} in the cluster: the PrometheusRule is not applied; it stays in lab/doctor/prometheusrule.yaml for when the Prometheus Operator is installed`,
            );
            return { id: `${m.namespace}/${m.name}`, outs: { ...inputs, applied: false } };
        }
        await cluster.putCustomObject(inputs.rule, "prometheusrules");
        console.log(`[rollout-doctor] applied PrometheusRule ${m.namespace}/${m.name}`);
        return { id: `${m.namespace}/${m.name}`, outs: { ...inputs, applied: true } };
    }
}

export const prometheusRuleProvider: pulumi.dynamic.ResourceProvider<PrometheusRuleInputs, PrometheusRuleOutputs> = {
    // (the methods call module functions, never the provider object: it is not in the serialized closure)
    create: applyRule,
    async update(_id, _olds, news) {
        return { outs: (await applyRule(news)).outs };
    },
    async delete(_id, props) {
        if (!props.applied) return;
        const { KubeCluster } = labModule(PROJECT_DIR, "cluster");
        const m = props.rule.metadata;
        await new KubeCluster(props.kubeconfig).deleteCustomObject(props.rule.apiVersion, "prometheusrules", m.namespace, m.name);
    },
};

class PrometheusRuleIfCrd extends pulumi.dynamic.Resource {
    declare readonly applied: pulumi.Output<boolean>;
    constructor(name: string, args: { kubeconfig: pulumi.Input<string>; rule: CustomObject }, opts?: pulumi.CustomResourceOptions) {
        super(prometheusRuleProvider, name, { ...args, applied: undefined }, opts);
    }
}

/**
 * The rollout doctor in the cluster (`doctor --watch`): a Deployment of a pinned Node image running
 * the doctor's one-file bundle from a ConfigMap, a ServiceAccount with least-privilege RBAC, a
 * Service for /metrics, and the PrometheusRule where its CRD exists. Enabled with the tenants lab,
 * usable alone against any cluster with Argo CD.
 */
export class RolloutDoctor extends pulumi.ComponentResource {
    readonly namespace: pulumi.Output<string>;
    /** `namespace/service:port` of the metrics endpoint. */
    readonly metricsService: pulumi.Output<string>;
    /** Whether the PrometheusRule was applied (false: no Prometheus Operator CRD). */
    readonly prometheusRuleApplied: pulumi.Output<boolean>;

    constructor(name: string, args: RolloutDoctorArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:RolloutDoctor", name, {}, opts);
        const ns = args.namespace ?? DOCTOR_NAMESPACE;
        const bundle = doctorBundle();
        const objs = rolloutDoctorManifests({
            bundleGzBase64: bundle.gzBase64,
            bundleDigest: bundle.digest,
            namespace: ns,
            image: args.image,
            intervalSeconds: args.intervalSeconds,
            stuckAfterSeconds: args.stuckAfterSeconds,
        });
        const owned = args.namespaceFound ? objs.filter((o) => o.kind !== "Namespace") : objs;
        const manifests = new k8s.yaml.v2.ConfigGroup(
            `${name}-manifests`,
            { objs: owned },
            { parent: this, provider: args.provider, dependsOn: args.after },
        );
        // the project's own file (test/rolloutDoctor.test.ts checks its shape)
        const rule = parse(fs.readFileSync(path.join(PROJECT_DIR, "lab", "doctor", "prometheusrule.yaml"), "utf8")) as CustomObject;
        const prometheusRule = new PrometheusRuleIfCrd(
            `${name}-prometheusrule`,
            { kubeconfig: args.kubeconfig, rule },
            { parent: this, dependsOn: [manifests, ...(args.after ?? [])], additionalSecretOutputs: ["kubeconfig"] },
        );
        this.namespace = pulumi.output(ns);
        this.metricsService = pulumi.output(`${ns}/${DOCTOR_NAME}:${DOCTOR_METRICS_PORT}`);
        this.prometheusRuleApplied = prometheusRule.applied;
        this.registerOutputs({
            namespace: this.namespace,
            metricsService: this.metricsService,
            prometheusRuleApplied: this.prometheusRuleApplied,
        });
    }
}
