import * as pulumi from "@pulumi/pulumi";
import type { ShopScenarioTimeouts } from "../lab/shop/scenario";
import type { Drift, Incident, Pin, Promote, Report, ShopResultName, Revert } from "../lab/shop/results";
import { labModule, PROJECT_DIR } from "../program/labModule";
import { LabRunInputs, LabRunOutputs, labRunProvider } from "../program/labRunProvider";

export interface ScenarioArgs {
    /** The cluster's kubeconfig (secret). */
    kubeconfig: pulumi.Input<string>;
    /** Prefix of the lab's host paths ("/" on a lab host). */
    root: string;
    /** Carry out the lab through this step (2-8); the lab is left as it stands after it. */
    solveThrough: number;
    /** Deadline of each "synced to commit X" wait, in seconds (default 300). */
    syncTimeoutSeconds?: number;
    /** What must exist first (the ApplicationSet). */
    after?: pulumi.Resource[];
}

/** What the engine stores for the scenario: its inputs. */
export interface ScenarioInputs extends LabRunInputs {
    kubeconfig: string;
    timeouts: Partial<ShopScenarioTimeouts>;
}

/** ... and its outputs: the six results (null until their step ran) and the highest step done. */
export type ScenarioOutputs = LabRunOutputs<ScenarioInputs, { [K in ShopResultName]: unknown }>;

/**
 * Runs in the engine's dynamic provider process. create and update run the scenario through
 * `solveThrough`, resuming from the result files; delete removes the result files.
 */
export const scenarioProvider = labRunProvider<ScenarioInputs, { [K in ShopResultName]: unknown }>({
    setting: "solveThrough",
    rerunOn: ["timeouts"],
    async solve(inputs) {
        const { KubeCluster } = labModule(PROJECT_DIR, "cluster");
        const { CloneGit } = labModule(PROJECT_DIR, "git");
        const { shopLayout } = labModule(PROJECT_DIR, "layout");
        const { SHOP_RESULT_FILES } = labModule(PROJECT_DIR, "results");
        const { runShopScenario } = labModule(PROJECT_DIR, "scenario");
        const layout = shopLayout(inputs.root);
        const run = await runShopScenario(
            {
                layout,
                git: new CloneGit(layout.clone),
                cluster: new KubeCluster(inputs.kubeconfig),
                log: (l: string) => console.log(l),
                timeouts: inputs.timeouts,
            },
            inputs.solveThrough,
        );
        const outs = { ...inputs, completedThrough: run.through } as ScenarioOutputs;
        for (const k of SHOP_RESULT_FILES) outs[k] = run.results[k] ?? null;
        return { id: layout.workDir, outs };
    },
    async remove(props) {
        const { shopLayout } = labModule(PROJECT_DIR, "layout");
        const { removeResults } = labModule(PROJECT_DIR, "teardown");
        removeResults(shopLayout(props.root), (l: string) => console.log(`[scenario] ${l}`));
    },
});

class ScenarioRun extends pulumi.dynamic.Resource {
    declare readonly completedThrough: pulumi.Output<number>;
    declare readonly incident: pulumi.Output<Incident | null>;
    declare readonly pin: pulumi.Output<Pin | null>;
    declare readonly drift: pulumi.Output<Drift | null>;
    declare readonly promote: pulumi.Output<Promote | null>;
    declare readonly revert: pulumi.Output<Revert | null>;
    declare readonly report: pulumi.Output<Report | null>;
    constructor(
        name: string,
        args: { kubeconfig: pulumi.Input<string>; root: string; solveThrough: number; timeouts: Partial<ShopScenarioTimeouts> },
        opts?: pulumi.CustomResourceOptions,
    ) {
        // every output is declared and seeded, so the engine knows it before the first create
        const seeded = {
            completedThrough: undefined,
            incident: undefined,
            pin: undefined,
            drift: undefined,
            promote: undefined,
            revert: undefined,
            report: undefined,
        };
        super(scenarioProvider, name, { ...args, ...seeded }, opts);
    }
}

/**
 * Steps 2-8 of the shop lab (wait for sync, incident, pin, drift, promote, revert, report) on the
 * real cluster and repository; the results are the six JSON files in /root/cnpa-env and these outputs.
 */
export class Scenario extends pulumi.ComponentResource {
    readonly completedThrough: pulumi.Output<number>;
    readonly incident: pulumi.Output<Incident | null>;
    readonly pin: pulumi.Output<Pin | null>;
    readonly drift: pulumi.Output<Drift | null>;
    readonly promote: pulumi.Output<Promote | null>;
    readonly revert: pulumi.Output<Revert | null>;
    readonly report: pulumi.Output<Report | null>;

    constructor(name: string, args: ScenarioArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:Scenario", name, {}, opts);
        if (!Number.isInteger(args.solveThrough) || args.solveThrough < 2 || args.solveThrough > 8) {
            throw new Error(`Scenario runs steps 2-8: solveThrough must be 2..8, got ${args.solveThrough}`);
        }
        const timeouts = { syncMs: (args.syncTimeoutSeconds ?? 300) * 1000 };
        const run = new ScenarioRun(
            `${name}-run`,
            { kubeconfig: args.kubeconfig, root: args.root, solveThrough: args.solveThrough, timeouts },
            { parent: this, dependsOn: args.after, additionalSecretOutputs: ["kubeconfig"] },
        );
        this.completedThrough = run.completedThrough;
        this.incident = run.incident;
        this.pin = run.pin;
        this.drift = run.drift;
        this.promote = run.promote;
        this.revert = run.revert;
        this.report = run.report;
        this.registerOutputs({
            completedThrough: this.completedThrough,
            incident: this.incident,
            pin: this.pin,
            drift: this.drift,
            promote: this.promote,
            revert: this.revert,
            report: this.report,
        });
    }
}
