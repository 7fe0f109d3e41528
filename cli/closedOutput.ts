/**
 * A command whose reader is gone ends: when stdout or stderr is a pipe or socket whose other end
 * closed (the terminal, a test that was killed, `| head`), a write fails with EPIPE. Node reports that
 * as an error event on the stream; with no listener it would be an uncaught exception, and the
 * Pulumi SDK's handler for those (loaded with the inline program of `up`) writes the error out again,
 * to the same closed stream, failing again: a loop at full CPU whose memory grows without bound,
 * long after the engine it drove has gone.
 */
export function exitOnClosedOutput(code: number): void {
    process.stderr.on("error", () => process.exit(code));
    // stdout's reader gone (| head, less quit early): said on stderr, where it may still be read, then the end; or the
    // file it goes to cannot take it (a full disk: ENOSPC), which is no reader gone, said as what it is
    process.stdout.on("error", (e: NodeJS.ErrnoException) => {
        try {
            process.stderr.write(
                e?.code === "EPIPE" || e?.code === undefined
                    ? "gitops-lab: stopped: its standard output was closed (the reader of a pipe, | head or less, ended); run it again to go on (a simulate resumes where it stopped)\n"
                    : `gitops-lab: stopped: writing its standard output failed (${e.code}${e.code === "ENOSPC" ? ": no space left on device" : ""}): its output is not whole; make room (or write it elsewhere) and run it again\n`,
            );
        } finally {
            process.exit(code);
        }
    });
    // console.log ignores its stream's errors by default: a report written to a full disk would end as if written (exit 0)
    globalThis.console = new console.Console({ stdout: process.stdout, stderr: process.stderr, ignoreErrors: false });
}

/**
 * Too many open files (EMFILE, ENFILE: a low `ulimit -n`): a child process that cannot start emits its error where no
 * one listens (simple-git's spawn), and Node would end with a stack trace. One line says what to raise instead; any
 * other uncaught error is left as Node reports it (or to a handler of its own, the Pulumi SDK's during up).
 */
export function exitOnFileLimit(code: number): void {
    process.on("uncaughtException", (e: NodeJS.ErrnoException) => {
        if (e?.code === "EMFILE" || e?.code === "ENFILE") {
            process.stderr.write(
                `gitops-lab: stopped: too many open files (${e.code}${e.syscall ? `, ${e.syscall}` : ""}): this shell's limit (ulimit -n) is too low for the lab; raise it (ulimit -n 4096) and run again (a simulate resumes where it stopped)\n`,
            );
            process.exit(code);
        }
        if (process.listenerCount("uncaughtException") > 1) return; // another handler reports it
        process.stderr.write(`${e?.stack ?? String(e)}\n`);
        process.exit(code);
    });
}
