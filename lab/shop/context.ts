/**
 * What the shop lab's scenario runs over (scenario.ts): its ports, deadlines and clock, as the
 * caller gives them (ShopScenarioContext) and as the steps hold them (Ctx).
 */
import { ClusterPort } from "../ports/cluster";
import { GitPort } from "../ports/git";
import { Clock } from "../ports/clock";
import { ShopLayout } from "./layout";
import type { StepTiming } from "../kit/steps";

export interface ShopScenarioTimeouts {
    /** Deadline of one "synced to commit X" wait. */
    syncMs: number;
    /** Deadline for selfHeal to undo the drift. */
    driftMs: number;
    /** Deadline for the ComparisonError to show on shop-dev. */
    errorMs: number;
    /** Time between two looks at an Application. */
    pollMs: number;
    /** Time between two looks at the drifted ConfigMap (0.25-0.5 s; docs/shop-lab.md says 0.5-1 s: 0.5 s fits both). */
    driftPollMs: number;
    /** While waiting, refresh again when this long has passed since the last refresh and Argo CD has not moved. */
    refreshEveryMs: number;
}

export const DEFAULT_TIMEOUTS: ShopScenarioTimeouts = {
    syncMs: 300_000,
    driftMs: 120_000,
    errorMs: 180_000,
    pollMs: 1_000,
    driftPollMs: 500,
    refreshEveryMs: 20_000,
};

export type { StepTiming };

export interface ShopScenarioContext {
    layout: ShopLayout;
    git: GitPort;
    cluster: ClusterPort;
    log: (line: string) => void;
    timeouts?: Partial<ShopScenarioTimeouts>;
    appset?: { name: string; namespace: string; repoURL?: string };
    /** The clock waits and measurements are on (default: the real one). */
    clock?: Clock;
    /**
     * Ask Argo CD to look at Git now (the refresh annotation) instead of waiting for its poll
     * (default true). The bench turns it off to measure what a naive, poll-only script would wait.
     */
    refresh?: boolean;
}

export interface Ctx extends Required<Omit<ShopScenarioContext, "timeouts">> {
    t: ShopScenarioTimeouts;
    waitMs: number;
    prefix: string;
}

export const DEV = "shop-dev";
export const PROD = "shop-prod";
export const CM = "shop-config";
export const RELEASE = "release/prod";

export function say(c: Ctx, line: string) {
    c.log(`${c.prefix} ${line}`);
}
