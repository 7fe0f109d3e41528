/**
 * The error in a failed program's output, as a person would point at it: many tools print the error
 * and then more (Symfony and TYPO3 console commands print the exception block, then the command's
 * usage; a shell with `set -x` prints its trace after). So the line is found by what real tools
 * print, in this order, and only then the last non-empty line that is not a shell's `+ ...` trace:
 *   1. an exception block `In File.php line N:` (Symfony Console): the message under it;
 *   2. a Python traceback: its last line (`ValueError: ...`);
 *   3. a Go panic: its first line (`panic: ...`);
 *   4. the last line that says it is an error: `Error:`/`error:`/`ERROR`, `fatal:`/`FATAL`, `... Exception ...`.
 * Hand-written (no library reads tools' error conventions); at most MAX_ERROR_BYTES of it is quoted.
 */

/** The most of an error line the doctor quotes (in the line, the JSON, the Event). */
export const MAX_ERROR_BYTES = 1024;

/** `Error: ...`, `error: ...`, `fatal: ...` (a tool's prefix before it allowed: `cp: error ...`). */
const ERROR_PREFIX = /^(?:\S+:\s*)?(?:error|fatal)\b/i;
/** A log level or an exception's name anywhere in the line: `... FATAL ...`, `ERROR`, `npm ERR!`, `...Exception`. */
const ERROR_WORD = /\b(?:ERROR|FATAL|CRITICAL)\b|\bERR!|Exception\b/;

/** Cuts text to at most `max` bytes of UTF-8, on a character boundary, with "…" when cut. */
export function clipBytes(text: string, max = MAX_ERROR_BYTES): string {
    if (Buffer.byteLength(text) <= max) return text;
    let out = "";
    for (const ch of text) {
        if (Buffer.byteLength(out + ch + "…") > max) break;
        out += ch;
    }
    return `${out}…`;
}

export function errorLine(output: string): string {
    const lines = output.replace(/\r/g, "").split("\n");
    const text = (l: string) => l.trim();
    const nonEmpty = lines.map(text).filter(Boolean);
    // 1. Symfony Console's exception block: "In X.php line N:", a blank line, the indented message
    for (let i = lines.length - 1; i >= 0; i--) {
        if (!/^\s*In \S+ line \d+:\s*$/.test(lines[i])) continue;
        const message: string[] = [];
        for (let j = i + 1; j < lines.length; j++) {
            if (!text(lines[j])) {
                if (message.length) break;
                continue;
            }
            message.push(text(lines[j]));
        }
        if (message.length) return clipBytes(message.join(" "));
    }
    // 2. a Python traceback: the first unindented line after its frames
    const tb = lines.map(text).lastIndexOf("Traceback (most recent call last):");
    if (tb >= 0) {
        for (let j = tb + 1; j < lines.length; j++) {
            if (text(lines[j]) && !/^\s/.test(lines[j])) return clipBytes(text(lines[j]));
        }
    }
    // 3. a Go panic: its first line
    const panic = lines.find((l) => /^panic: /.test(l));
    if (panic) return clipBytes(text(panic));
    // 4. the last line that says it is an error (a shell's `+ ...` trace lines never are)
    const marked = nonEmpty.filter((l) => !l.startsWith("+") && (ERROR_PREFIX.test(l) || ERROR_WORD.test(l))).pop();
    if (marked) return clipBytes(marked);
    return clipBytes(nonEmpty.filter((l) => !l.startsWith("+")).pop() ?? nonEmpty.pop() ?? "");
}
