/**
 * gitops-lab up / preview / refresh / destroy: the lab's stack through Pulumi's Automation API,
 * with index.ts as an inline program (cli/pulumiStack.ts), so no Pulumi account and no language
 * host binary are needed. `up` runs the preflight first and installs nothing when a check fails;
 * every operation first recovers what an interrupted run left (a dead process's lock, pending
 * operations), saying so in one line.
 */
import * as fs from "fs";
import { formatPreflight } from "../lab/platform/preflight";
import type { NextStep } from "../lab/grader/steps";
import { Command, EXIT } from "./command";
import { runPreflight } from "./preflight";
import { labStack, recoverInterruptedRun } from "./pulumiStack";
import { CONFIG_FILE, CONFIG_FILE_DETAIL, configFileOf } from "./stackConfig";
import { messageOf, stderrOf } from "../lab/ports/errors";
import { simulatedLabAbove } from "../sim/hostRoot";
import { clusterStateFile } from "../sim/servedFiles";

function requireRoot(action: string) {
    if (process.getuid && process.getuid() !== 0) {
        throw new Error(
            `${action} must run as root: it ${action === "up" ? "installs k3s and writes /srv/bare and /root/cnpa-env" : action === "destroy" ? "uninstalls k3s and removes the lab's files" : "reads the lab's host paths and cluster"}. Try: sudo npx gitops-lab ${action}`,
        );
    }
}

const log = (l: string) => console.log(`[lab] ${l}`);

/** One line for a failed pulumi run (its whole output was already printed as it ran). */
function pulumiFailure(action: string, e: unknown): Error {
    const text = stderrOf(e);
    const line =
        text
            .split("\n")
            .map((l) => l.trim())
            .filter((l) => /^error:/i.test(l))
            .pop() ??
        text
            .split("\n")
            .map((l) => l.trim())
            .filter(Boolean)
            .pop() ??
        "";
    return new Error(`pulumi ${action} failed: ${line.replace(/^error:\s*/i, "")} (the whole output is above)`);
}
const out = (s: string) => process.stdout.write(s);

async function timed(action: string, f: () => Promise<unknown>): Promise<number> {
    const t0 = Date.now();
    await f().catch((e) => Promise.reject(pulumiFailure(action, e)));
    log(`${action} finished in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    return EXIT.OK;
}

/** The hand-over `up` ends with: for each lab not done, the learner's next step (the stack outputs nextStep, tenantsNextStep). */
export function handOverLines(outputs: Record<string, { value: unknown }>): string[] {
    const lines: string[] = [];
    for (const [lab, key] of [
        ["shop", "nextStep"],
        ["tenants", "tenantsNextStep"],
    ] as const) {
        const n = outputs[key]?.value as NextStep | null | undefined;
        if (!n) continue;
        lines.push(`the ${lab} lab is yours from step ${n.step} ${n.name}: ${n.ask}`);
        lines.push(`  step ${n.step} in full: ${n.inFull}; when it is done: ${n.verify}`);
    }
    return lines;
}

/** Pulumi's --stack (-s) given by habit: the lab's stack is chosen by the environment. */
const stackMisread = (command: string): Record<string, string> =>
    Object.fromEntries(
        ["--stack", "-s"].map((o) => [
            o,
            `the lab's stack is dev unless GITOPS_LAB_STACK names another: GITOPS_LAB_STACK=NAME gitops-lab ${command} (it takes no ${o})`,
        ]),
    );

export const up: Command = {
    name: "up",
    misread: stackMisread("up"),
    summary: "build the lab on this host (k3s, Argo CD, the git daemon, the labs) and solve it",
    usage: "up [--config-file FILE] [--expect-no-changes]",
    details: [
        "runs the preflight first; configuration is the stack's (Pulumi.dev.yaml, see the README)",
        CONFIG_FILE_DETAIL,
        "--expect-no-changes fail if the update would change anything (a second up)",
    ],
    options: { ...CONFIG_FILE, "expect-no-changes": { type: "boolean" } },
    async run(values) {
        const configFile = configFileOf(values);
        requireRoot("up");
        const rs = await runPreflight({}, configFile);
        console.log(formatPreflight(rs));
        const failed = rs.filter((r) => r.verdict === "FAIL");
        if (failed.length) {
            console.error(
                `[lab] preflight: ${failed.length} check${failed.length === 1 ? "" : "s"} failed (${failed.map((r) => r.check).join("; ")}); nothing was installed`,
            );
            return EXIT.FINDING;
        }
        const { stack } = await labStack(log);
        await recoverInterruptedRun(stack, log);
        let outputs: Record<string, { value: unknown }> = {};
        const code = await timed("up", async () => {
            ({ outputs } = await stack.up({ onOutput: out, color: "auto", configFile, expectNoChanges: !!values["expect-no-changes"] }));
        });
        for (const l of handOverLines(outputs)) log(l);
        return code;
    },
};

export const preview: Command = {
    name: "preview",
    misread: stackMisread("preview"),
    summary: "show what up would change; changes nothing on the host or in the cluster",
    usage: "preview [--config-file FILE]",
    details: [CONFIG_FILE_DETAIL],
    options: { ...CONFIG_FILE },
    async run(values) {
        const configFile = configFileOf(values);
        const { stack } = await labStack(log);
        return timed("preview", () => stack.preview({ onOutput: out, color: "auto", configFile }));
    },
};

export const refresh: Command = {
    name: "refresh",
    misread: stackMisread("refresh"),
    summary: "read the lab's resources back into the stack's state",
    usage: "refresh [--config-file FILE] [--expect-no-changes]",
    details: [CONFIG_FILE_DETAIL, "--expect-no-changes fail if the state differs from what is there (drift)"],
    options: { ...CONFIG_FILE, "expect-no-changes": { type: "boolean" } },
    async run(values) {
        const configFile = configFileOf(values);
        requireRoot("refresh");
        const { stack } = await labStack(log, { existing: "refresh" });
        await recoverInterruptedRun(stack, log);
        return timed("refresh", () =>
            stack.refresh({ onOutput: out, color: "auto", configFile, expectNoChanges: !!values["expect-no-changes"] }),
        );
    },
};

export const destroy: Command = {
    name: "destroy",
    misread: stackMisread("destroy"),
    summary: "reset the host: remove the lab, Argo CD and the git daemon, and uninstall k3s if the lab installed it",
    usage: "destroy [--config-file FILE]",
    details: [CONFIG_FILE_DETAIL],
    options: { ...CONFIG_FILE },
    async run(values) {
        const configFile = configFileOf(values);
        requireRoot("destroy");
        const { stack } = await labStack(log, { existing: "destroy" });
        await recoverInterruptedRun(stack, log);
        return timed("destroy", () => stack.destroy({ onOutput: out, color: "auto", configFile }));
    },
};

export const outputs: Command = {
    name: "outputs",
    summary: 'print the stack\'s outputs as one JSON object (secrets as "[secret]"), for a grader (verify --stack-outputs)',
    usage: "outputs [--show-secrets]",
    details: [
        "the same as `pulumi stack output --json` on the lab's own state, with no Pulumi CLI on PATH needed",
        "--show-secrets   print the secret outputs' values too (argocdAdminPassword: the UI's admin password)",
    ],
    options: { "show-secrets": { type: "boolean" } },
    // pulumi stack output NAME: here every output is printed as one JSON object
    bare: (word) =>
        `outputs prints every output as one JSON object (no name is taken): gitops-lab outputs | jq -r .${/^[A-Za-z_]\w*$/.test(word) ? word : '"NAME"'}${/password|secret|token/i.test(word) ? " (a secret one needs --show-secrets)" : ""}`,
    misread: {
        ...stackMisread("outputs"),
        "--json": "outputs prints one JSON object already (as pulumi stack output --json does): leave --json out",
        // a simulated lab has no stack: its results are files, graded offline
        "--root":
            "outputs prints the lab host's stack outputs, and a simulated lab has no stack: its results are the JSON files under DIR/root/cnpa-env (DIR/root/tenants-lab), graded by gitops-lab verify --root DIR --offline",
    },
    async run(values) {
        const { stack } = await labStack(() => {}, { existing: "show" }).catch((e: unknown) => {
            // no stack, asked from inside a simulated lab's folder: that lab's results are its files, not a stack's
            const cwd = process.cwd();
            const lab = fs.existsSync(clusterStateFile(cwd)) ? cwd : simulatedLabAbove(cwd);
            if (lab && /^there is no stack /.test(messageOf(e)))
                throw new Error(
                    `${cwd} is inside the simulated lab under ${lab}, which has no stack (outputs prints a lab host's): its results are the JSON files under ${lab}/root/cnpa-env (${lab}/root/tenants-lab), graded by gitops-lab verify --root ${lab} --offline`,
                );
            throw e;
        });
        const outs = await stack.outputs();
        console.log(
            JSON.stringify(
                Object.fromEntries(Object.entries(outs).map(([k, v]) => [k, v.secret && !values["show-secrets"] ? "[secret]" : v.value])),
                null,
                2,
            ),
        );
        return EXIT.OK;
    },
};
