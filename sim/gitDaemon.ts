/** A real `git daemon` on 127.0.0.1 serving a directory of bare repositories, for tests. */
import { ChildProcess, spawn } from "child_process";
import * as net from "net";
import { gitDaemonArgs } from "../lab/platform/gitDaemon";
import { sleep } from "../lab/ports/wait";

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
}

/**
 * Starts `git daemon` with the same arguments the GitDaemon Pod uses (lab/manifests.ts), bound to
 * loopback. `asUser` runs it as that uid/gid through setpriv, as the Pod runs as nobody.
 */
export async function startGitDaemon(baseDir: string, opts: { asNobody?: boolean; env?: Record<string, string> } = {}): Promise<RunningDaemon> {
    const port = await freePort();
    const args = gitDaemonArgs(baseDir, port, "127.0.0.1");
    const env = { ...process.env, ...(opts.env ?? {}) };
    const child: ChildProcess = opts.asNobody
        ? spawn("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "git", ...args], { env, stdio: "ignore", cwd: "/" }) // nobody may not enter our cwd
        : spawn("git", args, { env, stdio: "ignore" });
    const deadline = Date.now() + 10_000;
    while (!(await canConnect(port))) {
        if (child.exitCode !== null) throw new Error(`git daemon exited with ${child.exitCode}`);
        if (Date.now() > deadline) {
            child.kill();
            throw new Error("git daemon did not listen within 10 s");
        }
        await sleep(50);
    }
    return {
        port,
        url: (repo) => `git://127.0.0.1:${port}/${repo}`,
        stop: async () => {
            if (child.exitCode !== null) return;
            const gone = new Promise((r) => child.once("exit", r));
            child.kill("SIGTERM");
            await gone;
        },
    };
}
