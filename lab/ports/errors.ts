/**
 * Reading a caught error, whatever was thrown: its message, its code (Node's errno name, an HTTP
 * status), and the output of a program that failed (exec.ts's RunError).
 */
import { RunError } from "./exec";

/** The error's message, or the thrown value as text. */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Node's errno name ("ENOENT", "EEXIST") or a status code, where the error carries one. */
export const codeOf = (e: unknown): string | number | undefined =>
    e && typeof e === "object" && "code" in e ? (e as { code?: string | number }).code : undefined;

/** What a failed program printed on stderr (RunError's, or execFileSync's string or Buffer), else the error's message. */
export const stderrOf = (e: unknown): string => {
    const stderr =
        e instanceof RunError ? e.stderr : e && typeof e === "object" && "stderr" in e ? (e as { stderr?: unknown }).stderr : undefined;
    const text = typeof stderr === "string" ? stderr : Buffer.isBuffer(stderr) ? stderr.toString("utf8") : "";
    return text || messageOf(e);
};

/** The exit code of a program that failed (RunError, or git's error), where the error carries one. */
export const exitCodeOf = (e: unknown): string | number | null | undefined =>
    e && typeof e === "object" && "exitCode" in e ? (e as { exitCode?: string | number | null }).exitCode : undefined;
