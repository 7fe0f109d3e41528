/**
 * The doctor's --watch rounds (lab/doctor/watch.ts watchRounds) on a clock of the test's own, which
 * moves only when a round takes time or the loop waits: a change brings a round at once, but not
 * sooner than a second after the last began, nor than five times the last round's own time.
 */
import * as assert from "assert";
import { Clock } from "../lab/ports/clock";
import { watchRounds } from "../lab/doctor/watch";

/** A clock whose sleep moves it on at once. */
function testClock(): Clock & { t: number } {
    const c = { t: 0, now: () => c.t, sleep: async (ms: number) => void (c.t += ms) };
    return c;
}

describe("the doctor's --watch rounds", () => {
    const run = async (roundMs: number, changesAfter: (n: number) => boolean, rounds: number) => {
        const clock = testClock();
        const starts: number[] = [];
        let notify = () => {};
        await watchRounds(
            async () => {
                starts.push(clock.t);
                clock.t += roundMs;
                if (changesAfter(starts.length)) notify();
            },
            {
                intervalMs: 30_000,
                minGapMs: 1_000,
                clock,
                stopped: () => starts.length >= rounds,
                changes: (l) => {
                    notify = l;
                    return () => (notify = () => {});
                },
            },
        );
        return starts.slice(1).map((s, i) => s - starts[i]);
    };

    it("given no change, then a round every interval", async () => {
        assert.deepStrictEqual(await run(100, () => false, 3), [30_000, 30_000]);
    });

    it("given a change during every short round, then the next round a second after the last began", async () => {
        assert.deepStrictEqual(await run(100, () => true, 4), [1_000, 1_000, 1_000]);
    });

    it("given a change during every round of 2 s (a large cluster), then the rounds are 10 s apart: a fifth of the time spent diagnosing", async () => {
        assert.deepStrictEqual(await run(2_000, () => true, 4), [10_000, 10_000, 10_000]);
    });
});
