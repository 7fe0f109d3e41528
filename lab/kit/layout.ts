/**
 * Where a lab lives on a host: every path hangs off one `root` prefix (`/` on a real lab host, a
 * temporary directory in tests and in `simulate`). A lab names its working folder and its bare
 * repository; the rest is the same for every lab: the git daemon's folder, the clone, the applied
 * ApplicationSet and the result files.
 */
import { shellWord } from "../ports/shellWord";
import * as fs from "fs";
import * as path from "path";
import { mkdirReadable, readJsonIfExists, writeJsonAtomic } from "../ports/files";
import type { RepoSite } from "../platform/labRepo";

export interface LabSite<N extends string> extends RepoSite {
    /** The prefix everything below hangs off (`/` on a real host). */
    root: string;
    /** The ApplicationSet manifest as applied: `<workDir>/appset.yaml`. */
    appsetFile: string;
    /** A result file: `<workDir>/<name>.json`. */
    resultFile(name: N): string;
}

export interface SiteOptions {
    /** The lab's working folder under `<root>/root` ("cnpa-env", "tenants-lab"). */
    workDir: string;
    /** The bare repository's name under `<root>/srv/bare` ("shop-envs.git"). */
    repoName: string;
}

export function labSite<N extends string>(root: string, o: SiteOptions): LabSite<N> {
    if (!path.isAbsolute(root)) {
        throw new Error(`root must be an absolute path, got "${root}"; use "/" on a lab host or a temporary directory in tests`);
    }
    const r = path.resolve(root);
    const bareDir = path.join(r, "srv", "bare");
    const workDir = path.join(r, "root", o.workDir);
    return {
        root: r,
        bareDir,
        bareRepo: path.join(bareDir, o.repoName),
        workDir,
        clone: path.join(workDir, "repo"),
        appsetFile: path.join(workDir, "appset.yaml"),
        resultFile: (name) => path.join(workDir, `${name}.json`),
    };
}

/**
 * How a learner takes a lab under `root` back to where `through` leaves it, to do the next step again: the
 * simulated lab's reset (it takes only --root) and a run to that step, or a host's destroy and up. The root
 * quoted for a shell when it needs it.
 */
export function startAgainAt(root: string, o: { lab: "shop" | "tenants"; through: number }): string {
    const key = o.lab === "tenants" ? "tenantsSolveThrough" : "solveThrough";
    const host = `pulumi destroy, then pulumi up with ${key} ${o.through}`;
    if (root === "/") return host;
    const r = shellWord(root);
    const lab = o.lab === "tenants" ? " --lab tenants" : "";
    return `gitops-lab simulate --reset --root ${r} (it takes down every lab under the root), then gitops-lab simulate --root ${r}${lab} --through ${o.through} --serve; on a host, ${host}`;
}

/**
 * The bare repositories' directory under a lab host's root (the simulated host's, or the real node's
 * lab root), which, like a real host's / and /srv, everyone may pass through: the git daemon reads it
 * as nobody.
 */
export function prepareHostRoot(layout: { root: string; bareDir: string }, alsoMade: string[] = []): void {
    recordMade(layout.root, [layout.bareDir, ...alsoMade]);
    mkdirReadable(layout.bareDir);
    for (const dir of [layout.root, path.dirname(layout.bareDir)]) fs.chmodSync(dir, fs.statSync(dir).mode | 0o005);
}

/** Where a served lab's instructions clone a lab's repository from its git daemon (read-only), under the root. */
export const CLONES_DIR = "clones";
export const servedCloneDir = (root: string, name: "shop-envs" | "platform") => path.join(root, CLONES_DIR, name);

/** Where a run under a root keeps the record of the folders it made (those that were not there before it). */
export const madeRecordFile = (root: string) => path.join(root, ".gitops-lab-made.json");

/**
 * Records, before anything is made, which of these folders and their parents up to the root are not
 * there yet (so a run the lab makes them in): a reset removes only recorded folders, and keeps a folder
 * that was there before the lab, even an empty one. The root itself is never recorded (it is given);
 * the record holds paths relative to the root, so a copied root carries its own.
 */
export function recordMade(root: string, dirs: string[]): void {
    const r = path.resolve(root);
    const made = new Set(madeDirs(r).map((d) => path.relative(r, d)));
    const before = made.size;
    for (const dir of dirs)
        for (let d = path.resolve(dir); d.startsWith(r + path.sep); d = path.dirname(d))
            if (!fs.existsSync(d)) made.add(path.relative(r, d));
    if (made.size === before) return;
    fs.mkdirSync(r, { recursive: true });
    writeJsonAtomic(madeRecordFile(r), [...made].sort());
}

/** The record as written, or undefined when there is none or it cannot be read (cut short, edited): read as no record. */
function madeRecord(root: string): unknown {
    try {
        return readJsonIfExists<unknown>(madeRecordFile(root));
    } catch {
        return undefined;
    }
}

/** Whether a record of what the lab made is there and readable (a reset says so when it is not). */
export const madeRecordReadable = (root: string) => Array.isArray(madeRecord(path.resolve(root)));

/** The folders (absolute) a run under this root recorded as made (none when there is no record). */
export function madeDirs(root: string): string[] {
    const r = path.resolve(root);
    const list = madeRecord(r);
    return Array.isArray(list)
        ? list
              .filter((d): d is string => typeof d === "string" && !path.isAbsolute(d) && !d.split(path.sep).includes(".."))
              .map((d) => path.join(r, d))
        : [];
}

/**
 * A reset's line for an empty folder of a lab path that no run recorded as made: kept, and why.
 * `recordGone`: the record's path when the reset found none (deleted by hand), else undefined.
 */
export function keptNotMade(dir: string, recordGone: string | undefined): string {
    return recordGone
        ? `kept ${dir}: no record says the lab made it (${recordGone}, where each run records what it makes, is gone or unreadable), so it may have been there before the lab; remove it by hand if it is not yours`
        : `kept ${dir}: it was there before the lab (a reset removes only what the lab made)`;
}

/** Where a run that made the lab's root itself records it, with the folders above it that it made too. */
export const rootMadeFile = (root: string) => path.join(root, ".gitops-lab-root-made.json");

/** The root and the folders above it that are not there yet, the root first (none when the root is there). */
export function foldersToMake(root: string): string[] {
    const out: string[] = [];
    for (let d = path.resolve(root); !fs.existsSync(d) && path.dirname(d) !== d; d = path.dirname(d)) out.push(d);
    return out;
}

/** Records (once the root is made) which of the root and the folders above it a run made: `foldersToMake`'s, before. */
export function recordRootMade(root: string, made: string[]): void {
    if (made.length && fs.existsSync(root)) writeJsonAtomic(rootMadeFile(root), { root: path.resolve(root), made });
}

/**
 * After a reset that left nothing under the root: the root and the folders above it that a run made, removed
 * while each is empty (rmdir, never more), and said. A root moved or copied since keeps its folders: its record
 * names another path.
 */
export function removeRootMade(root: string, log: (line: string) => void): void {
    const r = path.resolve(root);
    let rec: { root?: unknown; made?: unknown } | undefined;
    try {
        rec = readJsonIfExists<{ root?: unknown; made?: unknown }>(rootMadeFile(r));
    } catch {
        return; // cut short or edited: read as no record, the folders kept
    }
    if (!rec || rec.root !== r || !Array.isArray(rec.made)) return;
    const others = fs.readdirSync(r).filter((n) => n !== path.basename(rootMadeFile(r)));
    if (others.length) {
        // a file of the learner's in the folder the lab made for its root: kept, and said
        log(
            `kept ${r}: it holds ${others.slice(0, 3).join(", ")}${others.length > 3 ? ", ..." : ""}, which the lab did not make (the lab made ${r}: a reset once it is empty removes it)`,
        );
        return;
    }
    fs.rmSync(rootMadeFile(r));
    const removed: string[] = [];
    for (const d of rec.made) {
        // the root and its parents alone, deepest first: the first that is not empty (or not one of them) ends it
        if (typeof d !== "string" || !(d === r || r.startsWith(d + path.sep))) break;
        try {
            fs.rmdirSync(d);
            removed.push(d);
        } catch {
            // the root not empty after all (a file made meanwhile): its record back, for the next reset
            if (d === r) writeJsonAtomic(rootMadeFile(r), rec);
            break;
        }
    }
    if (removed.length) log(`removed ${removed.join(", ")}: made by the lab for its root, and empty now`);
}
