/**
 * gitops-lab up / destroy: the lab with no Pulumi account, driven through Pulumi's Automation API.
 * The local file backend in .pulumi-state/ of this project, stack `dev`, and an empty secrets
 * passphrase unless PULUMI_CONFIG_PASSPHRASE (or _FILE, or PULUMI_BACKEND_URL) is set. The Pulumi
 * CLI is the one on PATH, else the pinned version under ~/.pulumi/versions/, installed there by
 * PulumiCommand.install on first use. `up` runs the preflight first and installs nothing when a
 * check fails.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { formatPreflight } from "../lab/platform/preflight";
import { Command, EXIT } from "./command";
import { runPreflight } from "./preflight";
import { PROJECT_DIR, STACK } from "./stackConfig";

/** The CLI version that matches the SDK the program is pinned to. */
export const PULUMI_CLI_VERSION = "3.248.0";
const INSTALL_URL = "https://get.pulumi.com/install.sh";

function requireRoot(action: string) {
    if (process.getuid && process.getuid() !== 0) {
        throw new Error(`${action} must run as root: it ${action === "up" ? "installs k3s and writes /srv/bare and /root/cnpa-env" : "uninstalls k3s and removes the lab's files"}. Try: sudo npx gitops-lab ${action}`);
    }
}

/** The Pulumi CLI: on PATH, else the pinned one under ~/.pulumi/versions, installed if missing. */
async function pulumiCommand(log: (l: string) => void) {
    const { PulumiCommand } = await import("@pulumi/pulumi/automation");
    const semver = await import("semver");
    try {
        const cmd = await PulumiCommand.get({ skipVersionCheck: false });
        log(`Pulumi CLI: ${cmd.command} (on PATH)`);
        return cmd;
    } catch {
        /* not on PATH (or too old): use the pinned one */
    }
    const version = new semver.SemVer(PULUMI_CLI_VERSION);
    const root = path.join(os.homedir(), ".pulumi", "versions", PULUMI_CLI_VERSION);
    if (fs.existsSync(path.join(root, "bin", "pulumi"))) {
        log(`Pulumi CLI: ${root}/bin/pulumi`);
        return PulumiCommand.get({ version, root });
    }
    log(`Pulumi CLI: not on PATH; installing ${PULUMI_CLI_VERSION} into ${root} from ${INSTALL_URL} ...`);
    const t0 = Date.now();
    try {
        const cmd = await PulumiCommand.install({ version, root });
        log(`Pulumi CLI: installed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        return cmd;
    } catch (e: any) {
        throw new Error(
            `the Pulumi CLI is not on PATH and could not be installed from ${INSTALL_URL} (${String(e?.message ?? e).split("\n")[0]}); ` +
                `install it by hand (curl -fsSL ${INSTALL_URL} | sh -s -- --version ${PULUMI_CLI_VERSION}) and run again`,
        );
    }
}

async function stackFor(log: (l: string) => void) {
    const { LocalWorkspace } = await import("@pulumi/pulumi/automation");
    const stateDir = path.join(PROJECT_DIR, ".pulumi-state");
    fs.mkdirSync(stateDir, { recursive: true });
    // the language host and the dynamic providers run `node` from PATH: the Node the preflight checked, first
    const envVars: Record<string, string> = { PULUMI_SKIP_UPDATE_CHECK: "true", PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}` };
    const backend = process.env.PULUMI_BACKEND_URL ?? `file://${stateDir}`;
    envVars.PULUMI_BACKEND_URL = backend;
    if (process.env.PULUMI_CONFIG_PASSPHRASE === undefined && process.env.PULUMI_CONFIG_PASSPHRASE_FILE === undefined) envVars.PULUMI_CONFIG_PASSPHRASE = "";
    const cmd = await pulumiCommand(log);
    log(`state: ${backend}; stack: ${STACK}`);
    return LocalWorkspace.createOrSelectStack({ stackName: STACK, workDir: PROJECT_DIR }, { pulumiCommand: cmd, envVars });
}

const log = (l: string) => console.log(`[lab] ${l}`);

/** One line for a failed pulumi run (its whole output was already printed as it ran). */
function pulumiFailure(action: string, e: any): Error {
    const text = String(e?.stderr || e?.message || e);
    const line = text.split("\n").map((l) => l.trim()).filter((l) => /^error:/i.test(l)).pop() ?? text.split("\n").map((l) => l.trim()).filter(Boolean).pop() ?? "";
    return new Error(`pulumi ${action} failed: ${line.replace(/^error:\s*/i, "")} (the whole output is above)`);
}
const out = (s: string) => process.stdout.write(s);

export const up: Command = {
    name: "up",
    summary: "build the lab on this host (k3s, Argo CD, the git daemon, the shop lab) and solve it",
    usage: "up",
    details: ["runs the preflight first; configuration is the stack's (Pulumi.dev.yaml, see the README)"],
    options: {},
    async run() {
        requireRoot("up");
        const rs = await runPreflight();
        console.log(formatPreflight(rs));
        const failed = rs.filter((r) => r.verdict === "FAIL");
        if (failed.length) {
            console.error(`[lab] preflight: ${failed.length} check${failed.length === 1 ? "" : "s"} failed (${failed.map((r) => r.check).join("; ")}); nothing was installed`);
            return EXIT.FINDING;
        }
        const stack = await stackFor(log);
        const t0 = Date.now();
        await stack.up({ onOutput: out, color: "auto" }).catch((e) => Promise.reject(pulumiFailure("up", e)));
        log(`up finished in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        return EXIT.OK;
    },
};

export const destroy: Command = {
    name: "destroy",
    summary: "reset the host: remove the lab, Argo CD and the git daemon, and uninstall k3s if the lab installed it",
    usage: "destroy",
    details: [],
    options: {},
    async run() {
        requireRoot("destroy");
        const stack = await stackFor(log);
        const t0 = Date.now();
        await stack.destroy({ onOutput: out, color: "auto" }).catch((e) => Promise.reject(pulumiFailure("destroy", e)));
        log(`destroy finished in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        return EXIT.OK;
    },
};
