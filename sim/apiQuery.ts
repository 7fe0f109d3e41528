/**
 * What a request to the simulated API asks beside its path: a log's tail and bytes, a dry run, its body as an
 * object, its field and label selectors (sim/apiServer.ts serves them).
 */
import { HttpError } from "./apiTypes";
import type { ObjectMeta } from "../lab/argo/types";

/** A log as the kubelet answers `tailLines` (its last lines) and `limitBytes` (at most that many bytes of them). */
export function logPart(log: string, url: URL, startedAt?: string): string {
    const tail = url.searchParams.get("tailLines");
    // timestamps=true (kubectl logs --timestamps): each line after a time, RFC 3339 with nanoseconds as the kubelet
    // writes it; the simulated kubelet keeps no time per line, so every line has its container's start
    if (url.searchParams.get("timestamps") === "true") {
        const at = new Date(startedAt ?? 0).toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z");
        log = log.replace(/^(?=.)/gm, `${at} `);
    }
    const lines = log.split(/(?<=\n)/).filter(Boolean);
    let text = tail !== null && Number(tail) >= 0 ? (Number(tail) === 0 ? "" : lines.slice(-Number(tail)).join("")) : log;
    const limit = url.searchParams.get("limitBytes");
    if (limit !== null && Number(limit) > 0) text = Buffer.from(text).subarray(0, Number(limit)).toString();
    return text;
}

/**
 * Whether the request is a dry run (`dryRun=All`: kubectl's --dry-run=server and kubectl diff): answered as
 * the write would be, nothing stored. Any other value is refused, as the API server refuses it.
 */
export function dryRunOf(url: URL, inBody?: unknown): boolean {
    const values = [...url.searchParams.getAll("dryRun"), ...(Array.isArray(inBody) ? inBody.map(String) : [])];
    const bad = values.find((v) => v !== "All");
    if (bad !== undefined) throw new HttpError(400, "BadRequest", `dryRun: Unsupported value: "${bad}": supported values: "All"`);
    return values.length > 0;
}

/** What a selector reads of an object. */
type Selectable = { metadata?: Partial<ObjectMeta> };

/** A request's object (a body, a patched object); a 400 when it is not one. */
export function objectOf(body: unknown): { metadata?: Partial<ObjectMeta>; [field: string]: unknown } {
    if (body === undefined) return {};
    if (!body || typeof body !== "object" || Array.isArray(body))
        throw new HttpError(400, "BadRequest", "the request's body is not an object");
    return body as { metadata?: Partial<ObjectMeta>; [field: string]: unknown };
}

/** The value at a dotted path (metadata.name, involvedObject.uid). */
const at = (obj: unknown, dotted: string) =>
    dotted.split(".").reduce<unknown>((o, k) => (o == null ? undefined : (o as Record<string, unknown>)[k]), obj);

/** A label selector's terms: split at its commas outside parentheses (an in or notin term holds commas of its own). */
function labelTerms(selector: string): string[] {
    const terms: string[] = [];
    let depth = 0;
    let from = 0;
    for (let i = 0; i <= selector.length; i++) {
        const c = selector[i];
        if (c === "(") depth++;
        else if (c === ")") depth--;
        else if ((c === "," && depth === 0) || i === selector.length) {
            const term = selector.slice(from, i).trim();
            if (term) terms.push(term);
            from = i + 1;
        }
    }
    return terms;
}

/** A filter from the request's fieldSelector (=, ==, !=) and labelSelector (those, bare and !keys, in and notin). */
export function selectorOf(url: URL): (obj: Selectable) => boolean {
    const tests: ((o: Selectable) => boolean)[] = [];
    for (const term of (url.searchParams.get("fieldSelector") ?? "").split(",").filter(Boolean)) {
        const [, key, op, value] = /^([^!=]+)(!=|==|=)(.*)$/.exec(term) ?? [];
        if (!key) throw new HttpError(400, "BadRequest", `unsupported field selector ${term}`);
        tests.push((o) => (String(at(o, key) ?? "") === value) === (op !== "!="));
    }
    const labels = (o: Selectable) => o.metadata?.labels ?? {};
    for (const term of labelTerms(url.searchParams.get("labelSelector") ?? "")) {
        // apimachinery's labels.Parse: key, !key, key=value (==, !=), key in (a,b), key notin (a,b); a != or notin term
        // also selects an object without the key
        const set = /^([^\s!=(),]+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(term);
        if (set) {
            const values = set[3].split(",").map((v) => v.trim());
            const key = set[1];
            tests.push((o) => (key in labels(o) && values.includes(labels(o)[key])) === (set[2] === "in"));
            continue;
        }
        const exists = /^(!?)([^\s!=(),]+)$/.exec(term);
        if (exists) {
            const key = exists[2];
            tests.push((o) => key in labels(o) === !exists[1]);
            continue;
        }
        const eq = /^([^\s!=(),]+)\s*(!=|==|=)\s*([^\s!=(),]*)$/.exec(term);
        if (!eq) throw new HttpError(400, "BadRequest", `unable to parse requirement: ${term}`);
        const [, key, op, value] = eq;
        tests.push((o) => (labels(o)[key] === value) === (op !== "!="));
    }
    return (o) => tests.every((f) => f(o));
}
