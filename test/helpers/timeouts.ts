/** Scenario timeouts for the simulated cluster (the ones `npm run simulate` uses). */
export { SIM_TIMEOUTS as TEST_TIMEOUTS } from "../sim/simulatedLab";
