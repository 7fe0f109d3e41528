/**
 * The Table form of the simulated API's GET answers (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`,
 * what `kubectl get` asks for), so a learner sees the columns the real API server sends: Kubernetes'
 * own printers for Pods, Jobs, Deployments, StatefulSets, Events, ConfigMaps and Namespaces
 * (pkg/printers/internalversion/printers.go at v1.36.3, the real node's Kubernetes: the same columns and cells), Argo CD's CRDs
 * with the additionalPrinterColumns of the default version's shipped install (Name and Age when a CRD declares
 * none, as apiextensions-apiserver defaults them), and Name and Created At for the rest (the API
 * server's default table). Hand-written: no JavaScript library prints Kubernetes' server-side tables.
 */
import { installCrds } from "./argoCrds";
import type { CoreCondition, Time } from "../lab/argo/types";
import type { Crd, Kinds, PodSpec, SimEvent, SimJob, SimPod, StoredObject } from "./objects";

/** A kind's printer: its columns, and an object's cells. */
interface Printer<T> {
    columns: Column[];
    cells: (o: T, now: number) => unknown[];
}

interface Column {
    name: string;
    type: string;
    format?: string;
    priority?: number;
    description: string;
}

const col = (name: string, priority = 0, format = ""): Column => ({ name, type: "string", format, priority, description: name });
const NAME = col("Name", 0, "name");
const AGE = col("Age");

/** k8s.io/apimachinery's HumanDuration: how kubectl and the API server write ages. */
export function humanDuration(ms: number): string {
    const seconds = Math.trunc(ms / 1000); // Go truncates toward zero
    if (seconds < -1) return "<invalid>";
    if (seconds < 0) return "0s";
    if (seconds < 120) return `${seconds}s`;
    const minutes = Math.floor(seconds / 60);
    if (minutes < 10) return seconds % 60 ? `${minutes}m${seconds % 60}s` : `${minutes}m`;
    if (minutes < 180) return `${minutes}m`;
    const hours = Math.floor(minutes / 60);
    if (hours < 8) return minutes % 60 ? `${hours}h${minutes % 60}m` : `${hours}h`;
    if (hours < 48) return `${hours}h`;
    if (hours < 24 * 8) return hours % 24 ? `${Math.floor(hours / 24)}d${hours % 24}h` : `${hours / 24}d`;
    if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
    const days = Math.floor(hours / 24);
    if (hours < 24 * 365 * 8) return days % 365 ? `${Math.floor(days / 365)}y${days % 365}d` : `${days / 365}y`;
    return `${Math.floor(days / 365)}y`;
}

const since = (ts: Time | undefined, now: number) => (ts ? humanDuration(now - Date.parse(String(ts))) : "<unknown>");
const has = (conds: CoreCondition[] | undefined, type: string) => (conds ?? []).some((c) => c.type === type && c.status === "True");
const containerCells = (spec: PodSpec | undefined) => [
    (spec?.containers ?? []).map((c) => c.name).join(","),
    (spec?.containers ?? []).map((c) => c.image).join(","),
];
const selectorString = (sel: { matchLabels?: Record<string, string> } | undefined) =>
    Object.entries(sel?.matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(",") || "<none>";

function podCells(pod: SimPod, now: number): unknown[] {
    const statuses = pod.status?.containerStatuses ?? [];
    let reason: string = pod.status?.reason || pod.status?.phase || "";
    let ready = 0;
    let restarts = 0;
    let lastRestart = 0;
    let running = false;
    let errorReason = ""; // the reason of a container that ended with a non-zero exit code (v1.36.3; not in v1.33.5)
    for (let i = statuses.length - 1; i >= 0; i--) {
        const c = statuses[i];
        restarts += Number(c.restartCount ?? 0);
        const finished = c.lastState?.terminated?.finishedAt;
        if (finished) lastRestart = Math.max(lastRestart, Date.parse(finished));
        if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
        else if (c.state?.terminated) {
            const t = c.state.terminated;
            reason = t.reason || (t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode ?? 0}`);
            if (Number(t.exitCode ?? 0) !== 0) errorReason = reason;
        } else if (c.ready && c.state?.running) {
            running = true;
            ready++;
        }
    }
    if (reason === "Completed") {
        if (running && has(pod.status?.conditions, "Ready")) reason = "Running";
        else if (errorReason) reason = errorReason;
        else if (running) reason = "NotReady";
    }
    if (pod.metadata?.deletionTimestamp && !["Succeeded", "Failed"].includes(pod.status?.phase ?? "")) reason = "Terminating";
    const restartCell = restarts && lastRestart ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);
    const ip = pod.status?.podIPs?.[0]?.ip || pod.status?.podIP || "<none>";
    return [
        pod.metadata.name,
        `${ready}/${(pod.spec?.containers ?? []).length}`,
        reason,
        restartCell,
        since(pod.metadata.creationTimestamp, now),
        ip,
        pod.spec?.nodeName || "<none>",
        pod.status?.nominatedNodeName || "<none>",
        "<none>",
    ];
}

function jobCells(job: SimJob, now: number): unknown[] {
    const succeeded = Number(job.status?.succeeded ?? 0);
    const parallelism = Number(job.spec?.parallelism ?? 0);
    const completions =
        job.spec?.completions != null
            ? `${succeeded}/${job.spec.completions}`
            : parallelism > 1
              ? `${succeeded}/1 of ${parallelism}`
              : `${succeeded}/1`;
    const start = job.status?.startTime;
    const end = job.status?.completionTime;
    const duration = !start ? "" : humanDuration((end ? Date.parse(String(end)) : now) - Date.parse(start));
    const conds = job.status?.conditions;
    const status = has(conds, "Complete")
        ? "Complete"
        : has(conds, "Failed")
          ? "Failed"
          : job.metadata?.deletionTimestamp
            ? "Terminating"
            : has(conds, "Suspended")
              ? "Suspended"
              : has(conds, "FailureTarget")
                ? "FailureTarget"
                : has(conds, "SuccessCriteriaMet")
                  ? "SuccessCriteriaMet"
                  : "Running";
    return [
        job.metadata.name,
        status,
        completions,
        duration,
        since(job.metadata.creationTimestamp, now),
        ...containerCells(job.spec?.template?.spec),
        selectorString(job.spec?.selector),
    ];
}

function eventCells(ev: SimEvent, now: number): unknown[] {
    const first = ev.firstTimestamp ? since(ev.firstTimestamp, now) : since(ev.eventTime, now);
    const last = ev.series ? since(ev.series.lastObservedTime, now) : ev.lastTimestamp ? since(ev.lastTimestamp, now) : first;
    const count = ev.series ? ev.series.count : ev.count || 1;
    const kind = String(ev.involvedObject?.kind ?? "").toLowerCase();
    const target = ev.involvedObject?.name ? `${kind}/${ev.involvedObject.name}` : kind;
    const source = ev.source?.component
        ? [ev.source.component, ev.source.host].filter(Boolean).join(", ")
        : ev.reportingComponent
          ? [ev.reportingComponent, ev.reportingInstance].filter(Boolean).join(", ")
          : "";
    return [
        last,
        ev.type ?? "",
        ev.reason ?? "",
        target,
        ev.involvedObject?.fieldPath ?? "",
        source,
        String(ev.message ?? "").trim(),
        first,
        count,
        ev.metadata.name,
    ];
}

/** Kubernetes' own printers, for the kinds the simulated API serves. */
const PRINTERS: { [K in keyof Kinds]?: Printer<Kinds[K]> } = {
    Pod: {
        columns: [
            NAME,
            col("Ready"),
            col("Status"),
            col("Restarts"),
            AGE,
            col("IP", 1),
            col("Node", 1),
            col("Nominated Node", 1),
            col("Readiness Gates", 1),
        ],
        cells: podCells,
    },
    Job: {
        columns: [
            NAME,
            col("Status"),
            col("Completions"),
            col("Duration"),
            AGE,
            col("Containers", 1),
            col("Images", 1),
            col("Selector", 1),
        ],
        cells: jobCells,
    },
    Deployment: {
        columns: [NAME, col("Ready"), col("Up-to-date"), col("Available"), AGE, col("Containers", 1), col("Images", 1), col("Selector", 1)],
        cells: (d, now) => [
            d.metadata.name,
            `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 1}`,
            d.status?.updatedReplicas ?? 0,
            d.status?.availableReplicas ?? 0,
            since(d.metadata.creationTimestamp, now),
            ...containerCells(d.spec?.template?.spec),
            selectorString(d.spec?.selector),
        ],
    },
    StatefulSet: {
        columns: [NAME, col("Ready"), AGE, col("Containers", 1), col("Images", 1)],
        cells: (s, now) => [
            s.metadata.name,
            `${s.status?.readyReplicas ?? 0}/${s.spec?.replicas ?? 1}`,
            since(s.metadata.creationTimestamp, now),
            ...containerCells(s.spec?.template?.spec),
        ],
    },
    Event: {
        columns: [
            col("Last Seen"),
            col("Type"),
            col("Reason"),
            col("Object"),
            col("Subobject", 1),
            col("Source", 1),
            col("Message"),
            col("First Seen", 1),
            col("Count", 1),
            col("Name", 1, "name"),
        ],
        cells: eventCells,
    },
    ConfigMap: {
        columns: [NAME, col("Data"), AGE],
        cells: (c, now) => [
            c.metadata.name,
            Object.keys(c.data ?? {}).length + Object.keys(c.binaryData ?? {}).length,
            since(c.metadata.creationTimestamp, now),
        ],
    },
    Namespace: {
        columns: [NAME, col("Status"), AGE],
        cells: (n, now) => [
            n.metadata.name,
            n.status?.phase ?? (n.metadata.deletionTimestamp ? "Terminating" : "Active"),
            since(n.metadata.creationTimestamp, now),
        ],
    },
};

/** The additionalPrinterColumns of the CRDs the cluster serves, by kind (read once a set of CRDs). */
type PrinterColumn = NonNullable<NonNullable<Crd["spec"]["versions"]>[number]["additionalPrinterColumns"]>[number];
const crdColumns = new WeakMap<Crd[], Record<string, PrinterColumn[]>>();
function printerColumnsOf(crds: Crd[], kind: string): PrinterColumn[] | undefined {
    let columns = crdColumns.get(crds);
    if (!columns) {
        columns = {};
        for (const d of crds) {
            const v = (d.spec.versions ?? []).find((x) => x.storage) ?? d.spec.versions?.[0];
            columns[d.spec.names.kind] = v?.additionalPrinterColumns ?? [];
        }
        crdColumns.set(crds, columns);
    }
    return columns[kind];
}

const at = (obj: unknown, jsonPath: string) =>
    jsonPath
        .replace(/^\./, "")
        .split(".")
        .reduce<unknown>((o, k) => (o == null ? undefined : (o as Record<string, unknown>)[k]), obj);

function printerFor(kind: string, crds: Crd[]): Printer<StoredObject> {
    const own = PRINTERS[kind as keyof Kinds];
    if (own) return own as Printer<never> as Printer<StoredObject>; // the store holds `kind`'s objects under `kind`
    const crd = printerColumnsOf(crds, kind);
    if (crd) {
        // apiextensions-apiserver: Name, then the CRD's columns; a CRD without any gets Age (type date)
        const cols: PrinterColumn[] = crd.length ? crd : [{ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }];
        return {
            columns: [
                NAME,
                ...cols.map((c) => ({
                    name: c.name,
                    type: c.type,
                    format: c.format ?? "",
                    priority: c.priority ?? 0,
                    description: c.description ?? `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
                })),
            ],
            cells: (o, now) => [
                o.metadata.name,
                ...cols.map((c) => {
                    const v = at(o, c.jsonPath);
                    if (v === undefined || v === null) return null;
                    return c.type === "date" ? since(String(v), now) : c.type === "string" ? String(v) : v;
                }),
            ],
        };
    }
    // the API server's default table
    return { columns: [NAME, { ...col("Created At"), type: "date" }], cells: (o) => [o.metadata.name, o.metadata.creationTimestamp] };
}

/** meta.k8s.io/v1 Table. */
export interface Table {
    kind: "Table";
    apiVersion: string;
    metadata: { resourceVersion?: string; continue?: string };
    columnDefinitions: Required<Column>[];
    rows: { cells: unknown[]; object: unknown }[];
}

/** A list's or an object's Table, as the API server answers a request for one. */
export function toTable(kind: string, answer: unknown, opts: { now?: number; includeObject?: string | null; crds?: Crd[] } = {}): Table {
    const now = opts.now ?? Date.now();
    const p = printerFor(kind, opts.crds ?? installCrds());
    const list = answer as { items?: StoredObject[]; metadata?: { resourceVersion?: string; continue?: string } } | undefined; // a list or one object
    const objects: StoredObject[] = Array.isArray(list?.items) ? list.items : [answer as StoredObject];
    const object = (o: StoredObject) =>
        opts.includeObject === "Object"
            ? o
            : opts.includeObject === "None"
              ? undefined
              : { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata };
    return {
        kind: "Table",
        apiVersion: "meta.k8s.io/v1",
        metadata: {
            resourceVersion: list?.metadata?.resourceVersion,
            ...(list?.metadata?.continue ? { continue: list.metadata.continue } : {}),
        },
        columnDefinitions: p.columns.map((c) => ({
            name: c.name,
            type: c.type,
            format: c.format ?? "",
            description: c.description,
            priority: c.priority ?? 0,
        })),
        rows: objects.map((o) => ({ cells: p.cells(o, now), object: object(o) })),
    };
}

/** Whether the request asks for a Table (kubectl get's Accept header). */
export const wantsTable = (accept: string | undefined) => /as=Table/.test(accept ?? "") && /g=meta\.k8s\.io/.test(accept ?? "");
