/**
 * The lab's git port (lab/ports/git.ts) over simple-git: commits as the lab's identity, answers
 * "is an ancestor" by git's exit status, and fails in one line naming the command and its status.
 */
import * as assert from "assert";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CloneGit, gitIn } from "../lab/ports/git";

describe("the lab's git port (simple-git)", function () {
    this.timeout(60_000);
    let dir: string;
    let clone: string;

    beforeEach(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "git-port-"));
        const bare = path.join(dir, "repo.git");
        clone = path.join(dir, "clone");
        await gitIn(dir, ["init", "--quiet", "--bare", "--initial-branch=main", bare]);
        await gitIn(dir, ["clone", "--quiet", bare, clone]);
        await gitIn(clone, ["symbolic-ref", "HEAD", "refs/heads/main"]);
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    // given a clone another user owns (the lab built as nobody, run on as root), then git's refusal in one line naming them
    it("a clone another user owns is refused in one line naming its owner", async function () {
        if (process.getuid?.() !== 0) this.skip(); // only root can give the clone to another user
        const git = new CloneGit(clone);
        await git.commitFiles({ "a.txt": "one\n" }, "first");
        // its .git alone another's: that is named
        fs.chownSync(path.join(clone, ".git"), 65534, 65534);
        await assert.rejects(git.revParse("HEAD"), (e: Error) =>
            e.message.startsWith(`${path.join(clone, ".git")} belongs to nobody (uid 65534)`),
        );
        fs.chownSync(path.join(clone, ".git"), 0, 0);
        fs.chownSync(clone, 65534, 65534);
        await assert.rejects(
            git.revParse("HEAD"),
            (e: Error) =>
                !e.message.includes("\n") &&
                new RegExp(
                    `^${clone} belongs to nobody \\(uid 65534\\), not to you \\(uid 0\\), and git refuses to work in it: run the lab as nobody, as it was built \\(sudo -u nobody \\.\\.\\.\\)`,
                ).test(e.message),
        );
    });

    it("given two commits pushed, then the later one descends from the earlier, not the other way round, and both are the lab's identity's", async () => {
        const git = new CloneGit(clone);
        const first = await git.commitFiles({ "a.txt": "one\n" }, "first");
        await git.pushTo(first, "main");
        const second = await git.commitFiles({ "a.txt": "two\n" }, "second");
        await git.pushTo(second, "main");

        assert.strictEqual(await git.isAncestor(first, second), true);
        assert.strictEqual(await git.isAncestor(second, first), false);
        assert.strictEqual(await git.parentOf(second), first);
        assert.strictEqual(await git.subjectOf(second), "second");
        assert.strictEqual(await git.remoteBranch("main"), second);
        assert.strictEqual(await git.ensureInSync("main"), second);
        assert.strictEqual((await gitIn(clone, ["log", "-1", "--format=%an <%ae>"])).trim(), "GitOps Lab <gitops-lab@localhost>");
    });

    it("given a commit made in the clone and not pushed, then the clone is not in sync, and the error says how to keep it", async () => {
        const git = new CloneGit(clone);
        await git.pushTo(await git.commitFiles({ "a.txt": "one\n" }, "first"), "main");
        await git.commitFiles({ "a.txt": "two\n" }, "mine");
        await assert.rejects(
            git.ensureInSync("main"),
            /the clone \S+ has commits the remote's main lacks \(at [0-9a-f]{40}; git log origin\/main\.\.main lists them\): nothing was committed or pushed; push them \(git -C \S+ push origin main\) or keep them on a branch of their own/,
        );
    });

    it("given a clone whose path has a space and a quote, then the commands the error gives are quoted for a shell", async () => {
        const odd = path.join(dir, "it's my lab");
        fs.renameSync(clone, odd);
        const git = new CloneGit(odd);
        await git.pushTo(await git.commitFiles({ "a.txt": "one\n" }, "first"), "main");
        await git.commitFiles({ "a.txt": "two\n" }, "mine");
        const quoted = `'${odd.replace(/'/g, `'\\''`)}'`;
        await assert.rejects(git.ensureInSync("main"), (e: Error) => {
            assert.ok(e.message.includes(`push them (git -C ${quoted} push origin main)`), e.message);
            assert.ok(e.message.includes(`git -C ${quoted} reset --hard origin/main`), e.message);
            return true;
        });
    });

    it("given a learner's hook that refuses every commit and push (from their git template), then the lab's own commit and push still go", async () => {
        for (const hook of ["pre-commit", "commit-msg", "pre-push"]) {
            fs.writeFileSync(path.join(clone, ".git", "hooks", hook), "#!/bin/sh\necho refused by the learner's hook; exit 1\n", {
                mode: 0o755,
            });
        }
        const git = new CloneGit(clone);
        const sha = await git.commitFiles({ "a.txt": "one\n" }, "first");
        await git.pushTo(sha, "main");
        assert.strictEqual(await git.remoteBranch("main"), sha);
        // the hooks stay where the learner put them: their own commits still run them
        assert.ok(fs.existsSync(path.join(clone, ".git", "hooks", "pre-commit")));
    });

    it("given a learner's git that signs every commit, tag and push (a key gpg cannot use), then the lab's own commit still goes", async () => {
        for (const c of [
            ["commit.gpgSign", "true"],
            ["tag.gpgSign", "true"],
            ["push.gpgSign", "true"],
            ["user.signingKey", "0123456789ABCDEF0123456789ABCDEF01234567"],
        ])
            execFileSync("git", ["-C", clone, "config", ...c]);
        const git = new CloneGit(clone);
        const sha = await git.commitFiles({ "a.txt": "one\n" }, "first");
        await git.pushTo(sha, "main");
        assert.strictEqual(await git.remoteBranch("main"), sha);
        // the learner's setting stays: their own commits are signed
        assert.strictEqual(execFileSync("git", ["-C", clone, "config", "commit.gpgSign"], { encoding: "utf8" }).trim(), "true");
    });

    it("given a change in the work tree not committed, then the clone is not in sync, and the error names the file", async () => {
        const git = new CloneGit(clone);
        await git.pushTo(await git.commitFiles({ "a.txt": "one\n" }, "first"), "main");
        fs.writeFileSync(path.join(clone, "a.txt"), "edited by hand\n");
        await assert.rejects(
            git.ensureInSync("main"),
            /the clone \S+ has uncommitted changes \(M a\.txt\): commit or discard them, then run again$/,
        );
    });

    it("when git fails, then the error is one line naming the command and git's exit status, and carries that status", async () => {
        const git = new CloneGit(clone);
        await assert.rejects(git.revParse("no-such-branch"), (e: any) => {
            assert.match(e.message, /^git rev-parse --verify --end-of-options no-such-branch\^\{commit\} failed \(exit 128\): fatal: /);
            assert.strictEqual(e.exitCode, 128);
            return true;
        });
    });

    it("when git refuses a branch name, then nothing is pushed and the error says so", async () => {
        const git = new CloneGit(clone);
        const sha = await git.commitFiles({ "a.txt": "one\n" }, "first");
        await assert.rejects(git.pushTo(sha, "bad..name"), /"bad\.\.name" is not a valid git branch name/);
        assert.strictEqual(await git.remoteBranch("main"), null);
    });
});
