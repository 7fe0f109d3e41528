/**
 * Runs programs with argument arrays (never a shell string) and turns failures into readable errors.
 *
 * The programs are started by a small helper process (spawnHelper.js), not by this one. Node starts
 * a program by forking itself, and a fork costs in proportion to the process's memory: from a
 * process of 150-250 MB (a simulated lab, a test worker) each start costs 3-5 ms more CPU than from
 * the 40 MB helper, and the simulation starts thousands of short git, kubectl and tar runs. Node
 * has no vfork or posix_spawn option, and no package we know does this, so it is written here. When
 * the helper cannot be started, programs are started directly.
 */
import { ChildProcess, execFile, spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import type { Socket } from "net";
import * as readline from "readline";

export interface RunResult {
    stdout: string;
    stderr: string;
}

interface RunOptions {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    timeoutMs?: number;
    /** The signal that ends a program past its timeout (default SIGTERM, as execFile's). */
    killSignal?: NodeJS.Signals;
}

/** What execFile's callback gives, in the form both ways of running produce. */
interface Outcome {
    error: { code: string | number | null; signal: string | null; message: string } | null;
    stdout: string;
    stderr: string;
}

/** A program that failed: what it printed, and its exit code or the signal that ended it. */
export class RunError extends Error {
    constructor(
        message: string,
        readonly stdout: string,
        readonly stderr: string,
        readonly exitCode: string | number | null,
        readonly signal: string | null,
        /** "ENOENT" when the program is not installed (as Node's own errors say it). */
        readonly code?: "ENOENT",
    ) {
        super(message);
    }
}

/**
 * The variables that tell git where a repository is. Left set in a user's shell (by a hook, or a script
 * that exported them), they would send every git the lab runs to that repository; the lab names its own.
 */
export const GIT_LOCATION_VARS = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

/**
 * A variable the lab's git runs without: a location (GIT_LOCATION_VARS), or configuration given through the
 * environment (GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n, GIT_CONFIG_PARAMETERS), which a
 * script may leave set, or half set (a count with a key missing: git then fails every command).
 */
const setAside = (k: string) => GIT_LOCATION_VARS.includes(k) || /^GIT_CONFIG_(COUNT|PARAMETERS|KEY_\d+|VALUE_\d+)$/.test(k);

/** A git location (GIT_DIR and the like) or git configuration is set in the given environment (this process's by default). */
export function namesGitLocation(env: NodeJS.ProcessEnv = process.env): boolean {
    return Object.keys(env).some((k) => setAside(k) && env[k] !== undefined);
}

/** The environment for a git command: the given (or this process's) without the variables set aside; as given when none is set. */
export function gitEnv(env: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv | undefined {
    const from = env ?? process.env;
    if (!namesGitLocation(from)) return env;
    return Object.fromEntries(Object.entries(from).filter(([k]) => !setAside(k)));
}

/** For a git run outside run() (execFile, spawnSync): the lab's git environment, from /, which is never gone. */
export const GIT_OPTS = () => ({ env: gitEnv(undefined) ?? process.env, cwd: "/" });

/** This process's folder, or / when it is gone (a reset removed the clone it was started from): a child cannot start in a folder that is gone. */
function cwdOrRoot(): string {
    try {
        const cwd = process.cwd();
        return fs.existsSync(cwd) ? cwd : "/";
    } catch {
        return "/";
    }
}

export function run(file: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
    const req = {
        file,
        args,
        cwd: opts.cwd ?? cwdOrRoot(),
        env: file === "git" ? gitEnv(opts.env) : opts.env,
        timeout: opts.timeoutMs ?? 120_000,
        killSignal: opts.killSignal ?? "SIGTERM",
        maxBuffer: 64 * 1024 * 1024,
    };
    return (helper.call(req) ?? direct(req)).then(({ error, stdout, stderr }) => {
        if (error) {
            const what = `${file} ${args.join(" ")}`;
            const code = error.code === "ENOENT" ? `${file} is not installed or not on PATH` : `exit ${error.code ?? "?"}`;
            throw new RunError(
                `${what} failed (${code}): ${String(stderr || stdout || error.message).trim()}`,
                stdout,
                stderr,
                error.code,
                error.signal,
                error.code === "ENOENT" ? "ENOENT" : undefined,
            );
        }
        return { stdout, stderr };
    });
}

/** The process's umask, or undefined where it cannot be read (a worker thread): the helper keeps its own then. */
function currentUmask(): number | undefined {
    try {
        return process.umask();
    } catch {
        return undefined;
    }
}

type Request = {
    file: string;
    args: string[];
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    timeout: number;
    killSignal: NodeJS.Signals;
    maxBuffer: number;
};

function direct(req: Request): Promise<Outcome> {
    return new Promise((resolve) => {
        execFile(
            req.file,
            req.args,
            { cwd: req.cwd, env: req.env, timeout: req.timeout, killSignal: req.killSignal, maxBuffer: req.maxBuffer },
            (err, stdout, stderr) =>
                resolve({
                    error: err ? { code: err.code ?? null, signal: err.signal ?? null, message: err.message } : null,
                    stdout: String(stdout),
                    stderr: String(stderr),
                }),
        );
    });
}

/** The helper process: started on the first run, shared by every run of this process, never keeping it alive while idle. */
const helper = new (class {
    private child: ChildProcess | undefined;
    private broken = false;
    private deaths = 0;
    private next = 0;
    private readonly pending = new Map<number, (o: Outcome) => void>();

    /** Sends a request to the helper; undefined when there is none (then the caller runs it directly). */
    call(req: Request): Promise<Outcome> | undefined {
        const child = this.start();
        if (!child?.stdin?.writable) return undefined;
        const id = ++this.next;
        // the environment, working directory and umask as they are now (they may have changed since the helper started)
        let cwd: string;
        try {
            cwd = path.resolve(req.cwd ?? "."); // relative to this process's directory, not the helper's
        } catch {
            return undefined; // this process's directory is gone: started directly, the program says what it makes of that
        }
        const line = `${JSON.stringify({ ...req, id, cwd, env: req.env ?? process.env, umask: currentUmask() })}\n`;
        return new Promise<Outcome>((resolve) => {
            this.pending.set(id, resolve);
            this.hold();
            child.stdin!.write(line);
        });
    }

    private start(): ChildProcess | undefined {
        if (this.child || this.broken) return this.child;
        try {
            const child = spawn(process.execPath, [path.join(__dirname, "spawnHelper.js")], { stdio: ["pipe", "pipe", "ignore"] });
            child.on("error", () => this.gone(child));
            child.on("close", () => this.gone(child)); // after its last answers are read
            child.stdin!.on("error", () => this.gone(child));
            readline.createInterface({ input: child.stdout!, crlfDelay: Infinity }).on("line", (l) => this.answer(l));
            this.child = child;
            this.release();
            return child;
        } catch {
            this.broken = true; // e.g. no process may be started at all: direct runs will say why
            return undefined;
        }
    }

    private answer(line: string) {
        let o: Outcome & { id: number };
        try {
            o = JSON.parse(line);
        } catch {
            return;
        }
        const resolve = this.pending.get(o.id);
        if (!resolve) return;
        this.pending.delete(o.id);
        resolve(o);
        if (this.pending.size === 0) this.release();
    }

    /** The helper died: its runs fail with a clear reason, and the next run starts a new one. */
    private gone(child: ChildProcess) {
        if (this.child !== child) return;
        this.child = undefined;
        if (++this.deaths >= 2) this.broken = true; // not a third: programs are started directly from now on
        for (const [, resolve] of this.pending)
            resolve({
                error: {
                    code: null,
                    signal: null,
                    message: "the process that starts programs for gitops-lab (lab/ports/spawnHelper.js) exited; run the command again",
                },
                stdout: "",
                stderr: "",
            });
        this.pending.clear();
    }

    /** While a run is pending, the helper's pipe keeps this process alive (as a child of its own would). */
    private hold() {
        this.child?.ref();
        // a pipe is a net.Socket, which has ref/unref; the stream types do not say so
        (this.child?.stdout as Partial<Socket> | null | undefined)?.ref?.();
    }

    private release() {
        this.child?.unref();
        (this.child?.stdout as Partial<Socket> | null | undefined)?.unref?.();
        (this.child?.stdin as Partial<Socket> | null | undefined)?.unref?.();
    }
})();
