/** Polling with a deadline: the only way the lab waits (no timeouts or cancels exist in the engine). */

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
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls `look` until it returns something other than undefined; throws WaitTimeout at the deadline. */
export async function pollUntil<T>(look: () => Promise<T | undefined>, opts: PollOptions): Promise<T> {
    const start = Date.now();
    for (;;) {
        const got = await look();
        if (got !== undefined) return got;
        const elapsed = Date.now() - start;
        if (elapsed >= opts.timeoutMs) throw new WaitTimeout(opts.describe());
        await sleep(Math.min(opts.intervalMs, Math.max(0, opts.timeoutMs - elapsed)));
        if (opts.between) await opts.between(Date.now() - start);
    }
}
