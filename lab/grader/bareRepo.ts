/**
 * Read-only questions to a bare repository, asked directly (not through a lab's clone or its
 * bookkeeping), so the grader shares nothing with the scenario it grades.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { run } from "../ports/exec";

const isFullSha = (s: unknown): s is string => typeof s === "string" && /^[0-9a-f]{40}$/.test(s);

export class BareRepo {
    constructor(readonly gitDir: string) {}

    private async git(args: string[]) {
        return (await run("git", ["--git-dir", this.gitDir, ...args])).stdout;
    }
    exists(): boolean {
        return fs.existsSync(path.join(this.gitDir, "HEAD"));
    }
    async branch(name: string): Promise<string | null> {
        return this.git(["rev-parse", "--verify", "--quiet", `refs/heads/${name}^{commit}`]).then((s) => s.trim(), () => null);
    }
    async isCommit(sha: unknown): Promise<boolean> {
        return isFullSha(sha) && (await this.git(["cat-file", "-e", `${sha}^{commit}`]).then(() => true, () => false));
    }
    async parents(sha: string): Promise<string[]> {
        return (await this.git(["rev-list", "--parents", "-n", "1", sha])).trim().split(/\s+/).slice(1);
    }
    async isAncestor(a: string, b: string): Promise<boolean> {
        return run("git", ["--git-dir", this.gitDir, "merge-base", "--is-ancestor", a, b]).then(
            () => true,
            (e) => {
                if (e.exitCode === 1) return false;
                throw e;
            },
        );
    }
    async file(sha: string, p: string): Promise<string | null> {
        return this.git(["show", `${sha}:${p}`]).catch(() => null);
    }
    async message(sha: string): Promise<string> {
        return this.git(["log", "-1", "--format=%B", sha]);
    }
    async rootOf(branch: string): Promise<string> {
        const roots = (await this.git(["rev-list", "--max-parents=0", `refs/heads/${branch}`])).trim().split("\n");
        return roots[roots.length - 1];
    }
    /** Runs `f` on the tree of a commit, checked out into a temporary directory (the commit's files, nothing else) removed afterwards. */
    async withTree<T>(sha: string, f: (dir: string) => Promise<T>): Promise<T> {
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "grader-"));
        try {
            const tar = path.join(tmp, "src.tar");
            const tree = path.join(tmp, "tree");
            fs.mkdirSync(tree);
            await this.git(["archive", "--format=tar", "-o", tar, sha]);
            await run("tar", ["-xf", tar, "-C", tree]);
            return await f(tree);
        } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    }
    /**
     * Paths under the repository that others cannot read (files) or enter (directories): the git
     * daemon runs as nobody. At most `limit` of them.
     */
    unreadableByOthers(limit = 5): string[] {
        const bad: string[] = [];
        const walk = (p: string) => {
            if (bad.length >= limit) return;
            const st = fs.lstatSync(p);
            if (st.isSymbolicLink()) return;
            const need = st.isDirectory() ? 0o005 : 0o004;
            if ((st.mode & need) !== need) bad.push(path.relative(this.gitDir, p) || ".");
            if (st.isDirectory()) for (const e of fs.readdirSync(p).sort()) walk(path.join(p, e));
        };
        walk(this.gitDir);
        return bad;
    }
}
