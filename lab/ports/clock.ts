/**
 * The time the labs' waits and measurements are made in. On a real host it is the real clock; the
 * bench runs the product on the simulation's virtual clock, so a step's time "at Argo CD's
 * defaults" is measured in seconds of wall time.
 */
export interface Clock {
    /** Milliseconds, like Date.now(). */
    now(): number;
    /** Resolves after `ms` on this clock. */
    sleep(ms: number): Promise<void>;
}

export const realClock: Clock = {
    now: () => Date.now(),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};
