/**
 * Taking the lab down as `pulumi destroy` does: Argo CD's finalizer on the generated Applications,
 * the ApplicationSet's delete that waits for it (or removes it at its deadline), and `simulate
 * --reset`, which runs the same destroy path against the simulated host.
 */
import * as assert from "assert";
import { execFileSync, spawnSync } from "child_process";
import { recordMade } from "../lab/kit/layout";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { labResetProvider, LabResetProps } from "../components/labReset";
import { isLabApplication, LabScope, resetLabObjects } from "../lab/argo/reset";
import { GITD_URL_PREFIX } from "../lab/platform/gitDaemon";
import { git } from "./helpers/git";
import { deleteShopAppSet, SHOP_NAMESPACES, shopApplicationSet } from "../lab/shop/appset";
import { shopLayout } from "../lab/shop/layout";
import { SHOP_RESULT_FILES } from "../lab/shop/results";
import { RESOURCES_FINALIZER } from "../sim/generators";
import { expect, expectConsistently, holds } from "./helpers/expect";
import { labAt, LabAt, rootAt } from "./helpers/labAt";
import { runCli, runMain } from "./helpers/cli";
import { tenantsAt } from "./helpers/tenantsAt";
import { clusterStateFile, resetSimulatedLab } from "../sim/simulatedLab";
import { hostRootProblem } from "../sim/hostRoot";
import { isServedKubeconfig, recordServed } from "../sim/servedFiles";

describe("destroy: the ApplicationSet and Argo CD's finalizer (simulated cluster)", function () {
    this.timeout(60_000);
    let at: LabAt;
    beforeEach(async () => (at = await labAt(8)));
    afterEach(async () => at.stop());

    const apps = () => at.lab.kube.list("Application", "argocd");

    it("given a solved lab, then every generated Application carries Argo CD's resources finalizer", () => {
        assert.deepStrictEqual(
            apps().map((a) => a.metadata.finalizers),
            [[RESOURCES_FINALIZER], [RESOURCES_FINALIZER]],
        );
    });

    it("given the ApplicationSet is deleted and Argo CD is uninstalled right away (no wait), then the Applications stay Terminating: the hazard", async () => {
        // Argo CD's controllers gone first (the engine deleting them in parallel wins the race): stopped before the
        // delete, so that no Application is finished by a controller still stopping (a race under load, not the hazard)
        await at.lab.argo.stop();
        await at.cluster.deleteApplicationSet("shop");
        const terminating = holds(
            "both Applications Terminating",
            () => apps().length === 2 && apps().every((a) => a.metadata.deletionTimestamp),
        );
        await expect(terminating); // the garbage collector marks them as the ApplicationSet goes
        await expectConsistently(terminating, { forMs: 300 });
    });

    // given a running Argo CD, when the ApplicationSet is deleted, then the delete returns only once Argo CD deleted
    // the Applications and their resources, and the namespaces are gone
    it("delete waits for Argo CD to delete the Applications", async () => {
        const lines: string[] = [];
        await deleteShopAppSet(at.cluster, at.lab.layout, "shop", "argocd", (l) => lines.push(l), { timeoutMs: 20_000, pollMs: 50 });
        assert.deepStrictEqual(apps(), []);
        assert.strictEqual(at.lab.kube.get("ApplicationSet", "argocd", "shop"), undefined);
        for (const ns of ["shop-dev", "shop-prod"]) assert.strictEqual(at.lab.kube.get("Namespace", undefined, ns), undefined, ns);
        assert.deepStrictEqual(at.lab.kube.terminating(), []);
        assert.ok(!fs.existsSync(at.lab.layout.appsetFile));
        assert.ok(
            lines.some((l) => /^ApplicationSet argocd\/shop and its Applications are gone after \d+\.\d s$/.test(l)),
            lines.join("\n"),
        );
        assert.ok(!lines.some((l) => l.includes("by hand")));
    });

    // given Argo CD's application controller is gone, when the ApplicationSet is deleted, then at the deadline it
    // removes the finalizers itself and says so in one line
    it("no controller: the finalizers go at the deadline", async () => {
        await at.lab.argo.apps.stop();
        const lines: string[] = [];
        await deleteShopAppSet(at.cluster, at.lab.layout, "shop", "argocd", (l) => lines.push(l), { timeoutMs: 300, pollMs: 50 });
        assert.deepStrictEqual(apps(), []);
        assert.deepStrictEqual(at.lab.kube.terminating(), []);
        assert.deepStrictEqual(
            lines.filter((l) => l.includes("by hand")),
            [
                "Argo CD did not delete shop-dev, shop-prod within 0.3 s (is its application controller running?): removed the finalizers by hand; their resources go with their namespaces",
            ],
        );
    });

    it("given a generated Application deleted by hand, then Argo CD deletes its resources and the ApplicationSet generates it again", async () => {
        const uid = at.lab.kube.get("Application", "argocd", "shop-dev")!.metadata.uid;
        await at.cluster.deleteApplicationSet("nothing-of-ours"); // a no-op: not found is fine
        at.lab.kube.remove("Application", "argocd", "shop-dev", "client");
        await expect(
            holds(
                "shop-dev back with a new uid",
                () =>
                    at.lab.kube.get("Application", "argocd", "shop-dev")?.metadata.uid !== uid &&
                    !!at.lab.kube.get("Application", "argocd", "shop-dev"),
            ),
        );
    });
});

describe("destroy: a lab done by hand (the learner's ApplicationSet and Applications)", function () {
    this.timeout(60_000);
    let at: LabAt;
    beforeEach(async () => (at = await labAt(1)));
    afterEach(async () => at.stop());

    const scope = (kept: string[] = []): LabScope => ({ namespaces: SHOP_NAMESPACES, kept, repoPrefix: GITD_URL_PREFIX, argocdGoes: true });
    const app = (name: string, repoURL: string, namespace: string) => ({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name, namespace: "argocd", finalizers: [RESOURCES_FINALIZER] },
        spec: {
            project: "default",
            source: { repoURL, targetRevision: "main", path: "overlays/dev" },
            destination: { server: "https://kubernetes.default.svc", namespace },
            syncPolicy: { automated: {}, syncOptions: ["CreateNamespace=true"] },
        },
    });
    const names = (kind: string) => at.lab.kube.list(kind, "argocd").map((o) => o.metadata.name);

    /** The learner's step 2 by hand under another name, a misnamed Application of theirs, and one not of the lab. */
    async function byHand(): Promise<void> {
        const set = shopApplicationSet({ name: "shop-mine", namespace: "argocd", repoURL: `${GITD_URL_PREFIX}shop-envs.git` });
        await at.cluster.createApplicationSet(set);
        await at.cluster.putCustomObject(app("shop-dve", `${GITD_URL_PREFIX}shop-envs.git`, "shop-dev"), "applications");
        await at.cluster.putCustomObject(app("notes", "https://git.example.invalid/notes.git", "default"), "applications");
        await expect(
            holds("shop-dev and shop-prod made by Argo CD", () => SHOP_NAMESPACES.every((n) => at.lab.kube.get("Namespace", undefined, n))),
        );
    }

    it("takes down the learner's objects and namespaces, keeps the rest", async () => {
        await byHand();
        const lines: string[] = [];
        const report = await resetLabObjects(at.cluster, scope(), (l) => lines.push(l), { timeoutMs: 20_000, pollMs: 50 });
        assert.deepStrictEqual(names("ApplicationSet"), []);
        assert.deepStrictEqual(names("Application"), ["notes"]);
        assert.deepStrictEqual(
            at.lab.kube.get("Application", "argocd", "notes")!.metadata.finalizers ?? [],
            [],
            "it goes with Argo CD's CRD",
        );
        for (const ns of SHOP_NAMESPACES) assert.strictEqual(at.lab.kube.get("Namespace", undefined, ns), undefined, ns);
        assert.deepStrictEqual(at.lab.kube.terminating(), []);
        assert.deepStrictEqual(report.tookDown, [
            "ApplicationSets shop-mine",
            "Applications shop-dev, shop-dve, shop-prod",
            "namespaces shop-dev, shop-prod",
        ]);
        assert.match(lines[lines.length - 1], /^took down .*; kept what the Applications notes deployed \(not the lab's;/);
        assert.ok(!lines.some((l) => l.includes("by hand")), lines.join("\n"));
    });

    it("takes down the lab's ApplicationSet applied outside argocd (without its namespace), said as such", async () => {
        const set = shopApplicationSet({ name: "shop", namespace: "default", repoURL: `${GITD_URL_PREFIX}shop-envs.git` });
        at.lab.kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "default" } }, "client");
        at.lab.kube.put(set, "client");
        const report = await resetLabObjects(at.cluster, scope(), () => {}, { timeoutMs: 20_000, pollMs: 50 });
        assert.strictEqual(at.lab.kube.get("ApplicationSet", "default", "shop"), undefined);
        assert.ok(
            report.tookDown.includes("ApplicationSet default/shop (outside argocd: Argo CD never read it)"),
            report.tookDown.join("; "),
        );
    });

    it("never waits past its deadline with Argo CD's controller gone", async () => {
        await byHand();
        await at.lab.argo.apps.stop();
        const lines: string[] = [];
        await resetLabObjects(at.cluster, scope(), (l) => lines.push(l), { timeoutMs: 300, pollMs: 50 });
        assert.deepStrictEqual(names("Application"), ["notes"]);
        assert.deepStrictEqual(at.lab.kube.terminating(), []);
        assert.ok(
            lines.some((l) => /removed their finalizers by hand/.test(l)),
            lines.join("\n"),
        );
    });

    it("keeps a namespace that was there before the lab", async () => {
        await byHand();
        const report = await resetLabObjects(at.cluster, scope(["shop-prod"]), () => {}, { timeoutMs: 20_000, pollMs: 50 });
        assert.ok(at.lab.kube.get("Namespace", undefined, "shop-prod"));
        assert.strictEqual(at.lab.kube.get("Namespace", undefined, "shop-dev"), undefined);
        assert.ok(report.kept.includes("namespaces shop-prod (there before the lab)"), report.kept.join("; "));
    });

    it("records once which namespaces were there before the lab", async () => {
        const inputs = (namespaces: string[], namespacesFound: string[]) => ({
            kubeconfig: "k",
            namespaces,
            namespacesFound,
            repoPrefix: GITD_URL_PREFIX,
            argocdInstalled: true,
            deleteTimeoutSeconds: 120,
        });
        const first = (await labResetProvider.create(inputs(SHOP_NAMESPACES, ["shop-prod"]))).outs as LabResetProps;
        assert.deepStrictEqual(first.kept, ["shop-prod"]);
        // a later up finds shop-dev too (Argo CD made it for the lab): still the lab's
        const again = (await labResetProvider.update!("lab-reset", first, inputs(SHOP_NAMESPACES, SHOP_NAMESPACES))).outs as LabResetProps;
        assert.deepStrictEqual(again.kept, ["shop-prod"]);
        // the tenants lab turned on later: its namespaces are seen for the first time now
        const more = [...SHOP_NAMESPACES, "mandant-a", "mandant-b"];
        const later = (await labResetProvider.update!("lab-reset", again, inputs(more, ["shop-dev", "mandant-a"]))).outs as LabResetProps;
        assert.deepStrictEqual(later.kept, ["shop-prod", "mandant-a"]);
        assert.strictEqual((later as any).namespacesFound, undefined);
    });

    it("reads what is the lab's from the objects, not their names", () => {
        const s = scope();
        assert.ok(isLabApplication(app("x", `${GITD_URL_PREFIX}anything.git`, "elsewhere"), s));
        assert.ok(isLabApplication(app("x", "https://example.invalid/a.git", "shop-prod"), s));
        assert.ok(!isLabApplication(app("shop-dev", "https://example.invalid/a.git", "default"), s));
    });
});

describe("gitops-lab simulate --reset", function () {
    this.timeout(180_000);

    it("given a shell left in a folder that was deleted, then a resume and a reset know the lab's repository as the lab's", async () => {
        const root = await rootAt(2);
        const layout = shopLayout(root);
        const here = process.cwd();
        const gone = fs.mkdtempSync(path.join(os.tmpdir(), "gone-"));
        process.chdir(gone);
        fs.rmdirSync(gone);
        try {
            const resumed = await runMain("simulate", ["--root", root, "--through", "3"]);
            assert.strictEqual(resumed.code, 0, resumed.out);
            assert.doesNotMatch(resumed.out, /made by hand/);
            process.chdir(here);
            const again = fs.mkdtempSync(path.join(os.tmpdir(), "gone-"));
            process.chdir(again);
            fs.rmdirSync(again);
            const reset = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(reset.code, 0, reset.out);
            assert.ok(!fs.existsSync(layout.bareRepo), reset.out);
        } finally {
            process.chdir(here);
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given a reset run from inside the lab's clone (which it removes), then the lab's repository goes too", async () => {
        const root = await rootAt(1);
        const layout = shopLayout(root);
        const here = process.cwd();
        process.chdir(layout.clone);
        try {
            const r = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(r.stdout, /removed bare repository /);
            assert.match(r.stdout, /reset: nothing of the lab is left under /);
            assert.ok(!fs.existsSync(layout.bareRepo), layout.bareRepo);
        } finally {
            process.chdir(here);
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given a solved lab, when reset, then nothing of the lab is left, and a new simulate on the same root rebuilds it", async () => {
        // the lab solved through step 8 (the snapshot), left as simulate leaves its root: the files and the saved cluster
        const root = await rootAt(8);
        const layout = shopLayout(root);
        const r = await runMain("simulate", ["--root", root, "--reset"]);
        assert.strictEqual(r.code, 0, r.out);
        // the engine's order: results, then the ApplicationSet (waiting for Argo CD), then the repository, then Argo CD, then k3s
        const order = [
            "[scenario] removed the result files",
            "[appset] ApplicationSet argocd/shop and its Applications are gone",
            "[shop-repo] removed bare repository",
            "[argocd] uninstalled",
            "[k3s] uninstalled",
        ];
        const at = order.map((o) => r.stdout.indexOf(o));
        assert.ok(at.every((i) => i >= 0) && at.every((i, k) => k === 0 || i > at[k - 1]), r.stdout);
        assert.match(r.stdout, /reset: nothing of the lab is left under /);
        for (const p of [
            layout.bareRepo,
            layout.clone,
            layout.appsetFile,
            ...SHOP_RESULT_FILES.map((f) => layout.resultFile(f)),
            path.join(root, "simulated-cluster.json"),
        ])
            assert.ok(!fs.existsSync(p), p);
        const again = await runMain("simulate", ["--root", root, "--through", "2"]);
        assert.strictEqual(again.code, 0, again.out);
        assert.ok(fs.existsSync(layout.bareRepo));
        fs.rmSync(root, { recursive: true, force: true });
    });

    it("given a root the run made with folders above it, when reset, then those go too; a root that was there stays", async () => {
        const base = fs.mkdtempSync(path.join(os.tmpdir(), "made-root-"));
        fs.chmodSync(base, 0o755);
        try {
            const root = path.join(base, "a", "b", "lab");
            const built = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(built.code, 0, built.out);
            const r = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.ok(
                r.stdout.includes(
                    `removed ${root}, ${path.join(base, "a", "b")}, ${path.join(base, "a")}: made by the lab for its root, and empty now`,
                ),
                r.stdout,
            );
            assert.deepStrictEqual(fs.readdirSync(base), []);
            // a root that was there before the lab: kept, empty, as given
            const given = path.join(base, "given");
            fs.mkdirSync(given, { mode: 0o755 });
            assert.strictEqual((await runMain("simulate", ["--root", given, "--through", "1"])).code, 0);
            assert.strictEqual((await runMain("simulate", ["--root", given, "--reset"])).code, 0);
            assert.deepStrictEqual(fs.readdirSync(given), []);
            // a root the lab made, holding a file of the learner's: kept, and said
            const notes = path.join(base, "notes");
            assert.strictEqual((await runMain("simulate", ["--root", notes, "--through", "1"])).code, 0);
            fs.writeFileSync(path.join(notes, "NOTES.md"), "mine\n");
            const kept = await runMain("simulate", ["--root", notes, "--reset"]);
            assert.strictEqual(kept.code, 0, kept.out);
            assert.ok(
                kept.stdout.includes(
                    `kept ${notes}: it holds NOTES.md, which the lab did not make (the lab made ${notes}: a reset once it is empty removes it)`,
                ),
                kept.stdout,
            );
            assert.strictEqual(fs.readFileSync(path.join(notes, "NOTES.md"), "utf8"), "mine\n");
        } finally {
            fs.rmSync(base, { recursive: true, force: true });
        }
    });

    it("reset keeps a clone with a worktree of it (a commit on its detached HEAD lives in the clone)", async () => {
        const root = await rootAt(1);
        const layout = shopLayout(root);
        try {
            const wt = path.join(layout.workDir, "wt");
            await git(["worktree", "add", "--quiet", "--detach", wt], layout.clone);
            fs.writeFileSync(path.join(wt, "N"), "x\n");
            await git(["add", "N"], wt);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "-m", "mine"], wt);
            const r = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.ok(
                r.stdout.includes(
                    `kept ${layout.clone}: it holds work the repository does not (1 worktree of it (${wt}), whose commits and files it keeps)`,
                ),
                r.stdout,
            );
            assert.strictEqual(await git(["log", "-1", "--format=%s"], wt), "mine");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    // given a learner's uncommitted file in the clone and a note of theirs beside it, when reset, then both stay, each said
    it("reset keeps a clone holding work not pushed", async () => {
        const root = await rootAt(1);
        const layout = shopLayout(root);
        try {
            fs.writeFileSync(path.join(layout.clone, "WIP.md"), "work in progress\n");
            fs.appendFileSync(path.join(layout.clone, "envs", "prod", "kustomization.yaml"), "# wip\n");
            fs.writeFileSync(path.join(layout.workDir, "my-notes.md"), "notes\n");
            // a commit of the learner's on a branch of their own, not pushed
            const mine = await git(
                ["-c", "user.name=l", "-c", "user.email=l@x", "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "my fix"],
                layout.clone,
            );
            await git(["update-ref", "refs/heads/my-fix", mine], layout.clone);
            // the clone the served lab's instructions make, with a commit of the learner's not pushed
            const served = path.join(root, "clones", "shop-envs");
            await git(["clone", "--quiet", layout.bareRepo, served], root);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "--allow-empty", "-m", "learner work"], served);
            const r = await runMain("simulate", ["--root", root, "--reset"]);
            // only what is the learner's is left: the reset did its work
            assert.strictEqual(r.code, 0, r.out);
            assert.ok(
                r.stdout.includes(
                    `reset: the lab is taken down under ${root}, but for what is yours (kept: ${path.join(root, "clones")}, `,
                ),
                r.stdout,
            );
            assert.ok(
                r.stdout.includes(`kept ${served}: it holds work the repository does not (1 commit not pushed, on main): copy it out`),
                r.stdout,
            );
            assert.strictEqual(await git(["log", "-1", "--format=%s"], served), "learner work");
            // each changed file named whole (the status's first line keeps its path's first letter)
            assert.ok(
                r.stdout.includes(
                    "not committed: envs/prod/kustomization.yaml, WIP.md; 1 commit not pushed, on my-fix); the repository goes with the lab, so copy out what you need (cp the files not committed (or commit them); git bundle create FILE --all keeps every branch)",
                ),
                r.stdout,
            );
            assert.strictEqual(fs.readFileSync(path.join(layout.clone, "WIP.md"), "utf8"), "work in progress\n");
            assert.ok(fs.existsSync(path.join(layout.workDir, "my-notes.md")));
            assert.match(r.stdout, new RegExp(`kept ${layout.workDir}: it holds [^\n]*my-notes\\.md`));
            assert.ok(!fs.existsSync(layout.bareRepo), "the lab's bare repository went");
            // built again: the kept clone is the learner's, never committed on top of nor pushed into the new repository
            const head = await git(["rev-parse", "HEAD"], layout.clone);
            const again = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(again.code, 1, again.out);
            assert.match(
                again.stderr,
                /repo holds work of its own \(1 commit on main, the last "[^"]+"; not committed: envs\/prod\/kustomization\.yaml, WIP\.md; 1 commit not pushed, on my-fix\) while \S+ is new: the clone a reset or destroy kept for its work\? Nothing in it was changed\. Move it away/,
            );
            assert.strictEqual(await git(["rev-parse", "HEAD"], layout.clone), head);
            assert.strictEqual(fs.readFileSync(path.join(layout.clone, "WIP.md"), "utf8"), "work in progress\n");
            assert.strictEqual(
                await git(["--git-dir", layout.bareRepo, "rev-parse", "--verify", "--quiet", "refs/heads/main"]).catch(() => ""),
                "",
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    // given a file git ignores (the learner's .git/info/exclude) or a commit on a detached HEAD, when reset, then the clone stays, each said
    for (const [what, work, said, how] of [
        [
            "a file git ignores",
            async (clone: string) => {
                fs.appendFileSync(path.join(clone, ".git", "info", "exclude"), "notes/\n");
                fs.mkdirSync(path.join(clone, "notes"));
                fs.writeFileSync(path.join(clone, "notes", "n.md"), "mine\n");
            },
            "not committed: notes/n.md",
            "cp the files not committed (or commit them)",
        ],
        [
            "a commit on a detached HEAD",
            async (clone: string) => {
                await git(["checkout", "--quiet", "--detach", "HEAD"], clone);
                await git(
                    ["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "--allow-empty", "-m", "detached work"],
                    clone,
                );
            },
            "1 commit not pushed, on a detached HEAD",
            "git bundle create FILE --all keeps every branch",
        ],
        [
            "an annotated tag not pushed",
            async (clone: string) => {
                await git(["-c", "user.name=l", "-c", "user.email=l@x", "tag", "-a", "before-incident", "-m", "my note", "HEAD"], clone);
            },
            "1 tag not pushed (before-incident)",
            "git bundle create FILE --all keeps every branch",
        ],
        [
            "a hook of the learner's",
            async (clone: string) => {
                fs.writeFileSync(path.join(clone, ".git", "hooks", "pre-push"), "#!/bin/sh\nexec yamllint -s envs/\n", { mode: 0o755 });
            },
            "1 hook of yours in .git/hooks (pre-push)",
            "cp your hooks from .git/hooks",
        ],
        [
            "an alias in the clone's configuration",
            async (clone: string) => {
                await git(["config", "alias.lg", "log --oneline"], clone);
            },
            "local git configuration of yours (alias.lg)",
            "git config --local --list shows your settings",
        ],
        [
            "a git note not pushed",
            async (clone: string) => {
                await git(["-c", "user.name=l", "-c", "user.email=l@x", "notes", "add", "-m", "my observation", "HEAD"], clone);
            },
            "1 other ref not pushed (refs/notes/commits: git notes)",
            "git bundle create FILE --all keeps every branch",
        ],
    ] as const)
        it(`reset keeps a clone holding ${what}`, async () => {
            const root = await rootAt(1);
            const layout = shopLayout(root);
            try {
                await work(layout.clone);
                const r = await runMain("simulate", ["--root", root, "--reset"]);
                assert.strictEqual(r.code, 0, r.out);
                assert.ok(r.stdout.includes(`kept ${layout.clone}: it holds work the repository does not (${said})`), r.stdout);
                // the way to copy it out fits what it is (a bundle holds no file not committed, no hook)
                assert.ok(r.stdout.includes(`(${said}); the repository goes with the lab, so copy out what you need (${how})`), r.stdout);
                assert.ok(fs.existsSync(path.join(layout.clone, ".git")), "the clone stays");
            } finally {
                fs.rmSync(root, { recursive: true, force: true });
            }
        });

    // given a run killed in step 1 while the bare repository was built under its .partial name (before the clone), when
    // reset, then that half-built repository goes as the lab's own, and nothing is kept
    it("reset removes a half-built repository an interrupted step 1 left", async () => {
        const root = await rootAt(1);
        const layout = shopLayout(root);
        try {
            const half = path.join(path.dirname(layout.bareRepo), `.${path.basename(layout.bareRepo)}.partial`);
            fs.renameSync(layout.bareRepo, half);
            fs.rmSync(layout.workDir, { recursive: true, force: true });
            const r = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.ok(!fs.existsSync(half), "the half-built repository went");
            assert.doesNotMatch(r.stdout, /^kept /m);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    // given a clone whose only extra refs are git maintenance's prefetch copies of the remote, when reset, then it goes
    it("reset removes a clone whose only extra refs are prefetched", async () => {
        const root = await rootAt(1);
        const layout = shopLayout(root);
        try {
            await git(["maintenance", "run", "--task=prefetch"], layout.clone);
            assert.notStrictEqual(await git(["for-each-ref", "refs/prefetch"], layout.clone), "", "git made prefetch refs");
            const r = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.ok(!fs.existsSync(layout.clone), r.stdout);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    // given a kept clone whose only work is a commit on a branch of its own, when built again, then it is refused, not built on
    it("a clone kept for a commit on another branch is not built on", async () => {
        const root = await rootAt(2);
        const layout = shopLayout(root);
        try {
            await git(["checkout", "-q", "-b", "wip"], layout.clone);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "--allow-empty", "-m", "wip"], layout.clone);
            await git(["checkout", "-q", "main"], layout.clone);
            const reset = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(reset.code, 0, reset.out);
            assert.ok(fs.existsSync(path.join(layout.clone, ".git")), "kept");
            const again = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(again.code, 1, again.out);
            assert.match(again.stderr, /repo holds work of its own \(.*; 1 commit not pushed, on wip\) while \S+ is new/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    // given a root copied from another, when reset, then the clone whose origin is the other root's is kept and said
    // so, and the original is untouched
    it("reset of a copied root keeps the other's clone", async () => {
        const original = await rootAt(1);
        const copy = fs.mkdtempSync(path.join(os.tmpdir(), "copied-root-"));
        fs.cpSync(original, copy, { recursive: true });
        try {
            const r = await runMain("simulate", ["--root", copy, "--reset"]);
            assert.strictEqual(r.code, 0, r.out);
            const clone = shopLayout(copy).clone;
            assert.ok(
                r.stdout.includes(
                    `[shop-repo] kept ${clone}: its origin is ${shopLayout(original).bareRepo}, not ${shopLayout(copy).bareRepo}, so it is not this lab's clone (a root copied from another?); remove it by hand if it is yours`,
                ),
                r.stdout,
            );
            assert.match(r.stdout, /^reset: the lab is taken down under .*, but for what is yours \(kept: /m);
            assert.ok(fs.existsSync(path.join(clone, ".git")), "the copied clone is kept");
            assert.ok(fs.existsSync(path.join(shopLayout(original).clone, ".git")), "the original's clone is untouched");
        } finally {
            fs.rmSync(copy, { recursive: true, force: true });
            fs.rmSync(original, { recursive: true, force: true });
        }
    });

    // in a process of its own: the umask is the process's
    it("given umask 077 (a hardened host's root), then the whole lab still runs: the git daemon as nobody reads every push", async function () {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "umask-"));
        const saved = process.umask(0o077); // the child inherits it
        try {
            const r = runCli("simulate", ["--root", root]);
            assert.strictEqual(r.code, 0, r.out);
        } finally {
            process.umask(saved);
        }
        const v = await runMain("verify", ["--root", root, "--offline"]);
        assert.strictEqual(v.code, 0, v.out);
    });
});

describe("reset says only what it did, on any state it can recognise, and leaves nothing (in-process)", function () {
    this.timeout(180_000);
    const reset = async (root: string) => {
        const lines: string[] = [];
        const { left } = await resetSimulatedLab(root, (l) => lines.push(l));
        return { lines, left, out: lines.join("\n") };
    };

    it("given the clone's origin renamed (upstream), then it is still the lab's clone and goes", async () => {
        const root = await rootAt(8);
        const { clone } = shopLayout(root);
        await git(["remote", "rename", "origin", "upstream"], clone);
        const r = await reset(root);
        assert.match(r.out, new RegExp(`removed clone ${clone}`));
        assert.deepStrictEqual(r.left, []);
    });

    it("given the folder labs are under, then it names them and resets none; a file at the repository's path is said as a file", async () => {
        // a folder of its own holding the lab (the run's temporary folder holds other tests' labs too)
        const parent = fs.mkdtempSync(path.join(os.tmpdir(), "labs-"));
        const root = path.join(parent, "lab");
        fs.renameSync(await rootAt(2), root);
        const r = await runMain("simulate", ["--root", parent, "--reset"]);
        assert.strictEqual(r.code, 2, r.out);
        assert.match(
            r.stdout,
            new RegExp(`nothing to reset: ${parent} holds no lab itself, but a lab is under it \\(${root}\\): give one as --root`),
        );
        assert.doesNotMatch(r.stdout, /builds it again/);
        assert.ok(fs.existsSync(clusterStateFile(root)), "the lab under it is untouched");
        // the bare repository replaced by a file: kept, and said to be a file
        const { bareRepo } = shopLayout(await rootAt(2));
        fs.rmSync(bareRepo, { recursive: true, force: true });
        fs.writeFileSync(bareRepo, "oops\n");
        const file = await reset(path.dirname(path.dirname(path.dirname(bareRepo))));
        assert.match(file.out, new RegExp(`kept ${bareRepo}: a file, not a repository \\(the lab's was replaced by it\\)`));
    });

    it("given a root mistyped beside a lab (rot2 for root2), then nothing is reset and the lab is named", async () => {
        const root = await rootAt(1);
        try {
            const typo = `${root.slice(0, -1)}`;
            const r = await runMain("simulate", ["--root", typo, "--reset"]);
            assert.strictEqual(r.code, 2, r.out);
            assert.match(
                r.out,
                new RegExp(`nothing to reset: ${typo} does not exist; a lab is at ${root}: gitops-lab simulate --root ${root} --reset`),
            );
            assert.doesNotMatch(r.out, /builds it again/);
            assert.ok(fs.existsSync(clusterStateFile(root)), "the lab is untouched");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given a folder that never held a lab, then it says so and creates nothing", async () => {
        const parent = fs.mkdtempSync(path.join(os.tmpdir(), "never-"));
        const r = await reset(path.join(parent, "lab"));
        assert.deepStrictEqual(r.lines, [`nothing to reset: ${path.join(parent, "lab")} does not exist`]);
        assert.deepStrictEqual(fs.readdirSync(parent), [], "the root was not created");
        const empty = fs.mkdtempSync(path.join(os.tmpdir(), "empty-"));
        assert.deepStrictEqual((await reset(empty)).lines, [`nothing to reset: ${empty} holds no lab`]);
        assert.deepStrictEqual(fs.readdirSync(empty), []);
    });

    it("given the tenants lab alone, served (its kubeconfig and clones), then the reset names only what it took down and leaves nothing", async () => {
        const at = await tenantsAt(1);
        const root = at.layout.root;
        try {
            fs.writeFileSync(clusterStateFile(root), at.lab.kube.dump());
            // as the served lab leaves them: recorded first, then its kubeconfig, then the learner's clone by its instructions
            recordServed(root);
            fs.writeFileSync(path.join(root, "kubeconfig"), at.lab.kubeconfig);
            await git(["clone", "--quiet", at.layout.bareRepo, path.join(root, "clones", "platform")]);
            await at.lab.stop();
            const r = await reset(root);
            assert.deepStrictEqual(r.left, []);
            assert.match(r.out, /\[tenants appset\] ApplicationSet argocd\/tenants/);
            assert.doesNotMatch(r.out, /\[scenario\]|\[appset\]|\[shop-repo\]/, "no shop lab was there: nothing is said of it");
            assert.match(r.out, new RegExp(`removed ${root}/kubeconfig \\(written for the served lab\\)`));
            assert.deepStrictEqual(
                fs.readdirSync(root).filter((f) => !f.startsWith(".gitops-lab-simulate.lock")),
                [],
                r.out,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("removes clones/ that held the lab's clones alone, where no record says the lab made it", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "clones-unrecorded-"));
        try {
            const made = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(made.code, 0, made.out);
            await git(["clone", "--quiet", shopLayout(root).bareRepo, path.join(root, "clones", "shop-envs")]);
            const r = await reset(root);
            assert.deepStrictEqual(r.left, [], r.out);
            assert.ok(!fs.existsSync(path.join(root, "clones")), r.out);
            assert.doesNotMatch(r.out, /it was there before the lab/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("keeps a served clone of another user's, which git will not read (its work cannot be checked)", async function () {
        if (process.getuid?.() !== 0) this.skip(); // chown to another user needs root: CI and the lab host run as root
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "clones-theirs-"));
        try {
            const made = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(made.code, 0, made.out);
            const clone = path.join(root, "clones", "shop-envs");
            await git(["clone", "--quiet", shopLayout(root).bareRepo, clone]);
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "--quiet", "--allow-empty", "-m", "learner work"], clone);
            // the learner's own account's clone: git refuses it to root ("dubious ownership")
            spawnSync("chown", ["-R", "65534:65534", path.join(root, "clones")]);
            const r = await reset(root);
            assert.ok(fs.existsSync(path.join(clone, ".git")), r.out);
            assert.match(
                r.out,
                /kept \S+\/clones\/shop-envs: it holds work the repository does not \(work that could not be checked: git will not read it \(it belongs to uid 65534, not to you\)/,
            );
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a clones/ that is a link of the learner's: the lab's clone in it goes, the link and its folder stay", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "clones-linked-"));
        const mine = fs.mkdtempSync(path.join(os.tmpdir(), "my-clones-"));
        try {
            fs.symlinkSync(mine, path.join(root, "clones"));
            const made = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(made.code, 0, made.out);
            await git(["clone", "--quiet", shopLayout(root).bareRepo, path.join(root, "clones", "shop-envs")]);
            const r = await reset(root);
            assert.deepStrictEqual(r.left, [], r.out);
            assert.ok(!fs.existsSync(path.join(mine, "shop-envs")), r.out);
            assert.ok(fs.lstatSync(path.join(root, "clones")).isSymbolicLink() && fs.existsSync(mine), "the link and its folder stay");
            assert.match(r.out, /kept \S+\/clones: a link of yours/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
            fs.rmSync(mine, { recursive: true, force: true });
        }
    });

    it("compares a served clone with its repository before the repository goes: a tag pushed is no work", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "clones-tagged-"));
        try {
            const made = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(made.code, 0, made.out);
            const { bareRepo } = shopLayout(root);
            await git(["--git-dir", bareRepo, "tag", "before-incident", "refs/heads/main"]);
            const clone = path.join(root, "clones", "shop-envs");
            await git(["clone", "--quiet", bareRepo, clone]);
            // its origin the served daemon's address, which answers no more once the lab is stopped
            await git(["-C", clone, "remote", "set-url", "origin", "git://127.0.0.1:1/shop-envs.git"]);
            const r = await reset(root);
            assert.deepStrictEqual(r.left, [], r.out);
            assert.ok(!fs.existsSync(clone), r.out);
            assert.doesNotMatch(r.out, /could not be asked about/);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("keeps the learner's own kubeconfig and files beside the clones; serving over that kubeconfig is refused", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "own-files-"));
        try {
            const mine = "apiVersion: v1\nkind: Config\ncurrent-context: my-cluster\n";
            fs.writeFileSync(path.join(root, "kubeconfig"), mine);
            fs.mkdirSync(path.join(root, "clones"));
            fs.writeFileSync(path.join(root, "clones", "notes.txt"), "mine");
            const served = await runMain("simulate", ["--root", root, "--through", "0", "--serve"]);
            assert.strictEqual(served.code, 2, served.out);
            assert.match(
                served.stderr,
                new RegExp(
                    `${root}/kubeconfig is there and is not a served lab's kubeconfig \\(yours\\?\\): .*move it away, or give another --root`,
                ),
            );
            assert.strictEqual(fs.readFileSync(path.join(root, "kubeconfig"), "utf8"), mine, "not rewritten");
            const made = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(made.code, 0, made.out);
            const r = await reset(root);
            assert.deepStrictEqual(r.left, [], r.out);
            assert.strictEqual(fs.readFileSync(path.join(root, "kubeconfig"), "utf8"), mine, "kept");
            assert.strictEqual(fs.readFileSync(path.join(root, "clones", "notes.txt"), "utf8"), "mine", "kept");
            assert.match(r.out, new RegExp(`kept ${root}/kubeconfig: it is not a served lab's kubeconfig`));
            assert.match(r.out, new RegExp(`kept ${root}/clones/notes.txt: the served lab did not make it`));
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a served lab's kubeconfig whose context the learner renamed (kubectl writes it anew) is still the lab's", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "renamed-"));
        try {
            const file = path.join(dir, "kubeconfig");
            // as sim/apiServer.ts writes it
            fs.writeFileSync(
                file,
                "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:43210\n    insecure-skip-tls-verify: true\nusers:\n- name: fake\n  user:\n    token: t0ken\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\n",
            );
            assert.ok(isServedKubeconfig(file));
            execFileSync("kubectl", ["--kubeconfig", file, "config", "rename-context", "fake", "tenants-lab"]);
            assert.match(fs.readFileSync(file, "utf8"), /current-context: tenants-lab/);
            assert.ok(isServedKubeconfig(file), "renamed, it is the served lab's still");
            // another cluster's (its server elsewhere) is not
            fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("127.0.0.1:43210", "10.0.0.1:6443"));
            assert.ok(!isServedKubeconfig(file));
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("names what of the learner's it keeps beside the lab's folders: a repository in srv/bare, a file in root/", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "theirs-beside-"));
        try {
            const made = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(made.code, 0, made.out);
            await git(["init", "--quiet", "--bare", path.join(root, "srv", "bare", "mine.git")]);
            fs.writeFileSync(path.join(root, "root", "todo.txt"), "notes");
            const r = await reset(root);
            assert.deepStrictEqual(r.left, [], r.out);
            assert.match(r.out, new RegExp(`kept ${root}/srv/bare: it holds mine\\.git, which the lab did not make`));
            assert.match(r.out, new RegExp(`kept ${root}/root: it holds todo\\.txt, which the lab did not make`));
            assert.doesNotMatch(r.out, new RegExp(`kept ${root}/srv:`), "srv holds only what is kept already");
            assert.ok(fs.existsSync(path.join(root, "srv", "bare", "mine.git", "HEAD")));
            assert.strictEqual(fs.readFileSync(path.join(root, "root", "todo.txt"), "utf8"), "notes");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("a run that stopped before it built anything (git not on PATH): the folders it recorded go", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "no-git-"));
        try {
            // what such a run leaves: srv/ and srv/bare made and recorded, nothing in them
            recordMade(root, [path.join(root, "srv", "bare")]);
            fs.mkdirSync(path.join(root, "srv", "bare"), { recursive: true });
            const r = await reset(root);
            assert.deepStrictEqual(r.left, [], r.out);
            assert.doesNotMatch(r.out, /nothing to reset/);
            assert.deepStrictEqual(fs.readdirSync(root), [], r.out);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("keeps the folders that were there before the lab", async () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "had-folders-"));
        try {
            // empty folders at the lab's paths, as a host (or a learner) may have them
            for (const d of ["srv", "root"]) fs.mkdirSync(path.join(root, d));
            const made = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(made.code, 0, made.out);
            const r = await reset(root);
            assert.deepStrictEqual(r.left, [], r.out);
            for (const d of ["srv", "root"]) {
                assert.ok(fs.existsSync(path.join(root, d)), `${d} was there before the lab: kept`);
                assert.match(r.out, new RegExp(`kept ${path.join(root, d)}: it was there before the lab`));
            }
            assert.ok(!fs.existsSync(path.join(root, "srv", "bare")), "srv/bare, which the lab made, is gone");
            assert.ok(!fs.existsSync(path.join(root, "root", "cnpa-env")), "root/cnpa-env, which the lab made, is gone");
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    for (const [what, spoil] of [
        ["deleted", (f: string) => fs.rmSync(f)],
        ["cut short", (f: string) => fs.writeFileSync(f, '{"made": [')],
    ] as const)
        it(`with the record of what the lab made ${what}, empty folders are kept, and the record's state said`, async () => {
            const root = await rootAt(1);
            try {
                spoil(path.join(root, ".gitops-lab-made.json"));
                const r = await reset(root);
                assert.deepStrictEqual(r.left, [], r.out);
                assert.match(
                    r.out,
                    new RegExp(
                        `kept ${path.join(root, "srv")}: no record says the lab made it \\(\\S+\\.gitops-lab-made\\.json, where each run records what it makes, is gone or unreadable\\)`,
                    ),
                );
                assert.doesNotMatch(r.out, /it was there before the lab/);
            } finally {
                fs.rmSync(root, { recursive: true, force: true });
            }
        });

    it("a folder at a result file's path, and a bare repository made again by hand: kept, each said, and the reset done", async () => {
        const root = await rootAt(4);
        const layout = shopLayout(root);
        try {
            const drift = layout.resultFile("drift");
            fs.mkdirSync(drift);
            fs.writeFileSync(path.join(drift, "notes.md"), "mine\n");
            fs.rmSync(layout.bareRepo, { recursive: true });
            await git(["init", "--quiet", "--bare", "--initial-branch=main", layout.bareRepo]);
            await git(["push", "--quiet", "origin", "main"], layout.clone);
            const r = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.ok(r.stdout.includes(`kept ${drift}: a folder where the lab writes a result file, so not the lab's (yours?)`), r.stdout);
            assert.ok(
                r.stdout.includes(
                    `kept ${layout.bareRepo}: not a repository the lab made (made by hand, at step 1 or again: it lacks the lab's mark), so it is yours; move it away`,
                ),
                r.stdout,
            );
            // its clone is the learner's too: kept, and said
            assert.ok(
                r.stdout.includes(`kept ${layout.clone}: a clone of ${layout.bareRepo}, which is yours (below), so it is yours too`),
                r.stdout,
            );
            assert.ok(fs.existsSync(path.join(layout.clone, ".git")));
            assert.match(r.stdout, /reset: the lab is taken down under \S+, but for what is yours/);
            assert.strictEqual(fs.readFileSync(path.join(drift, "notes.md"), "utf8"), "mine\n");
            assert.ok(fs.existsSync(path.join(layout.bareRepo, "HEAD")));
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("refuses a host's own lab location as its root", async () => {
        // not run at /: were the refusal gone, the run would write into this host's /srv and /root
        assert.match(String(hostRootProblem("/")), /^--root \/ is this host's own lab location \(\/srv\/bare, \/root\/cnpa-env\)/);
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "host-like-"));
        try {
            fs.mkdirSync(path.join(root, "srv", "bare", "team.git"), { recursive: true });
            const r = await runMain("simulate", ["--root", root, "--through", "1"]);
            assert.strictEqual(r.code, 2, r.out);
            assert.match(r.stderr, /is not a simulated lab's: \S+\/srv\/bare holds team\.git, which no simulation made/);
            assert.strictEqual(r.stderr.trim().split("\n").length, 1, "one line");
            assert.deepStrictEqual(fs.readdirSync(root), ["srv"], "nothing made");
            // a reset of it: nothing there was a simulation's, and nothing of it is to be moved for a reset
            const reset = await runMain("simulate", ["--root", root, "--reset"]);
            assert.strictEqual(reset.code, 2, reset.out);
            assert.match(
                reset.stderr,
                /holds no simulated lab \(\S+\/srv\/bare holds team\.git, which no simulation made\), so nothing was reset and nothing removed: give the --root you ran gitops-lab simulate with/,
            );
            assert.ok(fs.existsSync(path.join(root, "srv", "bare", "team.git")));
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("given a saved cluster that is garbage, then the reset removes it, says so, and takes the lab's files down without it", async () => {
        const at = await labAt(1);
        const root = at.lab.layout.root;
        await at.lab.stop();
        fs.writeFileSync(clusterStateFile(root), "{ this is not a cluster");
        const r = await reset(root);
        assert.deepStrictEqual(r.left, []);
        assert.match(
            r.out,
            /\[k3s\] the saved simulated cluster cannot be used \(.*simulated-cluster\.json is not a simulated cluster this tool saved .*\): removed, and with it everything it held/,
        );
        assert.match(r.out, /\[shop-repo\] removed bare repository/);
        assert.ok(!fs.existsSync(at.lab.layout.bareRepo) && !fs.existsSync(clusterStateFile(root)));
        await at.stop();
    });
});
