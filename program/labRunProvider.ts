/**
 * The dynamic provider of a lab's run, the same shell for every lab (components/scenario.ts,
 * components/tenantsLab.ts): create and update carry the lab out through `solveThrough`, resuming
 * from what is on the host; update refuses a lower `solveThrough` (steps cannot be undone); a change
 * of the inputs the lab names runs it again, a new root replaces it; delete takes the lab down.
 * The returned object is serialized into the state with the lab's `solve` and `remove`, so those
 * reach the lab's code through labModule at run time, never through module-scope imports.
 */
import type * as pulumi from "@pulumi/pulumi";

export interface LabRunInputs {
    /** Prefix of the lab's host paths ("/" on a lab host). */
    root: string;
    /** The last step to carry out. */
    solveThrough: number;
}

/** Every run's outputs hold its inputs and the highest step done. */
export type LabRunOutputs<I extends LabRunInputs, R> = I & R & { completedThrough: number };

export interface LabRunSpec<I extends LabRunInputs, R> {
    /** The stack setting that sets solveThrough (solveThrough, tenantsSolveThrough), named when it goes down. */
    setting: string;
    /** The inputs, besides root and solveThrough, whose change runs the lab again (its update). */
    rerunOn: (keyof I & string)[];
    /** Carries the lab out through `inputs.solveThrough`: the resource's id (the lab's work folder) and its outputs. */
    solve(inputs: I): Promise<{ id: string; outs: LabRunOutputs<I, R> }>;
    /** Takes the lab down, from the outputs the state holds. */
    remove(props: LabRunOutputs<I, R>): Promise<void>;
}

export function labRunProvider<I extends LabRunInputs, R>(spec: LabRunSpec<I, R>): pulumi.dynamic.ResourceProvider<I, LabRunOutputs<I, R>> {
    // (the methods call spec's functions, never the provider object: it is not in the serialized closure)
    return {
        create: (inputs) => spec.solve(inputs),
        async diff(_id, olds, news) {
            const replaces = olds.root !== news.root ? ["root"] : [];
            const rerun = ["solveThrough", ...spec.rerunOn].some(
                (k) => JSON.stringify((olds as Record<string, unknown>)[k]) !== JSON.stringify((news as Record<string, unknown>)[k]),
            );
            return { changes: replaces.length > 0 || rerun, replaces, deleteBeforeReplace: true };
        },
        async update(_id, olds, news) {
            if (news.solveThrough < olds.completedThrough) {
                throw new Error(
                    `${spec.setting} went down from ${olds.completedThrough} to ${news.solveThrough}, but the lab cannot un-do steps. ` +
                        `Set it back (pulumi config set ${spec.setting} ${olds.completedThrough}), or start over with pulumi destroy and pulumi up`,
                );
            }
            return { outs: (await spec.solve(news)).outs };
        },
        delete: (_id, props) => spec.remove(props),
    };
}
