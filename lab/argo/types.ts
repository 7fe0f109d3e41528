/**
 * The shapes of the Argo CD and Kubernetes objects the product reads, as JSON has them (a dump, the
 * custom-objects API, the simulated API): only the fields read, each optional where a real object may
 * lack it (a dump made by someone, an object Argo CD has not written a status to yet). Field names and
 * meanings follow upstream's pkg/apis/application/v1alpha1 (types.go, applicationset_types.go) and
 * k8s.io/api. Hand-written: the generated types of @kubernetes/client-node cover only the core kinds,
 * and turn times into Date objects the JSON of a dump does not have.
 */

/** A time as the API writes it: an RFC 3339 string in JSON; a Date where client-node's typed API read it. */
export type Time = string | Date;

export interface OwnerReference {
    apiVersion?: string;
    kind: string;
    name: string;
    uid?: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
    name: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: Time;
    deletionTimestamp?: Time;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    finalizers?: string[];
}

/** A condition of an Application or an ApplicationSet (read as JSON: its time is a string). */
export interface Condition {
    type: string;
    status?: string;
    reason?: string;
    message?: string;
    lastTransitionTime?: string;
}

/** A condition of a core kind (a Job, a Deployment), whose time client-node's typed API reads as a Date. */
export interface CoreCondition extends Omit<Condition, "lastTransitionTime"> {
    lastTransitionTime?: Time;
    lastUpdateTime?: Time;
    lastProbeTime?: Time;
}

export interface ApplicationSource {
    repoURL?: string;
    path?: string;
    chart?: string;
    targetRevision?: string;
}

export interface ApplicationDestination {
    server?: string;
    name?: string;
    namespace?: string;
}

/** One resource of a sync result: a hook has hookType and hookPhase. */
export interface ResourceResult {
    group?: string;
    version?: string;
    kind?: string;
    namespace?: string;
    name: string;
    status?: string;
    message?: string;
    hookType?: string;
    hookPhase?: string;
    syncPhase?: string;
}

export interface RetryStrategy {
    limit?: number;
}

export interface Operation {
    sync?: {
        revision?: string;
        revisions?: string[];
        source?: ApplicationSource;
        /** A partial sync's resources (a self-heal of the drifted ones). */
        resources?: { group?: string; kind: string; namespace?: string; name: string }[];
        selfHealAttemptsCount?: number;
        syncOptions?: string[];
        prune?: boolean;
    };
    retry?: RetryStrategy;
    initiatedBy?: { username?: string; automated?: boolean };
    info?: { name: string; value: string }[];
}

export interface OperationState {
    operation?: Operation;
    phase?: string;
    message?: string;
    startedAt?: string;
    finishedAt?: string;
    retryCount?: number;
    syncResult?: { revision?: string; source?: ApplicationSource; resources?: ResourceResult[] };
}

/** One resource of an Application's status.resources. */
export interface ResourceStatus {
    group?: string;
    version?: string;
    kind?: string;
    namespace?: string;
    name: string;
    status?: string;
    health?: { status?: string; message?: string };
    hook?: boolean;
    /** A live object of the Application's that its source no longer renders: deleted by a sync with prune. */
    requiresPruning?: boolean;
}

export interface RevisionHistory {
    id?: number;
    revision?: string;
    source?: ApplicationSource;
    deployedAt?: string;
    deployStartedAt?: string;
    initiatedBy?: Operation["initiatedBy"];
}

export interface SyncPolicy {
    automated?: { prune?: boolean; selfHeal?: boolean; enabled?: boolean } | null;
    syncOptions?: string[];
    retry?: RetryStrategy;
}

export interface ApplicationSpec {
    project?: string;
    source?: ApplicationSource;
    sources?: ApplicationSource[];
    destination?: ApplicationDestination;
    syncPolicy?: SyncPolicy;
    revisionHistoryLimit?: number;
}

export interface ApplicationStatus {
    sync?: {
        status?: string;
        revision?: string;
        revisions?: string[];
        comparedTo?: { source?: ApplicationSource; destination?: ApplicationDestination };
    };
    health?: { status?: string; message?: string; lastTransitionTime?: string };
    operationState?: OperationState;
    sourceType?: string;
    conditions?: Condition[];
    resources?: ResourceStatus[];
    history?: RevisionHistory[];
    reconciledAt?: string;
}

export interface Application {
    apiVersion?: string;
    kind?: string;
    metadata: ObjectMeta;
    spec?: ApplicationSpec;
    /** A requested operation, not yet taken by the controller. */
    operation?: Operation;
    status?: ApplicationStatus;
}

export interface LabelSelectorRequirement {
    key: string;
    operator: string;
    values?: string[];
}

export interface RollingSyncStep {
    matchExpressions?: LabelSelectorRequirement[];
    maxUpdate?: number | string;
}

/** One entry of status.applicationStatus: where RollingSync has an Application. */
export interface ApplicationSetApplicationStatus {
    application: string;
    status?: string;
    message?: string;
    step?: string;
    lastTransitionTime?: string;
    targetRevisions?: string[];
}

/** The generators the labs use (list and git); others are read as present, not looked into. */
export interface Generator {
    list?: { elements?: Record<string, unknown>[] };
    git?: {
        repoURL?: string;
        revision?: string;
        requeueAfterSeconds?: number;
        files?: { path: string }[];
        directories?: { path: string; exclude?: boolean }[];
    };
}

export interface ApplicationSetSpec {
    goTemplate?: boolean;
    generators?: Generator[];
    template?: { metadata?: Partial<ObjectMeta>; spec?: ApplicationSpec };
    strategy?: { type?: string; rollingSync?: { steps?: RollingSyncStep[] } };
    syncPolicy?: { preserveResourcesOnDeletion?: boolean; applicationsSync?: string };
}

export interface ApplicationSet {
    apiVersion?: string;
    kind?: string;
    metadata: ObjectMeta;
    spec?: ApplicationSetSpec;
    status?: { conditions?: Condition[]; applicationStatus?: ApplicationSetApplicationStatus[] };
}

export interface SyncWindow {
    kind?: string;
    schedule?: string;
    duration?: string;
    timeZone?: string;
    applications?: string[];
    namespaces?: string[];
    clusters?: string[];
    manualSync?: boolean;
    syncOverrun?: boolean;
    andOperator?: boolean;
    description?: string;
}

export interface AppProject {
    apiVersion?: string;
    kind?: string;
    metadata: ObjectMeta;
    spec?: { syncWindows?: SyncWindow[] };
}

export interface Job {
    apiVersion?: string;
    kind?: string;
    metadata: ObjectMeta;
    spec?: { backoffLimit?: number; template?: { spec?: Pod["spec"] } };
    status?: { conditions?: CoreCondition[]; active?: number; succeeded?: number; failed?: number; completionTime?: Time };
}

export interface ContainerState {
    waiting?: { reason?: string; message?: string };
    running?: { startedAt?: Time };
    terminated?: { exitCode?: number; reason?: string; message?: string };
}

export interface ContainerStatus {
    name: string;
    ready?: boolean;
    restartCount?: number;
    image?: string;
    state?: ContainerState;
    lastState?: ContainerState;
}

export interface ConfigMap {
    apiVersion?: string;
    kind?: string;
    metadata: ObjectMeta;
    data?: Record<string, string>;
}

export interface Namespace {
    apiVersion?: string;
    kind?: string;
    metadata: ObjectMeta;
    status?: { phase?: string };
}

/** A Deployment or a StatefulSet: what readiness and the tenants' release read of it. */
export interface Workload {
    apiVersion?: string;
    kind?: string;
    metadata: ObjectMeta;
    spec?: { replicas?: number; template?: { metadata?: Partial<ObjectMeta> } };
    status?: {
        replicas?: number;
        readyReplicas?: number;
        updatedReplicas?: number;
        availableReplicas?: number;
        observedGeneration?: number;
        conditions?: CoreCondition[];
    };
}

/** A core/v1 Event as the doctor writes it. */
export interface KubeEvent {
    apiVersion?: string;
    kind?: string;
    metadata: Partial<ObjectMeta>;
    involvedObject: { apiVersion?: string; kind: string; name: string; namespace?: string; uid?: string };
    reason: string;
    message: string;
    type: "Normal" | "Warning";
    source?: { component?: string; host?: string };
    firstTimestamp?: Time;
    lastTimestamp?: Time;
    eventTime?: Time;
    reportingComponent?: string;
    reportingInstance?: string;
    action?: string;
    count?: number;
}

export interface Pod {
    apiVersion?: string;
    kind?: string;
    metadata: ObjectMeta;
    spec?: { containers?: { name: string; image?: string }[]; initContainers?: { name: string; image?: string }[] };
    status?: { phase?: string; containerStatuses?: ContainerStatus[]; initContainerStatuses?: ContainerStatus[] };
}

/** Any object the product writes or a manifest holds: its kind and name, the rest as written. */
export interface KubeObject {
    apiVersion?: string;
    kind?: string;
    metadata?: Partial<ObjectMeta>;
    [field: string]: unknown;
}

/** A time as milliseconds since the epoch, NaN when missing or unreadable (never a Date's string, which sorts by weekday). */
export const timeMs = (t: Time | undefined | null): number => (t instanceof Date ? t.getTime() : t ? Date.parse(t) : NaN);

/** A time as the API writes it (RFC 3339), whatever form it was read in; undefined when missing or unreadable. */
export const isoOf = (t: Time | undefined | null): string | undefined => {
    const ms = timeMs(t);
    return Number.isFinite(ms) ? new Date(ms).toISOString().replace(".000Z", "Z") : undefined;
};

/** Newest first by creation time (missing times last). */
export const newestFirst = (a: { metadata?: ObjectMeta }, b: { metadata?: ObjectMeta }): number =>
    (timeMs(b.metadata?.creationTimestamp) || 0) - (timeMs(a.metadata?.creationTimestamp) || 0);
