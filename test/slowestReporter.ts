/**
 * mocha's spec reporter, plus the ten slowest tests at the end of the run (each with its file),
 * so a slow test is seen the day it lands (test/mocharc.js "reporter"). mocha has no such option of
 * its own: its `slow` threshold only colours a test, and no bundled reporter lists the slowest.
 */
import * as Mocha from "mocha";

const { EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_RUN_END } = Mocha.Runner.constants;
const SHOWN = 10;

class SlowestReporter extends Mocha.reporters.Spec {
    constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
        super(runner, options);
        const timed: { title: string; file: string; ms: number }[] = [];
        const note = (t: Mocha.Test) => timed.push({ title: t.fullTitle(), file: t.file ?? "", ms: t.duration ?? 0 });
        runner.on(EVENT_TEST_PASS, note);
        runner.on(EVENT_TEST_FAIL, note);
        runner.once(EVENT_RUN_END, () => {
            const slowest = timed.sort((a, b) => b.ms - a.ms).slice(0, SHOWN);
            const total = timed.reduce((n, t) => n + t.ms, 0);
            console.log(
                `  the ${slowest.length} slowest of ${timed.length} tests (${(total / 1000).toFixed(0)} s of test time in all; the run's own time is above):`,
            );
            for (const t of slowest)
                console.log(
                    `  ${(t.ms / 1000).toFixed(1).padStart(7)} s  ${t.title.length > 110 ? `${t.title.slice(0, 107)}...` : t.title}  (${t.file.replace(/^.*\/test\//, "test/")})`,
                );
            console.log("");
        });
    }
}

export = SlowestReporter;
