/** A real `git daemon` on 127.0.0.1 serving a directory of bare repositories, for tests. */
import { ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as net from "net";
import * as path from "path";
import { gitDaemonArgs } from "../lab/platform/gitDaemon";
import { run } from "../lab/ports/exec";
import { lockFile } from "../lab/ports/lock";
import { commandLine, procStat } from "../lab/ports/proc";
import { sleep } from "../lab/ports/wait";

/** A loopback port that was just free: nothing listens on it. */
export async function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const s = net.createServer();
        s.listen(0, "127.0.0.1", () => {
            const port = (s.address() as net.AddressInfo).port;
            s.close(() => resolve(port));
        });
        s.on("error", reject);
    });
}

async function canConnect(port: number): Promise<boolean> {
    return new Promise((resolve) => {
        const sock = net.connect(port, "127.0.0.1");
        sock.on("connect", () => {
            sock.destroy();
            resolve(true);
        });
        sock.on("error", () => resolve(false));
    });
}

export interface RunningDaemon {
    port: number;
    url(repo: string): string;
    stop(): Promise<void>;
    /** Called when the daemon exits on its own (killed by someone, not stopped): how it ended. */
    onExit(listener: (how: string) => void): void;
}

/** Kills a git daemon an earlier run recorded in `pidFile` and left behind (its parent was killed); returns a note. */
export function reapGitDaemon(pidFile: string, baseDir: string): string | null {
    if (!fs.existsSync(pidFile)) return null;
    const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
    const cmdline = Number.isInteger(pid) && pid > 0 ? commandLine(pid) : "";
    // (a PID gone, or reused by something else: nothing to stop)
    const ours = cmdline.includes("daemon") && cmdline.includes(`--base-path=${baseDir}`);
    // its run alive still (a simulate of this root whose lock file was removed by hand): its daemon is not left behind
    const parent = ours ? procStat(pid)?.ppid : undefined;
    if (parent && parent !== 1 && parent !== process.pid && /\bsimulate\b/.test(commandLine(parent)))
        throw new Error(
            `the git daemon (PID ${pid}) of this root is a running gitops-lab simulate's (PID ${parent}), whose lock file ${path.basename(lockFile(path.dirname(pidFile)))} is gone (removed by hand?): stop that run (Ctrl-C in its terminal, or kill ${parent}), then run again`,
        );
    fs.rmSync(pidFile, { force: true });
    if (!ours) return null;
    try {
        process.kill(pid, "SIGKILL");
    } catch {
        return null;
    }
    return `stopped the git daemon (PID ${pid}) an interrupted run left behind`;
}

/** `git --exec-path`, asked once per PATH (a test may put another git first). */
const execPaths = new Map<string, Promise<string>>();
function gitExecPath(): Promise<string> {
    const key = process.env.PATH ?? "";
    let p = execPaths.get(key);
    if (!p) {
        p = run("git", ["--exec-path"]).then((r) => r.stdout.trim());
        p.catch(() => execPaths.delete(key));
        execPaths.set(key, p);
    }
    return p;
}

/**
 * Starts `git daemon` with the same arguments the GitDaemon Pod uses (lab/platform/gitDaemon.ts),
 * bound to loopback. `asNobody` runs it as nobody, as the Pod runs. It never outlives this process:
 * setpriv gives it a parent-death signal, so even a SIGKILL of this process takes it down; with
 * `pidFile` its PID is also recorded, for the next run to reap.
 */
export async function startGitDaemon(
    baseDir: string,
    opts: { asNobody?: boolean; env?: Record<string, string>; pidFile?: string; port?: number } = {},
): Promise<RunningDaemon> {
    const port = opts.port ?? (await freePort());
    const args = gitDaemonArgs(baseDir, port, "127.0.0.1");
    const env = { ...process.env, ...(opts.env ?? {}) };
    const user = opts.asNobody ? ["--reuid=65534", "--regid=65534", "--clear-groups"] : [];
    // git-daemon itself, not `git daemon`: the git wrapper would run it as a child the death signal does not reach
    const daemon = path.join(await gitExecPath(), "git-daemon");
    // a git without its daemon (some distributions ship it apart: Fedora's and Alpine's git-daemon package)
    if (!fs.existsSync(daemon))
        throw new Error(
            `this git has no git daemon (${daemon}, from git --exec-path, is not there): install it (Debian's git has it; Fedora and Alpine: the git-daemon package), or put a git that has it first on PATH`,
        );
    // cwd /: nobody may not enter ours
    const child: ChildProcess = spawn("setpriv", [...user, "--pdeathsig", "KILL", daemon, ...args.slice(1)], {
        env,
        stdio: "ignore",
        cwd: "/",
    });
    if (opts.pidFile && child.pid) fs.writeFileSync(opts.pidFile, `${child.pid}\n`);
    const deadline = Date.now() + 10_000;
    while (!(await canConnect(port))) {
        if (child.exitCode !== null) throw new Error(`git daemon exited with ${child.exitCode}`);
        if (Date.now() > deadline) {
            child.kill();
            throw new Error("git daemon did not listen within 10 s");
        }
        await sleep(50);
    }
    let stopping = false;
    const listeners: ((how: string) => void)[] = [];
    child.once("exit", (code, signal) => {
        if (!stopping) for (const l of listeners) l(signal ? `killed by ${signal}` : `exit ${code}`);
    });
    return {
        port,
        url: (repo) => `git://127.0.0.1:${port}/${repo}`,
        onExit: (l) => void listeners.push(l),
        stop: async () => {
            stopping = true;
            if (child.exitCode === null && child.signalCode === null) {
                const gone = new Promise((r) => child.once("exit", r));
                child.kill("SIGTERM");
                await gone;
            }
            if (opts.pidFile) fs.rmSync(opts.pidFile, { force: true });
        },
    };
}
