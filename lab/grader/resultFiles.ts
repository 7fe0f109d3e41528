/**
 * The checks every result file gets, whatever the lab: it exists and is a JSON object, it has
 * exactly its schema's keys, each key has its type, and each SHA is a commit of the lab's
 * repository. A lab gives its files, its fields (from its zod schemas) and where its world keeps them.
 */
import { shellWord } from "../ports/shellWord";
import * as fs from "fs";
import * as path from "path";
import type { SchemaField } from "../ports/schema";
import { parseJson } from "../ports/files";
import { parseDocument } from "yaml";
import { BareRepo } from "./bareRepo";
import { Check, eq } from "./grader";
import { codeOf, messageOf } from "../ports/errors";
import { distance } from "fastest-levenshtein";

/** A result file as found: missing, not JSON, or parsed. */
// a learner's file, of any shape: each check reads it defensively (the one any of the product)
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a learner's JSON, read field by field by checks that expect anything
type Learners = any;

export type FileState = { exists: false } | { exists: true; error: string } | { exists: true; value: Learners };

/** A result file's field, from its schema (lab/ports/schema.ts). */
export type Field = SchemaField;

/** What a world must offer for its result files to be checked. */
export interface ResultFilesWorld<N extends string> {
    files: Record<N, FileState>;
    repo: BareRepo;
    /** The learner's clone (its .git), where a commit not yet pushed is found. */
    clone?: BareRepo;
    /** The clone a served lab's instructions make from its git daemon (read-only: a commit there cannot be pushed). */
    servedClone?: { dir: string; repo: BareRepo };
    fileOf(name: N): string;
}

export const isSha = (v: unknown): v is string => typeof v === "string" && /^[0-9a-f]{40}$/.test(v);

/**
 * A key written twice in one object (JSON.parse keeps the last, and hides the first without a word), as
 * one line naming it and its line; undefined when every key is once. YAML 1.2 reads JSON, and says so.
 */
function duplicateKey(text: string): string | undefined {
    const e = parseDocument(text, { uniqueKeys: true }).errors.find((x) => x.code === "DUPLICATE_KEY");
    if (!e) return undefined;
    const line = e.linePos?.[0]?.line ?? 0;
    const key = /"([^"]+)"\s*:/.exec(text.split("\n")[line - 1]?.slice((e.linePos?.[0]?.col ?? 1) - 1) ?? "")?.[1];
    return `it names ${key ? `"${key}"` : "a key"} twice${line ? ` (line ${line})` : ""}: JSON keeps the last and hides the other; write each key once`;
}

/** Reads result files: missing, not JSON, or their value. */
export function readResultFiles<N extends string>(names: readonly N[], fileOf: (name: N) => string): Record<N, FileState> {
    const files = {} as Record<N, FileState>;
    for (const name of names) {
        const file = fileOf(name);
        if (!fs.existsSync(file)) {
            files[name] = { exists: false };
            continue;
        }
        try {
            const text = fs.readFileSync(file, "utf8");
            const value = parseJson(text);
            const twice = duplicateKey(text);
            files[name] = twice ? { exists: true, error: twice } : { exists: true, value };
        } catch (e) {
            files[name] = { exists: true, error: codeOf(e) === "EISDIR" ? "it is a folder, not a file" : messageOf(e) };
        }
    }
    return files;
}

/**
 * A result file written elsewhere than the lab reads it: in the current folder, a clone beside it (written
 * from where the learner works), or the served lab's clone; undefined when none.
 */
function misplaced(file: string, servedClone?: string, others: string[] = []): string | undefined {
    const name = path.basename(file);
    const dir = path.dirname(file);
    // the clones beside it (a folder holding .git): where a learner works, and writes from
    let beside: string[] = [];
    try {
        beside = fs
            .readdirSync(dir, { withFileTypes: true })
            .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, ".git")))
            .map((d) => path.join(dir, d.name));
    } catch {
        // no folder there, or one that cannot be read: nothing beside it to name
    }
    let names: string[] = [];
    try {
        names = fs.readdirSync(dir);
    } catch {
        // as above
    }
    // beside it under the name in another case (report.JSON): the lab reads its name as written
    const cased = names.find((n) => n !== name && n.toLowerCase() === name.toLowerCase());
    if (cased) return path.join(dir, cased);
    // saved with an extension added (stall.json.txt, an editor's; stall.txt): the lab reads its name as written
    const quoted = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    // (an editor's or a habit's: not .bak or .orig, which a learner makes to keep a file aside)
    const extended = new RegExp(`^(?:${quoted(name)}\\.(?:txt|text|json)|${quoted(name.replace(/\.json$/, ""))}\\.(?:txt|text))$`, "i");
    const added = names.find((n) => extended.test(n) && fs.statSync(path.join(dir, n), { throwIfNoEntry: false })?.isFile());
    if (added) return path.join(dir, added);
    // its name misspelt (recover.json, stal.json): a letter or two off, and not another of the lab's files (report, revert)
    // (and nearer to this one's name than to any other of the lab's: revrt.json is revert's, not report's)
    const stem = (n: string) => n.replace(/\.json$/i, "").toLowerCase();
    const base = stem(name);
    const lab = others.map(stem);
    const misspelt = names.find(
        (n) =>
            n !== name &&
            !lab.includes(stem(n)) &&
            /\.json$/i.test(n) &&
            distance(stem(n), base) <= Math.max(1, Math.floor(base.length / 3)) &&
            lab.every((o) => o === base || distance(stem(n), o) > distance(stem(n), base)) &&
            fs.statSync(path.join(dir, n), { throwIfNoEntry: false })?.isFile(),
    );
    if (misspelt) return path.join(dir, misspelt);
    // the folders above it, the lab's --root among them (<root>/root/cnpa-env/drift.json written as <root>/drift.json)
    const above = [path.dirname(dir), path.dirname(path.dirname(dir))];
    return [process.cwd(), ...beside, ...(servedClone ? [servedClone] : []), ...above]
        .map((d) => path.join(d, name))
        .find((f) => path.resolve(f) !== path.resolve(file) && fs.statSync(f, { throwIfNoEntry: false })?.isFile());
}

/** What a JSON value is, for a person: "an array: [1,2]", "null", "a string: \"on\"" (at most 60 characters of it). */
function describeJson(v: unknown): string {
    const text = JSON.stringify(v);
    const short = text.length > 60 ? `${text.slice(0, 57)}...` : text;
    if (v === null) return "null";
    if (Array.isArray(v)) return `an array: ${short}`;
    return `a ${typeof v}: ${short}`;
}

/** A parsed result object, or undefined when its file is missing or not a JSON object. */
export function resultObject<N extends string>(w: ResultFilesWorld<N>, name: N): Learners {
    const f = w.files[name];
    return f.exists && "value" in f && f.value !== null && typeof f.value === "object" && !Array.isArray(f.value) ? f.value : undefined;
}

/**
 * `late`: a hint for the file missing once the lab has moved past what it records (the tenants' stall ended by the fix),
 * in place of the step's own, which asks for what is no longer there to see.
 */
export function resultFileChecks<N extends string, W extends ResultFilesWorld<N>>(
    name: N,
    step: number,
    fields: Field[],
    late?: (w: W) => Promise<string | undefined>,
): Check<W>[] {
    const checks: Check<W>[] = [
        {
            step,
            name: `${name}.json exists and is JSON`,
            run: async (w) => {
                const f = w.files[name];
                const file = w.fileOf(name);
                // what to write is no answer: the keys are in the next check's name
                const keys = `a JSON object with the keys ${fields.map((f) => f.key).join(", ")}`;
                const write = `write ${file}: ${keys}`;
                if (!f.exists) {
                    const elsewhere = misplaced(
                        file,
                        w.servedClone?.dir,
                        (Object.keys(w.files) as N[]).map((n) => path.basename(w.fileOf(n))),
                    );
                    if (elsewhere)
                        return {
                            ok: false,
                            expected: file,
                            found: `no such file (one is at ${elsewhere})`,
                            hint: `${path.basename(file)} is at ${elsewhere}, not where the lab reads it: move it there (mv ${shellWord(elsewhere)} ${shellWord(file)})`,
                        };
                    const gone = await late?.(w);
                    if (gone) return { ok: false, expected: file, found: "no such file", hint: `${gone}; write ${file}: ${keys}` };
                    return { ok: false, expected: file, found: "no such file", then: `write ${file} (there is none yet): ${keys}` };
                }
                const waiting = `; the checks of its keys and values wait for it`;
                if ("error" in f) {
                    // the doctor's text saved as the file (doctor > stall.json): its summary line, not JSON
                    const head = fs.statSync(file, { throwIfNoEntry: false })?.isFile() ? fs.readFileSync(file, "utf8").slice(0, 200) : "";
                    const doctorText = /^[\w.-]+(?:\/[\w.-]+)?: rollout /.test(head);
                    // written as YAML (key: value lines): the lab's files are JSON
                    const yamlText = !doctorText && /^\s*[A-Za-z_][\w-]*:(\s|$)/.test(head) && !head.trimStart().startsWith("{");
                    // empty (a command that was to write it failed after its > had emptied it: jq . F > F empties F first)
                    const empty = fs.statSync(file, { throwIfNoEntry: false })?.isFile() && !fs.readFileSync(file, "utf8").trim();
                    return {
                        ok: false,
                        expected: "valid JSON",
                        found: `${empty ? "an empty file" : f.error}${waiting}`,
                        hint: empty
                            ? `it is empty${fs.statSync(file).size ? " (white space alone)" : " (0 bytes)"}: the command that was to write it wrote nothing (a > empties the file before the command runs, so one that then fails, or reads the same file, as jq . F > F does, leaves it empty): ${write}`
                            : doctorText
                              ? `it holds the rollout doctor's text (its summary line), not JSON: ${write}, each value from what the doctor and the cluster show`
                              : yamlText
                                ? `it is YAML (key: value lines), not JSON: ${write}, as {"key": value, ...} (jq or JSON.stringify write it)`
                                : / twice( \(line \d+\))?: JSON keeps the last/.test(f.error)
                                  ? f.error
                                  : `it is not JSON (${f.error}): ${write}`,
                    };
                }
                const v = f.value;
                const ok = v !== null && typeof v === "object" && !Array.isArray(v);
                return ok
                    ? true
                    : {
                          ok,
                          expected: "a JSON object",
                          found: `${describeJson(v)}${waiting}`,
                          hint: `it holds ${describeJson(v)}: ${write}`,
                      };
            },
        },
        {
            step,
            name: `${name}.json has exactly the keys ${fields.map((f) => f.key).join(", ")}`,
            run: async (w) => {
                const o = resultObject(w, name);
                if (!o) return null;
                const outcome = eq(fields.map((f) => f.key).sort(), Object.keys(o).sort());
                const missing = fields.map((f) => f.key).filter((k) => !(k in o));
                const extra = Object.keys(o).filter((k) => !fields.some((f) => f.key === k));
                if (outcome.ok) return outcome;
                // the doctor's --json (or another tool's output) saved as the file: said, with the keys the file holds instead
                const doctor = "applicationSets" in o ? " (the doctor's --json output? this file is your own summary, not its report)" : "";
                return {
                    ...outcome,
                    hint: `${name}.json ${missing.length ? `lacks ${missing.join(", ")}` : ""}${missing.length && extra.length ? " and " : ""}${extra.length ? `holds ${extra.join(", ")}, which it does not take` : ""}${doctor}: write an object with exactly the keys ${fields.map((f) => f.key).join(", ")}`,
                };
            },
        },
    ];
    for (const f of fields) {
        checks.push({
            step,
            name: `${name}.${f.key} is ${f.what}`,
            run: async (w) => {
                const o = resultObject(w, name);
                if (!o || !(f.key in o)) return null;
                const v = o[f.key];
                const ok = f.check(v);
                // (the table says why too: its expected and found alone do not show a case or a slip)
                return { ok, expected: f.what, found: JSON.stringify(v), ...(ok ? {} : { hint: whyNot(f, v), why: whyNot(f, v) }) };
            },
        });
        if (f.isSha) {
            checks.push({
                step,
                name: `${name}.${f.key} is a commit of the repository`,
                run: async (w) => {
                    const v = resultObject(w, name)?.[f.key];
                    if (!isSha(v)) return null;
                    if (await w.repo.isCommit(v)) return true;
                    // an annotated tag's own SHA (git rev-parse TAG names the tag object): the commit it tags is wanted
                    const type = await w.repo.objectType(v);
                    // a tree's or a file's SHA (git rev-parse HEAD^{tree}, git ls-tree): an object of the repository, no commit
                    if (type === "tree" || type === "blob")
                        return {
                            ok: false,
                            expected: "a commit in the bare repo",
                            found: `${v.slice(0, 12)}, a ${type === "tree" ? "tree (a folder's content)" : "blob (a file's content)"} of the repository`,
                            hint: `${name}.${f.key} holds a ${type === "tree" ? "tree's" : "file's (blob's)"} SHA, not a commit's: write the commit's (git rev-parse HEAD, or git log --oneline in the lab's clone)`,
                        };
                    if (type === "tag") {
                        const tag = (await w.repo.tagsOfObject(v))[0] ?? "TAG";
                        return {
                            ok: false,
                            expected: "a commit in the bare repo",
                            found: `${v.slice(0, 12)}, the annotated tag ${tag}'s own object`,
                            hint: `${name}.${f.key} holds the annotated tag ${tag}'s SHA, not a commit's (git rev-parse ${tag} names the tag): write the commit it tags, git rev-parse ${tag}^{commit}`,
                        };
                    }
                    const unpushed = w.clone?.exists() && (await w.clone.isCommit(v));
                    // made in the daemon's clone, whose push the daemon refuses: the lab's clone is where commits are pushed from
                    if (!unpushed && w.servedClone?.repo.exists() && (await w.servedClone.repo.isCommit(v)))
                        return {
                            ok: false,
                            expected: "a commit in the bare repo",
                            found: `${v} not found (it is in ${w.servedClone.dir})`,
                            hint: `${v.slice(0, 12)} is a commit of ${w.servedClone.dir}, a clone of the git daemon, which is read-only (its push is refused): make the change in the lab's clone${w.clone ? ` (${path.dirname(w.clone.gitDir)})` : ""} and push from there`,
                        };
                    return {
                        ok: false,
                        expected: "a commit in the bare repo",
                        found: `${v} not found${unpushed ? " (it is in the clone)" : ""}`,
                        hint: unpushed
                            ? `${v.slice(0, 12)} is a commit of your clone that was never pushed: git push origin ${v.slice(0, 12)}:refs/heads/BRANCH (git branch --contains ${v.slice(0, 12)} names its branch)`
                            : `${name}.${f.key} holds ${v.slice(0, 12)}, which neither the repository nor ${w.clone?.exists() ? "your clone" : "any clone of the lab"} has (a typo, or a SHA from another repository): copy it from git log --all in the lab's clone`,
                    };
                },
            });
        }
    }
    return checks;
}

/** A string's value without its quotes ("1" -> 1, "false" -> false), or undefined when it is not JSON. */
function unquotedOf(v: string): unknown {
    try {
        return JSON.parse(v);
    } catch {
        return undefined;
    }
}

/**
 * Why a result field's value is not what it must be, as a hint naming the value: the mistakes a
 * learner makes most (a short or upper-case SHA, a number or a boolean in quotes) get their fix.
 */
export function whyNot(f: SchemaField, v: unknown): string {
    const held = JSON.stringify(v);
    // several commits where one is asked for: a list, or SHAs one after another in a string
    const shas = Array.isArray(v) ? v : typeof v === "string" ? v.trim().split(/[\s,]+/) : [];
    if (f.isSha && shas.length > 1 && shas.every((x) => typeof x === "string" && /^[0-9a-fA-F]{7,40}$/.test(x)))
        return `it holds ${shas.length} commits: write one, the full SHA of the commit the step asks for`;
    if (f.isSha && typeof v === "string") {
        // nothing: the command that was to give it read nothing (a field of another name: .status.sync.revisions, plural)
        if (v.trim() === "")
            return `it is empty: the command that was to give it read nothing${/revision/.test(f.key) ? " (an Application's synced commit is status.sync.revision, singular; .status.sync.revisions is for an Application of several sources: kubectl -n argocd get application NAME -o jsonpath={.status.sync.revision})" : " (git rev-parse in the clone prints a commit's full SHA; git log --oneline finds it)"}`;
        if (/^[0-9a-fA-F]{4,39}$/.test(v)) return `it holds ${v.length} characters: write the full SHA (git rev-parse ${v} prints it)`;
        if (/^[0-9A-Fa-f]{40}$/.test(v)) return `it holds upper-case letters: write the SHA in lower case, as git prints it`;
        // HEAD (or HEAD~1, @): git's name for the commit checked out, which moves with the next commit or checkout
        if (/^(?:HEAD|@)(?:[~^]\d*)*$/.test(v))
            return /^(?:HEAD|@)$/.test(v)
                ? `it holds ${held}, git's name for the commit checked out (it moves with the next commit), not a SHA: write the full SHA it stands for (git rev-parse ${v} in the clone prints it; git log --oneline finds an earlier one)`
                : `it holds ${held}, a commit named from the one checked out (its name moves with the next commit), not a SHA: write the full SHA it stands for (git rev-parse ${v} in the clone prints it; git log --oneline finds another)`;
        // a branch's name (an Application's targetRevision copied): the field takes the commit, which a branch moves off
        if (/^(refs\/heads\/|origin\/)?(main|master|release[-_/]prod|origin\/HEAD)$/.test(v))
            // promote.from: the branch's commit before the push, which the branch itself no longer shows once it moved
            return f.key === "from"
                ? `it holds ${held}, a branch's name, not a commit: write the full SHA release/prod stood at before your push, which pin.json's release_prod_initial holds (git rev-parse origin/release/prod shows where the push moved it, promote.to)`
                : `it holds ${held}, a branch's name, not a commit: write the full SHA it stood at (an Application's status.sync.revision shows the commit Argo CD synced; git rev-parse ${/^(refs\/heads\/|origin\/)/.test(v) ? v : `origin/${v}`} in the clone, after a git fetch, shows the branch's now: a branch of the remote the clone never checked out is origin/${v.replace(/^(refs\/heads\/|origin\/)/, "")} there)`;
    }
    // a uid (or any value: rollback's "Revert") right but for its case: written as the step names it (a uid as Kubernetes prints it)
    if (typeof v === "string" && v !== v.toLowerCase() && f.check(v.toLowerCase()))
        return `it holds upper-case letters: write ${JSON.stringify(v.toLowerCase())}, in lower case${/uid$/i.test(f.key) ? ", as Kubernetes prints it" : ""}`;
    // a negative number of seconds: the times subtracted the other way round (the push's time minus the diagnosis's)
    if (typeof v === "number" && v < 0 && /seconds/.test(f.key) && f.check(-v))
        return `it holds ${v}, below 0: the seconds are the later time minus the earlier (subtracted the other way round?): ${-v}`;
    // a fraction where a whole number goes (0.5 s, the poll interval)
    if (typeof v === "number" && !Number.isInteger(v) && f.check(Math.ceil(v)))
        return `it holds ${v}: write a whole number${/seconds/.test(f.key) ? " of seconds, rounded up" : ""} (${Math.ceil(v)})`;
    if (typeof v === "string") {
        const unquoted = unquotedOf(v);
        if (unquoted !== undefined && typeof unquoted !== "string" && f.check(unquoted))
            return `it holds the string ${held}: write ${v} without the quotes`;
    }
    // true or false where a string goes: YAML's on and off read as booleans, and the value as a ConfigMap holds it is a string
    if (typeof v === "boolean" && f.check(String(v)) && /_value$/.test(f.key))
        return `it holds ${v}, a boolean: write the value as the ConfigMap holds it, a string in quotes (YAML reads an unquoted on or off as a boolean): "${v ? "on" : "off"}"`;
    // null where a boolean goes: the command that was to answer failed (git merge-base --is-ancestor exits 128 for a
    // branch the clone has only as origin/<branch>), and jq or a script wrote nothing in its place
    if (v === null && f.check(true) && f.check(false))
        return `it holds null: write true or false${/reached/.test(f.key) ? " (did the command that was to answer fail? git merge-base --is-ancestor SHA BRANCH exits 0 for yes, 1 for no, and 128 when it cannot find one of them: in the clone a branch of the remote is origin/BRANCH)" : ""}`;
    // 0 or 1 where a boolean goes: a shell's exit status copied (git merge-base --is-ancestor's), where 0 means yes
    if ((v === 0 || v === 1) && f.check(true))
        return `it holds ${v}, a number: write true or false${v === 1 ? " (if 1 is a command's exit status, as git merge-base --is-ancestor's, it means no: false)" : " (if 0 is a command's exit status, as git merge-base --is-ancestor's, it means yes: true)"}`;
    // the doctor's --json objects ({application, reason, ...}) copied where a name goes
    const list = Array.isArray(v) ? (v as unknown[]) : [];
    const first = list[0] as { application?: unknown } | undefined;
    if (first && typeof first === "object" && "application" in first && f.check(first.application))
        return `it holds ${list.length === 1 ? "a list of one object" : "a list of objects"} as the doctor's --json lists them: write the Application's name alone, as a string (${JSON.stringify(first.application)})`;
    // something inside a list or an object: named where it is (order[0].step), with the same fixes
    const issue = f.issue(v);
    if (issue && issue.path.length > 0) {
        const at = f.key + issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");
        const inner = issue.path.reduce<unknown>((o, p) => (o as Record<PropertyKey, unknown> | undefined)?.[p], v);
        // an entry with keys it does not take: copied whole from where it was read (the ApplicationSet's status.applicationStatus)
        if (issue.keys) {
            const copied = issue.keys.includes("lastTransitionTime");
            return `${at} has ${issue.keys.join(", ")}, which ${f.key}'s entries do not take: ${f.key} is ${f.what}${copied ? " (copied from status.applicationStatus? keep its application and its step (a number), write its lastTransitionTime as healthy_at, and leave out the rest)" : ""}`;
        }
        // a key missing inside: said so (not "holds undefined"), with the key written instead where there is one like it
        if (inner === undefined && issue.path.length >= 1) {
            const parent = issue.path.slice(0, -1).reduce<unknown>((o, p) => (o as Record<PropertyKey, unknown> | undefined)?.[p], v);
            const last = String(issue.path[issue.path.length - 1]);
            const squash = (k: string) => k.replace(/[-_]/g, "").toLowerCase();
            const instead =
                parent && typeof parent === "object"
                    ? Object.keys(parent).find((k) => k !== last && squash(k) === squash(last))
                    : undefined;
            return `${at} is missing${instead ? `: it is written ${instead}, and the key is ${last}` : ""}`;
        }
        const unquoted = typeof inner === "string" ? unquotedOf(inner) : undefined;
        if (unquoted !== undefined && typeof unquoted !== "string")
            return `${at} holds the string ${JSON.stringify(inner)}: write ${inner} without the quotes`;
        // an object where a name goes (the doctor's --json lists {application, step}): the name alone
        if (inner && typeof inner === "object" && "application" in inner && issue.code === "invalid_type")
            return `${at} holds ${JSON.stringify(inner)}, an object as the doctor's --json lists it: write the Application's name alone, as a string (${JSON.stringify((inner as { application?: unknown }).application)})`;
        // a name where an entry goes: the list is of objects
        if (typeof inner === "string" && issue.code === "invalid_type" && issue.path.length === 1 && /^a list of \{/.test(f.what))
            return `${at} holds ${JSON.stringify(inner)}, a string: ${f.key} is ${f.what}, one object per entry`;
        return `${at} holds ${JSON.stringify(inner)}: ${issue.message}`;
    }
    return `it holds ${held}, which is not ${f.what}`;
}
