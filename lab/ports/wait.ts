/** Polling with a deadline: the only way the lab waits (no timeouts or cancels exist in the engine). */
import { Clock, realClock } from "./clock";

export class WaitTimeout extends Error {}

export interface PollOptions {
    /** Give up after this long. */
    timeoutMs: number;
    /** Time between two looks. */
    intervalMs: number;
    /** Called on timeout: the error message (say what was waited for and what was last seen). */
    describe: () => string;
    /** Called between looks, e.g. to re-trigger a refresh. */
    between?: (elapsedMs: number) => Promise<void>;
    /** The clock the deadline and the pauses are on (default: the real one). */
    clock?: Clock;
}

export const sleep = (ms: number) => realClock.sleep(ms);

/** Calls `look` until it returns something other than undefined; throws WaitTimeout at the deadline. */
export async function pollUntil<T>(look: () => Promise<T | undefined>, opts: PollOptions): Promise<T> {
    const clock = opts.clock ?? realClock;
    const start = clock.now();
    for (;;) {
        const got = await look();
        if (got !== undefined) return got;
        const elapsed = clock.now() - start;
        if (elapsed >= opts.timeoutMs) throw new WaitTimeout(opts.describe());
        await clock.sleep(Math.min(opts.intervalMs, Math.max(0, opts.timeoutMs - elapsed)));
        if (opts.between) await opts.between(clock.now() - start);
    }
}
