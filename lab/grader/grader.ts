import { isDeepStrictEqual } from "util";
import { messageOf } from "../ports/errors";

/**
 * The grader: a lab's checks are a table of named entries, each re-deriving one fact from the
 * world (files, repository, cluster) and saying what it expected and what it found. Adding a
 * check is adding an entry; running the table never throws (an exception is a FAIL line).
 */

/** What one check found. `null` from `run` means "nothing to check here" (e.g. its file is missing, which another check reports). */
export interface Outcome {
    ok: boolean;
    expected?: unknown;
    found?: unknown;
    /**
     * What to do, when it failed for a reason that is no answer and that only this outcome knows (a file
     * missing or not JSON, the cluster not answering): `verify --step` says it in place of the check's hint.
     */
    hint?: string;
    /** What to do after the step's hint, when it failed (the file the step ends by writing, when it is missing). */
    then?: string;
    /** Say where else the lab has the commit found (whereElse) before this outcome's own hint, as before a step's. */
    whereElseToo?: boolean;
    /** Why the value found is not what is expected, where the table would not show it (upper-case letters): beside `found`. */
    why?: string;
}

export interface Check<W> {
    /** The lab step the check belongs to (checks above the graded step are not run); it may depend on the world. */
    step: number | ((world: W) => number);
    /** What is checked, as the table prints it. */
    name: string | ((world: W) => string);
    /** Whether the check runs when grading through `through` (default: step <= through). */
    applies?: (through: number, world: W) => boolean;
    /** What to do when it fails, for `verify --step` (default: its step's hint in the lab's steps.yaml); never the answer. */
    hint?: string;
    /** A check of the live cluster (liveCheck). */
    live?: boolean;
    /**
     * Its failure may be the work of a later step (a commit that keeps shop-dev from rendering fails step 2's
     * "shop-dev is Synced"): when it is the only earlier failure, the graded step's own file or repository check
     * answers first.
     */
    yieldsToLaterSteps?: boolean;
    run: (world: W) => Promise<Outcome | boolean | null>;
}

export interface CheckResult {
    step: number;
    check: string;
    ok: boolean;
    expected?: string;
    found?: string;
    /** The check's own hint, when it failed and has one. */
    hint?: string;
    /** What to do after the hint, when it failed and says so. */
    then?: string;
    /** Where else the lab has what it found (whereElse), said before the hint. */
    note?: string;
    /** Why the value found is not what is expected (the table prints it beside found). */
    why?: string;
}

/** What runChecks may ask of the lab for a failed check with no hint of its own. */
export interface RunOptions {
    /** Where else the lab has the commit a check found (`self`: what the check is about, as its name begins). */
    whereElse?: (found: string, self: string) => Promise<string | undefined>;
}

/** A value as one printable line: control characters (a NUL byte of a corrupted file, a newline) as JSON escapes them. */
const show = (v: unknown) =>
    v === undefined
        ? "(nothing)"
        : (typeof v === "string" ? v : JSON.stringify(v)).replace(
              // eslint-disable-next-line no-control-regex
              /[\u0000-\u001f\u007f]/g,
              (c) => JSON.stringify(c).slice(1, -1),
          );

/** Equality of two values; when either is not a string both are shown as JSON, so "3" and 3 look different. */
export function eq(expected: unknown, found: unknown): Outcome {
    const json = typeof expected !== "string" || typeof found !== "string";
    return {
        // the order of keys does not matter (pulumi stack output --json sorts them)
        ok: isDeepStrictEqual(expected, found),
        expected: json ? JSON.stringify(expected) : expected,
        found: json ? (JSON.stringify(found) ?? "(nothing)") : found,
    };
}

/** Two lists with the same entries in another order. */
const reordered = (want: unknown, found: unknown): boolean =>
    Array.isArray(want) &&
    Array.isArray(found) &&
    want.length === found.length &&
    isDeepStrictEqual(want.map((x) => JSON.stringify(x)).sort(), found.map((x) => JSON.stringify(x)).sort());

/** Characters a screen shows as a space or as nothing (pasted from a web page or a chat): named where a value holds them. */
const INVISIBLE: Record<string, string> = {
    "\u00a0": "a non-breaking space (U+00A0)",
    "\u200b": "a zero-width space (U+200B)",
    "\u200c": "a zero-width non-joiner (U+200C)",
    "\u200d": "a zero-width joiner (U+200D)",
    "\u2060": "a word joiner (U+2060)",
    "\ufeff": "a byte-order mark (U+FEFF)",
};

/** A value as JSON, its invisible characters written as escapes and named (retype them as plain text). */
export function shown(v: unknown): string {
    const text = JSON.stringify(v);
    if (text === undefined) return "nothing";
    const found = [...new Set([...text].filter((ch) => INVISIBLE[ch]))];
    if (!found.length) return text;
    const escaped = [...text].map((ch) => (INVISIBLE[ch] ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}` : ch)).join("");
    return `${escaped} (with ${found.map((ch) => INVISIBLE[ch]).join(" and ")} in it, invisible on screen: type it again as plain text)`;
}

/** A list that holds only right entries, but too few of them: how many it lacks (never which). */
function lacking(want: unknown, found: unknown): string | undefined {
    if (!Array.isArray(want) || !Array.isArray(found) || found.length >= want.length) return undefined;
    const wanted = new Set(want.map((x) => JSON.stringify(x)));
    if (!found.every((x) => wanted.has(JSON.stringify(x)))) return undefined;
    const n = want.length - found.length;
    return `right as far as it goes, but ${n === 1 ? "one entry is" : `${n} entries are`} missing`;
}

/**
 * eq over a few keys of a result file: when some differ, a hint that names each wrong key and what it
 * holds, with what the key is (`about`), never the expected value.
 */
export function eqFields(
    want: Record<string, unknown>,
    found: Record<string, unknown>,
    about: Partial<Record<string, string>> = {},
): Outcome {
    const outcome = eq(want, found);
    if (outcome.ok) return outcome;
    const wrong = Object.keys(want).filter((k) => !isDeepStrictEqual(want[k], found[k]));
    return {
        ...outcome,
        hint: wrong
            .map((k) =>
                reordered(want[k], found[k])
                    ? `${k} holds the right entries in another order${about[k] ? `: ${about[k]}` : ""}`
                    : `${k} holds ${shown(found[k])}${lacking(want[k], found[k]) ? `, ${lacking(want[k], found[k])}` : ""}${about[k] ? `: ${about[k]}` : ""}`,
            )
            .join("; "),
    };
}

/**
 * Which entry of its table a result comes from, the same whatever step is graded (a check's printed
 * name may depend on the step: appset.yaml's prod branch). Kept off the printed and JSON results
 * (not enumerable): `verify --step` matches a result with the one before it by this.
 */
const KEY = Symbol("check key");
const LIVE = Symbol("live check");
const YIELDS = Symbol("yields to later steps");
/** Whether a result is of a check of the live cluster. */
export const isLive = (r: CheckResult): boolean => (r as CheckResult & { [LIVE]?: boolean })[LIVE] === true;
/** Whether a result is of a check a later step's work may fail (Check.yieldsToLaterSteps). */
export const yieldsToLaterSteps = (r: CheckResult): boolean => (r as CheckResult & { [YIELDS]?: boolean })[YIELDS] === true;
export const checkKey = (r: CheckResult): string => (r as CheckResult & { [KEY]?: string })[KEY] ?? r.check;

/** Runs the table in order, for the steps up to `through`. */
export async function runChecks<W>(checks: readonly Check<W>[], world: W, through: number, opts: RunOptions = {}): Promise<CheckResult[]> {
    const results: CheckResult[] = [];
    // a name made by a function is keyed by that function's text: the same for every step graded, and unlike any other's
    const keyed = (r: CheckResult, c: Check<W>) => {
        Object.defineProperty(r, KEY, { value: typeof c.name === "string" ? c.name : `name: ${c.name.toString()}`, enumerable: false });
        if (c.live) Object.defineProperty(r, LIVE, { value: true, enumerable: false });
        if (c.yieldsToLaterSteps) Object.defineProperty(r, YIELDS, { value: true, enumerable: false });
        return r;
    };
    for (const c of checks) {
        const step = typeof c.step === "number" ? c.step : c.step(world);
        if (!(c.applies ? c.applies(through, world) : step <= through)) continue;
        let name = typeof c.name === "string" ? c.name : "";
        try {
            name = typeof c.name === "string" ? c.name : c.name(world);
            const r = await c.run(world);
            if (r === null) continue;
            const o = typeof r === "boolean" ? { ok: r } : r;
            // a commit found where another was expected: which key or branch of the lab it is
            const note =
                !o.ok && ((!o.hint && !c.hint) || o.whereElseToo) && typeof o.found === "string" && opts.whereElse
                    ? await opts.whereElse(o.found, name.split(" ")[0]).catch(() => undefined)
                    : undefined;
            results.push(
                keyed(
                    {
                        step,
                        check: name,
                        ok: o.ok,
                        ...(o.ok
                            ? {}
                            : {
                                  expected: show(o.expected),
                                  found: show(o.found),
                                  ...(o.hint || c.hint ? { hint: show(o.hint ?? c.hint) } : {}),
                                  ...(o.then ? { then: show(o.then) } : {}),
                                  ...(note ? { note } : {}),
                                  ...(o.why ? { why: o.why } : {}),
                              }),
                    },
                    c,
                ),
            );
        } catch (e) {
            results.push(keyed({ step, check: name, ok: false, expected: "the check to be answerable", found: unanswerable(e) }, c));
        }
    }
    return results;
}

/**
 * Why a check could not be answered, in a reader's words: a commit the repository lacks is said so (the
 * check of that value names the file), not as git's own error; anything else is its first line.
 */
function unanswerable(e: unknown): string {
    const m = messageOf(e);
    const sha = /(?:Not a valid commit name|Not a valid object name|bad object|ambiguous argument) '?([0-9a-f]{7,40})\b/i.exec(m)?.[1];
    return sha ? `${sha} is no commit of the repository (fix the value that holds it first)` : m.split("\n")[0];
}

/** The table a person reads: step, check, PASS/FAIL, and for a FAIL what was expected and found. */
export function formatTable(results: CheckResult[]): string {
    const lines = results
        .slice()
        .sort((a, b) => a.step - b.step)
        .map((r) => {
            const head = `${String(r.step).padStart(4)}  ${r.ok ? "PASS" : "FAIL"}  ${r.check}`;
            return r.ok
                ? head
                : `${head}\n              expected: ${r.expected}\n              found:    ${r.found}${r.note ? ` (${r.note.replace(/^found \w+ is /, "")})` : r.why ? ` (${r.why})` : ""}`;
        });
    const failed = results.filter((r) => !r.ok).length;
    return [`step  result  check`, ...lines, "", `${results.length - failed} passed, ${failed} failed`].join("\n");
}
