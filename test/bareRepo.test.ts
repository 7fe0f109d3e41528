/**
 * The grader's questions to a bare repository (lab/grader/bareRepo.ts): answers about a commit, which
 * never change, are asked of git once per instance; an absent commit is asked again (it may be pushed).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { BareRepo } from "../lab/grader/bareRepo";
import { run } from "../lab/ports/exec";

describe("the grader's bare repository", function () {
    this.timeout(60_000);
    let dir: string;
    let bare: string;
    let clone: string;
    const git = async (args: string[], cwd = clone) =>
        (await run("git", ["-c", "user.name=t", "-c", "user.email=t@localhost", ...args], { cwd })).stdout.trim();
    const commit = async (text: string) => {
        fs.writeFileSync(path.join(clone, "f"), text);
        await git(["add", "f"]);
        await git(["commit", "--quiet", "-m", `set ${text}`]);
        return git(["rev-parse", "HEAD"]);
    };

    beforeEach(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "bare-repo-"));
        bare = path.join(dir, "repo.git");
        clone = path.join(dir, "clone");
        await git(["init", "--quiet", "--bare", "--initial-branch=main", bare], dir);
        await git(["clone", "--quiet", bare, clone], dir);
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    // given commits asked about once, when the repository is gone, then the same instance answers as before (git is not
    // asked again), and a new one finds nothing
    it("answers about commits are kept per instance", async () => {
        const a = await commit("one");
        const b = await commit("two");
        await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"]);
        const repo = new BareRepo(bare);
        const ask = async () => ({
            isCommit: await repo.isCommit(b),
            parents: await repo.parents(b),
            isAncestor: await repo.isAncestor(a, b),
            notAncestor: await repo.isAncestor(b, a),
            message: await repo.message(b),
            file: await repo.file(b, "f"),
        });
        const first = await ask();
        assert.deepStrictEqual(first, {
            isCommit: true,
            parents: [a],
            isAncestor: true,
            notAncestor: false,
            message: "set two\n\n",
            file: "two",
        });
        fs.rmSync(bare, { recursive: true, force: true });
        assert.deepStrictEqual(await ask(), first);
        assert.strictEqual(await new BareRepo(bare).isCommit(b), false);
    });

    it("given a commit not in the repository when asked, when it is pushed, then the same instance finds it", async () => {
        const a = await commit("one");
        const repo = new BareRepo(bare);
        assert.strictEqual(await repo.isCommit(a), false);
        assert.strictEqual(await repo.file(a, "f"), null);
        await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"]);
        assert.strictEqual(await repo.isCommit(a), true);
        assert.strictEqual(await repo.file(a, "f"), "one");
    });
});
