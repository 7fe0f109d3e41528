/**
 * The real plane on a host, without starting one: every tool it runs is checked before anything
 * starts, and one plane runs per host (it owns an /etc/hosts line and port 9418), a second one
 * refused in one line naming the holder.
 */
import * as assert from "assert";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { reapHookPodWork } from "../realplane/hookPods";

const PROJECT = path.resolve(__dirname, "..");

/** Loads realplane/plane.ts with the lock at `lock` (it reads GITOPS_LAB_PLANE_LOCK when loaded). */
function planeModule(lock: string): typeof import("../realplane/plane") {
    const file = require.resolve("../realplane/plane");
    delete require.cache[file];
    const before = process.env.GITOPS_LAB_PLANE_LOCK;
    process.env.GITOPS_LAB_PLANE_LOCK = lock;
    try {
        return require(file);
    } finally {
        if (before === undefined) delete process.env.GITOPS_LAB_PLANE_LOCK;
        else process.env.GITOPS_LAB_PLANE_LOCK = before;
    }
}

describe("the real plane on a host", function () {
    this.timeout(60_000);

    it("given a PATH without redis-server, then the check names it and how to install it, in one line, before anything starts", async () => {
        const bin = fs.mkdtempSync(path.join(os.tmpdir(), "path-"));
        for (const tool of ["kubectl", "git", "setpriv"]) fs.symlinkSync("/bin/true", path.join(bin, tool));
        const before = process.env.PATH;
        process.env.PATH = bin;
        try {
            const plane = planeModule(path.join(bin, "lock"));
            await assert.rejects(plane.checkPlaneTools(false), (e: any) => {
                assert.match(e.message, /^the real plane needs redis-server \(apt-get install redis-server \(Argo CD's cache\)\); nothing was started$/);
                return true;
            });
            assert.deepStrictEqual(await plane.missingPlaneTools(true), ["redis-server (apt-get install redis-server (Argo CD's cache))", "go (Go 1.24 or later on PATH (the first build takes about 25 minutes))"]);
            assert.ok(!fs.existsSync(path.join(bin, "lock")), "no lock taken");
        } finally {
            process.env.PATH = before;
        }
    });

    it("given a plane's lock held by a live process, then a second plane is refused in one line naming it; once that process is gone, the lock is taken over", async () => {
        const lock = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "plane-lock-")), "plane.lock");
        // the holder: another process that took the lock through the same code
        const holder = spawn(process.execPath, ["-r", path.join(PROJECT, "cli", "register.js"), "-e", `require(${JSON.stringify(path.join(PROJECT, "realplane", "plane.ts"))}).acquirePlaneLock(); console.log("HELD"); setInterval(() => {}, 1000);`, "simulate", "--cluster", "real"], {
            env: { ...process.env, GITOPS_LAB_PLANE_LOCK: lock },
            stdio: ["ignore", "pipe", "inherit"],
        });
        try {
            await new Promise<void>((resolve, reject) => {
                holder.stdout!.on("data", (d) => String(d).includes("HELD") && resolve());
                holder.once("exit", (c) => reject(new Error(`the holder exited with ${c}`)));
            });
            const plane = planeModule(lock);
            assert.throws(() => plane.acquirePlaneLock(), new RegExp(`^Error: a real plane already runs on this host \\(PID ${holder.pid}: .*simulate --cluster real\\); one plane per host \\(it owns gitd\\.gitsrv\\.svc\\.cluster\\.local in /etc/hosts and port 9418\\): stop it, then run again$`));
            holder.kill("SIGKILL");
            await new Promise((r) => holder.once("exit", r));
            const taken = plane.acquirePlaneLock();
            assert.match(taken.note ?? "", new RegExp(`took over the lock of PID ${holder.pid}, which is gone`));
            taken.release();
            assert.ok(!fs.existsSync(lock), "released");
        } finally {
            holder.kill("SIGKILL");
        }
    });

    it("given the hook Pods' work folder of a killed run, then the next plane's reaping removes it and keeps a live run's", () => {
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "reap-"));
        const dead = process.pid + 1; // gone, as isAlive below says
        for (const n of [`hook-pods-${dead}-aB3dE9`, `hook-pods-${process.pid}-xY7zQ1`, "hook-pods-notapid", "real-plane-abc"]) fs.mkdirSync(path.join(tmp, n, "mandant-b"), { recursive: true });
        const isAlive = (pid: number) => pid === process.pid;
        assert.deepStrictEqual(reapHookPodWork(isAlive, tmp), [path.join(tmp, `hook-pods-${dead}-aB3dE9`)]);
        assert.deepStrictEqual(fs.readdirSync(tmp).sort(), [`hook-pods-${process.pid}-xY7zQ1`, "hook-pods-notapid", "real-plane-abc"]);
    });
});
