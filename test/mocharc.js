/**
 * mocha's configuration for `npm test` (the fast tier: `mocha --config test/mocharc.js`, kept with the
 * tests rather than at the top level). A .js file rather than JSON for one reason:
 * the order of the test files. mocha's parallel mode hands the files to its workers in the order
 * given, and alphabetical order put the longest files last, leaving one worker running alone at the
 * end. So the files go longest first, by their wall time in a serial run (`--no-parallel`), waits
 * included: a file that mostly waits (providerProcess) must not be the one left running at the end
 * while the CPU idles. Every other file of test/ (each under 2 s) follows, alphabetically; a file
 * missing from the list still runs.
 */
const fs = require("fs");

const LONGEST_FIRST = [
    "typecheck",
    "lint",
    "tenantsStall",
    "tenantsLab",
    "simulateProduct",
    "scenario",
    "simTime",
    "cli",
    "tenantsProvider.e2e",
    "teardown",
    "tenantsCli",
    "cliInput",
    "providerProcess",
    "verifyStep",
    "sim",
    "verify",
    "rolloutDoctor",
    "silentSkip",
    "sim36",
    "doctorFindings",
    "closedOutput",
    "kubectlTables",
    "provider.e2e",
    "freshHost",
    "found",
    "program",
    "doctorLive",
    "exec",
    "manifests",
    "shopRepo",
    "doctor",
].map((name) => `test/${name}.test.ts`);

const all = fs
    .readdirSync(__dirname, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/${f}`)
    .sort();

module.exports = {
    require: ["loader/register.js", "test/setup.ts"],
    extension: ["ts"],
    spec: [...LONGEST_FIRST.filter((f) => all.includes(f)), ...all.filter((f) => !LONGEST_FIRST.includes(f))],
    timeout: 120000,
    exit: true,
    parallel: true,
    jobs: 5,
    reporter: "test/slowestReporter.ts",
};
