/**
 * The one context the real node's start runs its phases over (as kind's `create` runs its actions):
 * the node's folders, its ledger (written before each change to the host), the processes it started,
 * and the means every phase shares: a command in the node's namespaces, a daemon of the node, kubectl.
 */
import { ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { run } from "../../lab/ports/exec";
import { Paths } from "../config";
import { Ledger, writeLedger } from "../ledger";
import { ImageRecipe } from "../images";

export class NodeContext {
    private ledgerNow: Ledger;
    /** Every process the node started, in order (stopped in reverse). */
    readonly procs: ChildProcess[] = [];
    /** The node's daemons by name. */
    readonly daemons = new Map<string, ChildProcess>();
    /** Set once the node stops: a daemon's end is then expected, not reported. */
    stopping = false;
    private readonly t0 = Date.now();
    /** The holder of the node's namespaces (set by the namespaces phase). */
    holderPid = 0;
    /** The images the node's registry serves (set by the builds phase). */
    recipes: ImageRecipe[] = [];
    /** The admin kubeconfig (set by the control plane phase). */
    kubeconfigFile = "";

    constructor(
        readonly root: string,
        readonly p: Paths,
        readonly log: (line: string) => void,
        /** The cgroup.procs the node's daemons join (in the tracking hierarchy). */
        readonly systemProcs: string,
    ) {
        this.ledgerNow = { pid: process.pid, root };
    }

    /** How long since the start began, for the progress lines. */
    since(): string {
        return `${((Date.now() - this.t0) / 1000).toFixed(1)} s`;
    }

    get ledger(): Ledger {
        return this.ledgerNow;
    }

    /**
     * Records a change to the host in the ledger, before it is made. Refused once the node stops: the
     * stop has read the ledger to undo it, so a change recorded later would be made and never undone.
     */
    record(change: Partial<Ledger>): void {
        if (this.stopping) throw new Error(`the node is stopping: ${Object.keys(change).join(", ")} not changed`);
        this.ledgerNow = { ...this.ledgerNow, ...change };
        writeLedger(this.ledgerNow);
    }

    /** nsenter's arguments for a command in the node's namespaces. */
    inNode(cmd: string, args: string[]): string[] {
        return ["--target", String(this.holderPid), "--mount", "--net", "--", cmd, ...args];
    }

    /** A command in the node's namespaces, to its end. */
    nodeRun(cmd: string, args: string[], timeoutMs = 60_000) {
        return run("nsenter", this.inNode(cmd, args), { timeoutMs });
    }

    /** kubectl with the node's admin kubeconfig. */
    kubectl(args: string[], timeoutMs = 60_000) {
        return run("kubectl", ["--kubeconfig", this.kubeconfigFile, ...args], { timeoutMs });
    }

    /** A daemon of the node: in its namespaces and its cgroup, its output in logs/<name>.log, dying with this process. */
    daemon(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
        if (this.stopping) throw new Error(`the node is stopping: its ${name} is not started`);
        const out = fs.openSync(this.logOf(name), "a");
        const child = spawn(
            "sh",
            [
                "-c",
                'echo $$ > "$1" && shift && exec "$@"',
                "sh",
                this.systemProcs,
                "nsenter",
                ...this.inNode("setpriv", ["--pdeathsig", "KILL", "--", cmd, ...args]),
            ],
            { stdio: ["ignore", out, out], env: { ...process.env, ...env } },
        );
        fs.closeSync(out);
        this.procs.push(child);
        this.daemons.set(name, child);
        child.on("exit", (code, signal) => {
            if (!this.stopping) this.log(`the node's ${name} ended (${signal ?? `exit ${code}`}); its log: ${this.logOf(name)}`);
        });
        return child;
    }

    /** Throws, naming its log, when a daemon of the node has ended. */
    alive(name: string, child: ChildProcess): void {
        if (child.exitCode !== null || child.signalCode !== null)
            throw new Error(`the node's ${name} ended (${child.signalCode ?? `exit ${child.exitCode}`}); its log: ${this.logOf(name)}`);
    }

    logOf(name: string): string {
        return path.join(this.p.logs, `${name}.log`);
    }
}
