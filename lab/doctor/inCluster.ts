/**
 * The rollout doctor in the cluster: `doctor --watch` as a Deployment of a pinned Node image, the
 * doctor itself a one-file bundle in a ConfigMap (gzipped: no image of our own to build or push),
 * with a ServiceAccount whose ClusterRole allows only what the doctor does, and a Service for
 * its /metrics. Plain objects; components/rolloutDoctor.ts applies them.
 */
import { CREATED_BY } from "../platform/found";
import type { KubeObject } from "../argo/types";
import { APPSET_METRICS } from "../argo/appsetMetrics";

/** The Node image that runs the bundle (the runtime the project is tested on: Node 20). Pinned by tag, not digest (pin a digest for bit-for-bit repeatability). */
export const DOCTOR_NODE_IMAGE = "docker.io/library/node:20.19.5-alpine3.22";
export const DOCTOR_NAMESPACE = "rollout-doctor";
export const DOCTOR_NAME = "rollout-doctor";
export const DOCTOR_METRICS_PORT = 9464;
/** The bundle's file name in the ConfigMap (gzip of the esbuild output). */
export const BUNDLE_KEY = "doctor.js.gz";

/**
 * Exactly what the doctor does, nothing else: read ApplicationSets and Applications (its live
 * read; watch for informers), list Jobs and Pods (only in the namespaces of Applications that are
 * not Healthy), read a failed hook Pod's log, and post Events on an ApplicationSet.
 */
export const DOCTOR_RBAC_RULES = [
    { apiGroups: ["argoproj.io"], resources: ["applicationsets", "applications"], verbs: ["get", "list", "watch"] },
    { apiGroups: ["argoproj.io"], resources: ["appprojects"], verbs: ["list"] },
    { apiGroups: ["batch"], resources: ["jobs"], verbs: ["list"] },
    { apiGroups: [""], resources: ["pods"], verbs: ["list"] },
    { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create"] },
];

/**
 * And in Argo CD's namespace only, by a Role of its own: read the ApplicationSet controller's
 * /metrics through the API server's service proxy (3.6's progressive-sync series, the doctor's
 * evidence). A proxy request's name is the URL's `service:port`: only the metrics port is named.
 */
export const DOCTOR_METRICS_RULES = [
    {
        apiGroups: [""],
        resources: ["services/proxy"],
        resourceNames: [APPSET_METRICS.service],
        verbs: ["get"],
    },
];

export interface DoctorManifestOptions {
    /** The gzipped bundle, base64 (binaryData of the ConfigMap). */
    bundleGzBase64: string;
    /** A digest of the bundle: a new bundle rolls the Deployment. */
    bundleDigest: string;
    namespace?: string;
    image?: string;
    /** Seconds between two rounds (default 30). */
    intervalSeconds?: number;
    /** A step with no progress for longer is stuck (default 600). */
    stuckAfterSeconds?: number;
}

const labels = { "app.kubernetes.io/name": DOCTOR_NAME, "app.kubernetes.io/part-of": "gitops-lab" };

export function rolloutDoctorManifests(o: DoctorManifestOptions): KubeObject[] {
    const ns = o.namespace ?? DOCTOR_NAMESPACE;
    const meta = (name: string, namespaced = true) => ({ name, ...(namespaced ? { namespace: ns } : {}), labels });
    const args = [
        "--watch",
        "--interval",
        String(o.intervalSeconds ?? 30),
        "--stuck-after",
        String(o.stuckAfterSeconds ?? 600),
        "--metrics-port",
        String(DOCTOR_METRICS_PORT),
    ];
    return [
        {
            apiVersion: "v1",
            kind: "Namespace",
            metadata: { ...meta(ns, false), labels: { ...labels, [CREATED_BY.key]: CREATED_BY.value } },
        },
        { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(DOCTOR_NAME) },
        { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: meta(DOCTOR_NAME, false), rules: DOCTOR_RBAC_RULES },
        {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: meta(DOCTOR_NAME, false),
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: DOCTOR_NAME },
            subjects: [{ kind: "ServiceAccount", name: DOCTOR_NAME, namespace: ns }],
        },
        {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "Role",
            metadata: { name: `${DOCTOR_NAME}-metrics`, namespace: APPSET_METRICS.namespace, labels },
            rules: DOCTOR_METRICS_RULES,
        },
        {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name: `${DOCTOR_NAME}-metrics`, namespace: APPSET_METRICS.namespace, labels },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: `${DOCTOR_NAME}-metrics` },
            subjects: [{ kind: "ServiceAccount", name: DOCTOR_NAME, namespace: ns }],
        },
        { apiVersion: "v1", kind: "ConfigMap", metadata: meta(`${DOCTOR_NAME}-bundle`), binaryData: { [BUNDLE_KEY]: o.bundleGzBase64 } },
        {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: meta(DOCTOR_NAME),
            spec: {
                replicas: 1,
                // one watching doctor at a time, even while a new bundle rolls out: each posts its own Events
                strategy: { type: "Recreate" },
                selector: { matchLabels: { "app.kubernetes.io/name": DOCTOR_NAME } },
                template: {
                    metadata: { labels, annotations: { "gitops-lab/bundle-digest": o.bundleDigest } },
                    spec: {
                        serviceAccountName: DOCTOR_NAME,
                        securityContext: {
                            runAsNonRoot: true,
                            runAsUser: 1000,
                            runAsGroup: 1000,
                            seccompProfile: { type: "RuntimeDefault" },
                        },
                        containers: [
                            {
                                name: "doctor",
                                image: o.image ?? DOCTOR_NODE_IMAGE,
                                // the bundle is gzipped to fit a ConfigMap (1 MiB); unpacked into an emptyDir, run by plain node
                                command: [
                                    "/bin/sh",
                                    "-c",
                                    `gunzip -c /opt/doctor/${BUNDLE_KEY} > /work/doctor.js && exec node /work/doctor.js "$@"`,
                                    "doctor",
                                ],
                                args,
                                ports: [{ name: "metrics", containerPort: DOCTOR_METRICS_PORT }],
                                readinessProbe: { httpGet: { path: "/metrics", port: "metrics" }, periodSeconds: 10 },
                                resources: { requests: { cpu: "20m", memory: "96Mi" }, limits: { memory: "384Mi" } },
                                securityContext: {
                                    allowPrivilegeEscalation: false,
                                    readOnlyRootFilesystem: true,
                                    capabilities: { drop: ["ALL"] },
                                },
                                volumeMounts: [
                                    { name: "bundle", mountPath: "/opt/doctor", readOnly: true },
                                    { name: "work", mountPath: "/work" },
                                ],
                            },
                        ],
                        volumes: [
                            { name: "bundle", configMap: { name: `${DOCTOR_NAME}-bundle` } },
                            { name: "work", emptyDir: { sizeLimit: "32Mi" } },
                        ],
                    },
                },
            },
        },
        {
            apiVersion: "v1",
            kind: "Service",
            metadata: meta(DOCTOR_NAME),
            spec: {
                selector: { "app.kubernetes.io/name": DOCTOR_NAME },
                ports: [{ name: "metrics", port: DOCTOR_METRICS_PORT, targetPort: "metrics" }],
            },
        },
    ];
}
