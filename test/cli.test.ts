/** The command-line tools as a lab author runs them: exit codes, what they print, what they leave. */
import * as assert from "assert";
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { shopLayout } from "../lab/shop/layout";
import { SHOP_RESULT_FILES } from "../lab/shop/results";

import { BIN, runCli, runMain } from "./helpers/cli";
import { expect, holds } from "./helpers/expect";
import { fileBackendDir, missingStack } from "../cli/pulumiStack";

describe("npm run simulate", function () {
    this.timeout(180_000);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "simulate-"));
    const layout = shopLayout(root);

    // in this process (runMain): what is checked is what it prints and leaves, not the process
    // given --through 3, then it stops after the incident and says plainly the cluster was simulated; when run again,
    // then it resumes, writes all six files and prints the report
    it("--through 3 stops after the incident; run again, it resumes", async () => {
        const r = await runMain("simulate", ["--root", root, "--through", "3"]);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.out, /SIMULATED CLUSTER: no Kubernetes and no Argo CD run here/);
        assert.match(r.out, /the cluster was simulated/);
        assert.ok(fs.existsSync(path.join(layout.bareRepo, "HEAD")));
        assert.ok(fs.existsSync(layout.resultFile("incident")));
        assert.ok(!fs.existsSync(layout.resultFile("pin")));
        const incident = fs.readFileSync(layout.resultFile("incident"), "utf8");

        const again = await runMain("simulate", ["--root", root]);
        assert.strictEqual(again.code, 0, again.out);
        assert.match(again.out, /\[step 3 incident\] already done/);
        assert.strictEqual(fs.readFileSync(layout.resultFile("incident"), "utf8"), incident);
        for (const f of SHOP_RESULT_FILES) assert.ok(fs.existsSync(layout.resultFile(f)), f);
        assert.match(again.out, /report\.json:\n\{\n {2}"dev_tracks": "main"/);
        assert.match(again.out, /"bad_commit_reached_prod": false/);
    });

    it("bad input exits 2 (a usage error) with one clear line and no stack trace (through the bin, in a process of its own)", () => {
        const r = runCli("simulate", ["--root", root, "--through", "12"]);
        assert.strictEqual(r.code, 2);
        assert.match(r.stderr, /^gitops-lab simulate: --through takes a whole number from 0 to 8, got "12"\n$/);
        const r2 = runCli("simulate", []);
        assert.strictEqual(r2.code, 2);
        assert.match(r2.stderr, /--root DIR is required/);
        assert.ok(!/\n\s+at /.test(r2.stderr), "no stack trace");
    });

    it("a failure during the scenario exits 1 and names it", async () => {
        // someone else's repository at the path of a simulation's root (its record of the folders it made): step 1 refuses
        const other = fs.mkdtempSync(path.join(os.tmpdir(), "simulate-foreign-"));
        fs.writeFileSync(path.join(other, ".gitops-lab-made.json"), JSON.stringify(["srv", "srv/bare"]));
        fs.mkdirSync(path.join(other, "srv", "bare", "shop-envs.git"), { recursive: true });
        spawnSync("git", ["init", "--quiet", "--bare", path.join(other, "srv", "bare", "shop-envs.git")]);
        const r = await runMain("simulate", ["--root", other]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stderr, /gitops-lab simulate: .*already exists and was not created by this lab/);
    });
});

describe("the state backend's stack, as Pulumi's file backend reads it", () => {
    const withStack = (dir: string) => {
        fs.mkdirSync(path.join(dir, ".pulumi", "stacks", "gitops-lab"), { recursive: true });
        fs.writeFileSync(path.join(dir, ".pulumi", "stacks", "gitops-lab", "dev.json"), "{}");
        return dir;
    };

    it("file://~ is the home folder; a query is no part of the path; a relative path is the current folder's", () => {
        assert.strictEqual(fileBackendDir("file://~"), os.homedir());
        assert.strictEqual(fileBackendDir("file://~/state"), path.join(os.homedir(), "state"));
        assert.strictEqual(fileBackendDir("file:///srv/state?no_tmp_dir=true"), "/srv/state");
        assert.strictEqual(fileBackendDir("file://rel"), path.resolve("rel"));
        assert.strictEqual(fileBackendDir("s3://bucket"), undefined);
    });

    it("a PULUMI_BACKEND_URL left from another project, the lab's own state holding the stack: said, not 'up makes it'", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "backends-"));
        try {
            const own = withStack(path.join(dir, "own"));
            const other = path.join(dir, "other");
            fs.mkdirSync(other);
            assert.strictEqual(missingStack("dev", own, undefined), undefined);
            assert.match(
                missingStack("dev", own, `file://${other}`) ?? "",
                /^PULUMI_BACKEND_URL is set in your environment \(file:\/\/\S+\/other\), which has no stack dev, and it hides the lab's own state \(file:\/\/\S+\/own\), which has it: unset PULUMI_BACKEND_URL, then run again$/,
            );
            assert.strictEqual(missingStack("dev", path.join(dir, "none"), `file://${other}`), "none");
            assert.strictEqual(missingStack("dev", path.join(dir, "none"), `file://${withStack(other)}`), undefined);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe("gitops-lab outputs before any up", () => {
    it("asked from inside a simulated lab's folder, with no stack: the lab's results are named, not up", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "outputs-in-lab-"));
        try {
            const lab = path.join(dir, "lab");
            fs.mkdirSync(path.join(lab, "root", "cnpa-env"), { recursive: true });
            fs.writeFileSync(path.join(lab, "simulated-cluster.json"), "{}");
            const r = spawnSync(process.execPath, [BIN, "outputs"], {
                cwd: path.join(lab, "root", "cnpa-env"),
                encoding: "utf8",
                env: { ...process.env, PULUMI_BACKEND_URL: `file://${path.join(dir, "no-state")}` },
            });
            assert.strictEqual(r.status, 1, r.stderr);
            assert.match(
                r.stderr,
                /^gitops-lab outputs: \S+\/lab\/root\/cnpa-env is inside the simulated lab under \S+\/lab, which has no stack \(outputs prints a lab host's\): its results are the JSON files under [^;]*graded by gitops-lab verify --root \S+\/lab --offline\n$/,
            );
            assert.doesNotMatch(r.stderr, /up makes it/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("given no stack yet, then one line, exit 1, and nothing made or written", async () => {
        const state = fs.mkdtempSync(path.join(os.tmpdir(), "no-stack-"));
        const stackFile = path.join(__dirname, "..", "Pulumi.dev.yaml");
        const before = fs.readFileSync(stackFile, "utf8");
        const saved = process.env.PULUMI_BACKEND_URL;
        process.env.PULUMI_BACKEND_URL = `file://${state}`;
        try {
            const r = await runMain("outputs", []);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stderr,
                /^gitops-lab outputs: there is no stack dev here yet \(state: file:\/\/\S+\): nothing to show; gitops-lab up makes it\n$/,
            );
            assert.deepStrictEqual(fs.readdirSync(state), [], "no state made");
            assert.strictEqual(fs.readFileSync(stackFile, "utf8"), before, "Pulumi.dev.yaml as it was");
        } finally {
            if (saved === undefined) delete process.env.PULUMI_BACKEND_URL;
            else process.env.PULUMI_BACKEND_URL = saved;
            fs.rmSync(state, { recursive: true, force: true });
        }
    });
});

describe("gitops-lab: one command line", function () {
    this.timeout(60_000);
    const COMMANDS = [
        "up",
        "preview",
        "refresh",
        "destroy",
        "outputs",
        "preflight",
        "simulate",
        "verify",
        "doctor",
        "bench",
        "build-real-plane",
        "node",
    ];

    it("--help lists its commands and exits 0; no command is a usage error (2)", () => {
        const r = runCli("--help", []);
        assert.strictEqual(r.code, 0, r.out);
        for (const c of COMMANDS) assert.match(r.stdout, new RegExp(`^  ${c} +\\S`, "m"), c);
        assert.match(r.stdout, /exit status: 0 all good, 1 a finding or a failure, 2 a usage error/);
        const none = spawnSync(process.execPath, [BIN], { encoding: "utf8" });
        assert.strictEqual(none.status, 2);
    });

    // the bin's exit codes are checked above and below in processes; each command's help in this process
    for (const c of COMMANDS) {
        it(`${c} --help prints its usage and options and exits 0, changing nothing`, async () => {
            const r = await runMain(c, ["--help"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(r.stdout, new RegExp(`^usage: gitops-lab ${c}\\b`));
            assert.match(r.stdout, /-h, --help/);
        });
    }

    it("an unknown command or option is a usage error (2), one line", () => {
        const r = runCli("xyzzy", []);
        assert.strictEqual(r.code, 2);
        assert.match(
            r.stderr,
            /^gitops-lab: unknown command "xyzzy" \(one of: up, preview, refresh, destroy, outputs, preflight, simulate, verify, doctor, kubectl-plugin, bench, build-real-plane, node\)\n$/,
        );
        const o = runCli("verify", ["--nope"]);
        assert.strictEqual(o.code, 2);
        assert.match(o.stderr, /^gitops-lab verify: Unknown option '--nope' \(see gitops-lab verify --help\)\n$/);
    });

    it("a misspelt command or option gets a 'did you mean'", () => {
        const r = runCli("simualte", []);
        assert.strictEqual(r.code, 2);
        assert.match(r.stderr, /^gitops-lab: unknown command "simualte"; did you mean "simulate"\? \(one of: /);
        // help COMMAND, as git takes it
        const help = runCli("help", ["simulate"]);
        assert.strictEqual(help.code, 0, help.out);
        assert.match(help.stdout, /^usage: gitops-lab simulate --root DIR/);
        // a word for taking a lab down: the command that does it
        const reset = runCli("reset", ["--root", "/tmp/x"]);
        assert.strictEqual(reset.code, 2);
        assert.match(
            reset.stderr,
            /^gitops-lab: unknown command "reset"; to take a lab down: gitops-lab simulate --root DIR --reset \(a simulated lab\), gitops-lab destroy \(a lab host\) \(one of: /,
        );
        const o = runCli("simulate", ["--root", "/tmp/x", "--throuhg", "3"]);
        assert.strictEqual(o.code, 2);
        assert.match(
            o.stderr,
            /^gitops-lab simulate: Unknown option '--throuhg'; did you mean --through\? \(see gitops-lab simulate --help\)\n$/,
        );
    });

    it("--version names the kit's version and the Argo CD releases it installs", () => {
        const r = runCli("--version", []);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.stdout, /^gitops-lab 0\.1\.0 \(Argo CD v3\.6\.2, v3\.5\.8, v3\.5\.1; default v3\.6\.2\)\n$/);
    });

    it("verify --through 0 is valid (solveThrough 0 is: the environment only) and --json stays pure JSON on stdout", async () => {
        const empty = fs.mkdtempSync(path.join(os.tmpdir(), "verify-0-"));
        const r = await runMain("verify", ["--root", empty, "--through", "0", "--offline", "--json"]);
        assert.strictEqual(r.code, 0, r.out);
        const j = JSON.parse(r.stdout);
        assert.deepStrictEqual([j.ok, j.through, j.checks], [true, 0, []]);
    });
});

describe("gitops-lab bench", function () {
    this.timeout(180_000);

    it("--json prints one object: the profile, each step's wall, wait, overhead and estimated real-host time, the totals, and the poll-only estimate", async () => {
        const r = await runMain("bench", ["--json"]);
        assert.strictEqual(r.code, 0, r.out);
        const j = JSON.parse(r.stdout);
        assert.deepStrictEqual(Object.keys(j), ["profile", "steps", "total", "poll_only"]);
        assert.strictEqual(j.profile, "v3.5.1-defaults");
        assert.deepStrictEqual(
            j.steps.map((s: any) => `${s.step} ${s.name}`),
            ["1 repo", "2 appset", "2 sync", "3 incident", "4 pin", "5 drift", "6 promote", "7 revert", "8 report"],
        );
        for (const s of j.steps)
            assert.deepStrictEqual(Object.keys(s), ["step", "name", "wall_s", "wait_s", "overhead_s", "estimated_real_s"]);
        assert.deepStrictEqual(Object.keys(j.total), ["wall_s", "wait_s", "overhead_s", "estimated_real_s"]);
        // the poll-only waits sit out Argo CD's poll, so they take longer on the simulation's clock
        assert.ok(j.poll_only.estimated_real_s > j.total.estimated_real_s, JSON.stringify(j));
    });

    // given a bench under way, when Ctrl-C comes, then it says so, exits 130 and leaves no lab in $TMPDIR
    it("stopped by SIGINT: said, and its temporary lab removed", async () => {
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-stop-"));
        fs.chmodSync(tmp, 0o755); // the git daemon serves as nobody
        try {
            const child = spawn(process.execPath, [BIN, "bench"], {
                env: { ...process.env, TMPDIR: tmp },
                stdio: ["ignore", "pipe", "pipe"],
            });
            let err = "";
            child.stderr!.on("data", (d) => (err += d));
            const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
            await expect(
                holds("its lab under way", () =>
                    fs.readdirSync(tmp).some((d) => d.startsWith("bench-") && fs.existsSync(path.join(tmp, d, "srv"))),
                ),
                { timeoutMs: 120_000 },
            );
            child.kill("SIGINT");
            assert.strictEqual(await exited, 130, err);
            assert.match(err, /^bench: SIGINT: stopping; its temporary labs are removed, no figure is printed$/m);
            assert.deepStrictEqual(fs.readdirSync(tmp), []);
        } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    });

    it("a TMPDIR closed to others (the git daemon serves as nobody): said before anything starts", function () {
        if (process.getuid?.() !== 0) this.skip(); // only root's git daemon serves as nobody
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-private-"));
        try {
            const r = spawnSync(process.execPath, [BIN, "bench"], {
                env: { ...process.env, TMPDIR: tmp },
                encoding: "utf8",
                timeout: 60_000,
            });
            assert.strictEqual(r.status, 2, r.stderr);
            assert.match(
                r.stderr,
                /^gitops-lab bench: TMPDIR \S+: \S+ is closed to others \(mode 700\), and the lab's git daemon serves the repositories as nobody/,
            );
            assert.deepStrictEqual(fs.readdirSync(tmp), []);
        } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    });

    it("a TMPDIR that does not exist: said, naming TMPDIR", () => {
        const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-gone-")), "no-such-dir");
        const r = spawnSync(process.execPath, [BIN, "bench", "--tenants"], {
            env: { ...process.env, TMPDIR: tmp },
            encoding: "utf8",
            timeout: 60_000,
        });
        assert.strictEqual(r.status, 2, r.stderr);
        assert.strictEqual(
            r.stderr,
            `gitops-lab bench: TMPDIR ${tmp} does not exist, and bench makes its labs there: create it, or unset TMPDIR\n`,
        );
    });

    it("--tenants --json: the tenants lab's waits on the simulation's clock at v3.5.1's defaults", async () => {
        const r = await runMain("bench", ["--tenants", "--json"]);
        assert.strictEqual(r.code, 0, r.out);
        const j = JSON.parse(r.stdout);
        const GIVE_UP = "mandant-b's sync to give up (its retries spent)";
        const waits: string[] = j.waits.map((w: any) => w.wait);
        // Argo CD may sync it once more (its entry stayed Pending: a sync started within the second of the
        // transition), a race the run's timing decides: then a second give-up is waited for
        const giveUps = waits.filter((w) => w === GIVE_UP).length;
        assert.ok(giveUps === 1 || giveUps === 2, waits.join("\n"));
        assert.deepStrictEqual(waits, [
            "the first rollout (every tenant at 1.1.0)",
            "the rollout doctor to find the rollout stuck",
            ...Array(giveUps).fill(GIVE_UP),
            "the rollout of 1.2.1 to complete",
        ]);
        // the retries' backoff (10+20+40+80+160 s) at least once
        const settling = j.waits.filter((w: any) => w.wait === GIVE_UP).reduce((t: number, w: any) => t + w.estimated_real_s, 0);
        assert.ok(settling >= 310, JSON.stringify(j));
        assert.ok(Math.abs(j.detected_after_seconds - j.waits[1].estimated_real_s) <= 2, JSON.stringify(j)); // both on the simulation's clock, from the push
    });
});
