/**
 * `gitops-lab simulate` as a product: served to the real kubectl and git, safe to kill at any
 * instant, one run per root.
 */
import * as assert from "assert";
import { ChildProcess, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as https from "https";
import * as os from "os";
import * as path from "path";
import { isAlive, procStat } from "../lab/ports/proc";
import { lockFile, SERVING } from "../lab/ports/lock";
import { run } from "../lab/ports/exec";
import { REAL_PLANE } from "../realplane/versions";
import { shopLayout } from "../lab/shop/layout";
import { switchFeatureOn } from "../lab/shop/edits";
import { INCIDENT_MESSAGE } from "../lab/shop/scenario";
import { removeServedFiles, servedKubeconfigText } from "../sim/servedFiles";
import { parse, stringify } from "yaml";
import { shopApplicationSet } from "../lab/shop/appset";
import { RELEASES, TENANTS, tenantsLayout } from "../lab/tenants/layout";
import { tenantFile, tenantPath } from "../lab/tenants/repoFiles";
import { BIN, runCli, runMain } from "./helpers/cli";
import { labAt, rootAt } from "./helpers/labAt";
import { clusterStateFile } from "../sim/simulatedLab";
import { git, tenantsRootAt } from "./helpers/tenantsAt";
import { servedCloneDir } from "../lab/kit/layout";
import { expect, holds } from "./helpers/expect";
import { gradingLines, sameCommand, serveInstructions, shellWord, solveOptions } from "../cli/simulate";

/** A simulate run in the background, with its output as it comes. */
function startSimulate(
    args: string[],
    env: NodeJS.ProcessEnv = process.env,
): { child: ChildProcess; out: () => string; exited: Promise<number | null> } {
    const child = spawn(process.execPath, [BIN, "simulate", ...args], { stdio: ["ignore", "pipe", "pipe"], env });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (out += d));
    const exited = new Promise<number | null>((r) =>
        child.on("exit", (code, signal) => r(code ?? (signal ? 128 + (signal === "SIGKILL" ? 9 : 15) : null))),
    );
    return { child, out: () => out, exited };
}

/** The served block has all arrived: it ends with the verify line (the output comes in chunks). */
const servedBlockComplete = (out: string) => /SERVING the simulated lab[\s\S]*\n {2}\/\S+\/bin\/gitops-lab verify [^\n]*\n/.test(out);

/** The commands of a served lab's block, as printed (indented lines after SERVING, `#` comments among them), run in one shell from a folder of no project. */
function runPrinted(out: string, env: NodeJS.ProcessEnv = process.env): { status: number | null; out: string; commands: string[] } {
    const block = out.slice(out.indexOf("SERVING the simulated lab"));
    const commands = block
        .split("\n")
        .slice(1)
        .filter((l) => /^ {2}\S/.test(l))
        .map((l) => l.trim());
    const r = spawnSync("bash", ["-c", ["set -e", ...commands.map((c) => `echo "+ ${c.replace(/"/g, '\\"')}"; ${c}`)].join("\n")], {
        cwd: os.tmpdir(),
        encoding: "utf8",
        timeout: 120_000,
        env,
    });
    return { status: r.status, out: `${r.stdout}${r.stderr}`, commands };
}

/** git daemons serving this root (none may outlive its run). */
const daemonsOf = (root: string) => spawnSync("pgrep", ["-f", `--base-path=${root}/srv/bare`], { encoding: "utf8" }).stdout.trim();

describe("simulate --serve: the simulated lab for kubectl and git", function () {
    this.timeout(180_000);
    let root: string;
    let run: ReturnType<typeof startSimulate>;
    let env: NodeJS.ProcessEnv;
    const kubectl = (...args: string[]) => {
        const r = spawnSync("kubectl", args, { env, encoding: "utf8", timeout: 60_000 });
        return { code: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout };
    };

    before(async () => {
        // a root left at step 8 (the snapshot): the served run finds every step done and serves
        root = await rootAt(8);
        run = startSimulate(["--root", root, "--serve"]);
        await expect(
            holds("the whole SERVING block (its last line is verify's)", () => servedBlockComplete(run.out())),
            { timeoutMs: 120_000 },
        );
        env = { ...process.env, KUBECONFIG: path.join(root, "kubeconfig") };
    });
    after(async () => {
        run?.child.kill("SIGKILL");
        await run?.exited;
    });

    it("prints how to use it: the kubeconfig to export and the git URL to clone", () => {
        assert.match(run.out(), new RegExp(`export KUBECONFIG=${path.join(root, "kubeconfig")}`));
        assert.match(run.out(), /git clone -b main git:\/\/127\.0\.0\.1:\d+\/shop-envs\.git/);
    });

    it("every command it prints works as printed (one shell, from a folder of no project), the refresh of the Applications among them", () => {
        const r = runPrinted(run.out());
        assert.strictEqual(r.status, 0, r.out);
        assert.match(r.out, /\d+ passed, 0 failed/, "the printed verify grades the shop lab");
        assert.ok(r.commands.includes("kubectl -n argocd annotate applications --all argocd.argoproj.io/refresh=normal --overwrite"));
        assert.match(run.out(), /# without it Argo CD's own poll sees the push in up to about 6 minutes/);
        assert.match(run.out(), /# the shop lab: every step is done \(8\)/);
    });

    it("serves its starter alone: a 0600 kubeconfig, 401 without its token", async () => {
        const file = path.join(root, "kubeconfig");
        assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600);
        const server = /server: (\S+)/.exec(fs.readFileSync(file, "utf8"))![1];
        assert.match(server, /^https:\/\/127\.0\.0\.1:\d+$/);
        // no credential at all (kubectl would ask for a user name at a terminal): the API's own answer
        const status = await new Promise<number | undefined>((resolve, reject) =>
            https
                .get(`${server}/apis/argoproj.io/v1alpha1/applications`, { rejectUnauthorized: false }, (res) => {
                    res.resume();
                    resolve(res.statusCode);
                })
                .on("error", reject),
        );
        assert.strictEqual(status, 401);
        const wrong = kubectl("--token", "not-the-token", "get", "applications", "-A");
        assert.notStrictEqual(wrong.code, 0);
        assert.match(wrong.out, /You must be logged in to the server/);
        // the product's own answer to a wrong token: one line that says so
        const bad = path.join(root, "kubeconfig.bad");
        fs.writeFileSync(bad, fs.readFileSync(file, "utf8").replace(/token: \S+/, "token: not-the-token"));
        const doctor = await runMain("doctor", ["--kubeconfig", bad]);
        fs.rmSync(bad);
        assert.strictEqual(doctor.code, 1, doctor.out);
        assert.match(
            doctor.stderr.trim(),
            /^[^\n]*the API server refused the kubeconfig's credentials \(401 Unauthorized\): is it this cluster's kubeconfig/,
        );
    });

    it("answers kubectl version and api-resources (the core and argoproj.io groups)", () => {
        assert.match(
            kubectl("version").out,
            new RegExp(`Server Version: ${REAL_PLANE.kubernetes.replace(/\./g, "\\.")}-gitops-lab-simulated`),
        );
        const r = kubectl("api-resources");
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.stdout, /^applications +app,apps +argoproj\.io\/v1alpha1 +true +Application$/m);
        assert.match(r.stdout, /^configmaps +cm +v1 +true +ConfigMap$/m);
    });

    it("answers get with -o json, yaml, name and jsonpath, and -A", () => {
        assert.strictEqual(
            JSON.parse(kubectl("get", "app", "shop-prod", "-n", "argocd", "-o", "json").stdout).spec.source.targetRevision,
            "release/prod",
        );
        assert.match(kubectl("get", "appset", "shop", "-n", "argocd", "-o", "yaml").stdout, /^kind: ApplicationSet$/m);
        assert.deepStrictEqual(kubectl("get", "applications", "-n", "argocd", "-o", "name").stdout.trim().split("\n"), [
            "application.argoproj.io/shop-dev",
            "application.argoproj.io/shop-prod",
        ]);
        assert.strictEqual(
            kubectl("get", "cm", "shop-config", "-n", "shop-prod", "-o", "jsonpath={.data.FEATURE_CHECKOUT_V2}").stdout,
            "on",
        );
        assert.match(kubectl("get", "cm", "-A").stdout, /^shop-dev +shop-config/m);
    });

    it("describes a ConfigMap", () => {
        const r = kubectl("describe", "cm", "shop-config", "-n", "shop-prod");
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.stdout, /^Name: +shop-config$/m);
        assert.match(r.stdout, /LOG_LEVEL:\n----\nwarn/);
    });

    it("given a refresh annotation set with kubectl annotate, then the simulated Argo CD removes it when handled", async () => {
        assert.strictEqual(
            kubectl("annotate", "app", "shop-dev", "-n", "argocd", "argocd.argoproj.io/refresh=hard", "--overwrite").code,
            0,
        );
        await expect(
            holds(
                "the refresh annotation gone",
                () =>
                    !kubectl("get", "app", "shop-dev", "-n", "argocd", "-o", "jsonpath={.metadata.annotations}").stdout.includes("refresh"),
            ),
            { intervalMs: 200 },
        );
    });

    it("lists Argo CD's CRDs as the install leaves them: kubectl get crd shows the three, each Established with its stored version", () => {
        const r = kubectl("get", "crd");
        assert.strictEqual(r.code, 0, r.out);
        assert.deepStrictEqual(
            r.stdout
                .trim()
                .split("\n")
                .map((l) => l.split(/ +/)[0]),
            ["NAME", "applications.argoproj.io", "applicationsets.argoproj.io", "appprojects.argoproj.io"],
        );
        const status = kubectl(
            "get",
            "crd",
            "applicationsets.argoproj.io",
            "-o",
            "jsonpath={range .status.conditions[*]}{.type}={.status} {end}{.status.storedVersions} {.spec.names.kind}",
        );
        assert.strictEqual(status.stdout, 'NamesAccepted=True Established=True ["v1alpha1"] ApplicationSet', status.out);
    });

    // given kubectl patch's default strategic merge on an Application, then it is refused as a real API server refuses
    // it for a custom resource (415); on a ConfigMap it is applied
    it("a strategic merge patch on an Application is a 415", () => {
        const refused = kubectl("patch", "app", "shop-dev", "-n", "argocd", "-p", '{"metadata":{"labels":{"lab-note":"x"}}}');
        assert.strictEqual(refused.code, 1, refused.out);
        assert.match(
            refused.out,
            /the body of the request was in an unknown format - accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml/,
        );
        const cm = kubectl("patch", "cm", "shop-config", "-n", "shop-dev", "-p", '{"metadata":{"labels":{"lab-note":"x"}}}');
        assert.strictEqual(cm.code, 0, cm.out);
    });

    it("kubectl create namespace (protobuf) is a 415 saying what works", () => {
        const refused = kubectl("create", "namespace", "scratch");
        assert.strictEqual(refused.code, 1, refused.out);
        assert.match(
            refused.out,
            /the served simulation reads JSON and YAML, not protobuf .*--dry-run=client -o yaml \| kubectl apply -f -/,
        );
        assert.doesNotMatch(refused.out, /Unexpected token/);
    });

    it("a JSON patch that is not a list is a 400", () => {
        const r = kubectl(
            "patch",
            "cm",
            "shop-config",
            "-n",
            "shop-dev",
            "--type",
            "json",
            "-p",
            '{"op":"add","path":"/data/x","value":"y"}',
        );
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.out, /cannot unmarshal object into Go value of type jsonpatch\.Patch/);
    });

    it("given a ConfigMap patched with kubectl patch --type merge, then selfHeal puts the Git value back, as kubectl get -w shows", async () => {
        const watch = spawn(
            "kubectl",
            ["get", "cm", "shop-config", "-n", "shop-prod", "-w", "-o", 'jsonpath={.metadata.annotations.probe}:{.data.LOG_LEVEL}{"\\n"}'],
            { env },
        );
        let seen = "";
        watch.stdout.on("data", (d) => (seen += d));
        try {
            // kubectl prints the object before its watch is open: annotate until the watch shows it, then it is open
            let probe = 0;
            await expect(
                async () => {
                    // a line after the first (the object as listed) is an event: the watch is open
                    if (
                        probe > 0 &&
                        seen
                            .split("\n")
                            .slice(1)
                            .some((l) => l.startsWith(`${probe}:`))
                    )
                        return { state: "succeeded", message: "the watch is open" };
                    kubectl("annotate", "cm", "shop-config", "-n", "shop-prod", `probe=${++probe}`, "--overwrite");
                    return { state: "pending", message: `the watch shows no probe yet: ${JSON.stringify(seen)}` };
                },
                { intervalMs: 200 },
            );
            assert.strictEqual(
                kubectl("patch", "cm", "shop-config", "-n", "shop-prod", "--type", "merge", "-p", '{"data":{"LOG_LEVEL":"debug"}}').code,
                0,
            );
            await expect(
                holds(
                    "debug, then warn again, through the watch",
                    () => /:debug\n(.*\n)*.*:warn\n/.test(seen),
                    () => seen,
                ),
            );
        } finally {
            watch.kill();
        }
    });

    it("applies appset.yaml with kubectl apply -f", () => {
        const r = kubectl("apply", "-f", shopLayout(root).appsetFile);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.stdout, /applicationset\.argoproj\.io\/shop (configured|unchanged)/);
    });

    it("given a generated Application deleted with kubectl delete, then the finalizer is honoured and the ApplicationSet generates it again", async () => {
        const uid = kubectl("get", "app", "shop-dev", "-n", "argocd", "-o", "jsonpath={.metadata.uid}").stdout;
        // --wait=false: kubectl's wait lists, then lists again to start its watch; an Application the
        // ApplicationSet has already generated again in between (a new UID) is one it waits on until
        // its timeout, on a real cluster too. The new UID below says the old one went.
        const r = kubectl("delete", "app", "shop-dev", "-n", "argocd", "--wait=false");
        assert.strictEqual(r.code, 0, r.out);
        await expect(
            holds("shop-dev back, a new object", () => {
                const now = kubectl("get", "app", "shop-dev", "-n", "argocd", "-o", "jsonpath={.metadata.uid}");
                return now.code === 0 && now.stdout !== "" && now.stdout !== uid;
            }),
            { intervalMs: 200 },
        ); // each look is a kubectl process
    });

    it("is graded live by gitops-lab verify with the served kubeconfig", async () => {
        // the Application deleted above must be synced again first
        await expect(
            holds(
                "shop-dev Synced",
                () => kubectl("get", "app", "shop-dev", "-n", "argocd", "-o", "jsonpath={.status.sync.status}").stdout === "Synced",
            ),
            { timeoutMs: 30_000 },
        );
        const r = runCli("verify", ["--root", root, "--kubeconfig", path.join(root, "kubeconfig")]);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.stdout, /files, repository and cluster/);
    });

    it("given a second simulate on the same root, then it refuses at once, naming the PID that holds it", () => {
        const r = runCli("simulate", ["--root", root, "--through", "8"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stderr,
            new RegExp(`^gitops-lab simulate: ${root} is in use by a served lab \\(gitops-lab simulate --serve, PID ${run.child.pid}\\)`),
        );
    });
});

describe("simulate with GIT_DIR left in the environment", function () {
    this.timeout(120_000);
    it("runs the lab's git on the lab's repositories, and leaves the one GIT_DIR names untouched", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "git-dir-"));
        fs.chmodSync(dir, 0o755);
        const other = path.join(dir, "other");
        spawnSync("git", ["init", "--quiet", other]);
        const root = path.join(dir, "lab");
        const env = { ...process.env, GIT_DIR: path.join(other, ".git"), GIT_WORK_TREE: other };
        const r = runCli("simulate", ["--root", root, "--through", "2"], { env, timeoutMs: 100_000 });
        assert.strictEqual(r.code, 0, r.out);
        assert.strictEqual(spawnSync("git", ["-C", other, "rev-list", "--all", "--count"], { encoding: "utf8" }).stdout.trim(), "0");
        const verify = runCli("verify", ["--root", root, "--offline", "--through", "2"], { env });
        assert.strictEqual(verify.code, 0, verify.out);
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it("given a low limit of open files (ulimit -n 28), then one line says to raise it, not a stack trace", async () => {
        const root = await rootAt(2);
        try {
            const r = spawnSync("bash", ["-c", `ulimit -n 28; exec "${process.execPath}" "${BIN}" simulate --root "${root}" --through 4`], {
                encoding: "utf8",
                timeout: 120_000,
            });
            assert.strictEqual(r.status, 1, r.stdout + r.stderr);
            assert.match(
                r.stderr,
                /^gitops-lab: stopped: too many open files \(EMFILE[^)]*\): this shell's limit \(ulimit -n\) is too low for the lab; raise it \(ulimit -n 4096\) and run again/m,
            );
            assert.doesNotMatch(r.stderr, /^\s+at /m, "no stack trace");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given GIT_DEFAULT_HASH=sha256 or GIT_ALLOW_PROTOCOL=file, then the simulated Argo CD reads the repositories as in its Pod", () => {
        for (const env of [{ GIT_DEFAULT_HASH: "sha256" }, { GIT_ALLOW_PROTOCOL: "file:https:ssh" }]) {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "git-host-env-"));
            fs.chmodSync(dir, 0o755);
            try {
                const r = runCli("simulate", ["--root", path.join(dir, "lab"), "--through", "3"], {
                    env: { ...process.env, ...env },
                    timeoutMs: 100_000,
                });
                assert.strictEqual(r.code, 0, `${JSON.stringify(env)}: ${r.out}`);
            } finally {
                fs.rmSync(dir, { recursive: true, force: true });
            }
        }
    });

    it("given git configuration half set in the environment (GIT_CONFIG_COUNT=2, one key), then the lab's git and verify's run without it", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "git-config-env-"));
        fs.chmodSync(dir, 0o755);
        const root = path.join(dir, "lab");
        const env = { ...process.env, GIT_CONFIG_COUNT: "2", GIT_CONFIG_KEY_0: "core.abbrev", GIT_CONFIG_VALUE_0: "12" };
        const r = runCli("simulate", ["--root", root, "--through", "1"], { env, timeoutMs: 100_000 });
        assert.strictEqual(r.code, 0, r.out);
        const verify = runCli("verify", ["--root", root, "--offline", "--through", "1"], { env });
        assert.strictEqual(verify.code, 0, verify.out);
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it("given a run that goes well, then nothing is on stderr (no library's warning either)", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "quiet-stderr-"));
        fs.chmodSync(dir, 0o755);
        const r = runCli("simulate", ["--root", path.join(dir, "lab"), "--through", "1"], { timeoutMs: 100_000 });
        assert.strictEqual(r.code, 0, r.out);
        assert.strictEqual(r.stderr, "");
        fs.rmSync(dir, { recursive: true, force: true });
    });
});

describe("simulate: stopped at any instant, it resumes", function () {
    this.timeout(300_000);

    it("given step 3's edit written and not committed (the run stopped before its commit), then the next run commits it as its own", async () => {
        const root = await rootAt(2);
        try {
            const { clone } = shopLayout(root);
            const cm = path.join(clone, "base", "configmap.yaml");
            fs.writeFileSync(cm, switchFeatureOn(fs.readFileSync(cm, "utf8")));
            const r = await runMain("simulate", ["--root", root, "--through", "3"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.doesNotMatch(r.out, /uncommitted changes/);
            const incident = JSON.parse(fs.readFileSync(shopLayout(root).resultFile("incident"), "utf8"));
            assert.strictEqual(await git(["log", "-1", "--format=%s", incident.commit], clone), INCIDENT_MESSAGE);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given SIGTERM while serving, then it stops cleanly: one line, exit 143, no git daemon left", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "sigterm-"));
        const run = startSimulate(["--root", root, "--lab", "shop", "--through", "1", "--serve"]);
        await expect(
            holds("SERVING", () => run.out().includes("SERVING")),
            { timeoutMs: 60_000 },
        );
        run.child.kill("SIGTERM");
        assert.strictEqual(await run.exited, 143);
        // the command that resumes it, with the options that chose the lab (a --lab tenants run resumed without it builds the shop lab)
        assert.match(
            run.out(),
            new RegExp(
                `simulate: SIGTERM: stopping; the simulated cluster is saved: \\S+ simulate --root ${root} --lab shop --through 1 --serve resumes it`,
            ),
        );
        assert.strictEqual(daemonsOf(root), "");
    });

    it("given SIGTERM as it starts, then its line says what is saved, and its lock is released", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "sigterm-early-"));
        const run = startSimulate(["--root", root, "--through", "1"]);
        const lock = path.join(root, ".gitops-lab-simulate.lock");
        await expect(
            holds("the run holds its lock", () => fs.existsSync(lock)),
            { timeoutMs: 60_000, intervalMs: 5 },
        );
        run.child.kill("SIGTERM");
        assert.strictEqual(await run.exited, 143);
        // whichever instant it came at, the line agrees with what is on disk
        const saved = fs.existsSync(path.join(root, "simulated-cluster.json"));
        assert.match(
            run.out(),
            saved
                ? /simulate: SIGTERM: stopping; the simulated cluster is saved: /
                : /simulate: SIGTERM: stopping; nothing of the lab was built yet: \S+ simulate --root \S+ --through 1 starts it/,
        );
        assert.strictEqual(fs.existsSync(lock), false);
        fs.rmSync(root, { recursive: true, force: true });
    });

    it("given a served lab whose lock file was removed by hand, a second run does not take its git daemon", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "lockgone-"));
        const run = startSimulate(["--root", root, "--lab", "shop", "--through", "1", "--serve"]);
        try {
            await expect(
                holds("SERVING", () => run.out().includes("SERVING")),
                { timeoutMs: 60_000 },
            );
            const daemon = Number(fs.readFileSync(path.join(root, ".gitops-lab-git-daemon.pid"), "utf8").trim());
            fs.rmSync(path.join(root, ".gitops-lab-simulate.lock"));
            const second = await runMain("simulate", ["--root", root, "--serve"]);
            assert.strictEqual(second.code, 1, second.out);
            assert.match(
                second.stderr,
                new RegExp(
                    `the git daemon \\(PID ${daemon}\\) of this root is a running gitops-lab simulate's \\(PID ${run.child.pid}\\), whose lock file \\.gitops-lab-simulate\\.lock is gone \\(removed by hand\\?\\): stop that run`,
                ),
            );
            assert.doesNotThrow(() => process.kill(daemon, 0), "the served lab's daemon runs on");
            assert.doesNotMatch(run.out(), /git daemon \(port \d+\) has ended/);
        } finally {
            run.child.kill("SIGTERM");
            await run.exited;
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given SIGTERM to the daemon and the run at once (a process group's stop), only the stop is said", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "groupstop-"));
        const run = startSimulate(["--root", root, "--lab", "shop", "--through", "1", "--serve"]);
        await expect(
            holds("SERVING", () => run.out().includes("SERVING")),
            { timeoutMs: 60_000 },
        );
        const daemon = Number(fs.readFileSync(path.join(root, ".gitops-lab-git-daemon.pid"), "utf8").trim());
        // the daemon first, as a group's signal may reach it first: reaped (so the run has seen its end), then the run
        process.kill(daemon, "SIGTERM");
        const gone = () => {
            try {
                process.kill(daemon, 0);
                return false;
            } catch {
                return true;
            }
        };
        await expect(holds("the daemon reaped", gone), { timeoutMs: 30_000 });
        run.child.kill("SIGTERM");
        assert.strictEqual(await run.exited, 143);
        assert.match(run.out(), /simulate: SIGTERM: stopping; the simulated cluster is saved/);
        assert.doesNotMatch(run.out(), /git daemon \(port \d+\) has ended/);
        fs.rmSync(root, { recursive: true, force: true });
    });

    it("given its git daemon killed during a run, the failure names it first and the same command resumes", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "daemon-gone-"));
        const run = startSimulate(["--root", root, "--lab", "shop", "--through", "8"]);
        const pidFile = path.join(root, ".gitops-lab-git-daemon.pid");
        await expect(
            holds("step 1 begun (the daemon listening)", () => run.out().includes("[step 1 ")),
            { timeoutMs: 60_000 },
        );
        process.kill(Number(fs.readFileSync(pidFile, "utf8").trim()), "SIGKILL");
        assert.strictEqual(await run.exited, 1, run.out());
        assert.match(
            run.out(),
            /gitops-lab simulate: the lab's git daemon \(port \d+\) ended \(killed by SIGKILL\) during the run, so Argo CD and git could not read the repositories: run the same command again, which resumes \(what failed then: [^\n]+\)\n$/,
        );
        fs.rmSync(root, { recursive: true, force: true });
    });

    it("given its git daemon killed while serving, it says so; given SIGQUIT (Ctrl-\\\\), it stops cleanly", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "sigquit-"));
        const run = startSimulate(["--root", root, "--lab", "shop", "--through", "1", "--serve"]);
        await expect(
            holds("SERVING", () => run.out().includes("SERVING")),
            { timeoutMs: 60_000 },
        );
        const daemon = Number(fs.readFileSync(path.join(root, ".gitops-lab-git-daemon.pid"), "utf8").trim());
        process.kill(daemon, "SIGKILL");
        await expect(
            holds("the daemon's end said", () =>
                /simulate: the lab's git daemon \(port \d+\) has ended \(killed by SIGKILL\): git clone and Argo CD cannot read the repositories now; stop this run/.test(
                    run.out(),
                ),
            ),
            { timeoutMs: 30_000 },
        );
        run.child.kill("SIGQUIT");
        assert.strictEqual(await run.exited, 131);
        assert.match(run.out(), /simulate: SIGQUIT: stopping; the simulated cluster is saved/);
        assert.strictEqual(fs.existsSync(path.join(root, ".gitops-lab-simulate.lock")), false);
    });

    it("given SIGHUP (its terminal closed) while serving, then it stops as cleanly: exit 129, the lock released", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "sighup-"));
        const run = startSimulate(["--root", root, "--lab", "shop", "--through", "1", "--serve"]);
        await expect(
            holds("SERVING", () => run.out().includes("SERVING")),
            { timeoutMs: 60_000 },
        );
        run.child.kill("SIGHUP");
        assert.strictEqual(await run.exited, 129);
        assert.match(run.out(), /simulate: SIGHUP: stopping; the simulated cluster is saved/);
        assert.strictEqual(daemonsOf(root), "");
        assert.strictEqual(fs.existsSync(path.join(root, ".gitops-lab-simulate.lock")), false);
    });

    it("given a lab reached through a symlink to its folder, then it goes on as the same lab", async () => {
        const root = await rootAt(3);
        const link = `${root}-link`;
        fs.symlinkSync(root, link);
        try {
            const r = await runMain("simulate", ["--root", link, "--through", "4"]);
            assert.strictEqual(r.code, 0, r.out);
            const v = await runMain("verify", ["--root", root, "--through", "4", "--offline"]);
            assert.strictEqual(v.code, 0, v.out);
        } finally {
            fs.rmSync(link, { force: true });
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given the lab's folder deleted while served, then SIGTERM says nothing is saved, not that it is", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "gone-"));
        const run = startSimulate(["--root", root, "--through", "1", "--serve"]);
        await expect(
            holds("SERVING", () => run.out().includes("SERVING")),
            { timeoutMs: 60_000 },
        );
        fs.rmSync(root, { recursive: true, force: true });
        run.child.kill("SIGTERM");
        await run.exited;
        assert.match(
            run.out(),
            /the lab's folder \S+ is gone \(deleted while it ran\), and nothing of it is saved: \S+ simulate --root \S+ --through 1 --serve builds it again/,
        );
        assert.doesNotMatch(run.out(), /the simulated cluster is saved/);
        assert.strictEqual(daemonsOf(root), "");
    });

    it("given SIGTERM during a reset, then it says to run the reset again, and that run finishes it", async () => {
        const root = await rootAt(8);
        const run = startSimulate(["--root", root, "--reset"]);
        await expect(
            holds("the reset begun", () => run.out().includes("resetting")),
            { timeoutMs: 60_000 },
        );
        run.child.kill("SIGTERM");
        assert.strictEqual(await run.exited, 143, run.out());
        assert.match(
            run.out(),
            /simulate: SIGTERM: stopping; the reset is not finished: gitops-lab simulate --root \S+ --reset again takes down what is left/,
        );
        const again = await runMain("simulate", ["--root", root, "--reset"]);
        assert.strictEqual(again.code, 0, again.out);
        assert.match(again.stdout, /reset: nothing of the lab is left under /);
    });

    for (const through of ["directly", "through sh -c"])
        it(`ends when the npx that started it is killed (the program its child ${through})`, async () => {
            const root = fs.mkdtempSync(path.join(os.tmpdir(), "npx-killed-"));
            // a launcher as npx is: npm's title ("npm exec ..."), the program its child or, as npm runs a bin, its
            // shell's (sh -c 'gitops-lab ...', which a shell may keep as the program's parent); a kill of npx signals neither
            const program = [process.execPath, BIN, "simulate", "--root", root, "--through", "1", "--serve"];
            const [file, args] =
                through === "directly"
                    ? [program[0], program.slice(1)]
                    : ["/bin/sh", ["-c", `${program.map((w) => `'${w}'`).join(" ")}; exit $?`]];
            const launcher = spawn(
                process.execPath,
                [
                    "-e",
                    `process.title = "npm exec gitops-lab simulate";
                     const c = require("child_process").spawn(${JSON.stringify(file)}, ${JSON.stringify(args)}, { stdio: "inherit" });
                     console.log("LAUNCHED " + c.pid);
                     setInterval(() => {}, 1e6);`,
                ],
                { stdio: ["ignore", "pipe", "pipe"] },
            );
            let out = "";
            launcher.stdout!.on("data", (d) => (out += d));
            launcher.stderr!.on("data", (d) => (out += d));
            await expect(
                holds("SERVING", () => out.includes("SERVING")),
                { timeoutMs: 60_000 },
            );
            const launched = Number(/LAUNCHED (\d+)/.exec(out)![1]);
            const child =
                through === "directly"
                    ? launched
                    : Number(fs.readFileSync(`/proc/${launched}/task/${launched}/children`, "utf8").trim().split(" ")[0]);
            assert.ok(child > 0, out);
            launcher.kill("SIGKILL");
            try {
                await expect(
                    holds(
                        "the served lab gone",
                        () => !isAlive(child),
                        () => out.slice(-300),
                    ),
                    { timeoutMs: 30_000 },
                );
            } finally {
                if (isAlive(child)) process.kill(child, "SIGTERM"); // a failed run leaves nothing behind
            }
            assert.match(out, /simulate: the npm or npx that started it is gone: stopping; the simulated cluster is saved/);
            assert.strictEqual(daemonsOf(root), "");
        });

    // three instants: step 1 under way, a step that has pushed and waits on Argo CD, a step after its revert was pushed;
    // the step-7 runs resume a root left at step 6 (the snapshot) rather than solving steps 1-6 first. The run that is
    // killed is a process (SIGKILL is the point); the next run and verify run in this process.
    for (const [instant, from] of [
        ["[step 1 repo] start", 0],
        ["[step 7 revert] waiting for the ComparisonError", 6],
        ["[step 7 revert] waiting for shop-dev synced to", 6],
    ] as const) {
        it(`given a run killed with SIGKILL at "${instant}", then no git daemon outlives it, and the next run finishes a lab that verify grades 100% without pushing a step twice`, async () => {
            const root = from === 0 ? fs.mkdtempSync(path.join(os.tmpdir(), "kill-")) : await rootAt(from);
            const run = startSimulate(["--root", root]);
            await expect(
                holds(instant, () => run.out().includes(instant)),
                { timeoutMs: 120_000 },
            );
            run.child.kill("SIGKILL");
            await run.exited;
            await expect(holds("its git daemon gone with it", () => daemonsOf(root) === ""));
            const again = await runMain("simulate", ["--root", root]);
            assert.strictEqual(again.code, 0, again.out);
            const v = await runMain("verify", ["--root", root, "--offline"]);
            assert.strictEqual(v.code, 0, v.out);
            const commits = spawnSync("git", ["--git-dir", shopLayout(root).bareRepo, "log", "--format=%s", "main"], { encoding: "utf8" })
                .stdout.trim()
                .split("\n");
            assert.strictEqual(commits.length, 4, `initial, incident, bad, revert: ${commits.join(" | ")}`);
        });
    }
});

describe("simulate: release/prod pushed by hand before the solver's pin", function () {
    this.timeout(120_000);

    it("at the incident commit itself: said as that, with the delete that lets the pin go on", async () => {
        const root = await rootAt(3);
        try {
            const { clone, resultFile } = shopLayout(root);
            const incident = JSON.parse(fs.readFileSync(resultFile("incident"), "utf8")).commit;
            await git(["-C", clone, "push", "-q", "origin", `${incident}:refs/heads/release/prod`]);
            const r = await runMain("simulate", ["--root", root, "--through", "4"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stderr,
                /release\/prod already exists at [0-9a-f]{40} \(the incident commit itself, incident\.commit\), not at the incident's parent [0-9a-f]{40}, where the pin starts\. It was left as it is; delete it \(git -C \S+ push origin --delete release\/prod;/,
            );
            await git(["-C", clone, "push", "-q", "origin", "--delete", "release/prod"]);
            const again = await runMain("simulate", ["--root", root, "--through", "4"]);
            assert.strictEqual(again.code, 0, again.out);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("simulate: a lab's repository removed by hand", function () {
    this.timeout(120_000);

    it("given the shop repository deleted at step 4, then served or run, it says the repository is gone, and a reset keeps the clone", async () => {
        const root = await rootAt(4);
        try {
            fs.rmSync(shopLayout(root).bareRepo, { recursive: true, force: true });
            for (const args of [
                ["--through", "4"],
                ["--through", "5"],
            ]) {
                const r = await runMain("simulate", ["--root", root, ...args]);
                assert.strictEqual(r.code, 1, r.out);
                assert.match(
                    r.stderr,
                    new RegExp(
                        `^gitops-lab simulate: ${shopLayout(root).bareRepo} is gone while the lab under ${root} is at step 4: .*put that folder itself back \\(a copy of it, cp -a; a repository made again from the clone lacks the lab's mark and is refused as yours\\).*--reset \\(which keeps the lab's clone, the history's last copy: copy out what you need, git bundle create FILE --all, and move the clone away\\), then the lab again\\n$`,
                    ),
                );
            }
            assert.ok(!fs.existsSync(shopLayout(root).bareRepo), "nothing was built in its place");
            // then the reset the refusal offers: the clone, every commit of it pushed, is the history's last copy and stays
            const reset = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(reset.code, 0, reset.out);
            assert.ok(
                reset.stdout.includes(
                    `kept ${shopLayout(root).clone}: it holds work the repository does not (the history of ${shopLayout(root).bareRepo}, which is gone: this clone is the only copy left)`,
                ),
                reset.stdout,
            );
            assert.ok(fs.existsSync(path.join(shopLayout(root).clone, ".git")), "the clone stays");
            // and, the clone moved away as the line says, the lab again
            fs.renameSync(shopLayout(root).clone, `${root}-clone`);
            try {
                const again = await runMain("simulate", ["--root", root, "--through", "1"]);
                assert.strictEqual(again.code, 0, again.out);
            } finally {
                fs.rmSync(`${root}-clone`, { recursive: true, force: true });
            }
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("simulate: the ApplicationSet deleted by hand", function () {
    this.timeout(120_000);

    it("given the shop ApplicationSet deleted at step 2, then a run for step 4 says so at once, not after a wait", async () => {
        const at = await labAt(2);
        const root = at.lab.layout.root;
        try {
            const kubeconfig = path.join(root, "kubeconfig");
            fs.writeFileSync(kubeconfig, at.lab.kubeconfig);
            // (asynchronously: the simulated API answers from this process)
            await run("kubectl", [
                "--kubeconfig",
                kubeconfig,
                "--request-timeout=30s",
                "-n",
                "argocd",
                "delete",
                "applicationset",
                "shop",
                "--wait=false",
            ]);
            await expect(
                holds("the ApplicationSet gone", async () => !(await at.cluster.getApplicationSet("shop"))),
                { timeoutMs: 60_000 },
            );
            fs.writeFileSync(clusterStateFile(root), at.lab.kube.dump());
            await at.lab.stop();
            fs.rmSync(kubeconfig);
            const r = await runMain("simulate", ["--root", root, "--through", "4"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stderr,
                /the ApplicationSet argocd\/shop is not in the cluster \(deleted\?\), while \S+appset\.yaml says it was applied: apply it again \(kubectl apply -f \S+appset\.yaml\), then run again/,
            );
            assert.doesNotMatch(r.out, /timed out/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("simulate: appset.yaml deleted by hand, the ApplicationSet still there", function () {
    this.timeout(120_000);

    // given step 2 done and its file deleted, when run again, then the file is written from the cluster's elements, and said
    it("is written again from the cluster's ApplicationSet, and said", async () => {
        const root = await rootAt(2);
        try {
            const { appsetFile } = shopLayout(root);
            fs.rmSync(appsetFile);
            const r = await runMain("simulate", ["--root", root, "--through", "2"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(
                r.out,
                /ApplicationSet argocd\/shop exists; template updated, elements kept \(dev=main, prod=main\); \S+appset\.yaml was missing: written from them/,
            );
            assert.ok(fs.existsSync(appsetFile));
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("simulate: the learner's commit not pushed in the lab's clone", function () {
    this.timeout(120_000);
    /** A shop lab at step 3 (its incident pushed), removed after `then`. */
    const atStep3 = async (then: (root: string) => Promise<void>) => {
        const root = await rootAt(3);
        try {
            await then(root);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    };

    // given a commit of the learner's in the clone, when the solver is asked for steps that commit on main later (7), then
    // it refuses before any step runs (not at step 7, after steps 4-6 changed the lab)
    it("is said before any step runs", async () => {
        await atStep3(async (root) => {
            const { clone, resultFile } = shopLayout(root);
            fs.writeFileSync(path.join(clone, "NOTES.md"), "mine\n");
            await run("git", ["-C", clone, "add", "NOTES.md"]);
            await run("git", ["-C", clone, "-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qm", "mine"]);
            const r = await runMain("simulate", ["--root", root, "--through", "8"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.stderr, /has commits the remote's main lacks/);
            assert.doesNotMatch(r.out, /\[step 4 pin\] start/);
            assert.ok(!fs.existsSync(resultFile("pin")), "step 4 did not run");
        });
    });

    // its origin renamed (upstream): the remote named, and how to name it back
    it("nor its origin renamed", async () => {
        await atStep3(async (root) => {
            const { clone } = shopLayout(root);
            await run("git", ["-C", clone, "remote", "rename", "origin", "upstream"]);
            const r = await runMain("simulate", ["--root", root, "--through", "4"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stderr,
                /reaches \S+shop-envs\.git as its remote upstream, not as origin, the remote the lab pushes to\. Nothing was changed\. Name it origin again \(git -C \S+ remote rename upstream origin\)/,
            );
        });
    });

    // the step-3 commit amended after its push: the clone and the remote apart, said so (no one else pushed)
    it("nor the pushed commit amended", async () => {
        await atStep3(async (root) => {
            const { clone, resultFile } = shopLayout(root);
            await run("git", ["-C", clone, "-c", "user.name=l", "-c", "user.email=l@x", "commit", "-q", "--amend", "-m", "x"]);
            const r = await runMain("simulate", ["--root", root, "--through", "8"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stderr,
                /have gone apart: a commit of the clone's rewritten after its push \(git commit --amend, a rebase\)[^\n]*branch my-work && [^\n]*reset --hard origin\/main/,
            );
            assert.ok(!fs.existsSync(resultFile("pin")), "step 4 did not run");
        });
    });

    // the same for a change not committed in a file no step writes, and for the clone left on a branch of the learner's
    it("nor a change not committed, nor another branch, nor a detached HEAD", async () => {
        await atStep3(async (root) => {
            const { clone, resultFile } = shopLayout(root);
            const prod = path.join(clone, "envs", "prod", "kustomization.yaml");
            fs.appendFileSync(prod, "# mine\n");
            const changed = await runMain("simulate", ["--root", root, "--through", "8"]);
            assert.strictEqual(changed.code, 1, changed.out);
            assert.match(changed.stderr, /has uncommitted changes \(M envs\/prod\/kustomization\.yaml\)/);
            assert.ok(!fs.existsSync(resultFile("pin")), changed.out);
            await run("git", ["-C", clone, "checkout", "-q", "--", "envs/prod/kustomization.yaml"]);
            await run("git", ["-C", clone, "checkout", "-q", "-b", "wip"]);
            const branch = await runMain("simulate", ["--root", root, "--through", "8"]);
            assert.strictEqual(branch.code, 1, branch.out);
            assert.match(branch.stderr, /is on "wip", not "main"/);
            assert.ok(!fs.existsSync(resultFile("pin")), "step 4 did not run");
            await run("git", ["-C", clone, "checkout", "-q", "--detach", "main"]);
            const detached = await runMain("simulate", ["--root", root, "--through", "8"]);
            assert.strictEqual(detached.code, 1, detached.out);
            assert.match(
                detached.stderr,
                /has a detached HEAD \(at [0-9a-f]{40}\), not main checked out; check it out \(git -C \S+ switch main\)/,
            );
            assert.ok(!fs.existsSync(resultFile("pin")), "step 4 did not run");
        });
    });
});

describe("simulate: step 1 done by hand, then the solver asked for more", function () {
    this.timeout(120_000);

    it("given the learner's own repository, then the solver refuses in one line, naming the by-hand way and the reset", async () => {
        const root = await rootAt(0);
        try {
            const { bareRepo } = shopLayout(root);
            await git(["init", "--quiet", "--bare", "--shared=0644", "--initial-branch=main", bareRepo]);
            const work = fs.mkdtempSync(path.join(os.tmpdir(), "by-hand-"));
            await git(["clone", "--quiet", bareRepo, work]);
            fs.cpSync(path.join(__dirname, "..", "gitrepo", "shop"), work, { recursive: true });
            await git(["add", "-A"], work);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-m", "first"], work);
            await git(["push", "--quiet", "origin", "main"], work);
            const r = await runMain("simulate", ["--root", root, "--through", "6"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stderr,
                new RegExp(
                    `^gitops-lab simulate: ${bareRepo} was made by hand \\(step 1 is yours\\), and the solver builds its steps only on a repository it made: do steps 2-6 by hand .*--through 1 --serve\\), or start over with --reset`,
                ),
            );
            assert.doesNotMatch(r.stderr, /stack's "root"/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("simulate: a lab's root moved", function () {
    this.timeout(120_000);

    it("given the root moved, or origin set to a git daemon, then going on names the clone's origin and the set-url", async () => {
        const root = await rootAt(4);
        const moved = `${root}-moved`;
        try {
            fs.renameSync(root, moved);
            const r = await runMain("simulate", ["--root", moved, "--through", "5"]);
            assert.strictEqual(r.code, 1, r.out);
            const { clone, bareRepo } = shopLayout(moved);
            assert.match(
                r.stderr,
                new RegExp(
                    `${clone}'s origin is ${shopLayout(root).bareRepo}, the repository at the root it was copied or moved from, not ${bareRepo}\\. Nothing was changed\\. If the root was moved, point it here \\(git -C ${clone} remote set-url origin ${bareRepo}\\)`,
                ),
            );
            // origin set to a served lab's git daemon instead: a URL, not the root's other place
            const daemon = "git://127.0.0.1:9418/shop-envs.git";
            await git(["-C", clone, "remote", "set-url", "origin", daemon]);
            const served = await runMain("simulate", ["--root", moved, "--through", "5"]);
            assert.strictEqual(served.code, 1, served.out);
            assert.ok(
                served.stderr.includes(
                    `${clone}'s origin is ${daemon}, a URL (a served lab's git daemon is one), not ${bareRepo}: the git daemon serves to read`,
                ),
                served.stderr,
            );
            assert.doesNotMatch(served.stderr, /copied or moved/);
            await git(["-C", clone, "remote", "set-url", "origin", bareRepo]);
            const again = await runMain("simulate", ["--root", moved, "--through", "5"]);
            assert.strictEqual(again.code, 0, again.out);
        } finally {
            fs.rmSync(moved, { recursive: true, force: true });
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("simulate: a reset interrupted", function () {
    this.timeout(300_000);

    it("given a reset refused while the lab is served, then no reset is left to finish: the served lab restarts as it stands", async () => {
        const root = await rootAt(3);
        try {
            const served = startSimulate(["--root", root, "--through", "3", "--serve"]);
            await expect(
                holds("served", () => servedBlockComplete(served.out())),
                { timeoutMs: 120_000 },
            );
            const reset = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(reset.code, 1, reset.out);
            assert.match(
                reset.stderr,
                /is in use by a served lab \(gitops-lab simulate --serve, PID \d+\), which runs until it is stopped: Ctrl-C in its terminal, or kill \d+, then run again/,
            );
            assert.doesNotMatch(reset.stdout, /resetting/);
            served.child.kill("SIGTERM");
            await served.exited;
            assert.ok(!fs.existsSync(path.join(root, ".gitops-lab-resetting")), "a refused reset began nothing");
            const again = await runMain("simulate", ["--root", root, "--through", "3"]);
            assert.strictEqual(again.code, 0, again.out);
            assert.doesNotMatch(again.out, /was interrupted/);
            assert.ok(fs.existsSync(shopLayout(root).resultFile("incident")), "step 3's work is there");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given a reset killed after the result files went, then the next run finishes it first and builds the lab", async () => {
        const root = await rootAt(8);
        try {
            const reset = startSimulate(["--root", root, "--reset"]);
            await expect(
                holds("the result files removed", () => reset.out().includes("removed the result files")),
                { timeoutMs: 120_000 },
            );
            reset.child.kill("SIGKILL");
            await reset.exited;
            await expect(holds("its git daemon gone with it", () => daemonsOf(root) === ""));
            // verify meanwhile: no grading of a lab half taken down, the reset's end said instead
            const half = await runMain("verify", ["--root", root, "--step", "1"]);
            assert.strictEqual(half.code, 1, half.out);
            assert.strictEqual(
                half.stderr,
                `gitops-lab verify: the reset of ${root} was interrupted (part of the lab is taken down already): gitops-lab simulate --root ${root} --reset finishes it; then gitops-lab simulate builds the lab again\n`,
            );
            const again = await runMain("simulate", ["--root", root, "--through", "2"]);
            assert.strictEqual(again.code, 0, again.out);
            assert.match(again.stdout, new RegExp(`^simulate: a reset of ${root} was interrupted: finishing it first$`, "m"));
            const v = await runMain("verify", ["--root", root, "--offline", "--through", "2"]);
            assert.strictEqual(v.code, 0, v.out);
            assert.ok(!fs.existsSync(path.join(root, ".gitops-lab-resetting")), "the reset is done");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("simulate: a root it cannot use is one line", function () {
    this.timeout(60_000);

    it("given an unreadable saved cluster, then it names the file and how to start over, and starts nothing", () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "bad-state-"));
        fs.writeFileSync(path.join(root, "simulated-cluster.json"), "{ not json");
        const r = runCli("simulate", ["--root", root]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stderr,
            new RegExp(`^gitops-lab simulate: ${root}/simulated-cluster\\.json is not a simulated cluster this tool saved .*--reset\\n$`),
        );
        assert.ok(!fs.existsSync(path.join(root, "srv")), "nothing was started or built");
        assert.strictEqual(daemonsOf(root), "");
    });

    it("given a folder where the saved cluster goes, then a run and a reset each say it is not the lab's, and keep it", async () => {
        const root = await rootAt(1);
        const file = path.join(root, "simulated-cluster.json");
        fs.rmSync(file);
        fs.mkdirSync(file);
        try {
            const said = new RegExp(
                `^gitops-lab simulate: ${file.replace(/[.]/g, "\\.")} is a folder, where the lab keeps its saved cluster \\(a file\\): it is not the lab's; move it away`,
            );
            for (const args of [["--through", "2"], ["--reset"]]) {
                const r = await runMain("simulate", ["--root", root, ...args]);
                assert.strictEqual(r.code, 1, r.out);
                assert.match(r.stderr, said, args.join(" "));
            }
            assert.ok(fs.statSync(file).isDirectory(), "kept");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    // the first of this family runs through the bin in a process; the others in this process, from snapshots where they need a lab
    it("given a lab whose saved cluster was deleted, then it refuses instead of writing a wrong report", async () => {
        const root = await rootAt(2);
        fs.rmSync(path.join(root, "simulated-cluster.json"));
        const r = await runMain("simulate", ["--root", root]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stderr,
            /holds the lab through step 2, but its simulated cluster .* is gone and cannot be rebuilt; start over with gitops-lab simulate --root .* --reset/,
        );
        assert.ok(!fs.existsSync(shopLayout(root).resultFile("report")));
    });

    it("given a lock left by a process that is gone, then it is taken over with a note", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "stale-lock-"));
        const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
        fs.writeFileSync(path.join(root, ".gitops-lab-simulate.lock"), `${dead}\n`);
        const r = await runMain("simulate", ["--root", root, "--through", "1"]);
        assert.strictEqual(r.code, 0, r.out);
        assert.match(r.stdout, new RegExp(`simulate: took over the lock of PID ${dead}, which is gone`));
        assert.ok(!fs.existsSync(path.join(root, ".gitops-lab-simulate.lock")), "released at the end");
    });

    // given a root below a folder closed to others (mode 700), then it says the git daemon serves as nobody, in one
    // line, a usage error (2), before creating anything
    it("a root under a closed folder is refused first", async () => {
        const closed = fs.mkdtempSync(path.join(os.tmpdir(), "closed-")); // mkdtemp makes it 0700
        const r = await runMain("simulate", ["--root", path.join(closed, "lab")]);
        assert.strictEqual(r.code, 2, r.out);
        assert.strictEqual(
            r.stderr,
            `gitops-lab simulate: --root ${path.join(closed, "lab")}: ${closed} is closed to others (mode 700), and the lab's git daemon serves the repositories as nobody, as its Pod does; chmod o+x ${closed}, or choose another --root\n`,
        );
        assert.deepStrictEqual(fs.readdirSync(closed), [], "nothing created");
    });

    it("given no kubectl on PATH, then it says so in one line, before creating anything", async () => {
        const parent = fs.mkdtempSync(path.join(os.tmpdir(), "no-kubectl-"));
        fs.chmodSync(parent, 0o755); // the git daemon serves as nobody: a root closed to others is refused first
        const root = path.join(parent, "lab");
        const bin = fs.mkdtempSync(path.join(os.tmpdir(), "bin-"));
        const PATH = process.env.PATH;
        process.env.PATH = bin;
        let r: Awaited<ReturnType<typeof runMain>>;
        try {
            r = await runMain("simulate", ["--root", root, "--through", "1"]);
        } finally {
            process.env.PATH = PATH;
        }
        assert.strictEqual(r.code, 2, r.out);
        assert.ok(
            r.stderr.includes(
                `gitops-lab simulate: the simulated Argo CD renders the labs' repositories with "kubectl kustomize", and kubectl is not on PATH (${bin}): install kubectl`,
            ),
            r.stderr,
        );
        assert.strictEqual(fs.existsSync(root), false, "nothing created");
    });

    it("given a root under a file, then it says so in one line, a usage error (2), before creating anything", async () => {
        const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "not-a-dir-")), "file");
        fs.writeFileSync(file, "");
        const r = await runMain("simulate", ["--root", path.join(file, "lab")]);
        assert.strictEqual(r.code, 2, r.out);
        assert.match(r.stderr, /^gitops-lab simulate: --root \S+: \S+\/file is a file, not a directory; choose another --root\n$/);
    });

    it("given a finished lab, when --through asks for less, then steps are not undone", async () => {
        const root = await rootAt(2);
        const r = await runMain("simulate", ["--root", root, "--through", "1"]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stderr,
            /is at step 2 already and steps cannot be undone \(--through 1 asked\)\. Run with --through 2 to leave it as it stands, /,
        );
        // with --lab both, to add the tenants lab: the shop lab's own step leaves it, and that is said
        const both = await runMain("simulate", ["--root", root, "--lab", "both", "--through", "1", "--tenants-through", "1"]);
        assert.strictEqual(both.code, 1, both.out);
        assert.match(
            both.stderr,
            /Run with --through 2 to leave it as it stands \(and build the tenants lab beside it\), without --through to have the solver go on/,
        );
        const added = await runMain("simulate", ["--root", root, "--lab", "both", "--through", "2", "--tenants-through", "1"]);
        assert.strictEqual(added.code, 0, added.out);
    });

    it("given a lab served now, when --through asks for less, then the answer names the run serving it", async () => {
        const root = await rootAt(2);
        const holder = spawn("sleep", ["120"], { stdio: "ignore" });
        try {
            fs.writeFileSync(lockFile(root), `${holder.pid}\n${SERVING}\n${procStat(holder.pid!)!.startTime}\n`);
            const r = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.ok(
                r.stderr.includes(
                    `(--through 1 asked). It is served now (PID ${holder.pid}; its kubeconfig: ${root}/kubeconfig): go on by hand there, or stop it (Ctrl-C in its terminal, or kill ${holder.pid}) before running anything else on it`,
                ),
                r.stderr,
            );
            assert.doesNotMatch(r.stderr, /add --serve|--reset/);
        } finally {
            holder.kill();
            fs.rmSync(lockFile(root), { force: true });
        }
    });
});

describe("simulate --serve at a step: what comes next, and only commands that work there", function () {
    this.timeout(180_000);

    // given an empty root served at --through 0, then it names step 1 and its paths, prints no clone of a repository
    // not made yet, and every line works as printed
    it("served at --through 0: step 1 and lines that work", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "serve-0-"));
        const run = startSimulate(["--root", root, "--through", "0", "--serve"]);
        try {
            await expect(
                holds("the whole SERVING block (its last line is verify's)", () => servedBlockComplete(run.out())),
                { timeoutMs: 120_000 },
            );
            const l = shopLayout(root);
            assert.match(
                run.out(),
                new RegExp(
                    `# the shop lab is at step 0; next, step 1 repo: create the bare repository ${l.bareRepo}, clone it to ${l.clone}`,
                ),
            );
            assert.match(
                run.out(),
                new RegExp(`# when step 1 is done: \\S+/bin/gitops-lab verify --root ${root} --kubeconfig \\S+ --step 1`),
            );
            const files = /# each step in full: (\S+); the repository's files: (\S+)\n/.exec(run.out());
            assert.ok(files && fs.existsSync(files[1]) && fs.readdirSync(files[2]).includes("base"), run.out());
            const r = runPrinted(run.out());
            assert.ok(!r.commands.some((c) => /^git (clone|-C)/.test(c)), r.commands.join("\n"));
            assert.strictEqual(r.status, 0, r.out);
        } finally {
            run.child.kill("SIGTERM");
            await run.exited;
        }
    });

    it("given a relative --root, then it says where the lab goes (under the current folder) and builds it there", () => {
        const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "relative-"));
        fs.chmodSync(cwd, 0o755); // the git daemon serves as nobody (mkdtemp makes it 700)
        const r = spawnSync(process.execPath, [BIN, "simulate", "--root", "lab", "--through", "0"], {
            cwd,
            encoding: "utf8",
            timeout: 120_000,
        });
        assert.strictEqual(r.status, 0, `${r.stdout}${r.stderr}`);
        assert.match(
            r.stdout,
            new RegExp(`^simulate: --root lab is relative: the lab goes under ${path.join(fs.realpathSync(cwd), "lab")}$`, "m"),
        );
        assert.ok(fs.existsSync(path.join(cwd, "lab")));
    });

    it("given --root lab from the kit's folder (its own lab/ sources), then it is refused and nothing is made there", () => {
        const kit = path.resolve(__dirname, "..");
        const before = fs.readdirSync(path.join(kit, "lab")).sort();
        const r = spawnSync(process.execPath, [BIN, "simulate", "--root", "lab", "--through", "0"], {
            cwd: kit,
            encoding: "utf8",
            timeout: 120_000,
        });
        assert.strictEqual(r.status, 2, `${r.stdout}${r.stderr}`);
        assert.match(
            r.stderr,
            /--root \S+\/lab is inside the kit's own lab\/ folder \(\S+\): the lab's srv\/, root\/ and saved cluster would go among the kit's files; give a folder of its own, such as --root \/tmp\/lab/,
        );
        assert.deepStrictEqual(fs.readdirSync(path.join(kit, "lab")).sort(), before, "nothing made in lab/");
        // a folder of the user's own beside the kit's (--root mylab, made and reset before) is theirs to use
        const mine = fs.mkdtempSync(path.join(kit, "mylab-"));
        try {
            const r2 = spawnSync(process.execPath, [BIN, "simulate", "--root", path.basename(mine), "--through", "0"], {
                cwd: kit,
                encoding: "utf8",
                timeout: 120_000,
            });
            assert.doesNotMatch(r2.stderr, /the kit's own/, `${r2.stdout}${r2.stderr}`);
        } finally {
            spawnSync(process.execPath, [BIN, "simulate", "--root", mine, "--reset"], { encoding: "utf8", timeout: 120_000 });
            fs.rmSync(mine, { recursive: true, force: true });
        }
    });

    it("given a run that ends (no --serve), then its last line is the grading command, offline, and it works as printed from any folder", async () => {
        const root = await rootAt(2);
        const r = runCli("simulate", ["--root", root, "--through", "2"]);
        assert.strictEqual(r.code, 0, r.out);
        const last = r.stdout.trim().split("\n").pop()!;
        assert.strictEqual(last, `grade it: ${BIN} verify --root ${root} --offline --through 2`);
        const v = spawnSync("bash", ["-c", last.replace(/^grade it: /, "")], { cwd: os.tmpdir(), encoding: "utf8", timeout: 60_000 });
        assert.strictEqual(v.status, 0, `${v.stdout}${v.stderr}`);
        assert.match(v.stdout, /\d+ passed, 0 failed/);
    });
});

describe("simulate --serve with the tenants lab: its own instructions", function () {
    this.timeout(180_000);

    it("a learner's git that rewrites git:// (url.insteadOf): the printed clone keeps the served address, and works as printed", async () => {
        const root = await tenantsRootAt(1);
        const home = fs.mkdtempSync(path.join(os.tmpdir(), "home-"));
        fs.writeFileSync(path.join(home, ".gitconfig"), '[url "https://"]\n\tinsteadOf = git://\n');
        const env = { ...process.env, HOME: home };
        const run = startSimulate(["--root", root, "--lab", "tenants", "--through", "1", "--serve"], env);
        try {
            await expect(
                holds("the whole SERVING block (its last line is verify's)", () => servedBlockComplete(run.out())),
                { timeoutMs: 150_000 },
            );
            assert.match(
                run.out(),
                /# your git configuration rewrites git:\/\/127\.0\.0\.1:(\d+)\/platform\.git to https:\/\/127\.0\.0\.1:\1\/platform\.git \(url\.<base>\.insteadOf\)/,
            );
            const r = runPrinted(run.out(), env);
            assert.strictEqual(r.status, 0, r.out);
            // the clone's own fetches reach the served daemon too
            const clone = servedCloneDir(root, "platform");
            assert.strictEqual(spawnSync("git", ["-C", clone, "fetch", "-q"], { env, encoding: "utf8" }).status, 0);
        } finally {
            run.child.kill("SIGTERM");
            await run.exited;
            fs.rmSync(home, { recursive: true, force: true });
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("--lab tenants prints the tenants lab's repository, clone and verify (no shop lab), and every command works as printed", async () => {
        const root = await tenantsRootAt(1);
        const run = startSimulate(["--root", root, "--lab", "tenants", "--through", "1", "--serve"]);
        try {
            await expect(
                holds("the whole SERVING block (its last line is verify's)", () => servedBlockComplete(run.out())),
                { timeoutMs: 150_000 },
            );
            const r = runPrinted(run.out());
            assert.doesNotMatch(r.commands.join("\n"), /shop-envs|cnpa-env/, "nothing of the shop lab");
            assert.ok(
                r.commands.some((c) => /^\/\S+\/bin\/gitops-lab verify --lab tenants --root \S+ --kubeconfig \S+ --through 1$/.test(c)),
                r.commands.join("\n"),
            );
            assert.ok(r.commands.some((c) => /^git clone -b main git:\/\/127\.0\.0\.1:\d+\/platform\.git /.test(c)));
            assert.ok(
                r.commands.includes(
                    "kubectl -n argocd annotate applicationset tenants argocd.argoproj.io/application-set-refresh=true --overwrite",
                ),
            );
            assert.match(run.out(), /# the tenants lab is at step 1; next, step 2 stall: /);
            assert.strictEqual(r.status, 0, r.out);
            assert.match(r.out, /\d+ passed, 0 failed/);
        } finally {
            run.child.kill("SIGTERM");
            await run.exited;
        }
    });
});

describe("printed commands and paths with spaces or quotes", () => {
    /** The words a POSIX shell reads from a printed command. */
    const wordsOf = (line: string) =>
        spawnSync("sh", ["-c", `printf '%s\\n' ${line}`], { encoding: "utf8" })
            .stdout.split("\n")
            .slice(0, -1);

    it("given a root with a space and a quote, then the grading line and the served block's commands are one word per path to a shell", () => {
        const root = "/tmp/my labs/o'brien";
        const [grade] = gradingLines(root, { shop: 3 });
        assert.deepStrictEqual(wordsOf(grade.replace(/^grade it: /, "")).slice(1), [
            "verify",
            "--root",
            root,
            "--offline",
            "--through",
            "3",
        ]);
        const block = serveInstructions({ root, url: (r) => `git://127.0.0.1:9418/${r}` }, `${root}/kubeconfig`, { shop: 3 });
        const kubeconfig = block.find((l) => l.includes("export KUBECONFIG="))!;
        assert.deepStrictEqual(wordsOf(kubeconfig.trim().replace(/^export /, "")), [`KUBECONFIG=${root}/kubeconfig`]);
        const clone = block.find((l) => l.trim().startsWith("git clone"))!;
        assert.deepStrictEqual(wordsOf(clone.trim()).slice(4), ["git://127.0.0.1:9418/shop-envs.git", `${root}/clones/shop-envs`]);
        assert.strictEqual(shellWord("/plain/path-1.2"), "/plain/path-1.2");
    });
});

describe("simulate resumed as another Argo CD version", function () {
    this.timeout(120_000);
    it("is refused, naming the version the lab was simulated as", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "versions-"));
        try {
            const first = await runMain("simulate", ["--root", root, "--through", "1", "--argocd-version", "v3.5.8"]);
            assert.strictEqual(first.code, 0, first.out);
            const again = await runMain("simulate", ["--root", root, "--through", "2"]);
            assert.strictEqual(again.code, 1, again.out);
            assert.match(
                again.stderr,
                /was simulated as Argo CD v3\.5\.8, and every lab under a root runs on its one cluster: give --argocd-version v3\.5\.8 \(to resume it, or to build another lab beside it\), or another --root for a lab as v3\.6\.2 \(--reset takes down every lab under /,
            );
            const same = await runMain("simulate", ["--root", root, "--through", "2", "--argocd-version", "v3.5.8"]);
            assert.strictEqual(same.code, 0, same.out);
            // the reset takes it down as the version it was simulated as, whatever the default
            const reset = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(reset.code, 0, reset.out);
            assert.match(reset.stdout, /reset: nothing of the lab is left under /);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("the served kubeconfig written again", () => {
    it("keeps the namespace the learner set in its context", () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "served-ns-"));
        try {
            const fresh = (port: number) =>
                `apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:${port}\nusers:\n- name: fake\n  user:\n    token: t\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\n`;
            assert.deepStrictEqual(servedKubeconfigText(root, fresh(1)), { text: fresh(1) }, "none there: as made");
            fs.writeFileSync(
                path.join(root, "kubeconfig"),
                fresh(1).replace("    user: fake\n", "    user: fake\n    namespace: shop-prod\n"),
            );
            const again = servedKubeconfigText(root, fresh(2));
            assert.strictEqual(again.namespace, "shop-prod");
            const doc = parse(again.text);
            assert.strictEqual(doc.contexts[0].context.namespace, "shop-prod");
            assert.strictEqual(doc.clusters[0].cluster.server, "https://127.0.0.1:2", "the new run's server");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    // given another cluster's entries added to the served kubeconfig (what kind or a cloud CLI does to $KUBECONFIG),
    // when written again, then they stay; when the lab is reset, then the file stays with them alone
    it("keeps another cluster's entries the learner added, and a reset takes out only the lab's", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "served-others-"));
        try {
            const file = path.join(root, "kubeconfig");
            const fresh = (port: number) =>
                `apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:${port}\nusers:\n- name: fake\n  user:\n    token: t\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\n`;
            const kind = { name: "kind-dev", cluster: { server: "https://127.0.0.1:38443" } };
            const mine = parse(fresh(1));
            mine.clusters.push(kind);
            mine.users.push({ name: "kind-dev", user: { token: "T" } });
            mine.contexts.push({ name: "kind-dev", context: { cluster: "kind-dev", user: "kind-dev", namespace: "default" } });
            mine["current-context"] = "kind-dev";
            fs.writeFileSync(file, stringify(mine));
            const again = servedKubeconfigText(root, fresh(2));
            assert.deepStrictEqual(again.others, ["kind-dev"]);
            assert.strictEqual(again.namespace, undefined, "kind-dev's namespace is not the lab's");
            const doc = parse(again.text);
            assert.deepStrictEqual(
                doc.clusters.map((c: { name: string }) => c.name),
                ["fake", "kind-dev"],
            );
            assert.strictEqual(doc.users[1].user.token, "T");
            assert.strictEqual(doc["current-context"], "fake", "the lab's, as its instructions use it");
            fs.writeFileSync(file, again.text);
            const said: string[] = [];
            const kept = await removeServedFiles(root, (l) => said.push(l));
            assert.deepStrictEqual(kept, [file]);
            const left = parse(fs.readFileSync(file, "utf8"));
            assert.deepStrictEqual(
                left.clusters.map((c: { name: string }) => c.name),
                ["kind-dev"],
            );
            assert.deepStrictEqual(
                left.contexts.map((c: { name: string }) => c.name),
                ["kind-dev"],
            );
            assert.match(
                said.join("\n"),
                /kept \S+\/kubeconfig with the entries you added to it \(another cluster's\); the served lab's are taken out of it/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("the served block when the learner's clone is there", () => {
    it("a clone of the lab before a reset is set aside, not pointed at the new repository", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "served-stale-"));
        try {
            const { bareRepo } = shopLayout(root);
            const clone = path.join(root, "clones", "shop-envs");
            // the repository as built again, and a clone of the one before it (its history another)
            for (const [repo, msg] of [
                [bareRepo, "built again"],
                [path.join(root, "before.git"), "before the reset"],
            ]) {
                await git(["init", "--quiet", "--bare", "--initial-branch=main", repo]);
                const work = fs.mkdtempSync(path.join(os.tmpdir(), "served-stale-work-"));
                await git(["clone", "--quiet", repo, work]);
                await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "--allow-empty", "-m", msg], work);
                await git(["push", "--quiet", "origin", "HEAD:main"], work);
                fs.rmSync(work, { recursive: true, force: true });
            }
            await git(["clone", "--quiet", path.join(root, "before.git"), clone]);
            const block = serveInstructions({ root, url: (r) => `git://127.0.0.1:40123/${r}` }, `${root}/kubeconfig`, { shop: 3 });
            const at = block.indexOf(`  mv -T ${clone} ${clone}.before-reset`);
            assert.ok(at > 0 && block[at - 1].includes("is a clone of this lab before a reset"), block.join("\n"));
            assert.strictEqual(block[at + 1], `  git clone -b main git://127.0.0.1:40123/shop-envs.git ${clone}`);
            assert.ok(!block.some((l) => l.includes("remote set-url")), block.join("\n"));
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("points the clone at where the repository is served now", () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "served-clone-"));
        try {
            fs.mkdirSync(path.join(root, "clones", "shop-envs", ".git"), { recursive: true });
            fs.mkdirSync(path.join(shopLayout(root).clone, ".git"), { recursive: true });
            const block = serveInstructions({ root, url: (r) => `git://127.0.0.1:40123/${r}` }, `${root}/kubeconfig`, { shop: 3 });
            assert.ok(!block.some((l) => l.trim().startsWith("git clone")), block.join("\n"));
            assert.ok(
                block.includes(`  git -C ${root}/clones/shop-envs remote set-url origin git://127.0.0.1:40123/shop-envs.git`),
                block.join("\n"),
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("the command that resumes a stopped run", () => {
    it("keeps every option that chose the lab, its steps and how it runs", () => {
        const line = sameCommand("/tmp/my lab", { lab: "tenants", through: "2", realistic: true, cluster: "sim", serve: true, root: "x" });
        assert.match(line, /simulate --root '\/tmp\/my lab' --lab tenants --through 2 --cluster sim --realistic --serve$/);
    });
});

describe("the served block where step 1 was done by hand", () => {
    it("names the lab's clone when it is not there, and makes it before the push", () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "served-no-clone-"));
        try {
            const { clone, bareRepo } = shopLayout(root);
            const block = serveInstructions({ root, url: (r) => `git://127.0.0.1:40123/${r}` }, `${root}/kubeconfig`, { shop: 1 });
            const push = block.indexOf(`  git -C ${clone} push origin main`);
            assert.ok(push > 1, block.join("\n"));
            assert.strictEqual(block[push - 1], `  git clone -b main ${bareRepo} ${clone}`);
            assert.match(block[push - 2], /# the lab's clone \S+ is not there \(cloned elsewhere\?\): the lab's steps name it/);
            // the git daemon's clone above it reads only: where commits go is said before the push
            assert.strictEqual(block[push - 3], "  # that clone reads; commits go in the lab's clone, and are pushed from there:");
            assert.match(block[push - 4], /^ {2}git clone -b main git:\/\/127\.0\.0\.1:40123\/shop-envs\.git /);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});

describe("a served lab started again: the learner's work stays the learner's", function () {
    this.timeout(300_000);
    /** A served lab on the root, once its whole block is out (or the run has ended: its output says why). */
    const served = async (root: string, args: string[]) => {
        const run = startSimulate(["--root", root, ...args, "--serve"]);
        let ended = false;
        void run.exited.then(() => (ended = true));
        await expect(
            holds("the SERVING block, or the run's end", () => servedBlockComplete(run.out()) || ended),
            { timeoutMs: 120_000 },
        );
        assert.ok(!ended, run.out());
        return run;
    };
    const stop = async (run: ReturnType<typeof startSimulate>) => {
        run.child.kill("SIGKILL");
        await run.exited;
    };
    // a git fetch the killed run started (through its helper process) may still write into the root's repository cache
    // for a moment: the removal is tried again until it finds the folder empty, to a deadline (rmSync's own retry only
    // retries the last rmdir, and a file written after its walk defeats it)
    const removeRoot = (root: string) =>
        expect(
            holds("the root removed", () => {
                try {
                    fs.rmSync(root, { recursive: true, force: true });
                    return true;
                } catch (e: any) {
                    if (e.code === "ENOTEMPTY") return false;
                    throw e;
                }
            }),
            { timeoutMs: 60_000 },
        );

    /** What a restart must leave as the learner left it: the repository's refs, the clone, the lab's files. */
    const learnersWork = async (root: string, layout: ReturnType<typeof shopLayout> | ReturnType<typeof tenantsLayout>) => {
        const files = (dir: string) =>
            fs.existsSync(dir)
                ? fs
                      .readdirSync(dir, { recursive: true, withFileTypes: true })
                      .filter((e) => e.isFile() && !e.parentPath.includes(`${path.sep}.git`))
                      .map(
                          (e) =>
                              `${path.relative(dir, path.join(e.parentPath, e.name))}: ${fs.readFileSync(path.join(e.parentPath, e.name), "utf8")}`,
                      )
                      .sort()
                : [];
        return {
            refs: fs.existsSync(layout.bareRepo) ? await git(["for-each-ref", "--format=%(refname) %(objectname)"], layout.bareRepo) : null,
            clone: fs.existsSync(path.join(layout.clone, ".git")) ? await git(["status", "--porcelain", "--branch"], layout.clone) : null,
            files: [...files(layout.workDir), ...files(layout.clone)],
        };
    };
    const kubectlIn = (root: string) => (args: string[], input?: string) => {
        const r = spawnSync("kubectl", args, {
            env: { ...process.env, KUBECONFIG: path.join(root, "kubeconfig") },
            input,
            encoding: "utf8",
            timeout: 60_000,
        });
        assert.strictEqual(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
        return r.stdout;
    };
    const commitAndPush = async (clone: string, message: string) => {
        await git(["add", "-A"], clone);
        await git(["commit", "--quiet", "-m", message], clone);
        await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], clone);
    };

    /**
     * A served lab (`args`) in which the learner does `act` by hand, killed (the interruption), then served again with
     * the same command: what the learner left, and the second run.
     */
    const killedMidStep = async (root: string, layout: Parameters<typeof learnersWork>[1], args: string[], act: () => Promise<void>) => {
        const first = await served(root, args);
        let before: Awaited<ReturnType<typeof learnersWork>>;
        try {
            await act();
            before = await learnersWork(root, layout);
        } finally {
            await stop(first); // the interruption
        }
        return { before, again: await served(root, args) };
    };

    // each step's midpoint: the learner's half of it done by hand (the cluster or the repository changed), its file not yet
    const shopMidpoints: { step: number; name: string; act: (root: string) => Promise<void>; after?: (root: string) => void }[] = [
        {
            step: 1,
            name: "repo",
            act: async (root) => {
                const layout = shopLayout(root);
                await git(["init", "--quiet", "--bare", "--initial-branch=main", layout.bareRepo]);
                await git(["clone", "--quiet", layout.bareRepo, layout.clone]);
                fs.mkdirSync(path.join(layout.clone, "base"));
                fs.writeFileSync(path.join(layout.clone, "base", "kustomization.yaml"), "resources:\n  - configmap.yaml\n");
            },
        },
        {
            step: 2,
            name: "appset",
            act: async (root) => void kubectlIn(root)(["apply", "-f", "-"], JSON.stringify(shopApplicationSet())),
        },
        {
            step: 3,
            name: "incident",
            act: async (root) => {
                const clone = shopLayout(root).clone;
                const file = path.join(clone, "base", "configmap.yaml");
                fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace('FEATURE_CHECKOUT_V2: "off"', 'FEATURE_CHECKOUT_V2: "on"'));
                await commitAndPush(clone, "checkout v2 on");
            },
        },
        {
            step: 4,
            name: "pin",
            act: async (root) => {
                const layout = shopLayout(root);
                await git(["push", "--quiet", "origin", "HEAD~1:refs/heads/release/prod"], layout.clone);
                const live = JSON.parse(kubectlIn(root)(["get", "applicationset", "shop", "-n", "argocd", "-o", "json"]));
                live.spec.generators[0].list.elements = [
                    { env: "dev", revision: "main" },
                    { env: "prod", revision: "release/prod" },
                ];
                kubectlIn(root)(["replace", "-f", "-"], JSON.stringify(live));
                fs.appendFileSync(layout.appsetFile, "# prod goes to release/prod (editing)\n");
            },
            after: (root) => {
                const live = JSON.parse(kubectlIn(root)(["get", "applicationset", "shop", "-n", "argocd", "-o", "json"]));
                assert.deepStrictEqual(
                    live.spec.generators[0].list.elements.map((e: any) => `${e.env}=${e.revision}`),
                    ["dev=main", "prod=release/prod"],
                    "the learner's live ApplicationSet as the learner left it",
                );
            },
        },
        {
            step: 5,
            name: "drift",
            act: async (root) =>
                void kubectlIn(root)([
                    "patch",
                    "configmap",
                    "shop-config",
                    "-n",
                    "shop-prod",
                    "--type",
                    "merge",
                    "-p",
                    '{"data":{"LOG_LEVEL":"debug"}}',
                ]),
        },
        {
            step: 6,
            name: "promote",
            act: async (root) =>
                void (await git(["push", "--quiet", "origin", "origin/main:refs/heads/release/prod"], shopLayout(root).clone)),
        },
        {
            step: 7,
            name: "revert",
            act: async (root) => {
                const clone = shopLayout(root).clone;
                await git(["pull", "--quiet", "--ff-only", "origin", "main"], clone);
                const file = path.join(clone, "envs", "dev", "kustomization.yaml");
                fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("  - ../../base\n", "  - ../../base\n  - missing.yaml\n"));
                await commitAndPush(clone, "dev: add missing.yaml");
            },
        },
        {
            step: 8,
            name: "report",
            act: async (root) => fs.writeFileSync(path.join(shopLayout(root).workDir, "report.json"), '{ "dev_tracks": "main",'),
        },
    ];
    for (const m of shopMidpoints)
        it(`serves a lab killed mid-step ${m.step} (${m.name}) as it stands, with the same command`, async () => {
            const through = String(m.step - 1);
            const root = m.step === 1 ? fs.mkdtempSync(path.join(os.tmpdir(), "mid-1-")) : await rootAt(m.step - 1);
            const layout = shopLayout(root);
            const { before, again } = await killedMidStep(root, layout, ["--through", through], () => m.act(root));
            try {
                assert.doesNotMatch(again.out(), new RegExp(`\\[step ${m.step} ${m.name}\\]`), `nothing of step ${m.step} is solved`);
                assert.deepStrictEqual(await learnersWork(root, layout), before);
                m.after?.(root);
                const step = await runMain("verify", ["--root", root, "--step", String(m.step), "--offline"]);
                assert.strictEqual(step.code, 1, step.out);
                assert.match(step.stdout, new RegExp(`^step ${m.step} ${m.name}: not done`));
            } finally {
                await stop(again);
                await removeRoot(root);
            }
        });

    it("serves a tenants lab killed mid-step 3 as it stands, with the same command, its node's images loaded again", async () => {
        // started with --through 1; step 2 done by hand (stall.json), step 3 under way: 1.2.1 pushed, recovery.json not yet
        const root = await tenantsRootAt(2);
        const layout = tenantsLayout(root);
        const { before, again } = await killedMidStep(root, layout, ["--lab", "tenants", "--through", "1"], async () => {
            for (const t of TENANTS) fs.writeFileSync(path.join(layout.clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            await commitAndPush(layout.clone, "every tenant to 1.2.1");
        });
        try {
            assert.match(again.out(), /the tenants lab is at step 2, past --through 1: served as it stands, nothing of it solved/);
            assert.match(again.out(), /site images in the simulated node: 1\.1\.0 loaded, 1\.2\.0 loaded, 1\.2\.1 loaded/);
            assert.doesNotMatch(again.out(), /\[tenants 3 recovery\]/, "nothing of step 3 is solved");
            assert.deepStrictEqual(await learnersWork(root, layout), before);
            const step = await runMain("verify", ["--lab", "tenants", "--root", root, "--step", "3", "--offline"]);
            assert.strictEqual(step.code, 1, step.out);
            assert.match(step.stdout, /^step 3 recovery: not done/);
        } finally {
            await stop(again);
            await removeRoot(root);
        }
    });

    it("serves a tenants lab at its --through as it stands, a tenant's namespace deleted by hand", async () => {
        // served with --through 1, the learner deletes mandant-d's namespace (its Application OutOfSync/Missing, which
        // RollingSync does not sync again): started again with the same command, the first rollout is not waited for
        const root = await tenantsRootAt(1);
        const layout = tenantsLayout(root);
        const { before, again } = await killedMidStep(root, layout, ["--lab", "tenants", "--through", "1"], async () => {
            kubectlIn(root)(["delete", "namespace", "mandant-d"]);
        });
        try {
            assert.match(
                again.out(),
                /the tenants lab is at step 1, the step --through 1 asks for: served as it stands, nothing of it solved/,
            );
            assert.doesNotMatch(again.out(), /waiting for the first rollout/);
            assert.deepStrictEqual(await learnersWork(root, layout), before);
            const step = await runMain("verify", [
                "--lab",
                "tenants",
                "--root",
                root,
                "--step",
                "1",
                "--kubeconfig",
                path.join(root, "kubeconfig"),
            ]);
            assert.strictEqual(step.code, 1, step.out);
            assert.match(
                step.stdout,
                /^step 1 built: not done: live: each site runs .*hint: mandant-d runs nothing: its (settings \(ConfigMap mandant-d\/site-settings\) are gone|namespace mandant-d is gone).*start the lab again/m,
            );
        } finally {
            await stop(again);
            await removeRoot(root);
        }
    });

    it("serves a lab taken past --through as it stands; without --serve, says how", async () => {
        const root = await rootAt(4);
        const layout = shopLayout(root);
        try {
            fs.appendFileSync(layout.appsetFile, "# a learner's note\n");
            const appset = fs.readFileSync(layout.appsetFile, "utf8");
            const refused = await runMain("simulate", ["--root", root, "--through", "3"]);
            assert.strictEqual(refused.code, 1, refused.out);
            assert.match(refused.stderr, /at step 4 already and steps cannot be undone .* add --serve to serve it as it stands/);
            const run = await served(root, ["--through", "3"]);
            try {
                assert.match(run.out(), /the shop lab is at step 4, past --through 3: served as it stands, nothing of it solved/);
                assert.strictEqual(fs.readFileSync(layout.appsetFile, "utf8"), appset);
            } finally {
                await stop(run);
            }
        } finally {
            await removeRoot(root);
        }
    });

    it("--serve without --through on a lab begun: served where it stands, nothing solved", async () => {
        const root = await rootAt(2);
        const layout = shopLayout(root);
        try {
            const main = await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]);
            const run = await served(root, []);
            try {
                assert.match(
                    run.out(),
                    /the shop lab is at step 2 \(no --through given: --through 8 has the solver do the rest\): served as it stands, nothing of it solved/,
                );
                assert.ok(!fs.existsSync(layout.resultFile("incident")), "step 3 is the learner's");
                assert.strictEqual(await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]), main);
            } finally {
                await stop(run);
            }
        } finally {
            await removeRoot(root);
        }
    });

    // given the shop lab begun and the tenants lab not, when --lab both is served with --tenants-through only, then the shop
    // lab is served as it stands (--through is its option), and the tenants lab's solving is said before it runs
    it("--lab both --serve: each lab keeps by its own option, and a lab not begun is said before it is solved", async () => {
        const root = await rootAt(2);
        const layout = shopLayout(root);
        try {
            const main = await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]);
            const run = await served(root, ["--lab", "both", "--tenants-through", "1"]);
            try {
                assert.match(
                    run.out(),
                    /the shop lab is at step 2 \(no --through given: --through 8 has the solver do the rest\): served as it stands/,
                );
                assert.ok(!fs.existsSync(layout.resultFile("incident")), "step 3 is the learner's");
                assert.strictEqual(await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]), main);
            } finally {
                await stop(run);
            }
            const again = await served(root, ["--lab", "both"]);
            try {
                assert.doesNotMatch(again.out(), /the tenants lab is not begun/, "begun now, at step 1");
            } finally {
                await stop(again);
            }
        } finally {
            await removeRoot(root);
        }
        const fresh = await rootAt(2);
        try {
            const run = await served(fresh, ["--lab", "both"]);
            try {
                assert.match(
                    run.out(),
                    /^simulate: the tenants lab is not begun: the solver builds it through step 3 \(--tenants-through's default\) before serving; --tenants-through 1 builds its step 1 alone and leaves steps 2-3 to you$/m,
                );
            } finally {
                await stop(run);
            }
        } finally {
            await removeRoot(fresh);
        }
    });

    it("a learner's step written but wrong: served as it stands says so, and the solver does not build on it", async () => {
        const root = await rootAt(6);
        const layout = shopLayout(root);
        try {
            const promote = JSON.parse(fs.readFileSync(layout.resultFile("promote"), "utf8"));
            fs.writeFileSync(layout.resultFile("promote"), JSON.stringify({ ...promote, to: promote.from }));
            const refused = await runMain("simulate", ["--root", root, "--through", "8"]);
            assert.strictEqual(refused.code, 1, refused.out);
            assert.match(
                refused.stderr,
                /^gitops-lab simulate: the shop lab's files are at step 6, but step 6 does not grade done \(promote\.to is incident\.commit\): gitops-lab verify --root \S+ --step 6 says why; the solver does not build on it: mend it, or start over/,
            );
            assert.ok(!fs.existsSync(layout.resultFile("revert")), "nothing of step 7 solved");
            const run = await served(root, ["--through", "2"]);
            try {
                assert.match(
                    run.out(),
                    /the shop lab's files are at step 6, but step 6 does not grade done \(promote\.to is incident\.commit\)/,
                );
                // the block's next step is the one not done, not the one after the files' step
                assert.match(run.out(), /# the shop lab's files are at step 6, but step 6 is not done: first, step 6 promote: /);
                assert.doesNotMatch(run.out(), /next, step 7/);
            } finally {
                await stop(run);
            }
        } finally {
            await removeRoot(root);
        }
    });

    it("asked for a step, says first which of the learner's files it rewrites", async () => {
        const root = await rootAt(3);
        const layout = shopLayout(root);
        try {
            fs.appendFileSync(layout.appsetFile, "# prod goes to release/prod (editing)\n");
            const r = await runMain("simulate", ["--root", root, "--through", "4"]);
            assert.strictEqual(r.code, 0, r.out);
            const said = r.stdout.indexOf(
                `--through 4 asks the solver for step 4, which rewrites ${layout.appsetFile} from the live ApplicationSet (your changes to it are replaced)`,
            );
            assert.ok(said >= 0 && said < r.stdout.indexOf("[step 4 pin] start"), r.stdout);
        } finally {
            await removeRoot(root);
        }
    });

    it("asked for a step, says nothing of a file as the solver wrote it", async () => {
        const root = await rootAt(3);
        try {
            const r = await runMain("simulate", ["--root", root, "--through", "4"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(r.stdout, /\[step 4 pin\] start/);
            assert.doesNotMatch(r.stdout, /your changes to it are replaced/);
        } finally {
            await removeRoot(root);
        }
    });
});

describe("simulate --realistic's solver", () => {
    // Argo CD's defaults on the real clock: a hook's five retries take minutes, past the fast profile's deadlines
    it("waits with the product's own deadlines, not the fast profile's", () => {
        assert.strictEqual(solveOptions({ realistic: true }, () => {}).productDefaults, true);
        assert.strictEqual(solveOptions({}, () => {}).productDefaults, false);
    });
});

describe("simulate on a lab done by hand, at the step asked for", function () {
    this.timeout(300_000);
    it("solves nothing and touches nothing: the learner's own repository is not refused", async () => {
        const root = await rootAt(8);
        try {
            const { bareRepo } = shopLayout(root);
            // made by the learner (step 1 by hand on a served lab): no mark of the lab's in its config
            await git(["--git-dir", bareRepo, "config", "--unset", "gitops-lab.owner"]);
            const main = await git(["--git-dir", bareRepo, "rev-parse", "main"]);
            const r = await runMain("simulate", ["--root", root, "--through", "8"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(r.stdout, /the shop lab is at step 8, the step --through 8 asks for: nothing to solve, nothing of it solved/);
            assert.match(r.stdout, /grade it: \S+ verify --root \S+ --offline$/m);
            assert.strictEqual(await git(["--git-dir", bareRepo, "rev-parse", "main"]), main, "no commit");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});
