/** `kubectl kustomize` (kustomize built into kubectl), the renderer the labs check their overlays with. */
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { run } from "./exec";
import type { KubeObject } from "../argo/types";

/** The folder GITOPS_LAB_RENDER_MEMO names, shared by every process given it (the tests' workers: test/setup.ts). */
const MEMO_ENV = "GITOPS_LAB_RENDER_MEMO";
const memo = new Map<string, string>();

/**
 * A hash of everything under `dir` kustomize could read: each file's path and bytes, each symbolic
 * link's path and target (the listing does not follow links). Every part is prefixed with its length,
 * so no two different trees give the same stream.
 */
function contentHash(dir: string): string {
    const hash = createHash("sha1");
    const part = (kind: string, data: string | Buffer) => hash.update(`${kind}${Buffer.byteLength(data)}:`).update(data);
    for (const p of fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
        const abs = path.join(dir, p);
        const st = fs.lstatSync(abs);
        if (st.isSymbolicLink()) {
            part("L", p);
            part("T", fs.readlinkSync(abs));
        } else if (st.isFile()) {
            part("F", p);
            part("C", fs.readFileSync(abs));
        }
    }
    return hash.digest("hex");
}

export interface KustomizeOptions {
    /**
     * The checkout `dir` lies in (a commit's files, nothing else): the output is then remembered per
     * content of the checkout and path, for the process's life and through the folder
     * GITOPS_LAB_RENDER_MEMO names when set. The files fix everything kustomize reads (the labs'
     * bases are in their repositories, none remote), so the output never changes, and running it
     * again costs only a process (about 0.2 s of CPU: most of the fast tests' kubectl time). By
     * content, not by commit: every lab built anew commits the same files under new SHAs. Failures
     * are not remembered (their message names the folder).
     */
    checkout?: string;
    /** Run kustomize even when the output is remembered (a hard refresh: a base fetched from elsewhere is read again, as upstream does). */
    fresh?: boolean;
}

/** What `kubectl kustomize <dir>` prints. */
export async function kustomizeOutput(dir: string, kubectl = "kubectl", opts: KustomizeOptions = {}): Promise<string> {
    if (!opts.checkout) return (await run(kubectl, ["kustomize", dir])).stdout;
    const key = createHash("sha1")
        .update(JSON.stringify([kubectl, contentHash(opts.checkout), path.relative(opts.checkout, dir)]))
        .digest("hex");
    const shared = process.env[MEMO_ENV];
    const file = shared ? path.join(shared, `${key}.yaml`) : undefined;
    let out = opts.fresh ? undefined : (memo.get(key) ?? (file && fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined));
    if (out === undefined) {
        out = (await run(kubectl, ["kustomize", dir])).stdout;
        if (file) {
            // sharing is only a saving: a folder that cannot take it (gone, full) changes nothing of the render
            const tmp = `${file}.${process.pid}.tmp`;
            try {
                fs.mkdirSync(shared!, { recursive: true });
                fs.writeFileSync(tmp, out);
                fs.renameSync(tmp, file);
            } catch {
                fs.rmSync(tmp, { force: true });
            }
        }
    }
    memo.set(key, out);
    return out;
}

/** The objects `kubectl kustomize <dir>` renders. */
export async function kustomizeBuild(dir: string, kubectl = "kubectl", opts: KustomizeOptions = {}): Promise<KubeObject[]> {
    return parseAllDocuments(await kustomizeOutput(dir, kubectl, opts))
        .map((d) => d.toJSON())
        .filter(Boolean);
}

/**
 * `kubectl kustomize` reports errors through klog (`E1129 ... "command failed" err="..."`), the
 * kustomize binary the repo-server runs as `Error: ...`: turn the first into the second.
 */
export function asKustomizeError(stderr: string): string {
    // klog's form for a value of several lines: err=<, each line indented with a tab, then a line " >"
    const block = /err=<\n([\s\S]*?)\n >\s*$/.exec(stderr);
    if (block) return `Error: ${block[1].replace(/^\t/gm, "")}`;
    const m = /err="((?:[^"\\]|\\.)*)"/.exec(stderr);
    if (!m) return stderr.trim().replace(/^error: /, "Error: ");
    const inner = m[1].replace(/\\'/g, "'");
    try {
        return `Error: ${JSON.parse(`"${inner}"`)}`;
    } catch {
        return `Error: ${inner}`;
    }
}

/**
 * Why a checkout's overlay does not render, in a line a learner can act on: a resource the
 * kustomization lists that the commit does not have, named; otherwise kustomize's own message with
 * the checkout's temporary folder left out.
 */
export function kustomizeProblem(stderr: string, checkout: string): string {
    const message = asKustomizeError(stderr)
        .replace(/^Error: /, "")
        .split(`${checkout}/`)
        .join("");
    const missing = /accumulating resources from '([^']+)'[^]*no such file or directory/.exec(message);
    if (missing) return `its kustomization.yaml lists ${missing[1]} in resources, and the commit has no such file`;
    return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}
