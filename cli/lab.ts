/**
 * `npm run lab:up` / `npm run lab:destroy`: the lab with no Pulumi account. Uses the local file
 * backend in .pulumi-state/ of this project, stack `dev`, and an empty passphrase unless
 * PULUMI_CONFIG_PASSPHRASE (or PULUMI_BACKEND_URL) is already set. The Pulumi CLI comes from the
 * `pulumi` npm package (it downloads the CLI on first use) unless one is on PATH.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

const project = path.resolve(__dirname, "..");
const action = process.argv[2];
if (action !== "up" && action !== "destroy") {
    console.error("usage: ts-node cli/lab.ts up|destroy   (npm run lab:up / npm run lab:destroy)");
    process.exit(1);
}
if (process.getuid && process.getuid() !== 0) {
    console.error(`lab:${action} must run as root: it ${action === "up" ? "installs k3s and writes /srv/bare and /root/cnpa-env" : "uninstalls k3s and removes the lab's files"}. Try: sudo npm run lab:${action}`);
    process.exit(1);
}

const stateDir = path.join(project, ".pulumi-state");
fs.mkdirSync(stateDir, { recursive: true });
const env: NodeJS.ProcessEnv = { ...process.env, PULUMI_SKIP_UPDATE_CHECK: "true" };
env.PULUMI_BACKEND_URL ??= `file://${stateDir}`;
if (env.PULUMI_CONFIG_PASSPHRASE === undefined && env.PULUMI_CONFIG_PASSPHRASE_FILE === undefined) env.PULUMI_CONFIG_PASSPHRASE = "";
const onPath = spawnSync("pulumi", ["version"], { stdio: "ignore" }).status === 0;
const pulumi = onPath ? "pulumi" : path.join(project, "node_modules", ".bin", "pulumi");
console.log(`[lab] state: ${env.PULUMI_BACKEND_URL}; stack: dev; CLI: ${onPath ? "pulumi on PATH" : "npm package pulumi"}`);

function run(args: string[]): void {
    console.log(`[lab] pulumi ${args.join(" ")}`);
    const r = spawnSync(pulumi, args, { cwd: project, env, stdio: "inherit" });
    if (r.error) {
        console.error(`[lab] could not run ${pulumi}: ${r.error.message}`);
        process.exit(1);
    }
    if (r.status !== 0) process.exit(r.status ?? 1);
}

run(["stack", "select", "dev", "--create", "--non-interactive"]);
run([action, "--yes", "--stack", "dev", "--non-interactive"]);
