/**
 * The hazards of a real, fresh host, each modelled here so it cannot come back unseen: no kubectl
 * before k3s, a step 1 killed half-way, root's umask on later pushes, the k3s install marker and
 * version, Pods that never start, and the preflight.
 */
import * as assert from "assert";
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as http from "http";
import { AddressInfo } from "net";
import * as path from "path";
import { INSTALL_SCRIPT, UNINSTALL_SCRIPT } from "../components/k3s";
import { GITD_ENV } from "../lab/platform/gitDaemon";
import { HostProbe, preflightChecks, realHost } from "../lab/platform/preflight";
import { waitWorkloadsReady } from "../lab/platform/readiness";
import { KubeCluster } from "../lab/ports/cluster";
import { verify } from "../lab/shop/checks";
import { shopLayout, ShopLayout } from "../lab/shop/layout";
import { createShopRepo, INITIAL_MESSAGE, OWNER_KEY, OWNER_VALUE, shopRepoPaths } from "../lab/shop/repo";
import { readRepoFiles } from "../lab/shop/repoFiles";
import { FakeKube } from "../sim/fakeApi";
import { startGitDaemon } from "../sim/gitDaemon";
import { runCli } from "./helpers/cli";
import { expect, holds } from "./helpers/expect";
import { git } from "./helpers/git";

const freshLayout = () => shopLayout(fs.mkdtempSync(path.join(os.tmpdir(), "fresh-host-")));
const count = (l: ShopLayout) => git(["--git-dir", l.bareRepo, "rev-list", "--count", "main"]);

describe("fresh host: step 1", function () {
    this.timeout(60_000);

    it("given a PATH without kubectl (before k3s is installed), then step 1 fails with a line naming kubectl and where it comes from", async () => {
        const l = freshLayout();
        // a fresh host's PATH: git, but no kubectl yet
        const bin = fs.mkdtempSync(path.join(os.tmpdir(), "path-"));
        fs.symlinkSync(spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim(), path.join(bin, "git"));
        const saved = process.env.PATH;
        process.env.PATH = bin;
        try {
            await assert.rejects(
                createShopRepo(l, readRepoFiles()),
                /rendered with "kubectl kustomize", but kubectl is not on PATH .*k3s's installer puts kubectl into \/usr\/local\/bin/,
            );
        } finally {
            process.env.PATH = saved;
        }
        // and a later run, with kubectl there, finishes the job
        const { initialCommit } = await createShopRepo(l, readRepoFiles());
        assert.strictEqual(await git(["--git-dir", l.bareRepo, "rev-parse", "main"]), initialCommit);
    });

    // given a run killed while creating the bare repository (a half-built .partial copy), then the next run builds it
    // and does not call it foreign
    it("a half-built bare repository is built again", async () => {
        const l = freshLayout();
        fs.mkdirSync(l.bareDir, { recursive: true });
        await git(["init", "--quiet", "--bare", path.join(l.bareDir, ".shop-envs.git.partial")]); // no owner mark yet
        const { initialCommit } = await createShopRepo(l, readRepoFiles());
        assert.strictEqual(await git(["--git-dir", l.bareRepo, "config", OWNER_KEY]), OWNER_VALUE);
        assert.strictEqual(await git(["--git-dir", l.bareRepo, "rev-parse", "main"]), initialCommit);
        assert.ok(!fs.existsSync(path.join(l.bareDir, ".shop-envs.git.partial")));
    });

    it("given a run killed after its commit and before the push, then the next run pushes that commit (one commit, not two)", async () => {
        const l = freshLayout();
        await createShopRepo(l, readRepoFiles());
        // rebuild the state of a run that committed and died: an unpushed first commit, nothing recorded
        fs.rmSync(l.bareRepo, { recursive: true });
        await git(["init", "--quiet", "--bare", "--initial-branch=main", l.bareRepo]);
        await git(["--git-dir", l.bareRepo, "config", OWNER_KEY, OWNER_VALUE]);
        const made = await git(["rev-parse", "HEAD"], l.clone);
        const { initialCommit } = await createShopRepo(l, readRepoFiles());
        assert.strictEqual(initialCommit, made);
        assert.strictEqual(await count(l), "1");
    });

    // given a run killed after the push and before recording the first commit, then the next run recognises it instead
    // of failing on git commit
    it("a pushed, unrecorded first commit is recognised", async () => {
        const l = freshLayout();
        const first = await createShopRepo(l, readRepoFiles());
        await git(["--git-dir", l.bareRepo, "config", "--unset", "gitops-lab.initialcommit"]);
        const again = await createShopRepo(l, readRepoFiles());
        assert.strictEqual(again.initialCommit, first.initialCommit);
        assert.strictEqual(await count(l), "1");
        assert.strictEqual(await git(["--git-dir", l.bareRepo, "config", "gitops-lab.initialcommit"]), first.initialCommit);
    });

    it("given a main branch that is not the lab's first commit at the lab's own repository, then it refuses and changes nothing", async () => {
        const l = freshLayout();
        await createShopRepo(l, readRepoFiles());
        await git(["--git-dir", l.bareRepo, "config", "--unset", "gitops-lab.initialcommit"]);
        fs.writeFileSync(path.join(l.clone, "x.txt"), "x\n");
        await git(["add", "x.txt"], l.clone);
        await git(["commit", "--quiet", "-m", "someone's second commit"], l.clone);
        await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], l.clone);
        const main = await git(["--git-dir", l.bareRepo, "rev-parse", "main"]);
        await assert.rejects(createShopRepo(l, readRepoFiles()), /has a main branch that is not the lab's first commit/);
        assert.strictEqual(await git(["--git-dir", l.bareRepo, "rev-parse", "main"]), main);
        assert.strictEqual(await git(["log", "-1", "--format=%s", `${main}~1`], l.clone), INITIAL_MESSAGE);
    });
});

describe("fresh host: root's umask and the git daemon (nobody)", function () {
    this.timeout(60_000);
    let saved: number;
    beforeEach(() => (saved = process.umask(0o077))); // a hardened host's root; children inherit it
    afterEach(() => process.umask(saved));

    /** A new commit on main, pushed from the clone as root. */
    async function pushAsRoot(l: ShopLayout, name: string): Promise<string> {
        fs.writeFileSync(path.join(l.clone, name), `${name}\n`);
        await git(["add", name], l.clone);
        await git(["commit", "--quiet", "-m", name], l.clone);
        await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], l.clone);
        return git(["rev-parse", "HEAD"], l.clone);
    }

    // given umask 077, when root pushes after step 1, then the daemon as nobody still serves the new commit, and verify
    // finds everything readable
    it("umask 077: the daemon still serves new commits", async function () {
        if (process.getuid?.() !== 0) this.skip(); // running the daemon as nobody needs root (CI and lab hosts are root)
        const l = freshLayout();
        fs.chmodSync(l.root, 0o755);
        await createShopRepo(l, readRepoFiles());
        const sha = await pushAsRoot(l, "later.txt");
        const daemon = await startGitDaemon(l.bareDir, { asNobody: true, env: GITD_ENV });
        try {
            const into = fs.mkdtempSync(path.join(os.tmpdir(), "fetched-"));
            await git(["clone", "--quiet", daemon.url("shop-envs.git"), into]);
            assert.strictEqual(await git(["rev-parse", "HEAD"], into), sha);
        } finally {
            await daemon.stop();
        }
        const checks = await verify({ layout: l, through: 1 });
        assert.ok(checks.find((c) => c.check.startsWith("every file of the bare repository is readable by others"))?.ok);
    });

    it("given a bare repository without core.sharedRepository, when root pushes under umask 077, then verify fails naming the unreadable paths", async () => {
        const l = freshLayout();
        fs.chmodSync(l.root, 0o755);
        await createShopRepo(l, readRepoFiles());
        await git(["--git-dir", l.bareRepo, "config", "--unset", "core.sharedRepository"]);
        await pushAsRoot(l, "unreadable.txt");
        const check = (await verify({ layout: l, through: 1 })).find((c) =>
            c.check.startsWith("every file of the bare repository is readable by others"),
        )!;
        assert.strictEqual(check.ok, false);
        assert.match(check.found!, /^not readable by others: .*objects\//);
        assert.match(check.hint!, /open what is closed \(chmod -R o\+rX \S+shop-envs\.git\), and keep later pushes readable/);
        // the hint's two commands make it readable, and a hook only the pusher can read is no reason to fail it
        execFileSync("chmod", ["-R", "o+rX", l.bareRepo]);
        fs.writeFileSync(path.join(l.bareRepo, "hooks", "post-receive"), "#!/bin/sh\n", { mode: 0o700 });
        const after = (await verify({ layout: l, through: 1 })).find((c) =>
            c.check.startsWith("every file of the bare repository is readable"),
        )!;
        assert.ok(after.ok, JSON.stringify(after));
    });
});

describe("fresh host: the k3s install script", function () {
    this.timeout(30_000);

    /** A fake host: a bin dir, a marker path, and an installer served from a file:// URL. */
    function fakeHost(installer: string) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "k3s-script-"));
        const bin = path.join(dir, "bin");
        fs.mkdirSync(bin);
        fs.writeFileSync(path.join(dir, "install.sh"), installer);
        const env = {
            ...process.env,
            K3S_VERSION: "v1.33.5+k3s1",
            GITOPS_LAB_K3S_BIN: bin,
            GITOPS_LAB_MARKER: path.join(dir, "var", "marker"),
            GITOPS_LAB_K3S_INSTALLER: `file://${dir}/install.sh`,
            HOST: dir,
        };
        const runScript = (script: string, extra: Record<string, string> = {}) =>
            spawnSync("/bin/bash", ["-c", script], { env: { ...env, ...extra }, encoding: "utf8" });
        return { dir, bin, marker: env.GITOPS_LAB_MARKER, runScript };
    }
    // installs a "k3s" and its uninstaller into $GITOPS_LAB_K3S_BIN, noting whether the marker was already written
    const GOOD_INSTALLER = `[ -f "$GITOPS_LAB_MARKER" ] && echo yes > "$HOST/marker-before-install"
printf '#!/bin/sh\\n' > "$GITOPS_LAB_K3S_BIN/k3s"; chmod +x "$GITOPS_LAB_K3S_BIN/k3s"
printf '#!/bin/sh\\nrm -f "%s/k3s" "%s/k3s-uninstall.sh"; echo uninstalled > "%s/uninstalled"\\n' "$GITOPS_LAB_K3S_BIN" "$GITOPS_LAB_K3S_BIN" "$HOST" > "$GITOPS_LAB_K3S_BIN/k3s-uninstall.sh"; chmod +x "$GITOPS_LAB_K3S_BIN/k3s-uninstall.sh"
`;

    it("given no k3s, then it writes the marker (with the version) before the installer runs, and says installed", () => {
        const h = fakeHost(GOOD_INSTALLER);
        const r = h.runScript(INSTALL_SCRIPT);
        assert.strictEqual(r.status, 0, r.stderr);
        assert.strictEqual(r.stdout.trim().split("\n").pop(), "installed");
        assert.strictEqual(fs.readFileSync(h.marker, "utf8").trim(), "v1.33.5+k3s1");
        assert.ok(
            fs.existsSync(path.join(h.dir, "marker-before-install")),
            "a run killed during the install still owns what it half-installed",
        );
    });

    it("passes fail-cgroupv1=false to a 1.35+ kubelet on a cgroup v1 host only", () => {
        const h = fakeHost(`${GOOD_INSTALLER}\necho "exec=\${INSTALL_K3S_EXEC:-}" > "$HOST/exec"\n`);
        const v2 = fs.mkdtempSync(path.join(os.tmpdir(), "cgroup2-"));
        fs.writeFileSync(path.join(v2, "cgroup.controllers"), "cpu memory\n");
        const v1 = fs.mkdtempSync(path.join(os.tmpdir(), "cgroup1-"));
        const exec = (version: string, cgroupRoot: string) => {
            fs.rmSync(h.marker, { force: true });
            fs.rmSync(path.join(h.bin, "k3s"), { force: true });
            const r = h.runScript(INSTALL_SCRIPT, { K3S_VERSION: version, GITOPS_LAB_CGROUP_ROOT: cgroupRoot });
            assert.strictEqual(r.status, 0, r.stderr);
            return { exec: fs.readFileSync(path.join(h.dir, "exec"), "utf8").trim(), said: r.stderr };
        };
        const onV1 = exec("v1.36.4+k3s1", v1);
        assert.strictEqual(onV1.exec, "exec=server --kubelet-arg=fail-cgroupv1=false");
        assert.match(onV1.said, /this host has cgroup v1: k3s v1\.36\.4\+k3s1's kubelet runs with fail-cgroupv1=false/);
        assert.strictEqual(exec("v1.36.4+k3s1", v2).exec, "exec=");
        assert.strictEqual(exec("v1.33.5+k3s1", v1).exec, "exec=", "a 1.33 kubelet does not need it");
    });

    it("given an installer that fails half-way on a host that had no k3s, then it undoes the half install and removes the marker", () => {
        const h = fakeHost(`${GOOD_INSTALLER}\nexit 3\n`);
        const r = h.runScript(INSTALL_SCRIPT);
        assert.notStrictEqual(r.status, 0);
        assert.match(r.stderr, /the k3s installer failed .*undoing the half install/);
        assert.ok(!fs.existsSync(h.marker), "no marker: the next run starts clean");
        assert.ok(fs.existsSync(path.join(h.dir, "uninstalled")), "k3s-uninstall.sh ran");
    });

    it("given k3s installed by this stack, when k3sVersion changes, then it refuses and says how to change the version", () => {
        const h = fakeHost(GOOD_INSTALLER);
        assert.strictEqual(h.runScript(INSTALL_SCRIPT).status, 0);
        const r = h.runScript(INSTALL_SCRIPT, { K3S_VERSION: "v1.34.1+k3s1" });
        assert.strictEqual(r.status, 1);
        assert.match(
            r.stderr,
            /k3s v1\.33\.5\+k3s1 was installed by this stack, but k3sVersion is now v1\.34\.1\+k3s1.*pulumi config set k3sVersion v1\.33\.5\+k3s1.*npm run lab:destroy/,
        );
        assert.strictEqual(h.runScript(INSTALL_SCRIPT).stdout.trim(), "installed", "the same version is fine");
    });

    it("given a k3s the stack did not install, then it is adopted, and the uninstall leaves it in place", () => {
        const h = fakeHost(GOOD_INSTALLER);
        fs.writeFileSync(path.join(h.bin, "k3s"), "#!/bin/sh\n", { mode: 0o755 });
        fs.writeFileSync(path.join(h.bin, "k3s-uninstall.sh"), `#!/bin/sh\necho uninstalled > "${h.dir}/uninstalled"\n`, { mode: 0o755 });
        assert.strictEqual(h.runScript(INSTALL_SCRIPT).stdout.trim(), "adopted");
        const u = h.runScript(UNINSTALL_SCRIPT);
        assert.match(u.stdout, /not installed by this stack: left in place/);
        assert.ok(!fs.existsSync(path.join(h.dir, "uninstalled")));
    });

    // given a k3s install killed before the installer wrote its uninstaller, then the next run installs it again, and a
    // destroy instead removes what it left
    it("a half-installed k3s is installed again or removed", () => {
        const h = fakeHost(GOOD_INSTALLER);
        fs.mkdirSync(path.dirname(h.marker), { recursive: true });
        fs.writeFileSync(h.marker, "v1.33.5+k3s1\n");
        fs.writeFileSync(path.join(h.bin, "k3s"), "#!/bin/sh\n", { mode: 0o755 }); // the binary, no uninstaller yet
        fs.symlinkSync(path.join(h.bin, "k3s"), path.join(h.bin, "kubectl"));
        const u = h.runScript(UNINSTALL_SCRIPT);
        assert.match(u.stdout, /k3s-uninstall\.sh is missing .*removing what the installer left/);
        assert.ok(!fs.existsSync(path.join(h.bin, "k3s")) && !fs.existsSync(path.join(h.bin, "kubectl")) && !fs.existsSync(h.marker));
        fs.mkdirSync(path.dirname(h.marker), { recursive: true });
        fs.writeFileSync(h.marker, "v1.33.5+k3s1\n");
        fs.writeFileSync(path.join(h.bin, "k3s"), "#!/bin/sh\n", { mode: 0o755 });
        const r = h.runScript(INSTALL_SCRIPT);
        assert.strictEqual(r.status, 0, r.stderr);
        assert.match(r.stderr, /half-installed by an interrupted run: installing it again/);
        assert.strictEqual(r.stdout.trim(), "installed");
        assert.ok(fs.existsSync(path.join(h.bin, "k3s-uninstall.sh")), "the installer ran to the end");
    });

    it("given k3s installed by this stack, then the uninstall runs k3s-uninstall.sh and removes the marker", () => {
        const h = fakeHost(GOOD_INSTALLER);
        assert.strictEqual(h.runScript(INSTALL_SCRIPT).status, 0);
        assert.strictEqual(h.runScript(UNINSTALL_SCRIPT).status, 0);
        assert.ok(fs.existsSync(path.join(h.dir, "uninstalled")));
        assert.ok(!fs.existsSync(h.marker));
    });
});

describe("fresh host: waiting for Argo CD and the git daemon", function () {
    this.timeout(30_000);
    let kube: FakeKube;
    let cluster: KubeCluster;
    beforeEach(async () => {
        kube = new FakeKube();
        cluster = new KubeCluster(kube.kubeconfig(await kube.start()));
    });
    afterEach(() => kube.stop());

    const deployment = (name: string, ready: number) => ({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name, namespace: "argocd" },
        spec: { replicas: 1 },
        status: { observedGeneration: 1, updatedReplicas: 1, readyReplicas: ready },
    });

    it("given a Pod stuck in ImagePullBackOff, then the wait ends at once after the grace, naming the Pod, the image and the reason", async () => {
        kube.put(deployment("argocd-repo-server", 0), "setup");
        kube.put(
            {
                apiVersion: "v1",
                kind: "Pod",
                metadata: { name: "argocd-repo-server-7d9f", namespace: "argocd" },
                spec: { containers: [{ name: "repo-server", image: "quay.io/argoproj/argocd:v3.5.1" }] },
                status: {
                    containerStatuses: [
                        {
                            name: "repo-server",
                            image: "quay.io/argoproj/argocd:v3.5.1",
                            state: { waiting: { reason: "ImagePullBackOff", message: "toomanyrequests: rate limit" } },
                        },
                    ],
                },
            },
            "setup",
        );
        await assert.rejects(
            waitWorkloadsReady(cluster, "argocd", [{ kind: "Deployment", name: "argocd-repo-server" }], {
                timeoutMs: 60_000,
                intervalMs: 20,
                hopelessAfterMs: 0,
            }),
            /^Error: Pod argocd\/argocd-repo-server-7d9f, container repo-server, image quay\.io\/argoproj\/argocd:v3\.5\.1: ImagePullBackOff \(toomanyrequests: rate limit\) for \d+ s; .*rate limit/,
        );
    });

    // given a Pod whose image the registry does not have, then the wait ends at its first look, naming the Pod, the
    // image and the reason, with no grace
    it("a missing image ends the wait at once", async () => {
        kube.put(deployment("gitd", 0), "setup");
        const message =
            'Back-off pulling image "docker.io/library/buildpack-deps:bookworm-scn": ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image: failed to resolve image: docker.io/library/buildpack-deps:bookworm-scn: not found';
        kube.put(
            {
                apiVersion: "v1",
                kind: "Pod",
                metadata: { name: "gitd-5c8d", namespace: "argocd" },
                spec: { containers: [{ name: "git-daemon", image: "docker.io/library/buildpack-deps:bookworm-scn" }] },
                status: {
                    containerStatuses: [
                        {
                            name: "git-daemon",
                            image: "docker.io/library/buildpack-deps:bookworm-scn",
                            state: { waiting: { reason: "ImagePullBackOff", message } },
                        },
                    ],
                },
            },
            "setup",
        );
        const lines: string[] = [];
        await assert.rejects(
            waitWorkloadsReady(cluster, "argocd", [{ kind: "Deployment", name: "gitd" }], {
                timeoutMs: 60_000,
                intervalMs: 20,
                hopelessAfterMs: 3_600_000,
                log: (l) => lines.push(l),
            }),
            /^Error: Pod argocd\/gitd-5c8d, container git-daemon, image docker\.io\/library\/buildpack-deps:bookworm-scn: ImagePullBackOff \(.*not found\): the registry has no such image/,
        );
        assert.deepStrictEqual(
            lines.filter((l) => l.startsWith("ready:")),
            [],
            "no progress line: the first look ended it",
        );
    });

    it("says a Pod's waiting reason only once it lasts", async () => {
        const pod = {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: "argocd-server-68444", namespace: "argocd" },
            spec: { containers: [{ name: "argocd-server", image: "quay.io/argoproj/argocd:v3.6.2" }] },
            status: {
                containerStatuses: [
                    {
                        name: "argocd-server",
                        image: "quay.io/argoproj/argocd:v3.6.2",
                        state: { waiting: { reason: "CreateContainerConfigError", message: 'secret "argocd-redis" not found' } },
                    },
                ],
            },
        };
        const run = async (sayAfterMs: number) => {
            kube.put(deployment("argocd-server", 0), "setup");
            kube.put(pod, "setup");
            const lines: string[] = [];
            const waiting = waitWorkloadsReady(cluster, "argocd", [{ kind: "Deployment", name: "argocd-server" }], {
                timeoutMs: 20_000,
                intervalMs: 20,
                sayAfterMs,
                log: (l) => lines.push(l),
            });
            await expect(holds("a progress line", () => lines.some((l) => l.startsWith("ready:"))));
            kube.put(deployment("argocd-server", 1), "setup"); // the Secret came: the Pod started
            await waiting;
            return lines.filter((l) => l.startsWith("ready:"));
        };
        const transient = await run(3_600_000);
        assert.ok(transient.length && !transient.some((l) => /CreateContainerConfigError/.test(l)), transient.join("\n"));
        const lasting = await run(0);
        assert.ok(
            lasting.some((l) => /argocd-server-68444.*CreateContainerConfigError \(secret "argocd-redis" not found\)/.test(l)),
            lasting.join("\n"),
        );
    });

    it("given workloads that become ready, then it prints what is ready and what it waits for, and ends when all are", async () => {
        kube.put(deployment("a", 1), "setup");
        kube.put(deployment("b", 0), "setup");
        const lines: string[] = [];
        const waiting = waitWorkloadsReady(
            cluster,
            "argocd",
            [
                { kind: "Deployment", name: "a" },
                { kind: "Deployment", name: "b" },
            ],
            { timeoutMs: 20_000, intervalMs: 20, log: (l) => lines.push(l) },
        );
        await new Promise<void>((resolve) => {
            const t = setInterval(() => {
                if (lines.some((l) => l.startsWith("ready: a; waiting for Deployment/b: 0/1 replicas ready"))) {
                    clearInterval(t);
                    kube.put(deployment("b", 1), "setup");
                    resolve();
                }
            }, 10);
        });
        await waiting;
        assert.match(lines[lines.length - 1], /^ready after \d+\.\d s$/);
    });
});

/** A kubeconfig naming one cluster at `server`, with a token. */
const kubeconfigFor = (server: string) =>
    [
        "apiVersion: v1",
        "kind: Config",
        // (the client takes http:// only with insecure-skip-tls-verify, as the served lab's kubeconfig has it)
        `clusters: [{name: c, cluster: {server: "${server}"${server.startsWith("http:") ? ", insecure-skip-tls-verify: true" : ""}}}]`,
        "users: [{name: u, user: {token: t}}]",
        "contexts: [{name: x, context: {cluster: c, user: u}}]",
        "current-context: x",
        "",
    ].join("\n");

describe("fresh host: the preflight", () => {
    const GOOD: HostProbe = {
        uid: () => 0,
        nodeVersion: () => "v20.20.2",
        which: async (p) => `/usr/bin/${p}`,
        freeBytes: () => 50 * 2 ** 30,
        totalMemoryBytes: () => 8 * 2 ** 30,
        portInUse: async () => false,
        umask: () => 0o022,
        exists: (p) => p === "/run/systemd/system",
        gitConfig: async () => null,
    };
    const layout = shopLayout("/");
    const repos = [{ path: layout.bareRepo, gitDir: layout.bareRepo, key: OWNER_KEY, value: OWNER_VALUE }];
    const verdicts = async (probe: Partial<HostProbe>, installK3s = true, kubeconfigPath?: string) =>
        Object.fromEntries(
            (await preflightChecks({ ...GOOD, ...probe }, { installK3s, kubeconfigPath, repos })).map((r) => [
                r.check,
                `${r.verdict} ${r.detail}`,
            ]),
        );

    it("given a ready host, then every check passes, one line each", async () => {
        const v = await verdicts({});
        assert.ok(
            Object.values(v).every((x) => x.startsWith("PASS")),
            JSON.stringify(v, null, 1),
        );
        assert.ok(Object.keys(v).length >= 10);
    });

    it("given Debian 12's Node 18, no curl, no systemd, port 6443 taken, little disk and memory, then each of those fails with what to do", async () => {
        const v = await verdicts({
            nodeVersion: () => "v18.19.0",
            which: async (p) => (p === "curl" ? null : `/usr/bin/${p}`),
            exists: () => false,
            portInUse: async () => true,
            freeBytes: () => 2 ** 30,
            totalMemoryBytes: () => 2 ** 30,
        });
        assert.match(v["Node.js 20.19+ (or 22+)"], /^FAIL v18\.19\.0: .*Node 20\.19 or 22/);
        assert.match(v["curl (the k3s installer is fetched with it)"], /^FAIL .*apt-get install curl/);
        assert.match(
            v["systemd (k3s runs as a systemd service)"],
            /^FAIL.*adopt a cluster with kubeconfigPath, or try the labs here without a cluster: npx gitops-lab simulate --root \/tmp\/gitops-lab/,
        );
        assert.match(v["port 6443 free (the Kubernetes API of k3s)"], /^FAIL something listens on 6443/);
        assert.match(v["free disk for k3s and images (/var/lib/rancher)"], /^FAIL 1\.0 GiB free; needs 4\.0 GiB/);
        assert.match(v["memory for k3s and Argo CD"], /^FAIL 1\.0 GiB; needs 2\.0 GiB/);
    });

    it("given Node 20.18 (too old for require() of ES modules), then it fails; 20.19 and 22 pass", async () => {
        assert.match((await verdicts({ nodeVersion: () => "v20.18.1" }))["Node.js 20.19+ (or 22+)"], /^FAIL/);
        assert.match((await verdicts({ nodeVersion: () => "v22.1.0" }))["Node.js 20.19+ (or 22+)"], /^PASS/);
    });

    it("given NODE_OPTIONS with --no-experimental-require-module, then the Node check fails, naming the flag", async () => {
        assert.match(
            (await verdicts({ nodeVersion: () => "v20.19.5", nodeOptions: () => "--no-experimental-require-module" }))[
                "Node.js 20.19+ (or 22+)"
            ],
            /^FAIL v20\.19\.5, but run with --no-experimental-require-module \(NODE_OPTIONS holds it\?\), which keeps it from loading @kubernetes\/client-node, an ES module: unset NODE_OPTIONS/,
        );
    });

    it("given NODE_OPTIONS with --no-experimental-require-module, then simulate says so in one line (not to edit the kit)", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "require-esm-"));
        fs.chmodSync(dir, 0o755);
        try {
            const r = runCli("simulate", ["--root", path.join(dir, "lab"), "--through", "1"], {
                env: { ...process.env, NODE_OPTIONS: "--no-experimental-require-module" },
            });
            assert.strictEqual(r.code, 1, r.out);
            assert.match(
                r.stderr,
                /^gitops-lab simulate: Node runs with --no-experimental-require-module \(NODE_OPTIONS holds it\?\), which keeps it from loading @kubernetes\/client-node, an ES module the kit requires: unset NODE_OPTIONS \(or take that flag out\) and run again\n$/,
            );
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("given not root, then it fails and says to use sudo", async () => {
        assert.match((await verdicts({ uid: () => 1000 }))["running as root"], /^FAIL uid 1000: .*sudo/);
    });

    it("given a repository the lab did not create at its path, then it fails; the lab's own passes", async () => {
        const exists = (p: string) => p === layout.bareRepo || p === "/run/systemd/system";
        assert.match(
            (await verdicts({ exists, gitConfig: async () => null }))[`nothing foreign at ${layout.bareRepo}`],
            /^FAIL a repository .* the lab did not create/,
        );
        assert.match(
            (await verdicts({ exists, gitConfig: async () => OWNER_VALUE }))[`nothing foreign at ${layout.bareRepo}`],
            /^PASS the lab's own repository/,
        );
    });

    it("given git configuration half set in the environment, then the host's probe still reads a repository's mark", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "probe-git-env-"));
        const saved = { ...process.env };
        try {
            const bare = path.join(dir, "r.git");
            execFileSync("git", ["init", "--quiet", "--bare", bare]);
            execFileSync("git", ["--git-dir", bare, "config", "lab.mark", "ours"]);
            Object.assign(process.env, { GIT_CONFIG_COUNT: "2", GIT_CONFIG_KEY_0: "core.abbrev", GIT_CONFIG_VALUE_0: "12" });
            assert.strictEqual(await realHost.gitConfig(bare, "lab.mark"), "ours");
        } finally {
            for (const k of ["GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"]) if (!(k in saved)) delete process.env[k];
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("given the lab's clone without its repository (kept by a reset), then it fails as up would", async () => {
        const exists = (p: string) => p === layout.clone || p === "/run/systemd/system";
        const gitConfig = async (gitDir: string, key: string) => (key === "remote.origin.url" ? layout.bareRepo : null);
        const withClone = async (probe: Partial<HostProbe>) =>
            Object.fromEntries(
                (await preflightChecks({ ...GOOD, ...probe }, { installK3s: true, repos: shopRepoPaths(layout) })).map((r) => [
                    r.check,
                    `${r.verdict} ${r.detail}`,
                ]),
            );
        // an interrupted run's first commit alone (made, not pushed): up pushes it, so it passes
        assert.match((await withClone({ exists, gitConfig, commits: async () => 1 }))[`nothing foreign at ${layout.clone}`], /^PASS/);
        assert.match(
            (await withClone({ exists, gitConfig, commits: async () => 3 }))[`nothing foreign at ${layout.clone}`],
            /^FAIL a clone of the lab's repository \S+, which is gone \(kept by a reset or destroy for its work\?\): up builds no lab on it; move it away/,
        );
        const both = (p: string) => p === layout.clone || p === layout.bareRepo || p === "/run/systemd/system";
        assert.match(
            (await withClone({ exists: both, gitConfig }))[`nothing foreign at ${layout.clone}`],
            /^PASS the lab's own repository/,
        );
    });

    it("given an adopted cluster (kubeconfigPath), then kubectl must be on PATH and the kubeconfig readable; k3s's needs are not checked", async () => {
        const v = await verdicts({ which: async (p) => (p === "kubectl" ? null : `/usr/bin/${p}`) }, false, "/nope/kubeconfig");
        assert.match(v["kubectl on PATH (step 1 and verify run kubectl kustomize)"], /^FAIL not on PATH/);
        assert.match(v["kubeconfigPath readable"], /^FAIL \/nope\/kubeconfig does not exist/);
        assert.ok(!("port 6443 free (the Kubernetes API of k3s)" in v));
    });

    it("given an adopted cluster and a registry that do not answer, then each fails naming its address", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-answers-"));
        // a port nothing listens on: one the system gave, closed again
        const closed = http.createServer();
        await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
        const port = (closed.address() as AddressInfo).port;
        await new Promise((r) => closed.close(r));
        try {
            const kc = path.join(dir, "kubeconfig");
            fs.writeFileSync(kc, kubeconfigFor(`https://127.0.0.1:${port}`));
            const v = await verdicts({ clusterAnswers: realHost.clusterAnswers, exists: fs.existsSync }, false, kc);
            assert.strictEqual(
                v["the adopted cluster answers"],
                `FAIL nothing answers at https://127.0.0.1:${port} (connection refused): is the cluster running, and is this its kubeconfig? (kubeconfigPath ${kc})`,
            );
            const r = await preflightChecks(
                { ...GOOD, registryAnswers: realHost.registryAnswers },
                { installK3s: false, repos, imageRegistry: `http://127.0.0.1:${port}` },
            );
            assert.deepStrictEqual(
                r.filter((x) => x.check.startsWith("imageRegistry")).map((x) => `${x.verdict} ${x.detail}`),
                [
                    `FAIL http://127.0.0.1:${port} did not answer GET /v2/ (ECONNREFUSED): is the registry running, and is imageRegistry its address?`,
                ],
            );
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("given a cluster and a registry that answer, then both pass; a registry asking for a login, a 404, a user refused CRDs fail", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-answers-"));
        let status = 200;
        // a cluster without Argo CD (the CRD's 404 is an answer) and a registry's /v2/
        const server = http.createServer((req, res) => {
            if (req.url === "/v2/") res.writeHead(status).end("{}");
            // a namespace's user (no CRDs for it): the cluster answers 403
            else if (status === 403)
                res.writeHead(403, { "content-type": "application/json" }).end(
                    JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "Forbidden", code: 403 }),
                );
            else
                res.writeHead(404, { "content-type": "application/json" }).end(
                    JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404 }),
                );
        });
        await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
        const at = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        try {
            const kc = path.join(dir, "kubeconfig");
            fs.writeFileSync(kc, kubeconfigFor(at));
            const probe = {
                ...GOOD,
                exists: fs.existsSync,
                clusterAnswers: realHost.clusterAnswers,
                registryAnswers: realHost.registryAnswers,
            };
            const lines = async () =>
                (await preflightChecks(probe, { installK3s: false, kubeconfigPath: kc, repos, imageRegistry: at }))
                    .filter((x) => /answers/.test(x.check))
                    .map((x) => `${x.verdict} ${x.check}`);
            assert.deepStrictEqual(await lines(), [
                "PASS the adopted cluster answers",
                "PASS imageRegistry answers (the tenants lab pushes its images there)",
            ]);
            const registry = async (s: number) => {
                status = s;
                const r = await preflightChecks(probe, { installK3s: false, repos, imageRegistry: at });
                return r.find((x) => x.check.startsWith("imageRegistry"))?.detail ?? "";
            };
            assert.match(await registry(401), /\/v2\/ answered HTTP 401 \(it asks for a login; the lab pushes without one\)/);
            assert.match(await registry(404), /\/v2\/ answered HTTP 404: no registry API there; is imageRegistry a registry's address/);
            status = 403;
            const r = await preflightChecks(probe, { installK3s: false, kubeconfigPath: kc, repos });
            assert.match(
                r.find((x) => x.check === "the adopted cluster answers")?.detail ?? "",
                /^the cluster answered, but the kubeconfig's user may not read CustomResourceDefinitions \(403\): up installs Argo CD's, so give the cluster's admin kubeconfig \(kubeconfigPath /,
            );
        } finally {
            await new Promise((r) => server.close(r));
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("reports root's umask as information only", async () => {
        assert.match(
            (await verdicts({ umask: () => 0o077 }))["umask (info)"],
            /^PASS 0077: the lab's bare repository sets core\.sharedRepository/,
        );
    });

    it("given a host that fails the preflight, then gitops-lab up exits 1 before anything is installed", function () {
        if (process.getuid?.() !== 0) this.skip(); // up refuses earlier, for not being root
        // a PATH with git and nothing else: curl (or, where k3s is already there, kubectl) is missing
        const bin = fs.mkdtempSync(path.join(os.tmpdir(), "path-"));
        fs.symlinkSync(spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim(), path.join(bin, "git"));
        const r = runCli("up", [], { env: { ...process.env, PATH: bin } });
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.out, /^FAIL {2}(curl|kubectl)/m);
        assert.match(r.stderr, /preflight: \d+ checks? failed .*nothing was installed/);
        assert.ok(!/Pulumi CLI|state: /.test(r.out), "it never reached Pulumi");
    });
});
