/**
 * The real tiers on a host, without starting a node: every tool they run is checked before anything
 * starts, and one node runs per host, a second one refused in one line naming the holder.
 */
import * as assert from "assert";
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { removeStalePartials } from "../realnode/images";
import { NodeContext } from "../realnode/phases/context";
import { missingNodeTools } from "../realnode/node";
import { checkPlaneTools, missingPlaneTools } from "../realplane/tools";

const PROJECT = path.resolve(__dirname, "..");

/** Loads realnode/node.ts with the lock at `lock` (it reads GITOPS_LAB_NODE_LOCK when loaded). */
function nodeModule(lock: string): typeof import("../realnode/node") {
    const file = require.resolve("../realnode/node");
    delete require.cache[file];
    const before = process.env.GITOPS_LAB_NODE_LOCK;
    process.env.GITOPS_LAB_NODE_LOCK = lock;
    try {
        return require(file);
    } finally {
        if (before === undefined) delete process.env.GITOPS_LAB_NODE_LOCK;
        else process.env.GITOPS_LAB_NODE_LOCK = before;
    }
}

/** Runs `f` with PATH holding only `tools` (each /bin/true). */
async function withOnly<T>(tools: string[], f: () => Promise<T> | T): Promise<T> {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), "path-"));
    for (const tool of tools) fs.symlinkSync("/bin/true", path.join(bin, tool));
    const before = process.env.PATH;
    process.env.PATH = bin;
    try {
        return await f();
    } finally {
        process.env.PATH = before;
        fs.rmSync(bin, { recursive: true, force: true });
    }
}

describe("the real tiers on a host", function () {
    this.timeout(60_000);

    it("given a PATH without Go, then building names it and how to install it, in one line, before anything starts; running needs no Go", async () => {
        await withOnly(["kubectl", "git", "setpriv"], async () => {
            assert.deepStrictEqual(await missingPlaneTools(false), []);
            await assert.rejects(checkPlaneTools(true), (e: any) => {
                assert.match(
                    e.message,
                    /^the real tiers need go \(Go 1\.24 or later on PATH \(the first build takes about 40 minutes\)\); nothing was started$/,
                );
                return true;
            });
        });
    });

    it("given a PATH without the node's Debian packages, then the node's check names each with its apt-get line", async () => {
        const missing = await withOnly(
            ["ip", "iptables", "iptables-restore", "nsenter", "unshare", "setpriv", "mount", "chroot", "tar"],
            () => missingNodeTools(),
        );
        for (const [tool, pkg] of [
            ["runc", "runc"],
            ["docker-registry", "docker-registry"],
            ["mmdebstrap", "mmdebstrap"],
        ])
            assert.ok(
                missing.some((m) => m.startsWith(`${tool} (apt-get install ${pkg}`)),
                missing.join("; "),
            );
        assert.ok(!missing.some((m) => m.startsWith("iptables ")), "what is there is not named");
    });

    // given a node's lock held by a live process, then a second node is refused in one line naming it; once that
    // process is gone, the lock is taken over
    it("a node's lock: refused while held, then taken over", async () => {
        const lock = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "node-lock-")), "node.lock");
        // the holder: another process that took the lock through the same code
        const holder = spawn(
            process.execPath,
            [
                "-r",
                path.join(PROJECT, "loader", "register.js"),
                "-e",
                `require(${JSON.stringify(path.join(PROJECT, "realnode", "node.ts"))}).acquireNodeLock(); console.log("HELD"); setInterval(() => {}, 1000);`,
                "node",
                "--root",
                "/x",
            ],
            {
                env: { ...process.env, GITOPS_LAB_NODE_LOCK: lock },
                stdio: ["ignore", "pipe", "inherit"],
            },
        );
        try {
            await new Promise<void>((resolve, reject) => {
                holder.stdout!.on("data", (d) => String(d).includes("HELD") && resolve());
                holder.once("exit", (c) => reject(new Error(`the holder exited with ${c}`)));
            });
            const node = nodeModule(lock);
            assert.throws(
                () => node.acquireNodeLock(),
                new RegExp(
                    `^Error: a real node already runs on this host \\(PID ${holder.pid}: .*node --root /x\\); one node per host: stop it, then run again$`,
                ),
            );
            holder.kill("SIGKILL");
            await new Promise((r) => holder.once("exit", r));
            const taken = node.acquireNodeLock();
            assert.match(taken.note ?? "", new RegExp(`took over the lock of PID ${holder.pid}, which is gone`));
            taken.release();
            assert.ok(!fs.existsSync(lock), "released");
        } finally {
            holder.kill("SIGKILL");
        }
    });
});

describe("the node's context once it stops", () => {
    it("records no change and starts no daemon", () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "node-ctx-"));
        try {
            const ctx = new NodeContext(root, {} as never, () => undefined, path.join(root, "cgroup.procs"));
            ctx.stopping = true;
            const before = ctx.ledger;
            assert.throws(() => ctx.record({ hostVeth: "veth-x" }), /^Error: the node is stopping: hostVeth not changed$/);
            assert.deepStrictEqual(ctx.ledger, before, "the ledger the stop read is the whole record");
            assert.throws(() => ctx.daemon("kubelet", "true", []), /the node is stopping: its kubelet is not started/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("the image cache after an interrupted build", () => {
    // given work folders of a build that is gone, of one without a PID and of a live one, then removeStalePartials
    // removes the first two and keeps the live one's
    it("stale build folders go, a live build's stays", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "image-partials-"));
        const done = path.join(dir, "docker.io_library_busybox_1.37.0-abc");
        const gone = spawn(process.execPath, ["-e", ""]);
        const gonePid = await new Promise<number>((resolve) => gone.on("exit", () => resolve(gone.pid!)));
        const folders = [`${gonePid}-aB3dEf`, "jLW0SY", `${process.pid}-xY9zQw`].map((s) => `${path.basename(done)}.partial-${s}`);
        for (const f of folders) fs.mkdirSync(path.join(dir, f, "rootfs"), { recursive: true });
        fs.mkdirSync(path.join(dir, "docker.io_library_node_20-def.partial-jLW0SY")); // another image's: not this build's to judge
        assert.deepStrictEqual(removeStalePartials(done), { removed: folders.slice(0, 2).sort(), kept: [] });
        assert.deepStrictEqual(fs.readdirSync(dir).sort(), [folders[2], "docker.io_library_node_20-def.partial-jLW0SY"].sort());
        fs.rmSync(dir, { recursive: true, force: true });
    });
    it("given a killed build's folder with a mount still under it, then it is kept and said, never removed through the mount", async function () {
        // mounting needs root: the real tiers' hosts are root, a developer's run may not be
        if (process.getuid?.() !== 0) this.skip();
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "image-partials-"));
        const done = path.join(dir, "docker.io_library_busybox_1.37.0-abc");
        const folder = `${done}.partial-jLW0SY`;
        const dev = path.join(folder, "rootfs", "dev");
        fs.mkdirSync(dev, { recursive: true });
        execFileSync("mount", ["-t", "tmpfs", "tmpfs", dev]);
        try {
            fs.writeFileSync(path.join(dev, "null"), "");
            assert.deepStrictEqual(removeStalePartials(done), { removed: [], kept: [path.basename(folder)] });
            assert.ok(fs.existsSync(path.join(dev, "null")), "nothing removed under the mount");
        } finally {
            execFileSync("umount", [dev]);
        }
        assert.deepStrictEqual(removeStalePartials(done), { removed: [path.basename(folder)], kept: [] });
        fs.rmSync(dir, { recursive: true, force: true });
    });
});
