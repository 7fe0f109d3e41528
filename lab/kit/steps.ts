/**
 * A lab's steps run in order up to `through`, from a checkpoint: a step whose result file exists is
 * skipped; each other step runs, its result is checked against its schema (a result that does not
 * match is never written: a resumed run would trust it) and written atomically. The same runner for
 * every lab; a lab gives its steps, its result set and how a step's context is made.
 */
import { Clock } from "../ports/clock";
import { writeJsonAtomic } from "../ports/files";
import { ResultSet, ResultsOf, Schemas } from "./results";
import { secs } from "./text";

export interface LabStep<S extends Schemas, C> {
    n: number;
    /** The step's name in the lab's words (incident, pin, stall, recovery, …). */
    name: string;
    /** The result file it writes; a step without one is done once a later step's file exists. */
    file?: keyof S & string;
    run(c: C, results: ResultsOf<S>): Promise<unknown>;
}

export interface StepTiming {
    step: number;
    name: string;
    /** Wall time of the step. */
    ms: number;
    /** Of that, time spent waiting on Argo CD (polling the cluster). */
    waitMs: number;
    /** The step's time on the scenario's clock (the wall time on a real host; simulated time in the bench). */
    clockMs: number;
    skipped: boolean;
}

export interface StepsRun<S extends Schemas, C> {
    steps: LabStep<S, C>[];
    /** The last step to run. */
    through: number;
    /** The result files' schemas. */
    set: ResultSet<S>;
    /** The checkpoint (set.read): filled in as the steps write their files. */
    results: ResultsOf<S>;
    resultFile(name: keyof S & string): string;
    log(line: string): void;
    /** The prefix of a step's lines ("[step 3 incident]"). */
    prefix(step: LabStep<S, C>): string;
    /** The context a step runs with, made as it starts. */
    context(step: LabStep<S, C>, prefix: string): C;
    /** Of a step's time, what its context spent waiting on Argo CD (default none counted). */
    waitedMs?(c: C): number;
    /** After a step's file is written: what the step kept on the side can go. */
    written?(step: LabStep<S, C>, c: C): void;
    clock: Clock;
}

export async function runSteps<S extends Schemas, C>(o: StepsRun<S, C>): Promise<StepTiming[]> {
    const timings: StepTiming[] = [];
    const { results } = o;
    for (const [i, step] of o.steps.entries()) {
        if (step.n > o.through) break;
        const prefix = o.prefix(step);
        const done = step.file
            ? results[step.file] !== undefined
            : o.steps.slice(i + 1).some((later) => later.file && results[later.file] !== undefined);
        if (done) {
            o.log(`${prefix} already done${step.file ? ` (${o.resultFile(step.file)})` : ""}; skipped`);
            timings.push({ step: step.n, name: step.name, ms: 0, waitMs: 0, clockMs: 0, skipped: true });
            continue;
        }
        const c = o.context(step, prefix);
        const t0 = Date.now();
        const c0 = o.clock.now();
        o.log(`${prefix} start`);
        const value = await step.run(c, results);
        if (step.file) {
            o.set.parse(step.file, value, `step ${step.n}'s ${step.file} result`);
            writeJsonAtomic(o.resultFile(step.file), value);
            o.written?.(step, c);
            (results as Record<string, unknown>)[step.file] = value;
        }
        const ms = Date.now() - t0;
        timings.push({ step: step.n, name: step.name, ms, waitMs: o.waitedMs?.(c) ?? 0, clockMs: o.clock.now() - c0, skipped: false });
        o.log(`${prefix} done in ${secs(ms)}${step.file ? `; wrote ${o.resultFile(step.file)}` : ""}`);
    }
    return timings;
}

/** A lab asked for fewer steps than its host holds; `asked` says where the number came from, `fix` what to do. */
export interface LowerStep {
    /** The lab and where it is ("the lab on this host", "the tenants lab under /tmp/lab"). */
    lab: string;
    /** The highest step the host holds. */
    done: number;
    /** The step asked for. */
    through: number;
    /** Where the number came from ("solveThrough", "--through"). */
    asked: string;
    /** What to do instead, one sentence, given the step the host holds. */
    fix(done: number): string;
}

/**
 * Steps cannot be undone: taking a lab back would tear it down. The stack's program and `simulate`
 * refuse a lower step through this one check, from the host's files, in one line naming the lab, both
 * steps and what to do (a lab's provider refuses it again from its state: program/labRunProvider.ts).
 */
export function refuseLowerStep(o: LowerStep): void {
    if (o.through >= o.done) return;
    throw new Error(`${o.lab} is at step ${o.done} already and steps cannot be undone (${o.asked} ${o.through} asked). ${o.fix(o.done)}`);
}
