/**
 * The objects the simulated API server stores, by kind: the product's read shapes (lab/argo/types.ts)
 * with the fields the simulated controllers and kubelet write besides (a Job's selector and Pod
 * template, a Pod's volumes and container times, an Application's sync revisions). A kind the
 * simulation only stores and serves (a CRD, a PrometheusRule) is a StoredObject: its fields as written.
 */
import type {
    Application,
    ApplicationSet,
    AppProject,
    ConfigMap,
    ContainerState,
    ContainerStatus,
    CoreCondition,
    Job,
    KubeEvent,
    Namespace,
    ObjectMeta,
    Pod,
    Workload,
} from "../lab/argo/types";

/** Any stored object: its kind and metadata (the store always sets them), the rest as written. */
export interface StoredObject {
    apiVersion?: string;
    kind?: string;
    metadata: ObjectMeta;
    [field: string]: unknown;
}

export interface VolumeMount {
    name: string;
    mountPath: string;
    readOnly?: boolean;
}

export interface Container {
    name: string;
    image?: string;
    command?: string[];
    args?: string[];
    env?: { name: string; value?: string }[];
    volumeMounts?: VolumeMount[];
}

export interface Volume {
    name: string;
    configMap?: { name: string; items?: { key: string; path: string }[]; optional?: boolean };
    image?: { reference: string; pullPolicy?: string };
    projected?: unknown;
}

export interface PodSpec {
    nodeName?: string;
    containers?: Container[];
    initContainers?: Container[];
    volumes?: Volume[];
    restartPolicy?: string;
    serviceAccountName?: string;
}

/** A container's state with the times the kubelet writes. */
export interface SimContainerState extends ContainerState {
    terminated?: { exitCode?: number; signal?: number; reason?: string; message?: string; startedAt?: string; finishedAt?: string };
}

export interface SimContainerStatus extends ContainerStatus {
    started?: boolean;
    state?: SimContainerState;
    lastState?: SimContainerState;
}

export interface SimPod extends Pod {
    spec?: PodSpec;
    status?: {
        phase?: string;
        reason?: string;
        startTime?: string;
        podIP?: string;
        podIPs?: { ip: string }[];
        nominatedNodeName?: string;
        conditions?: CoreCondition[];
        containerStatuses?: SimContainerStatus[];
        initContainerStatuses?: SimContainerStatus[];
    };
}

export interface SimJob extends Job {
    spec?: {
        backoffLimit?: number;
        completions?: number;
        parallelism?: number;
        selector?: { matchLabels?: Record<string, string> };
        template?: { metadata?: Partial<ObjectMeta>; spec?: PodSpec };
    };
    status?: NonNullable<Job["status"]> & { startTime?: string; ready?: number; terminating?: number };
}

export interface SimWorkload extends Workload {
    spec?: NonNullable<Workload["spec"]> & {
        selector?: { matchLabels?: Record<string, string> };
        template?: { metadata?: Partial<ObjectMeta>; spec?: PodSpec };
    };
    status?: NonNullable<Workload["status"]> & { conditions?: CoreCondition[] };
}

/** An Event as stored: the fields `kubectl get events` prints besides the doctor's. */
export interface SimEvent extends KubeEvent {
    metadata: ObjectMeta;
    involvedObject: KubeEvent["involvedObject"] & { fieldPath?: string; resourceVersion?: string };
    series?: { count?: number; lastObservedTime?: string };
}

/** An OpenAPI v3 schema as a CRD declares it: what the required-field check and the pruning read of it. */
export interface Schema {
    type?: string;
    nullable?: boolean;
    "x-kubernetes-int-or-string"?: boolean;
    required?: string[];
    properties?: Record<string, Schema>;
    items?: Schema;
    additionalProperties?: Schema | boolean;
    "x-kubernetes-preserve-unknown-fields"?: boolean;
}

/** A CustomResourceDefinition: what discovery, the tables and the conversion read of it. */
export interface Crd {
    apiVersion?: string;
    kind?: string;
    metadata: ObjectMeta;
    spec: {
        group: string;
        names: { kind: string; plural: string; singular?: string; shortNames?: string[] };
        scope?: string;
        versions?: {
            name: string;
            served?: boolean;
            storage?: boolean;
            schema?: { openAPIV3Schema?: Schema };
            additionalPrinterColumns?: {
                name: string;
                type: string;
                format?: string;
                jsonPath: string;
                priority?: number;
                description?: string;
            }[];
        }[];
        conversion?: unknown;
    };
    status?: { conditions?: CoreCondition[]; acceptedNames?: Record<string, unknown>; storedVersions?: string[] };
}

/** An object as a manifest has it (what a render gives, a hook): its kind and name always, the rest as written. */
export interface Manifest {
    apiVersion?: string;
    kind: string;
    metadata: ObjectMeta;
    [field: string]: unknown;
}

/** What the store holds of each kind it serves. */
export interface Kinds {
    Namespace: Namespace;
    ConfigMap: ConfigMap & { binaryData?: Record<string, string> };
    Pod: SimPod;
    Event: SimEvent;
    Deployment: SimWorkload;
    StatefulSet: SimWorkload;
    Job: SimJob;
    Application: Application;
    ApplicationSet: ApplicationSet;
    AppProject: AppProject;
    CustomResourceDefinition: Crd;
    PrometheusRule: StoredObject;
}

/** The stored shape of `K`: its kind's where the store knows it, else a StoredObject. */
export type KindOf<K extends string> = K extends keyof Kinds ? Kinds[K] : StoredObject;
