/**
 * The lab's Pulumi stack, driven through the Automation API with `index.ts` as an inline program:
 * the Node process that runs `gitops-lab up` is the program's language host, so no
 * `pulumi-language-nodejs` binary is needed, and `up`, the tests and `bench --pulumi` run the
 * same code. One operation per process (`require` caches index.ts).
 *
 * - State: the local file backend in `.pulumi-state/` of this project (PULUMI_BACKEND_URL wins),
 *   stack `dev`, an empty secrets passphrase unless PULUMI_CONFIG_PASSPHRASE(_FILE) is set.
 * - Configuration: Pulumi.dev.yaml, or the file `--config-file` names.
 * - The CLI: `pulumi` on PATH; else the one built from Go modules in the cache
 *   (`gitops-lab build-real-plane`, realplane/pulumiBuild.ts), with a PULUMI_HOME of the lab's own
 *   holding the kubernetes provider from the same cache and no plugin downloads; else the pinned
 *   version under ~/.pulumi/versions, installed on first use (a lab host with internet).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { Stack } from "@pulumi/pulumi/automation";
import { run } from "../lab/ports/exec";
import { isAlive } from "../lab/ports/proc";
import { pulumiBinPath, pulumiBuilt, pulumiCacheDir } from "../realplane/pulumiBuild";
import { PULUMI } from "../realplane/versions";
import { PROJECT_DIR, stackName } from "./stackConfig";
import { messageOf } from "../lab/ports/errors";

/** The CLI version that matches the SDK the program is pinned to. */
export const PULUMI_CLI_VERSION = PULUMI.cli.slice(1);
const INSTALL_URL = "https://get.pulumi.com/install.sh";
/** The dynamic providers' plugin: a shell script shipped in @pulumi/pulumi that the engine looks for beside its binary. */
const NODEJS_PROVIDER = "pulumi-resource-pulumi-nodejs";

export interface LabStack {
    stack: Stack;
    /** Where the CLI came from, for the log. */
    cli: string;
}

type Log = (line: string) => void;

/** The cached CLI's environment: its own PULUMI_HOME with the cached kubernetes provider, nothing downloaded, nothing ambient. */
async function cachedPulumiEnv(log: Log): Promise<Record<string, string>> {
    const dir = pulumiCacheDir();
    const home = path.join(dir, "pulumi-home");
    const env = { PULUMI_HOME: home, PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true", PULUMI_IGNORE_AMBIENT_PLUGINS: "true" };
    // the dynamic-provider plugin resolves @pulumi/pulumi from the program's directory, so one copy serves every clone
    const shim = path.join(path.dirname(pulumiBinPath("pulumi")), NODEJS_PROVIDER);
    if (!fs.existsSync(shim)) {
        const tmp = `${shim}.${process.pid}.tmp`;
        fs.copyFileSync(require.resolve(`@pulumi/pulumi/${NODEJS_PROVIDER}`), tmp);
        fs.chmodSync(tmp, 0o755);
        fs.renameSync(tmp, shim);
    }
    const installed = path.join(home, "plugins", `resource-kubernetes-v${PULUMI.kubernetes}`);
    if (!fs.existsSync(installed)) {
        log(`installing the kubernetes provider ${PULUMI.kubernetes} from ${pulumiBinPath("pulumi-resource-kubernetes")} into ${home}`);
        await run(
            pulumiBinPath("pulumi"),
            ["plugin", "install", "resource", "kubernetes", PULUMI.kubernetes, "--file", pulumiBinPath("pulumi-resource-kubernetes")],
            {
                env: { ...process.env, ...env },
                timeoutMs: 300_000,
            },
        );
    }
    return env;
}

/** The Pulumi CLI: on PATH, else the one built from Go modules, else the pinned one under ~/.pulumi/versions (installed if missing). */
async function pulumiCommand(
    log: Log,
): Promise<{ cmd: import("@pulumi/pulumi/automation").PulumiCommand; env: Record<string, string>; cli: string }> {
    const { PulumiCommand } = await import("@pulumi/pulumi/automation");
    const semver = await import("semver");
    try {
        const cmd = await PulumiCommand.get({ skipVersionCheck: false });
        return { cmd, env: {}, cli: `${cmd.command} (on PATH)` };
    } catch {
        /* not on PATH (or too old) */
    }
    const version = new semver.SemVer(PULUMI_CLI_VERSION);
    if (pulumiBuilt()) {
        const env = await cachedPulumiEnv(log);
        const cmd = await PulumiCommand.get({ version, root: pulumiCacheDir() });
        return { cmd, env, cli: `${pulumiBinPath("pulumi")} (built from Go modules)` };
    }
    const root = path.join(os.homedir(), ".pulumi", "versions", PULUMI_CLI_VERSION);
    if (fs.existsSync(path.join(root, "bin", "pulumi")))
        return { cmd: await PulumiCommand.get({ version, root }), env: {}, cli: `${root}/bin/pulumi` };
    log(`Pulumi CLI: not on PATH and not built here; installing ${PULUMI_CLI_VERSION} into ${root} from ${INSTALL_URL} ...`);
    const t0 = Date.now();
    try {
        const cmd = await PulumiCommand.install({ version, root });
        return { cmd, env: {}, cli: `${root}/bin/pulumi (installed in ${((Date.now() - t0) / 1000).toFixed(1)} s)` };
    } catch (e) {
        throw new Error(
            `the Pulumi CLI is not on PATH, not built here (gitops-lab build-real-plane) and could not be installed from ${INSTALL_URL} (${messageOf(e).split("\n")[0]}); ` +
                `install it (curl -fsSL ${INSTALL_URL} | sh -s -- --version ${PULUMI_CLI_VERSION}) and run again`,
        );
    }
}

/**
 * The folder of a file backend's URL as Pulumi's diy backend reads it: `file://~` is the home folder, a query
 * (`?no_tmp_dir=true`) is no part of the path, a relative path is the current folder's; undefined for another backend.
 */
export function fileBackendDir(url: string): string | undefined {
    if (!url.startsWith("file://")) return undefined;
    const p = url.slice("file://".length).replace(/\?.*$/, "");
    const home = p === "~" || p.startsWith("~/") ? path.join(os.homedir(), p.slice(1)) : p;
    return path.resolve(home);
}

/**
 * Whether a file backend lacks the stack: "none" where it does (and nothing else has it), or the line for a
 * PULUMI_BACKEND_URL left set from another project that hides the lab's own state, which has it; undefined where
 * the backend has it, or is no file backend (Pulumi then says).
 */
export function missingStack(stack: string, stateDir: string, fromEnv: string | undefined): string | undefined {
    const has = (dir: string) =>
        [".json", ".json.gz"].some((ext) => fs.existsSync(path.join(dir, ".pulumi", "stacks", "gitops-lab", `${stack}${ext}`)));
    const dir = fileBackendDir(fromEnv ?? `file://${stateDir}`);
    if (dir === undefined || has(dir)) return undefined;
    return fromEnv && has(stateDir)
        ? `PULUMI_BACKEND_URL is set in your environment (${fromEnv}), which has no stack ${stack}, and it hides the lab's own state (file://${stateDir}), which has it: unset PULUMI_BACKEND_URL, then run again`
        : "none";
}

/**
 * The stack `dev` of this project with index.ts as its inline program. `existing` (what the command
 * would do, e.g. "show"): a stack `up` has not made yet is one line, and nothing is made or written
 * (making a stack writes its encryption salt into Pulumi.dev.yaml).
 */
export async function labStack(log: Log, opts: { existing?: string } = {}): Promise<LabStack> {
    const { LocalWorkspace } = await import("@pulumi/pulumi/automation");
    const STACK = stackName();
    const stateDir = path.join(PROJECT_DIR, ".pulumi-state");
    const backend = process.env.PULUMI_BACKEND_URL ?? `file://${stateDir}`;
    const noStack = `there is no stack ${STACK} here yet (state: ${backend}): nothing to ${opts.existing}; gitops-lab up makes it`;
    const missing = opts.existing ? missingStack(STACK, stateDir, process.env.PULUMI_BACKEND_URL) : undefined;
    if (missing) throw new Error(missing === "none" ? noStack : missing);
    if (!process.env.PULUMI_BACKEND_URL) fs.mkdirSync(stateDir, { recursive: true });
    const { cmd, env, cli } = await pulumiCommand(log);
    // the dynamic providers run `node` from PATH: the Node that runs this, first
    const envVars: Record<string, string> = {
        ...env,
        PULUMI_SKIP_UPDATE_CHECK: "true",
        PULUMI_BACKEND_URL: backend,
        PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
    };
    if (process.env.PULUMI_CONFIG_PASSPHRASE === undefined && process.env.PULUMI_CONFIG_PASSPHRASE_FILE === undefined)
        envVars.PULUMI_CONFIG_PASSPHRASE = "";
    log(`Pulumi CLI: ${cli}; state: ${backend}; stack: ${STACK}`);
    const program = async () => ({ ...require(path.join(PROJECT_DIR, "index")) });
    const args = { stackName: STACK, projectName: "gitops-lab", program };
    const ws = { workDir: PROJECT_DIR, pulumiCommand: cmd, envVars };
    // the CLI's own error line, not the Automation API's dump of the command (its stdout, stderr, and the error again)
    const unreadable = (e: unknown) => {
        const said = /^error: (.*)$/m.exec(messageOf(e))?.[1];
        if (!said) return e;
        // the backend's own failures (a bucket, a path, a login); a passphrase's or another error is pulumi's line as it is
        if (
            !/bucket|backend|blob|meta\.yaml|no such file|not a directory|permission denied|login|unsupported|region|credential/i.test(said)
        )
            return new Error(`pulumi: ${said}`);
        const fix = process.env.PULUMI_BACKEND_URL
            ? `PULUMI_BACKEND_URL is set in your environment: unset it for the lab's own state (file://${stateDir}), or mend it`
            : `see ${path.join(stateDir, ".pulumi")}`;
        return new Error(`the state backend ${backend} could not be read for the stack ${STACK} (pulumi: ${said}); ${fix}`);
    };
    const stack = opts.existing
        ? await LocalWorkspace.selectStack(args, ws).catch((e: unknown) => {
              throw /no stack named|not found/i.test(messageOf(e)) ? new Error(noStack) : unreadable(e);
          })
        : await LocalWorkspace.createOrSelectStack(args, ws).catch((e: unknown) => {
              throw unreadable(e);
          });
    return { stack, cli };
}

/**
 * What a killed run leaves in a file backend: the stack's lock (its process gone) and operations
 * marked pending in the state. Returns the lines said; removes only locks whose process on this
 * host is gone, and clears pending operations the way the CLI's own message offers (a refresh).
 */
export async function recoverInterruptedRun(stack: Stack, log: Log, backend = process.env.PULUMI_BACKEND_URL): Promise<void> {
    const base = backend ? fileBackendDir(backend) : path.join(PROJECT_DIR, ".pulumi-state");
    if (base) {
        const locks = path.join(base, ".pulumi", "locks");
        for (const file of walk(locks).filter((f) => f.endsWith(".json") && f.includes(`${path.sep}${stack.name}${path.sep}`))) {
            let lock: { hostname?: string; pid?: number };
            try {
                lock = JSON.parse(fs.readFileSync(file, "utf8"));
            } catch {
                continue;
            }
            if (lock.hostname === os.hostname() && typeof lock.pid === "number" && Number.isInteger(lock.pid) && !isAlive(lock.pid)) {
                fs.rmSync(file, { force: true });
                log(`the stack was locked by PID ${lock.pid}, which is gone (an interrupted run): lock removed`);
            }
        }
    }
    const deployment = (await stack.exportStack()).deployment;
    // the state file's pending operations (Pulumi's apitype.OperationV2): a type and the resource's URN
    const pending: { type?: string; resource?: { urn?: string } }[] = deployment?.pending_operations ?? [];
    if (pending.length) {
        const what = pending
            .map(
                (p) =>
                    `${p.type} ${String(p.resource?.urn ?? "")
                        .split("::")
                        .pop()}`,
            )
            .join(", ");
        log(
            `the last run was interrupted with ${pending.length} operation${pending.length === 1 ? "" : "s"} pending (${what}): clearing ${pending.length === 1 ? "it" : "them"} with a refresh, as the Pulumi CLI advises`,
        );
        await stack.refresh({ clearPendingCreates: true, onOutput: (s) => process.stdout.write(s) });
    }
}

function walk(dir: string): string[] {
    if (!fs.existsSync(dir)) return [];
    return fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}
