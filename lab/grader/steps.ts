/**
 * A lab's steps as a learner meets them: what each asks for and the hint for when it is not done,
 * kept in the lab's steps.yaml (a lab author edits them there). The served lab prints the next
 * step's ask; `verify --step N` grades one step and answers in one line, with the hint.
 */
import * as fs from "fs";
import { parse } from "yaml";
import { z } from "zod";
import { checkKey, isLive, yieldsToLaterSteps, type CheckResult } from "./grader";
import { CLUSTER_ANSWERS } from "./live";

const stepSchema = z
    .object({
        step: z.number().int().min(0),
        name: z.string().min(1),
        ask: z.string().min(1),
        hint: z.string().min(1),
    })
    .strict();

export type LabStep = z.infer<typeof stepSchema>;

/** The steps of a steps.yaml, numbered 1..n in order; an error names the file and the entry that is wrong. */
export function readSteps(file: string): LabStep[] {
    const r = z.array(stepSchema).safeParse(parse(fs.readFileSync(file, "utf8")));
    if (!r.success) {
        const i = r.error.issues[0];
        throw new Error(`${file}: entry ${i.path.join(".")}: ${i.message}`);
    }
    r.data.forEach((s, i) => {
        if (s.step !== i + 1) throw new Error(`${file}: entry ${i} is step ${s.step}; the steps go 1, 2, 3, ... in order`);
    });
    return r.data;
}

/** A step's text with its {placeholders} filled from the lab's paths; an unknown one is left as written. */
export function fillIn(text: string, values: Record<string, string>): string {
    return text.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}

/** The paths a lab's steps name ({bareRepo}, {clone}, {workDir}, {appsetFile}); both labs' layouts have them. */
export interface StepPaths {
    bareRepo: string;
    clone: string;
    workDir: string;
    appsetFile: string;
}

/** The steps of a steps.yaml with the lab's paths filled into their asks and hints. */
export function labSteps(file: string, layout: StepPaths): LabStep[] {
    const { bareRepo, clone, workDir, appsetFile } = layout;
    const values = { bareRepo, clone, workDir, appsetFile };
    return readSteps(file).map((s) => ({ ...s, ask: fillIn(s.ask, values), hint: fillIn(s.hint, values) }));
}

/** What a learner does next in a lab at step `at`: the hand-over the served lab prints and `up` ends with. */
export interface NextStep {
    step: number;
    name: string;
    /** The step's ask, in one line, with the lab's paths. */
    ask: string;
    /** Where the step is written in full. */
    inFull: string;
    /** The command that grades it, with a hint while it is not done. */
    verify: string;
}

/** The next step of a lab at step `at` (null when every step is done). */
export function nextStepOf(steps: LabStep[], at: number, o: { inFull: string; verify: string }): NextStep | null {
    const next = steps[at];
    if (!next) return null;
    return { step: next.step, name: next.name, ask: next.ask, inFull: o.inFull, verify: `${o.verify} --step ${next.step}` };
}

export interface StepVerdict {
    step: number;
    done: boolean;
    /** One line: the step done (how many checks), or the first thing missing and the hint. */
    line: string;
    /** The first failing check (of this step, or of an earlier step that must come first). */
    missing?: CheckResult;
}

/** A result file's "exists" check failing because the file is not there yet. */
const notWritten = (r: CheckResult) => r.found === "no such file" && !!r.then?.startsWith("write ");

/** A failed check's hint: its own, or its step's; then what it says comes after. */
function hintOf(failed: CheckResult, step: LabStep): string {
    return `${failed.note ? `${failed.note}; ` : ""}${failed.hint ?? step.hint}${failed.then ? `; then ${failed.then}` : ""}`;
}

/** What follows a step that is done: the next step's ask, that it was the last, or where the lab is when it is past it. */
function next(steps: LabStep[], n: number, at = n): string {
    if (at > n) return `the lab is at step ${at}: verify --step ${at} grades where you are`;
    const after = steps[n];
    return after ? `next, step ${after.step} ${after.name}: ${after.ask}` : "that was the last step: plain verify grades the whole lab";
}

/**
 * One step's verdict (steps filled in by labSteps), from grading through it (`now`) and through the
 * step before, from the files and the repository alone (`before`). A check of an earlier step can
 * depend on the step graded (the ApplicationSet's prod branch changes at step 4), so an earlier
 * step's failure in `now` counts as that step not done only when it failed in `before` too; else it
 * is this step's. Done when nothing up to the step fails and at least one check of its own ran;
 * otherwise the first thing missing and its hint. Never the expected value: the hint says what to
 * do, the full `verify` shows expected and found.
 *
 * A step the lab has moved past is graded as the lab stands: `lab.results`, when given, is the
 * grading through the step the lab is at (`lab.at`: a later step's result file is written), whose
 * expectations for the earlier steps are those of that state (step 3 turns the flag on that step 2's
 * Applications showed off; step 4 points appset.yaml's prod at release/prod). The step is done when
 * every check that is this step's or an earlier one's, graded through N or there, passes there (a
 * check that counts for a later step as the lab goes on, such as the live flag's, still counts);
 * else the first of those that fails there is what is missing (a cluster that does not answer, not
 * an earlier step's expectation the lab has rightly moved past). A done step of a lab past it says
 * where the lab is, not the next step's ask.
 */
export function stepVerdict(
    before: CheckResult[],
    now: CheckResult[],
    steps: LabStep[],
    n: number,
    lab?: { at: number; results?: CheckResult[] },
): StepVerdict {
    const step = steps[n - 1];
    if (!step) throw new Error(`there is no step ${n} (the steps are 1 to ${steps.length})`);
    const title = `step ${n} ${step.name}`;
    const first = (rs: CheckResult[]) => {
        const failing = rs.filter((r) => !r.ok).sort((a, b) => a.step - b.step);
        // a result file not written yet is a step's last act: a failure of the step's own that has a hint of its own
        // says more of what to do first (the branch to push before pin.json is written, a push refused)
        const head = failing[0];
        if (!head || !notWritten(head)) return head;
        return failing.find((r) => r.step === head.step && !notWritten(r) && r.hint) ?? head;
    };
    const own = (rs: CheckResult[]) => rs.filter((r) => r.step === n).length;
    const at = lab?.at ?? n;
    if (lab?.results) {
        const mine = new Set(now.filter((r) => r.step <= n).map(checkKey));
        const there = lab.results.filter((r) => r.step <= n || mine.has(checkKey(r)));
        const failedThere = first(there);
        if (!failedThere && own(lab.results) > 0)
            return {
                step: n,
                done: true,
                line: `${title}: done (${own(lab.results)} checks pass as the lab stands); ${next(steps, n, at)}`,
            };
        if (failedThere)
            return {
                step: n,
                done: false,
                missing: failedThere,
                line: `${title}: not done (as the lab stands, at step ${at}${failedThere.step < n && checkKey(failedThere) !== CLUSTER_ANSWERS ? `; step ${failedThere.step} ${steps[failedThere.step - 1]?.name ?? ""} comes first` : ""}): ${failedThere.check}; hint: ${hintOf(failedThere, steps[failedThere.step - 1] ?? step)}`,
            };
    }
    // by the check's table entry, not its printed name (which may name the step graded)
    const failedBefore = new Set(before.filter((r) => !r.ok).map(checkKey));
    const earlier = first(now.filter((r) => r.step < n && failedBefore.has(checkKey(r))));
    if (earlier) {
        const at = steps[earlier.step - 1] ?? step;
        return {
            step: n,
            done: false,
            missing: earlier,
            line: `${title}: not done (step ${earlier.step} ${at.name} comes first): ${earlier.check}; hint: ${hintOf(earlier, at)}`,
        };
    }
    // the step's own file or repository check first when the earlier steps fail only checks a later step's work may
    // fail (a wrong commit reverted keeps shop-dev from syncing), which say less of it; else the earliest, as an
    // earlier step not done comes first; a later step's check (the stack outputs') is not this step's
    const ownFile = first(now.filter((r) => r.step === n && !isLive(r)));
    const yielding = now.filter((r) => !r.ok && r.step < n).every(yieldsToLaterSteps);
    // (its result file not written yet: the step's own failure with a hint, live too, says more: first's rule)
    const failed =
        ownFile && yielding
            ? notWritten(ownFile)
                ? first(now.filter((r) => r.step === n))
                : ownFile
            : first(now.filter((r) => r.step <= n));
    if (!failed && own(now) > 0) return { step: n, done: true, line: `${title}: done (${own(now)} checks pass); ${next(steps, n, at)}` };
    if (failed)
        // a check of an earlier step (a live value it decides) without a hint of its own: its step's hint, not this one's
        return {
            step: n,
            done: false,
            missing: failed,
            // (a live check's earlier grading is not known here: the offline one reads no cluster, so its step alone is said)
            line: `${title}: not done: ${failed.check}${failed.step < n && checkKey(failed) !== CLUSTER_ANSWERS ? ` (step ${failed.step}'s check${isLive(failed) ? "" : ", which this step's work decides"})` : ""}; hint: ${hintOf(failed, steps[failed.step - 1] ?? step)}`,
        };
    return { step: n, done: false, line: `${title}: not done: none of its checks could run; hint: ${step.hint}` };
}
