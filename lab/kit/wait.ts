/**
 * A lab's wait on Argo CD, said as it goes, the same in every lab: "waiting for X (deadline N s)",
 * then "X: after N s" on the lab's clock (simulated time in the bench, the wall on a host), polling
 * to the deadline in between (lab/ports/wait.ts).
 */
import { Clock } from "../ports/clock";
import { pollUntil, PollOptions } from "../ports/wait";
import { secs } from "./text";

export interface WaitSaid {
    say(line: string): void;
    clock: Clock;
}

/** Polls `look` until it answers (not undefined) or the deadline passes, saying what it waits for and how long it took. */
export async function waitSaid<T>(
    c: WaitSaid,
    what: string,
    look: () => Promise<T | undefined>,
    opts: Omit<PollOptions, "clock">,
): Promise<T> {
    c.say(`waiting for ${what} (deadline ${secs(opts.timeoutMs)})`);
    const c0 = c.clock.now();
    const got = await pollUntil(look, { ...opts, clock: c.clock });
    c.say(`${what}: after ${secs(c.clock.now() - c0)}`);
    return got;
}
