/** Layer 3: step 1 with real git, real kubectl kustomize and a real git daemon on 127.0.0.1. */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { run } from "../lab/ports/exec";
import { shopLayout, ShopLayout } from "../lab/shop/layout";
import { GITD_ENV } from "../lab/platform/gitDaemon";
import { readRepoFiles, REPO_FILES } from "../lab/shop/repoFiles";
import { createShopRepo, deleteShopRepo, INITIAL_MESSAGE } from "../lab/shop/repo";
import { startGitDaemon } from "../sim/gitDaemon";
import { git } from "./helpers/git";

function tempLayout(): ShopLayout {
    return shopLayout(fs.mkdtempSync(path.join(os.tmpdir(), "shop-repo-")));
}

async function kustomizedData(clone: string, env: string): Promise<Record<string, string>> {
    const { stdout } = await run("kubectl", ["kustomize", path.join(clone, "envs", env)]);
    return parseAllDocuments(stdout)
        .map((d) => d.toJSON())
        .find((o: any) => o.kind === "ConfigMap").data;
}

describe("ShopRepo (step 1)", function () {
    this.timeout(60_000);

    describe("given an empty root, when the repository is created", () => {
        let layout: ShopLayout;
        let initialCommit: string;
        before(async () => {
            layout = tempLayout();
            ({ initialCommit } = await createShopRepo(layout, readRepoFiles()));
        });

        it("then the bare repo has main with one commit holding exactly the four files", async () => {
            assert.match(initialCommit, /^[0-9a-f]{40}$/);
            assert.strictEqual(await git(["--git-dir", layout.bareRepo, "rev-parse", "refs/heads/main"]), initialCommit);
            assert.strictEqual(await git(["--git-dir", layout.bareRepo, "rev-list", "--count", "main"]), "1");
            const files = (await git(["--git-dir", layout.bareRepo, "ls-tree", "-r", "--name-only", "main"])).split("\n").sort();
            assert.deepStrictEqual(files, [...REPO_FILES].sort());
            assert.strictEqual(await git(["--git-dir", layout.bareRepo, "log", "-1", "--format=%s", "main"]), INITIAL_MESSAGE);
            assert.strictEqual(await git(["--git-dir", layout.bareRepo, "symbolic-ref", "HEAD"]), "refs/heads/main");
        });

        it("then the clone is on main at the same commit, and the overlays render debug/warn with the feature off", async () => {
            assert.strictEqual(await git(["rev-parse", "HEAD"], layout.clone), initialCommit);
            assert.strictEqual(await git(["rev-parse", "--abbrev-ref", "HEAD"], layout.clone), "main");
            assert.deepStrictEqual(await kustomizedData(layout.clone, "dev"), { FEATURE_CHECKOUT_V2: "off", LOG_LEVEL: "debug" });
            assert.deepStrictEqual(await kustomizedData(layout.clone, "prod"), { FEATURE_CHECKOUT_V2: "off", LOG_LEVEL: "warn" });
            const base = fs.readFileSync(path.join(layout.clone, "base", "configmap.yaml"), "utf8");
            assert.ok(!/namespace:/.test(base), "the base ConfigMap has no namespace");
        });

        it("then the bare repo is world-readable (chmod -R a+rX)", () => {
            const walk = (p: string): string[] =>
                fs.statSync(p).isDirectory() ? [p, ...fs.readdirSync(p).flatMap((c) => walk(path.join(p, c)))] : [p];
            for (const p of walk(layout.bareRepo)) {
                const mode = fs.statSync(p).mode;
                assert.ok(mode & 0o004, `${p} readable by others`);
                if (fs.statSync(p).isDirectory()) assert.ok(mode & 0o001, `${p} searchable by others`);
            }
        });

        it("then a real git daemon serves main at that commit", async () => {
            const daemon = await startGitDaemon(layout.bareDir);
            try {
                const out = await git(["ls-remote", daemon.url("shop-envs.git")]);
                assert.ok(out.split("\n").includes(`${initialCommit}\trefs/heads/main`), out);
            } finally {
                await daemon.stop();
            }
        });

        it("then the daemon as the Pod runs it (nobody, the Pod's environment) serves it too, and refuses pushes", async function () {
            if (process.getuid?.() !== 0) this.skip(); // setpriv needs root: CI and the lab host run as root
            // on a host / and /srv are world-searchable; mkdtemp made the test root 0700
            fs.chmodSync(layout.root, 0o755);
            fs.chmodSync(path.dirname(layout.bareDir), 0o755);
            const daemon = await startGitDaemon(layout.bareDir, { asNobody: true, env: GITD_ENV });
            try {
                const out = await git(["ls-remote", daemon.url("shop-envs.git")]);
                assert.ok(out.includes(`${initialCommit}\trefs/heads/main`), out);
                await assert.rejects(run("git", ["push", daemon.url("shop-envs.git"), "HEAD:refs/heads/evil"], { cwd: layout.clone }));
            } finally {
                await daemon.stop();
            }
        });

        it("a git without its daemon: the answer names the missing git-daemon", async () => {
            // a git whose --exec-path is a folder with no git-daemon in it (a distribution that ships the daemon apart)
            const bin = fs.mkdtempSync(path.join(os.tmpdir(), "git-no-daemon-"));
            fs.writeFileSync(path.join(bin, "git"), `#!/bin/sh\n[ "$1" = --exec-path ] && echo ${bin} && exit 0\nexit 1\n`, {
                mode: 0o755,
            });
            const PATH = process.env.PATH;
            process.env.PATH = `${bin}:${PATH}`;
            try {
                await assert.rejects(startGitDaemon(layout.bareDir), (e: Error) => {
                    assert.strictEqual(
                        e.message,
                        `this git has no git daemon (${bin}/git-daemon, from git --exec-path, is not there): install it (Debian's git has it; Fedora and Alpine: the git-daemon package), or put a git that has it first on PATH`,
                    );
                    return true;
                });
            } finally {
                process.env.PATH = PATH;
                fs.rmSync(bin, { recursive: true, force: true });
            }
        });

        it("when it runs again, then nothing changes and the same commit comes back", async () => {
            const before = await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]);
            const again = await createShopRepo(layout, readRepoFiles());
            assert.strictEqual(again.initialCommit, initialCommit);
            assert.strictEqual(await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]), before);
            assert.strictEqual(await git(["--git-dir", layout.bareRepo, "rev-list", "--count", "main"]), "1");
        });

        it("when it is deleted, then exactly the bare repo and the clone are gone", async () => {
            const other = path.join(layout.workDir, "notes.txt");
            fs.writeFileSync(other, "a lab author's file");
            await deleteShopRepo(layout);
            assert.ok(!fs.existsSync(layout.bareRepo));
            assert.ok(!fs.existsSync(layout.clone));
            assert.strictEqual(fs.readFileSync(other, "utf8"), "a lab author's file");
        });
    });

    describe("given the bare repository deleted after step 1 (the clone kept)", () => {
        it("then it is made again from the clone's first commit, and the line says it was missing, not never pushed", async () => {
            const layout = tempLayout();
            try {
                const { initialCommit } = await createShopRepo(layout, readRepoFiles());
                fs.rmSync(layout.bareRepo, { recursive: true, force: true });
                const lines: string[] = [];
                const again = await createShopRepo(layout, readRepoFiles(), (l) => lines.push(l));
                assert.strictEqual(again.initialCommit, initialCommit);
                assert.strictEqual(await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]), initialCommit);
                assert.ok(
                    lines.some((l) =>
                        new RegExp(
                            `^\\S+shop-envs\\.git was missing \\(deleted\\?\\), while the clone holds its first commit ${initialCommit}, pushed before: made it again and pushing that commit$`,
                        ).test(l),
                    ),
                    lines.join("\n"),
                );
                assert.ok(!lines.some((l) => /made but not pushed/.test(l)), lines.join("\n"));
            } finally {
                fs.rmSync(layout.root, { recursive: true, force: true });
            }
        });
    });

    describe("given a repository at the path that the lab did not create", () => {
        it("then it refuses with a clear error and leaves it untouched", async () => {
            const layout = tempLayout();
            fs.mkdirSync(layout.bareDir, { recursive: true });
            await git(["init", "--quiet", "--bare", "--initial-branch=main", layout.bareRepo]);
            const other = fs.mkdtempSync(path.join(os.tmpdir(), "foreign-"));
            await git(["clone", "--quiet", layout.bareRepo, other]);
            fs.writeFileSync(path.join(other, "README"), "somebody's work\n");
            await git(["add", "README"], other);
            await git(["-c", "user.name=x", "-c", "user.email=x@x", "commit", "--quiet", "-m", "theirs"], other);
            await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], other);
            const theirs = await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]);

            await assert.rejects(
                createShopRepo(layout, readRepoFiles()),
                /already exists and was not created by this lab.*Nothing was changed/s,
            );
            assert.strictEqual(await git(["--git-dir", layout.bareRepo, "rev-parse", "main"]), theirs);
            assert.ok(!fs.existsSync(layout.clone), "no clone was made");

            await deleteShopRepo(layout);
            assert.ok(fs.existsSync(layout.bareRepo), "delete leaves a repository it did not create");
        });

        it("then a foreign directory at the clone's path is refused too", async () => {
            const layout = tempLayout();
            fs.mkdirSync(layout.clone, { recursive: true });
            fs.writeFileSync(path.join(layout.clone, "mine.txt"), "keep me");
            await assert.rejects(createShopRepo(layout, readRepoFiles()), /is not a clone of/);
            assert.strictEqual(fs.readFileSync(path.join(layout.clone, "mine.txt"), "utf8"), "keep me");
        });
    });
});
