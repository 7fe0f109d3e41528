// The small process that runs short programs for lab/ports/exec.ts's run() (see there for why).
// Plain JavaScript with Node's child_process only, so it starts in a few tens of milliseconds and
// stays small: its forks are cheap. One request a line on stdin, one answer a line on stdout:
//   -> {"id":1,"file":"git","args":[...],"cwd":"...","env":{...},"umask":18,"timeout":120000,"killSignal":"SIGTERM","maxBuffer":67108864}
//   <- {"id":1,"error":null|{"code":...,"signal":...,"message":"..."},"stdout":"...","stderr":"..."}
// When its parent goes (stdin closes), it goes too; programs still running finish on their own, as
// they would have had the parent started them itself.
"use strict";
const { execFile } = require("child_process");
const readline = require("readline");

const answer = (o) => {
    let line;
    try {
        line = JSON.stringify(o);
    } catch (e) {
        // an output too large to send (V8's string limit): that run fails, the others go on
        line = JSON.stringify({
            id: o.id,
            error: { code: null, signal: null, killed: false, message: `its output could not be passed on (${e.message})` },
            stdout: "",
            stderr: "",
        });
    }
    process.stdout.write(`${line}\n`);
};
// Ctrl-C and a TERM to the process group are for the parent, which decides; the helper leaves when the
// parent does (stdin closes). The programs it starts get the signals as usual (a child starts with default handlers).
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => {});
const ownUmask = process.umask();

readline
    .createInterface({ input: process.stdin, crlfDelay: Infinity })
    .on("line", (line) => {
        let req;
        try {
            req = JSON.parse(line);
        } catch {
            return; // not a request of ours
        }
        try {
            process.umask(typeof req.umask === "number" ? req.umask : ownUmask); // the parent's, now: the program inherits it when it starts (below, synchronously)
            execFile(
                req.file,
                req.args,
                { cwd: req.cwd, env: req.env, timeout: req.timeout, killSignal: req.killSignal || "SIGTERM", maxBuffer: req.maxBuffer },
                (err, stdout, stderr) => {
                    const error = err
                        ? { code: err.code ?? null, signal: err.signal ?? null, killed: !!err.killed, message: err.message }
                        : null;
                    answer({ id: req.id, error, stdout: String(stdout), stderr: String(stderr) });
                },
            );
        } catch (e) {
            // execFile throws at once on bad arguments (e.g. a NUL byte): an answer like any other failure
            answer({
                id: req.id,
                error: { code: e.code ?? null, signal: null, killed: false, message: e.message },
                stdout: "",
                stderr: "",
            });
        }
    })
    .on("close", () => process.exit(0));
process.stdout.on("error", () => process.exit(0)); // the parent is gone
