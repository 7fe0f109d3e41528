/**
 * The dynamic providers' process leaves when the Pulumi engine that started it is gone.
 *
 * The engine starts `pulumi-resource-pulumi-nodejs` (a `sh` script that runs Node) in a process group
 * of its own, and ends it at the end of an update. An engine killed with SIGKILL (or by the OOM killer)
 * ends nothing, so the provider process stays, holding its gRPC port, for ever, and a scenario it was
 * running goes on. Worse, its first write after that fails with EPIPE; the provider host's handler for
 * uncaught errors (`@pulumi/pulumi/cmd/dynamic-provider`) prints that error, which fails again: a
 * loop at full CPU whose memory grows without bound. So, installed once per process by labModule()
 * (the first provider method that runs the lab's code; a process that only compared inputs, as a
 * preview does, stays idle until its engine ends it, or for ever if the engine was killed):
 * - a write to a closed stdout or stderr (EPIPE), or any other write error there, ends the process;
 * - every second, the process checks that its parent and its parent's parent are still the ones it
 *   started under (read from /proc: Node has no "parent died" signal); when the engine is gone, `sh`
 *   is re-parented, and the process ends.
 * The next `up` recovers what the interrupted step left (the scenario resumes from its result files).
 */
import { procStat } from "../lab/ports/proc";

/** A process's parent, from /proc (undefined when the process is gone or /proc is not there). */
export const parentOf = (pid: number): number | undefined => procStat(pid)?.ppid;

const INSTALLED = Symbol.for("gitops-lab.leaveWithEngine");

/** Ends this process (exit 1) once the engine that started it is gone; see above. Safe to call often (the first call decides). */
export function leaveWithEngine(everyMs = 1000): void {
    const proc = process as unknown as Record<symbol, boolean>;
    if (proc[INSTALLED]) return;
    proc[INSTALLED] = true;
    for (const stream of [process.stdout, process.stderr]) {
        // EPIPE: the reader (the engine) is gone. Any other write error too: nothing can be said any
        // more, and rethrown it would reach the host's handler, which writes again
        stream.on("error", () => process.exit(1));
    }
    const parent = process.ppid;
    const grandparent = parentOf(parent);
    if (grandparent === undefined) return; // no /proc: the EPIPE rule alone
    setInterval(() => {
        if (process.ppid !== parent || parentOf(parent) !== grandparent) process.exit(1);
    }, everyMs).unref();
}
