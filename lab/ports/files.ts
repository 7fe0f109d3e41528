/** File helpers: no half-written files (write to a temporary file in the same directory, then rename). */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { codeOf, messageOf } from "./errors";

export function writeFileAtomic(file: string, content: string, mode?: number): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
    try {
        // the mode from the start (a credential is never readable by others, not even for an instant)
        fs.writeFileSync(tmp, content, mode === undefined ? undefined : { mode });
        if (mode !== undefined) fs.chmodSync(tmp, mode); // whatever the umask
        fs.renameSync(tmp, file);
    } catch (e) {
        // nothing half-written is left behind, and the file is named with why
        fs.rmSync(tmp, { force: true });
        throw new Error(`cannot write ${file} (${writeFailure(e)})`);
    }
}

/** Why a write failed, as a reader can act on it (the file-size limit, a full disk), or the error's own words. */
export const writeFailure = (e: unknown) => WRITE_FAILURES[codeOf(e) ?? ""] ?? messageOf(e);

/** Why a write failed, as a reader can act on it. */
const WRITE_FAILURES: Record<string, string> = {
    EFBIG: "file too large for this process's file-size limit, ulimit -f: raise it",
    ENOSPC: "no space left on the disk: free some",
    EDQUOT: "the disk quota is used up",
    EACCES: "permission denied",
    EROFS: "the file system is read-only",
};

export function writeJsonAtomic(file: string, value: unknown): void {
    writeFileAtomic(file, JSON.stringify(value, null, 2) + "\n");
}

/** Characters a reader cannot see, by name (a byte-order mark, NUL, a zero-width space, other control characters). */
const INVISIBLE_NAMES: Record<number, string> = {
    0x0: "a NUL byte",
    0xfeff: "a byte-order mark",
    0x200b: "a zero-width space",
    0x7f: "a DEL",
};
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u200b\ufeff]/;

/**
 * JSON.parse whose error names a character a reader cannot see: its message shows a byte-order mark
 * as an invisible token, and the file looks right in every editor.
 */
/** Whether a line is one JSON value by itself. */
function parsesAlone(line: string): boolean {
    try {
        JSON.parse(line);
        return true;
    } catch {
        return false;
    }
}

export function parseJson(text: string): unknown {
    try {
        return JSON.parse(text);
    } catch (e) {
        if (text.charCodeAt(0) === 0xfeff)
            throw new Error("it starts with a byte-order mark (U+FEFF, which editors do not show): save it as UTF-8 without a BOM");
        // UTF-16 (PowerShell's >, a Windows editor's "Unicode"), read as UTF-8: its byte-order mark undecodable, a NUL
        // beside every ASCII letter
        const nuls = text.split("\u0000").length - 1;
        if (text.startsWith("\ufffd\ufffd") || (nuls > 1 && nuls >= (text.length - nuls) / 2))
            throw new Error(
                "it is UTF-16 (a NUL byte beside every letter: PowerShell's > or an editor's \"Unicode\" writes it so), and JSON here is UTF-8: save it as UTF-8 (iconv -f UTF-16 -t UTF-8 FILE > FILE.new, then mv FILE.new FILE)",
            );
        // JSON.parse quotes the text, line breaks and all: the message on one printable line
        const message = messageOf(e).replace(
            // eslint-disable-next-line no-control-regex -- the control characters are what is replaced
            /[\u0000-\u001f]/g,
            (c) => (c === "\n" ? "\\n" : c === "\t" ? "\\t" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
        );
        const m = INVISIBLE.exec(text);
        // the text stops inside an object or a string: a file cut short (a copy, a command interrupted), not a typo
        const at = /at position (\d+)/.exec(message);
        const end = text.trimEnd().length;
        if (
            !m &&
            end > 0 &&
            (/Unexpected end of JSON input/.test(message) || (at && Number(at[1]) >= end) || /^Unterminated string/.test(message))
        )
            throw new Error(
                `it stops mid-JSON at line ${text.slice(0, end).split("\n").length}, as a file cut short does (an interrupted copy or command): make it again`,
            );
        // one value a line (JSON Lines, as jq -c '.items[]' writes): not one document
        const lines = text.split("\n").filter((l) => l.trim());
        if (!m && /after JSON at position/.test(message) && lines.length > 1 && lines.every(parsesAlone))
            throw new Error(
                `it holds ${lines.length} JSON values, one a line (JSON Lines, as jq -c '.items[]' writes), not the one document kubectl prints: make it again with kubectl's -o json alone`,
            );
        // a whole first value, then more: two documents one after the other (a command appended twice with >>)
        if (!m && /after JSON at position/.test(message))
            throw new Error(
                `it holds a second JSON value after a whole first one, the second beginning at line ${text.slice(0, Number(at?.[1] ?? 0)).split("\n").length} (written twice, appended with >>?): make it again, written once with >`,
            );
        if (!m) throw new Error(jsonSlip(text, at ? Number(at[1]) : undefined) ?? message);
        const code = m[0].charCodeAt(0);
        const before = text.slice(0, m.index).split("\n");
        const where = `line ${before.length}, column ${before[before.length - 1].length + 1}`;
        const name = INVISIBLE_NAMES[code] ?? "a control character";
        throw new Error(`${message} (it holds ${name}, U+${code.toString(16).toUpperCase().padStart(4, "0")}, at ${where}: remove it)`);
    }
}

/**
 * The slip JSON.parse stopped at, by where it stopped, in a writer's words with its line and column: a comma
 * after the last entry, single quotes or Python's True/False/None (print of a dict), a comment; undefined for others.
 */
function jsonSlip(text: string, at: number | undefined): string | undefined {
    // Node names no position for a bad literal ("Unexpected token 'F'"): Python's, found where a value starts
    const literal = /[:[,]\s*((?:True|False|None)\b)/.exec(text);
    const pos = at ?? (literal ? literal.index + literal[0].length - literal[1].length : undefined);
    if (pos === undefined) return undefined;
    const lineCol = (p: number) => {
        const lines = text.slice(0, p).split("\n");
        return `line ${lines.length}, column ${lines[lines.length - 1].length + 1}`;
    };
    const rest = text.slice(pos);
    const comma = /,\s*$/.exec(text.slice(0, pos));
    if (comma && /^[}\]]/.test(rest))
        return `a comma after the last entry, at ${lineCol(comma.index)}: JSON takes none before the closing ${rest[0]}; remove it`;
    if (rest.startsWith("'"))
        return `single quotes at ${lineCol(pos)}: JSON's keys and strings take double quotes (Python's print of a dict is not JSON; json.dumps writes JSON)`;
    const py = /^(True|False|None)\b/.exec(rest);
    if (py) return `${py[1]} at ${lineCol(pos)} is Python's: JSON writes ${{ True: "true", False: "false", None: "null" }[py[1]]}`;
    if (/^(\/\/|\/\*|#)/.test(rest)) return `a comment at ${lineCol(pos)}: JSON takes no comments; remove it`;
    // typographic quotes (a word processor's, a chat's “smart quotes”): they look like quotes, and JSON reads none
    const curly = /[\u201c\u201d\u2018\u2019\u00ab\u00bb]/.exec(text);
    if (curly)
        return `a typographic quote ${curly[0]} (U+${curly[0].charCodeAt(0).toString(16).toUpperCase()}) at ${lineCol(curly.index)}: JSON takes straight double quotes ("); type them so`;
    return undefined;
}

/** Reads a JSON file; `undefined` when it does not exist; a clear error when it is not JSON. */
export function readJsonIfExists<T = unknown>(file: string): T | undefined {
    let text: string;
    try {
        text = fs.readFileSync(file, "utf8");
    } catch (e) {
        if (codeOf(e) === "ENOENT") return undefined;
        throw e;
    }
    try {
        return parseJson(text) as T;
    } catch (e) {
        throw new Error(`${file} is not valid JSON (${messageOf(e)}); delete it to let the step run again`);
    }
}

/** YAML as a person would write it (no line folding). */
export function toYaml(obj: unknown): string {
    return stringify(obj, { lineWidth: 0 });
}

/**
 * mkdir -p whose new directories are 0755 whatever the umask (a daemon running as nobody must be
 * able to pass through them). Directories that already existed are left as they are.
 */
export function mkdirReadable(dir: string): void {
    const first = fs.mkdirSync(dir, { recursive: true });
    if (!first) return;
    for (let d = path.resolve(dir); ; d = path.dirname(d)) {
        fs.chmodSync(d, 0o755);
        if (d === path.resolve(first) || d === path.dirname(d)) break;
    }
}
