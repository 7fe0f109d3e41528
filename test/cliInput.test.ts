/**
 * Bad input to the command line: one clear line, the right exit code, nothing created, no hang.
 * The checks run in-process; one process per family shows the command line uses them.
 */
import * as assert from "assert";
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { checkRoot, UsageError } from "../cli/command";
import { findKubeconfig } from "../cli/kubeconfig";
import { freePort, kubeconfigFor } from "./helpers/kubeconfig";
import { BIN, runCli, runCliAsync } from "./helpers/cli";
import { expect, holds } from "./helpers/expect";
import { FakeKube } from "../sim/fakeApi";
import { explain } from "../lab/ports/clusterErrors";

describe("a lab root from the command line (checkRoot)", () => {
    it("refuses roots on special filesystems, in one line, before anything is created", () => {
        for (const r of ["/proc/self/lab", "/proc", "/sys/fs/lab", "/dev/lab"]) {
            assert.throws(
                () => checkRoot(r),
                (e: any) =>
                    e instanceof UsageError &&
                    /^--root \/(proc|sys|dev)\S* is under \/(proc|sys|dev), a special filesystem that cannot hold the lab's files; choose a directory on a disk/.test(
                        e.message,
                    ),
                r,
            );
        }
        // /dev/shm is a tmpfs, holding files as /tmp does: taken
        assert.strictEqual(checkRoot("/dev/shm/gitops-lab"), "/dev/shm/gitops-lab");
    });

    it("refuses a root that is a file, or under a file, naming the file", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "root-"));
        const file = path.join(dir, "a-file");
        fs.writeFileSync(file, "x");
        assert.throws(
            () => checkRoot(file),
            new RegExp(`^Error: --root ${file}: ${file} is a file, not a directory; choose another --root$`),
        );
        assert.throws(
            () => checkRoot(path.join(file, "lab", "deeper")),
            new RegExp(`^Error: --root ${file}/lab/deeper: ${file} is a file, not a directory`),
        );
        assert.deepStrictEqual(fs.readdirSync(dir), ["a-file"], "nothing was created");
    });

    it("refuses a root through a symlink to nothing, naming where it points", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "root-"));
        const link = path.join(dir, "lab");
        fs.symlinkSync(path.join(dir, "moved"), link);
        for (const root of [link, path.join(link, "deeper")])
            assert.throws(
                () => checkRoot(root),
                new RegExp(
                    `^Error: --root ${root}: ${link} is a symlink to ${dir}/moved, which does not exist: create that folder, or choose another --root$`,
                ),
            );
        assert.deepStrictEqual(fs.readdirSync(dir), ["lab"], "nothing was created");
    });

    it("accepts a directory, existing or not yet, and gives its absolute path without creating it", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "root-"));
        assert.strictEqual(checkRoot(dir), dir);
        assert.strictEqual(checkRoot(path.join(dir, "new", "lab")), path.join(dir, "new", "lab"));
        assert.ok(!fs.existsSync(path.join(dir, "new")));
    });
});

describe("gitops-lab with a bad root (one process each: the exit code and the line)", function () {
    this.timeout(120_000);

    it("simulate --root under /proc exits 2 at once with one line (Node's recursive mkdir would spin there)", () => {
        const r = runCli("simulate", ["--root", "/proc/self/gitops-lab"], { timeoutMs: 60_000 });
        assert.strictEqual(r.code, 2, r.out);
        assert.match(
            r.stderr,
            /^gitops-lab simulate: --root \/proc\/self\/gitops-lab is under \/proc, a special filesystem that cannot hold the lab's files; choose a directory on a disk, e\.g\. \/tmp\/gitops-lab\n$/,
        );
    });

    it("simulate --root on a read-only filesystem exits 2 with one line saying so, before anything is tried", function () {
        const mnt = fs.mkdtempSync(path.join(os.tmpdir(), "ro-root-"));
        // a read-only mount needs root (CAP_SYS_ADMIN): elsewhere this test cannot make one, and says so
        const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "ro,mode=755", "tmpfs", mnt]).status === 0;
        if (!mounted) {
            fs.rmdirSync(mnt);
            this.skip(); // reason: no read-only filesystem can be mounted by this user
        }
        try {
            const r = runCli("simulate", ["--root", path.join(mnt, "lab"), "--through", "0"]);
            assert.strictEqual(r.code, 2, r.out);
            assert.strictEqual(
                r.stderr,
                `gitops-lab simulate: --root ${mnt}/lab: ${mnt} is on a read-only filesystem; choose a directory on a writable disk, e.g. /tmp/gitops-lab\n`,
            );
        } finally {
            spawnSync("umount", [mnt]);
            fs.rmdirSync(mnt);
        }
    });

    it("verify --root on a file exits 2 with one line", () => {
        const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "root-")), "f");
        fs.writeFileSync(file, "");
        const r = runCli("verify", ["--root", file, "--offline"], { timeoutMs: 60_000 });
        assert.strictEqual(r.code, 2, r.out);
        assert.match(r.stderr, /^gitops-lab verify: --root \S+: \S+ is a file, not a directory; choose another --root\n$/);
    });
});

/** Runs a command in this process, as bin/gitops-lab would, and returns its exit code and stderr. */
async function inProcess(name: string, args: string[]): Promise<{ code: number; stderr: string }> {
    const { COMMANDS } = await import("../cli/main");
    const { runCommand } = await import("../cli/command");
    const cmd = COMMANDS.find((c) => c.name === name)!;
    const lines: string[] = [];
    const error = console.error;
    console.error = (...a: unknown[]) => lines.push(a.join(" "));
    try {
        return { code: await runCommand(cmd, args), stderr: lines.join("\n") };
    } finally {
        console.error = error;
    }
}

/** A root no one has made: whatever else this machine keeps under /tmp. */
const FREE_ROOT = `/tmp/gitops-lab-no-such-root-${process.pid}`;

describe("options are checked as a set (before anything runs)", () => {
    const refused: [string, string[], RegExp][] = [
        [
            "bench",
            ["--tenants", "--doctor"],
            /^gitops-lab bench: --tenants and --doctor do not go together: choose one \(see gitops-lab bench --help\)$/,
        ],
        ["bench", ["--tenants", "--cluster", "real"], /^gitops-lab bench: --tenants and --cluster do not go together/],
        ["bench", ["--rounds", "5"], /^gitops-lab bench: --rounds goes with --doctor \(see gitops-lab bench --help\)$/],
        ["bench", ["--build"], /^gitops-lab bench: --build goes with --cluster/],
        ["doctor", ["--metrics-port", "9464"], /^gitops-lab doctor: --metrics-port goes with --watch/],
        ["doctor", ["--interval", "5"], /^gitops-lab doctor: --interval goes with --watch/],
        [
            "doctor",
            ["--watch", "--metrics-port", "99999"],
            /^gitops-lab doctor: --metrics-port takes a whole number from 0 to 65535, got "99999"$/,
        ],
        [
            "simulate",
            ["--root", FREE_ROOT, "--through", "-1"],
            /^gitops-lab simulate: --through takes a whole number from 0 to 8, got "-1"$/,
        ],
        ["verify", ["--through", "-3", "--offline"], /^gitops-lab verify: --through takes a whole number from 0 to 8, got "-3"$/],
        ["build-real-plane", ["--only", "all"], /^gitops-lab build-real-plane: --only takes node or pulumi, not "all" /],
        [
            "simulate",
            ["--root", "/var/lib/gitops-lab-not-there", "--cluster", "real"],
            /^gitops-lab simulate: --root \/var\/lib\/gitops-lab-not-there is under \/var\/lib, which the node has a folder of its own for; choose another directory/,
        ],
        [
            "simulate",
            ["--root=~/lab8"],
            /^gitops-lab simulate: --root ~\/lab8: ~ is not expanded after = \(the shell expands it at a word's start only\): write --root ~\/lab8 with a space, or the whole path \(\/\S+\/lab8\)$/,
        ],
        [
            "doctor",
            ["--from", "/tmp/x.json", "--kubeconfig", "/tmp/kc"],
            /^gitops-lab doctor: --from and --kubeconfig do not go together: --from reads only the dump/,
        ],
        [
            "verify",
            ["--offline", "--kubeconfig", "/tmp/kc"],
            /^gitops-lab verify: --offline and --kubeconfig do not go together: choose one/,
        ],
        [
            "simulate",
            ["--root", "--through", "3"],
            /^gitops-lab simulate: --root was given no value \(--through follows it\): --root VALUE/,
        ],
        [
            "simulate",
            ["--root", FREE_ROOT, "--through", "3", "4"],
            /^gitops-lab simulate: '4' follows --through 3: --through takes one value/,
        ],
        [
            "simulate",
            ["--root", FREE_ROOT, "--through", "3", "3"],
            /^gitops-lab simulate: '3' follows --through 3: --through takes one value/,
        ],
        ["outputs", ["--json"], /^gitops-lab outputs: Unknown option '--json': outputs prints one JSON object already/],
        // two dumps, one of Argo CD's objects and one of Jobs and Pods: one dump holds them all
        [
            "doctor",
            ["--from", "/tmp/argo.json", "--from", "/tmp/pods.json"],
            /^gitops-lab doctor: --from is given 2 times \("\/tmp\/argo\.json", then "\/tmp\/pods\.json"\): give it once: the doctor reads one dump, which holds every kind it needs: kubectl get applicationsets\.argoproj\.io,applications\.argoproj\.io,appprojects\.argoproj\.io,jobs,pods -A -o json > dump\.json/,
        ],
        // KUBECONFIG splits at ':': a served lab under such a root could not be used as printed
        [
            "simulate",
            ["--root", `${FREE_ROOT}:1`],
            /^gitops-lab simulate: --root \S+:1 holds a ':', which KUBECONFIG reads as a list separator/,
        ],
        // a lab author's stack file given to simulate: its keys are options there
        [
            "simulate",
            ["--root", FREE_ROOT, "--config-file", "Pulumi.dev.yaml"],
            /^gitops-lab simulate: Unknown option '--config-file': simulate reads no stack file: its counterparts are options \(root: --root, solveThrough: --through N, tenantsLab and tenantsSolveThrough: --lab both --tenants-through N, argocdVersion: --argocd-version\); preflight --config-file F checks a stack file/,
        ],
        // a line break in the root splits every command and comment printed with it
        [
            "simulate",
            ["--root", `${FREE_ROOT}\nline`],
            /^gitops-lab simulate: --root "\S+\\nline" holds a line break or another control character, which splits the commands the lab prints: choose a folder without one$/,
        ],
        // Pulumi's habit: the stack is the environment's
        [
            "outputs",
            ["--stack", "dev"],
            /^gitops-lab outputs: Unknown option '--stack': the lab's stack is dev unless GITOPS_LAB_STACK names another: GITOPS_LAB_STACK=NAME gitops-lab outputs \(it takes no --stack\)/,
        ],
        [
            "destroy",
            ["-s", "dev"],
            /^gitops-lab destroy: Unknown option '-s': the lab's stack is dev unless GITOPS_LAB_STACK names another/,
        ],
        // simulate --lab both's option copied to verify
        [
            "verify",
            ["--offline", "--lab", "tenants", "--tenants-through", "1"],
            /^gitops-lab verify: Unknown option '--tenants-through': verify grades one lab at a time: --lab tenants --through N/,
        ],
    ];
    for (const [cmd, args, message] of refused) {
        it(`${cmd} ${args.join(" ").replace(FREE_ROOT, "ROOT")}: a usage error (2) in one line`, async () => {
            const r = await inProcess(cmd, args);
            assert.strictEqual(r.code, 2, r.stderr);
            assert.match(r.stderr, message);
        });
    }

    it("npm run without --: the answer says npm took the options", async () => {
        const saved = { ...process.env };
        Object.assign(process.env, { npm_lifecycle_event: "simulate", npm_config_root: "true", npm_config_through: "true" });
        try {
            const r = await inProcess("simulate", ["/tmp/lab", "0"]);
            assert.strictEqual(r.code, 2, r.stderr);
            assert.match(
                r.stderr,
                /npm run took --root, --through for itself: put -- before the command's options \(npm run -s simulate -- --root \.\.\.\)/,
            );
        } finally {
            for (const k of ["npm_lifecycle_event", "npm_config_root", "npm_config_through"])
                if (saved[k] === undefined) delete process.env[k];
            Object.assign(process.env, saved);
        }
    });

    it("bench --cluster real without the plane's binaries says what it would build and how long, and builds nothing without --build", async () => {
        const before = process.env.XDG_CACHE_HOME;
        process.env.XDG_CACHE_HOME = fs.mkdtempSync(path.join(os.tmpdir(), "no-cache-"));
        try {
            const r = await inProcess("bench", ["--cluster", "real"]);
            assert.strictEqual(r.code, 2, r.stderr);
            assert.match(
                r.stderr,
                /--cluster real needs the real plane's binaries, which are not built here: building them from Go modules takes about 40 minutes on 2 cores\. Run gitops-lab build-real-plane first, or add --build/,
            );
            assert.deepStrictEqual(fs.readdirSync(process.env.XDG_CACHE_HOME), [], "nothing was built or created");
        } finally {
            if (before === undefined) delete process.env.XDG_CACHE_HOME;
            else process.env.XDG_CACHE_HOME = before;
        }
    });
});

describe("a cluster that does not answer, a port in use: one line with what to do", function () {
    this.timeout(120_000);
    /** `doctor` against a kubeconfig whose server is `server`, in a folder of its own. */
    const doctorAt = (server: string) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "no-cluster-"));
        try {
            return runCli("doctor", ["--kubeconfig", kubeconfigFor(dir, server)]);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    };

    it("given a kubeconfig whose server refuses connections, then doctor says nothing answers there and what to check, not ECONNREFUSED", async () => {
        const port = await freePort();
        const r = doctorAt(`https://127.0.0.1:${port}`);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stderr,
            new RegExp(
                `^gitops-lab doctor: cannot read the cluster: list (applicationsets|applications): nothing answers at https://127\\.0\\.0\\.1:${port} \\(connection refused\\): is the cluster running, and is this its kubeconfig\\? \\(--kubeconfig FILE, or \\$KUBECONFIG\\)\\n$`,
            ),
        );
    });

    it("given a kubeconfig whose server is plain http, then doctor says the client refuses it and to give the https address", () => {
        const r = doctorAt("http://127.0.0.1:1");
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stderr,
            /^gitops-lab doctor: cannot read the cluster: [^\n]*server: line is http:\/\/[^\n]*give the cluster's https:\/\/ address\n$/,
        );
    });

    it("given a kubeconfig whose server's host does not resolve, then doctor says so and names the kubeconfig's server line", () => {
        const r = doctorAt("https://no-such-host.invalid:6443");
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stderr,
            /^gitops-lab doctor: cannot read the cluster: list (applicationsets|applications): the API server's host in https:\/\/no-such-host\.invalid:6443 (does not resolve|could not be resolved now)/,
        );
        assert.doesNotMatch(r.stderr, /ENOTFOUND|EAI_AGAIN|getaddrinfo/);
    });

    it("given --metrics-port a port another process listens on, then doctor --watch says it is in use and to choose another", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "inuse-"));
        const server = require("net").createServer();
        await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
        try {
            fs.writeFileSync(path.join(dir, "dump.json"), JSON.stringify({ apiVersion: "v1", kind: "List", items: [] }));
            const port = server.address().port;
            const r = runCli("doctor", ["--from", path.join(dir, "dump.json"), "--watch", "--metrics-port", String(port)]);
            assert.strictEqual(r.code, 1, r.out);
            assert.strictEqual(
                r.stderr,
                `gitops-lab doctor: port ${port} is in use by another process: choose another --metrics-port (or stop that process)\n`,
            );
        } finally {
            server.close();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe("a KUBECONFIG list", () => {
    it("whose first file is missing: the next one is read, as kubectl reads it", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kubeconfig-list-"));
        const before = process.env.KUBECONFIG;
        try {
            const real = path.join(dir, "real");
            fs.writeFileSync(real, "apiVersion: v1\nkind: Config\n");
            process.env.KUBECONFIG = [path.join(dir, "missing"), real].join(path.delimiter);
            assert.strictEqual(findKubeconfig().file, real);
        } finally {
            if (before === undefined) delete process.env.KUBECONFIG;
            else process.env.KUBECONFIG = before;
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe("a kubeconfig from an earlier run of a served lab", function () {
    this.timeout(120_000);
    it("its certificate authority no longer vouches for the server: said so, never 'skip TLS'", async () => {
        const now = new FakeKube();
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stale-kubeconfig-"));
        try {
            // the earlier run's certificate (another process made it): the kubeconfig trusts that one, the server serves its own
            const { generate } = await import("selfsigned");
            const earlier = await generate([{ name: "commonName", value: "gitops-lab simulated API" }], {
                keyType: "ec",
                algorithm: "sha256",
            });
            const url = await now.start({ secure: true });
            const file = path.join(dir, "kubeconfig");
            fs.writeFileSync(
                file,
                now
                    .kubeconfig(url)
                    .replace(
                        /certificate-authority-data: \S+/,
                        `certificate-authority-data: ${Buffer.from(earlier.cert).toString("base64")}`,
                    ),
            );
            const r = await runCliAsync("doctor", ["--kubeconfig", file]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stderr,
                /answers with a certificate the kubeconfig's certificate-authority-data does not vouch for: the kubeconfig is another cluster's, or an earlier run's of this one/,
            );
            assert.doesNotMatch(r.stderr, /SELF_SIGNED|self-signed/);
        } finally {
            await now.stop();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe("doctor --from - at a terminal", function () {
    this.timeout(120_000);
    // a terminal through script(1)'s pseudo-terminal: the doctor's standard input is a TTY there, as at a prompt
    it("says it reads what is typed, and how to end it, before it waits", async () => {
        const child = spawn("script", ["-qec", `${process.execPath} ${BIN} doctor --from -`, "/dev/null"], {
            stdio: ["pipe", "pipe", "pipe"],
        });
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (out += d));
        const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
        try {
            await expect(
                holds("the prompt line", () => out.includes("doctor: reading a dump from the terminal: paste it and end with Ctrl-D")),
            );
            child.stdin.write("\u0004"); // Ctrl-D: nothing pasted
            assert.strictEqual(await exited, 1, out);
            assert.match(out, /standard input was empty/);
        } finally {
            child.kill("SIGKILL");
        }
    });
});

describe("a server reached by an address its certificate does not name", () => {
    it("is said as such, not as another cluster's kubeconfig", () => {
        const e = explain("list applicationsets", {
            code: "ERR_TLS_CERT_ALTNAME_INVALID",
            message: "request to https://10.0.0.5:6443/apis failed, reason: Hostname/IP does not match certificate's altnames",
        });
        assert.match(e.message, /^list applicationsets: https:\/\/10\.0\.0\.5:6443's certificate does not name that address/);
        assert.doesNotMatch(e.message, /earlier run/);
    });
});
