/**
 * gitops-lab kubectl-plugin [--out DIR]: writes the rollout doctor as a kubectl plugin,
 * DIR/kubectl-rollout_doctor (default /usr/local/bin): one self-contained file (the doctor's esbuild
 * bundle behind a `#!/usr/bin/env node` line) that needs only Node on the host, no checkout and no
 * node_modules. kubectl finds it on PATH: `kubectl rollout-doctor [doctor's options]`.
 */
import * as fs from "fs";
import * as path from "path";
import { Command, stringOption, UsageError } from "./command";
import { codeOf, messageOf } from "../lab/ports/errors";

export const PLUGIN_FILE = "kubectl-rollout_doctor";

/** The plugin's text: the doctor's bundle, run by the node on PATH. */
export function pluginText(bundleJs: string): string {
    return `#!/usr/bin/env node\n${PLUGIN_MARK}\n${bundleJs}`;
}

/** The plugin's second line: a file there without it (and without the bundle's own name) is not the kit's. */
const PLUGIN_MARK = "// the rollout doctor as a kubectl plugin, written by gitops-lab kubectl-plugin";

/** Whether the file at the plugin's path is one the kit wrote (this version's mark, or an earlier one's bundle). */
function isOurPlugin(file: string): boolean {
    const head = fs.readFileSync(file, "utf8").slice(0, 1 << 20);
    return head.startsWith("#!/usr/bin/env node\n") && (head.includes(PLUGIN_MARK) || head.includes("gitops-lab"));
}

/** The temporary file of a run that is gone: `.kubectl-rollout_doctor.<pid>.tmp` whose process no longer runs. */
const LEFTOVER = new RegExp(`^\\.${PLUGIN_FILE}\\.(\\d+)\\.tmp$`);

const alive = (pid: number) => {
    try {
        process.kill(pid, 0);
        return true;
    } catch (e) {
        return codeOf(e) === "EPERM"; // another user's process: it runs
    }
};

/** Removes what an interrupted run left in `dir`: only this command's own temporary files, and only of processes that are gone. */
function removeLeftovers(dir: string) {
    for (const name of fs.readdirSync(dir)) {
        const m = LEFTOVER.exec(name);
        if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) fs.rmSync(path.join(dir, name), { force: true });
    }
}

export const kubectlPlugin: Command = {
    name: "kubectl-plugin",
    summary: "write the rollout doctor as a kubectl plugin (kubectl rollout-doctor): one file that needs only Node",
    usage: "kubectl-plugin [--out DIR]",
    details: [
        `--out DIR   where ${PLUGIN_FILE} goes (default /usr/local/bin); kubectl finds plugins on PATH`,
        "then: kubectl rollout-doctor [--from FILE] [--appset NAME] [--json] [--watch …] (gitops-lab doctor --help for every option);",
        "it reads the cluster of kubectl's kubeconfig ($KUBECONFIG or ~/.kube/config, or --kubeconfig FILE) and changes nothing but Events with --watch",
    ],
    options: { out: { type: "string" } },
    async run(values) {
        const dir = path.resolve(stringOption(values, "out") ?? "/usr/local/bin");
        // a file's path (the plugin's own, say): --out names the folder kubectl finds plugins in
        if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory())
            throw new UsageError(
                `--out ${dir} is a file: --out takes the folder the plugin is written into (as ${path.join(path.dirname(dir), PLUGIN_FILE)}), one on kubectl's PATH: --out ${path.dirname(dir)}`,
            );
        // the plugin's own file name given (or a kubectl-* name) under a folder that is there: the folder is what --out takes
        if (
            !fs.existsSync(dir) &&
            /^kubectl-rollout[-_]doctor$/.test(path.basename(dir)) &&
            fs.statSync(path.dirname(dir), { throwIfNoEntry: false })?.isDirectory()
        )
            throw new UsageError(
                `--out ${dir} names a file: --out takes the folder the plugin is written into (as ${path.join(path.dirname(dir), PLUGIN_FILE)}), one on kubectl's PATH: --out ${path.dirname(dir)}`,
            );
        if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
            throw new UsageError(`--out ${dir} is not a directory; create it or name another (see gitops-lab kubectl-plugin --help)`);
        const file = path.join(dir, PLUGIN_FILE);
        // a file of the user's at the plugin's path (their own kubectl-rollout_doctor): never replaced without a word
        if (fs.statSync(file, { throwIfNoEntry: false })?.isFile() && !isOurPlugin(file))
            throw new UsageError(`${file} is there and is not the plugin gitops-lab writes (yours?): move it away, or give another --out`);
        // the bundle is built by the component's builder, loaded only here: the other commands need no esbuild
        const { doctorBundle } = await import("../components/rolloutDoctor");
        removeLeftovers(dir);
        // written whole or not at all: a temporary file beside it, then renamed into place
        const tmp = path.join(dir, `.${PLUGIN_FILE}.${process.pid}.tmp`);
        try {
            fs.writeFileSync(tmp, pluginText(doctorBundle().js), { mode: 0o755 });
            fs.chmodSync(tmp, 0o755); // whatever the umask
            fs.renameSync(tmp, file);
        } catch (e) {
            fs.rmSync(tmp, { force: true });
            throw new Error(`cannot write ${file} (${codeOf(e) ?? messageOf(e)}): is ${dir} writable? (choose another with --out)`);
        }
        const onPath = (process.env.PATH ?? "").split(path.delimiter).some((p) => p && path.resolve(p) === dir);
        console.log(`wrote ${file} (${Math.round(fs.statSync(file).size / 1024)} KB; it needs only node on PATH)`);
        console.log(
            onPath
                ? "run it: kubectl rollout-doctor [--from FILE] [--appset NAME] [--json]   (kubectl plugin list shows it)"
                : `${dir} is not on PATH: add it (export PATH="${dir}:$PATH"), then kubectl rollout-doctor …`,
        );
        return 0;
    },
};
