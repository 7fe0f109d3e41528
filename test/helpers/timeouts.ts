import { ScenarioTimeouts } from "../../lab/scenario";

/** Scenario timeouts for the simulated cluster: same logic, shorter deadlines and polls. */
export const TEST_TIMEOUTS: ScenarioTimeouts = {
    syncMs: 30_000,
    driftMs: 20_000,
    errorMs: 30_000,
    pollMs: 100,
    driftPollMs: 250,
    refreshEveryMs: 3_000,
};
