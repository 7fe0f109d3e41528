/**
 * appset.yaml as the learner writes it and `kubectl apply -f` reads it: one or more YAML documents
 * (a leading or trailing `---` makes an empty one, which kubectl skips; a kind: List's items are
 * documents too), of which the ApplicationSet shop is the one graded.
 */
import { inClusterGitUrl } from "../platform/gitDaemon";
import * as fs from "fs";
import { parseAllDocuments } from "yaml";
import type { ApplicationSet } from "../argo/types";
import { APPSET_NAME, REPO_URL } from "./layout";
import { IN_CLUSTER_SERVER } from "../argo/application";

export type AppsetFile =
    /**
     * The file's ApplicationSet shop (or its first document, whatever it is), read loosely: every field may be missing;
     * with more than one document, the names of its ApplicationSets.
     */
    | { set: Partial<ApplicationSet> | null; error?: undefined; names?: string[] }
    /** Why kubectl would not read it: the YAML error with its line. */
    | { set?: undefined; error: string };

/** Reads appset.yaml; throws only when the file cannot be read (a missing file is the caller's check). */
export function readAppsetFile(file: string): AppsetFile {
    const text = fs.readFileSync(file, "utf8");
    // logLevel error: a map key that is a collection (an unquoted {{...}}) is found below, not warned of on stderr;
    // YAML 1.1, as kubectl's YAML (go-yaml v2) reads it: a merge key (<<: *dev) merged, yes and no as booleans
    const docs = parseAllDocuments(text, { logLevel: "error", version: "1.1" });
    if (!Array.isArray(docs)) return { set: null }; // an empty stream
    for (const d of docs) {
        const e = d.errors[0];
        if (!e) continue;
        const line = e.linePos?.[0]?.line;
        return { error: `${line ? `line ${line}: ` : ""}${e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "")}` };
    }
    // a value starting with {{ unquoted: YAML reads a flow mapping there ({revision} as a key), which kubectl refuses
    for (const d of docs) {
        const tag = unquotedTag(d.toJS());
        if (tag) {
            const line = text
                .split(/\r?\n/)
                .findIndex((l) => new RegExp(`^\\s*(-\\s+)?${tag.key.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:\\s+\\{\\{`).test(l));
            return {
                error: `${line >= 0 ? `line ${line + 1}: ` : ""}${tag.key}: {{${tag.name}}} is not quoted, and YAML reads a value starting with { as a mapping (kubectl apply: "yaml: invalid map key"); quote it: ${tag.key}: '{{${tag.name}}}'`,
            };
        }
    }
    // a kind: List (kubectl get applicationsets -o yaml, plural, writes one): kubectl apply applies each item
    const objects = docs
        .map((d) => d.toJS() as (Partial<ApplicationSet> & { items?: unknown }) | null)
        .flatMap((o) => (o?.kind === "List" && Array.isArray(o.items) ? (o.items as Partial<ApplicationSet>[]) : [o]))
        .filter((o) => o !== null && o !== undefined);
    if (objects.length <= 1) return { set: objects[0] ?? null };
    // the names of the file's ApplicationSets (one per environment, shop-dev and shop-prod, is not the lab's one)
    const names = objects.filter((o) => o?.kind === "ApplicationSet").map((o) => String(o?.metadata?.name));
    return { set: objects.find((o) => o?.kind === "ApplicationSet" && o.metadata?.name === APPSET_NAME) ?? objects[0], names };
}

/** The cluster Argo CD runs in, as an Application's destination.server names it. */
export const IN_CLUSTER = IN_CLUSTER_SERVER;
/**
 * A destination's cluster as one URL: by its name in-cluster, or its URL with trailing slashes, it is the cluster
 * Argo CD runs in (util/argo GetDestinationServer trims them); anything else as written.
 */
export function destinationServer(d: { server?: unknown; name?: unknown } | undefined): unknown {
    if (d?.name === "in-cluster" && !d?.server) return IN_CLUSTER;
    return typeof d?.server === "string" && d.server.replace(/\/+$/, "") === IN_CLUSTER ? IN_CLUSTER : d?.server;
}

/**
 * automated with the keys written at Argo CD's defaults left out: enabled: true (Argo CD 3 reads it so when it is not
 * written) and allowEmpty: false (SyncPolicyAutomated's GetAllowEmpty is false when it is not written).
 */
export const withoutDefaults = (a: unknown): unknown => {
    if (!a || typeof a !== "object") return a;
    const o = a as Record<string, unknown>;
    return Object.fromEntries(
        Object.entries(o).filter(([k, v]) => !(k === "enabled" && v === true) && !(k === "allowEmpty" && v === false)),
    );
};

/**
 * A list generator's elements in env order (dev, prod): the order of a list generator's elements means nothing to
 * Argo CD (one Application each), so the checks compare them so; anything but a list is returned as it is.
 */
export function byEnv<T>(elements: T): T {
    if (!Array.isArray(elements)) return elements;
    return [...elements].sort((a, b) => String(a?.env ?? "").localeCompare(String(b?.env ?? ""))) as T;
}

/**
 * An ApplicationSet's list elements as the checks compare them (byEnv's order), each without the keys its template
 * never reads (an element's extra key, cluster: in-cluster, makes the same Applications); a key the template reads,
 * or any key of an element lacking env or revision (envr for env), stays for the checks to name.
 */
export function listElementsOf(set: Partial<ApplicationSet> | null | undefined): unknown {
    const elements = set?.spec?.generators?.[0]?.list?.elements;
    if (!Array.isArray(elements)) return elements;
    const template = JSON.stringify(set?.spec?.template ?? "");
    const read = (k: string) => new RegExp(`\\{\\{\\s*\\.?${k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*\\}\\}`).test(template);
    return byEnv(
        elements.map((e) =>
            e && typeof e === "object" && "env" in e && "revision" in e
                ? Object.fromEntries(Object.entries(e).filter(([k]) => k === "env" || k === "revision" || read(k)))
                : e,
        ),
    );
}

/** Whether a repoURL names the lab's repository: as written, or without .git or git's default port (9418). */
export function sameRepo(url: unknown): boolean {
    const norm = (u: string) => inClusterGitUrl(u).replace(/\.git$/, "");
    return typeof url === "string" && norm(url) === norm(REPO_URL);
}

/** The first value that is an unquoted {{name}} as YAML reads it (a map whose one key is "{ name }", its value null). */
function unquotedTag(v: unknown, key = ""): { key: string; name: string } | undefined {
    if (!v || typeof v !== "object") return undefined;
    const entries = Object.entries(v as Record<string, unknown>);
    const only = entries.length === 1 ? /^\{\s*([\w.]+)\s*\}$/.exec(entries[0][0]) : null;
    if (only && entries[0][1] === null && !Array.isArray(v)) return { key, name: only[1] };
    for (const [k, sub] of entries) {
        const found = unquotedTag(sub, Array.isArray(v) ? key : k);
        if (found) return found;
    }
    return undefined;
}
