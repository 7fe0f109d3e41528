/**
 * A dump file as the doctor reads it (`--from FILE`, or `-` for standard input): read to its end within a bound,
 * and every file that is not a dump named by what it is (a kubeconfig, a URL, kubectl's -o name or -o yaml, a
 * simulated lab's saved cluster, another kind's list) with the command that makes one.
 */
import * as fs from "fs";
import * as path from "path";
import { dumpFromList, Dump } from "../lab/doctor/diagnose";
import { parseJson } from "../lab/ports/files";
import { parse as parseYaml } from "yaml";
import { codeOf, messageOf } from "../lab/ports/errors";
import { SHOP_RESULT_FILES } from "../lab/shop/results";
import { TENANTS_RESULT_FILES } from "../lab/tenants/results";

export const DUMP_HINT_COMMAND =
    "kubectl get applicationsets.argoproj.io,applications.argoproj.io,appprojects.argoproj.io,jobs,pods -A -o json";
export const DUMP_HINT = `make it with ${DUMP_HINT_COMMAND}`;

/** Under what a JavaScript string holds (V8's limit is 512 MiB of characters): a larger dump is refused, not half-read. */
export const MAX_DUMP_BYTES = 500 * 1024 * 1024;

class TooLarge extends Error {}
class Compressed extends Error {}

/** The bytes of a file or of standard input, read to their end unless they pass MAX_DUMP_BYTES (/dev/zero never ends). */
function readBounded(file: string): string {
    if (file !== "-" && fs.statSync(file).isFile() && fs.statSync(file).size > MAX_DUMP_BYTES) throw new TooLarge();
    const fd = file === "-" ? 0 : fs.openSync(file, "r");
    try {
        const chunks: Buffer[] = [];
        const buf = Buffer.alloc(1 << 20);
        let total = 0;
        for (;;) {
            let n: number;
            try {
                n = fs.readSync(fd, buf, 0, buf.length, null);
            } catch (e) {
                // a pipe that has nothing yet (standard input may be non-blocking): wait a moment, read again
                if (codeOf(e) !== "EAGAIN") throw e;
                Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
                continue;
            }
            if (n === 0) break;
            total += n;
            if (total > MAX_DUMP_BYTES) throw new TooLarge();
            chunks.push(Buffer.from(buf.subarray(0, n)));
        }
        const all = Buffer.concat(chunks);
        // gzip's magic number (a dump kept compressed): said, not read as JSON full of control characters
        if (all[0] === 0x1f && all[1] === 0x8b) throw new Compressed();
        // UTF-16 with its byte-order mark (what PowerShell's > writes): read as such, not as UTF-8 full of NULs
        if (all[0] === 0xff && all[1] === 0xfe) return all.subarray(2).toString("utf16le");
        if (all[0] === 0xfe && all[1] === 0xff && all.length % 2 === 0) return Buffer.from(all.subarray(2)).swap16().toString("utf16le");
        return all.toString("utf8");
    } finally {
        if (fd !== 0) fs.closeSync(fd);
    }
}

/** A dump from a file, or from standard input (`--from -`: kubectl get ... -o json | gitops-lab doctor --from -). */
export function readDump(file: string): Dump {
    let text: string;
    const source = file === "-" ? "standard input" : file;
    // a terminal, not a pipe: it waits for what is typed, so it says so (a silent wait reads as a hang)
    if (file === "-" && process.stdin.isTTY)
        process.stderr.write(
            `doctor: reading a dump from the terminal: paste it and end with Ctrl-D, or pipe one in (${DUMP_HINT_COMMAND} | gitops-lab doctor --from -)\n`,
        );
    // a URL: the doctor reads a file, which a download makes
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(file))
        throw new Error(
            `--from takes a file, not a URL (${file}): download it first (curl -fsSo dump.json '${file}'), then --from dump.json`,
        );
    try {
        text = readBounded(file);
    } catch (e) {
        if (e instanceof TooLarge)
            throw new Error(
                `${source} holds more than ${MAX_DUMP_BYTES / 1024 / 1024} MB, more than the doctor reads at once: run it live instead (--kubeconfig FILE), which reads only the ApplicationSets, their Applications and the Jobs and Pods of the namespaces it needs`,
            );
        if (e instanceof Compressed)
            throw new Error(
                `${source} is gzip-compressed: the doctor reads the JSON itself; ${file === "-" ? "put zcat before the pipe" : `gunzip -k ${file} (or zcat ${file} | gitops-lab doctor --from -)`}`,
            );
        const why: Record<string, string> = { ENOENT: "no such file", EACCES: "permission denied", EISDIR: "it is a folder" };
        // a folder is not where the dump goes: a file in it is; standard input is piped into, not written to
        const to = codeOf(e) === "EISDIR" ? path.join(file, "dump.json") : file;
        throw new Error(
            file === "-"
                ? `cannot read standard input (${messageOf(e)}): pipe a dump into it: ${DUMP_HINT_COMMAND} | gitops-lab doctor --from -`
                : `cannot read ${file} (${why[String(codeOf(e))] ?? messageOf(e)}): give the file of a dump; ${DUMP_HINT} > ${to}`,
        );
    }
    // an empty pipe: the kubectl before it failed (its error is above) or printed nothing
    if (file === "-" && !text.trim()) throw new Error(`standard input was empty (did the kubectl before the pipe fail?); ${DUMP_HINT}`);
    // an empty file: the kubectl that wrote it (kubectl ... > file) failed, its error where it ran
    if (!text.trim()) throw new Error(`${source} is empty (did the kubectl that wrote it fail? its error is where it ran); ${DUMP_HINT}`);
    // a kubeconfig given for the dump: it goes with --kubeconfig (or nothing: the doctor reads the cluster live)
    if (/^kind:\s*Config\s*$/m.test(text) && /^clusters:/m.test(text))
        throw new Error(
            `${source} is a kubeconfig: it goes with --kubeconfig (or leave --from out: the doctor then reads the cluster live)`,
        );
    // kubectl ... -o name: one kind/name a line, no object
    const lines = text.split("\n").filter((l) => l.trim());
    if (lines.length && lines.every((l) => /^[a-z0-9.-]+\/[\w.-]+$/.test(l.trim())))
        throw new Error(
            `${source} is kubectl's -o name list (${lines.length} name${lines.length === 1 ? "" : "s"}, no objects): ${DUMP_HINT}`,
        );
    // kubectl ... -o yaml: named as such, not as a JSON syntax error
    if (/^\s*(?:#.*\n\s*)*(?:apiVersion|kind|items):(?:\s|$)/.test(text)) {
        // a manifest as written (the lab's appset.yaml: no status), not objects read from the cluster
        const manifest = (() => {
            try {
                const doc = parseYaml(text) as { kind?: unknown; status?: unknown } | null;
                return doc && typeof doc.kind === "string" && doc.kind !== "List" && doc.status === undefined ? doc.kind : undefined;
            } catch {
                return undefined; // more than one document, or no YAML: said as YAML below
            }
        })();
        if (manifest)
            throw new Error(
                `${source} is a manifest (kind: ${manifest}, as written, with no status), not a dump of the cluster: the doctor reads what the cluster holds; leave --from out to read it live, or ${DUMP_HINT}`,
            );
        throw new Error(`${source} is YAML (kubectl -o yaml): the doctor reads -o json; ${DUMP_HINT}`);
    }
    // kubectl's own messages written before the JSON (2>&1, or a Warning: line): said, with the redirect to leave out
    const before = /^\s*([^\s{[][^\n]*)\n[\s\S]*?^\{/m.exec(text);
    if (before && !text.trimStart().startsWith("{") && !text.trimStart().startsWith("["))
        throw new Error(
            `${source} starts with text before the JSON (${JSON.stringify(before[1].slice(0, 60))}: kubectl's stderr, written with 2>&1?): make it with stdout alone, ${DUMP_HINT_COMMAND} > FILE (no 2>&1)`,
        );
    let list: unknown;
    try {
        list = parseJson(text);
    } catch (e) {
        throw new Error(`${source} is not JSON (${messageOf(e)}); ${DUMP_HINT}`);
    }
    // a simulated lab's saved cluster (simulated-cluster.json): the lab's own state, which the served lab answers for
    const saved = list as { rv?: unknown; objects?: unknown } | null;
    if (saved && typeof saved.rv === "number" && Array.isArray(saved.objects))
        throw new Error(
            `${source} is a simulated lab's saved cluster (simulate keeps its state there), not a dump: read the lab live while simulate --serve serves it (--kubeconfig ${file === "-" ? "DIR/kubeconfig" : path.join(path.dirname(path.resolve(file)), "kubeconfig")}), or make a dump from it; ${DUMP_HINT}`,
        );
    // kubectl get events -o json (or another kind) given for the dump: named by what it holds
    const items = (list as { items?: unknown })?.items;
    if (Array.isArray(items) && items.length) {
        const kinds = new Map<string, number>();
        for (const i of items) {
            const k = String((i as { kind?: unknown })?.kind ?? "unknown");
            kinds.set(k, (kinds.get(k) ?? 0) + 1);
        }
        // the dump command's other kinds alone: Argo CD's objects are elsewhere (said below, as for an empty dump)
        if (
            !kinds.has("ApplicationSet") &&
            !kinds.has("Application") &&
            [...kinds.keys()].some((k) => !["AppProject", "Job", "Pod"].includes(k))
        )
            throw new Error(
                `${source} holds only ${[...kinds].map(([k, n]) => `${n} ${k}${n === 1 ? "" : "s"}`).join(", ")}, none of Argo CD's ApplicationSets or Applications; ${DUMP_HINT}`,
            );
    }
    // several Lists in one array (jq -s over two dumps): one List holds them all
    if (Array.isArray(list) && list.length >= 1 && list.every((x) => (x as { kind?: unknown } | null)?.kind === "List"))
        throw new Error(
            `${source} holds a JSON array of ${list.length === 1 ? "one List" : `${list.length} Lists`} (as jq -s writes), not one List: make one dump with one kubectl get of every kind (${DUMP_HINT_COMMAND}), or join their items into one: jq '{apiVersion: "v1", kind: "List", items: (map(.items) | add)}' ${path.basename(file)}`,
        );
    // the List's items alone (jq .items), or the doctor's own --json output fed back
    if (Array.isArray(list))
        throw new Error(
            `${source} holds a JSON array (the List's items alone, as jq .items writes), not the List kubectl prints: ${DUMP_HINT}`,
        );
    if ((list as { applicationSets?: unknown })?.applicationSets !== undefined)
        throw new Error(`${source} is the doctor's own --json output (its findings), not a dump of the cluster: ${DUMP_HINT}`);
    // a lab's result file (stall.json, recovery.json, the shop's): an object with no kind, named as one, or with a commit
    const result = list as { commit?: unknown; kind?: unknown; items?: unknown } | null;
    const named = [...SHOP_RESULT_FILES, ...TENANTS_RESULT_FILES].some((n) => path.basename(file) === `${n}.json`);
    if (
        result &&
        typeof result === "object" &&
        !Array.isArray(result) &&
        result.kind === undefined &&
        result.items === undefined &&
        (named || typeof result.commit === "string")
    )
        throw new Error(
            `${source} is a lab's result file (what a step wrote: a commit and what was seen), not a dump of the cluster: read the cluster live (leave --from out), or ${DUMP_HINT}`,
        );
    // every status taken out (to share the dump): the doctor reads nothing but statuses, and would guess a cause
    if (
        Array.isArray(items) &&
        items.some((i) => ["ApplicationSet", "Application"].includes(String((i as { kind?: unknown })?.kind))) &&
        items.every((i) => (i as { status?: unknown })?.status === undefined)
    )
        throw new Error(
            `${source} holds no status on any object (taken out to share it?): the doctor reads the statuses Argo CD writes; dump them as kubectl prints them: ${DUMP_HINT}`,
        );
    try {
        return dumpFromList(list);
    } catch (e) {
        throw new Error(`${source}: ${messageOf(e)}`);
    }
}

/** Why a dump cannot be diagnosed (empty, or of some kinds only: its rounds would blame what it lacks); undefined when it can. */
export function dumpProblem(dump: Dump, from: string): string | undefined {
    const source = from === "-" ? "standard input" : from;
    // an empty dump, or a cluster with nothing of Argo CD, is most often the wrong context or namespace: not "nothing stuck"
    if (!dump.applicationSets.length && !dump.applications.length)
        return `${source} holds no ApplicationSets and no Applications (a dump of another context or namespace?); ${DUMP_HINT}`;
    // a dump of some kinds only: Applications an ApplicationSet made without it, or ApplicationSets without their Applications
    const made = dump.applications.filter((a) => (a.metadata?.ownerReferences ?? []).some((r) => r.kind === "ApplicationSet"));
    if (!dump.applicationSets.length && made.length)
        return `${source} holds ${made.length} Application${made.length === 1 ? "" : "s"} made by an ApplicationSet but no ApplicationSets: a dump of some kinds only; ${DUMP_HINT}`;
    // (a dump of every kind holds the AppProjects too: its Applications really are gone, which the findings say)
    if (
        !dump.applications.length &&
        !dump.appProjects?.length &&
        dump.applicationSets.some((a) => (a.status?.applicationStatus ?? []).length)
    )
        return `${source} holds ApplicationSets but none of their Applications: a dump of some kinds only; ${DUMP_HINT}`;
    return undefined;
}
