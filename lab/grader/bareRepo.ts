/**
 * Read-only questions to a bare repository, asked directly (not through a lab's clone or its
 * bookkeeping), so the grader shares nothing with the scenario it grades.
 *
 * Through run() (lab/ports/exec.ts), not simple-git as the lab's own git work (lab/ports/git.ts): a
 * grading asks a few hundred of these, many of which answer by exit status alone (`cat-file -e`,
 * `merge-base --is-ancestor`), and simple-git waits 50 ms after every command that printed nothing.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { run } from "../ports/exec";

const isFullSha = (s: unknown): s is string => typeof s === "string" && /^[0-9a-f]{40}$/.test(s);

export class BareRepo {
    constructor(readonly gitDir: string) {}

    /**
     * Answers about commits, which never change, asked once per instance (a grading asks the same
     * ones many times): keyed by the question; only answers, never failures, are kept.
     */
    private readonly known = new Map<string, unknown>();
    private async once<T>(key: string, ask: () => Promise<T>): Promise<T> {
        if (this.known.has(key)) return this.known.get(key) as T;
        const answer = await ask();
        this.known.set(key, answer);
        return answer;
    }

    private async git(args: string[]) {
        return (await run("git", ["--git-dir", this.gitDir, ...args])).stdout;
    }
    exists(): boolean {
        return fs.existsSync(path.join(this.gitDir, "HEAD"));
    }
    async branch(name: string): Promise<string | null> {
        return this.git(["rev-parse", "--verify", "--quiet", `refs/heads/${name}^{commit}`]).then(
            (s) => s.trim(),
            () => null,
        );
    }
    /**
     * A branch's ref that names no commit (damaged by hand: not a SHA, an object the repository lacks,
     * not a commit): what it holds and where (its loose file, or packed-refs); null when the ref is
     * fine or absent. git ignores such a ref ("ignoring broken ref") and refuses to push or update it.
     */
    async brokenBranch(name: string): Promise<{ holds: string; file: string } | null> {
        if ((await this.branch(name)) !== null) return null;
        const shown = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);
        const loose = path.join(this.gitDir, "refs", "heads", ...name.split("/"));
        if (fs.existsSync(loose)) return { holds: shown(fs.readFileSync(loose, "utf8").trim()), file: loose };
        const packedFile = path.join(this.gitDir, "packed-refs");
        const packed = fs.existsSync(packedFile) ? fs.readFileSync(packedFile, "utf8") : "";
        const line = packed.split("\n").find((l) => l.split(" ")[1] === `refs/heads/${name}`);
        return line === undefined ? null : { holds: shown(line.split(" ")[0]), file: packedFile };
    }
    /** The commit any ref names (a clone's refs/remotes/origin/X), or null. */
    async ref(full: string): Promise<string | null> {
        return this.git(["rev-parse", "--verify", "--quiet", `${full}^{commit}`]).then(
            (s) => s.trim(),
            () => null,
        );
    }
    /** The commit a tag names, or null. */
    async tag(name: string): Promise<string | null> {
        return this.git(["rev-parse", "--verify", "--quiet", `refs/tags/${name}^{commit}`]).then(
            (s) => s.trim(),
            () => null,
        );
    }
    /** Every branch's name. */
    async branches(): Promise<string[]> {
        return this.git(["for-each-ref", "--format=%(refname:short)", "refs/heads/"]).then(
            (s) => s.split("\n").filter(Boolean),
            () => [],
        );
    }
    /** The branches whose tip is this commit. */
    async branchesAt(sha: string): Promise<string[]> {
        return this.git(["for-each-ref", "--points-at", sha, "--format=%(refname:short)", "refs/heads/"]).then(
            (s) => s.split("\n").filter(Boolean),
            () => [],
        );
    }
    /** The branches whose history holds this commit. */
    async branchesContaining(sha: string): Promise<string[]> {
        return this.git(["for-each-ref", "--contains", sha, "--format=%(refname:short)", "refs/heads/"]).then(
            (s) => s.split("\n").filter(Boolean),
            () => [],
        );
    }
    /** The repository's tags, by name. */
    async tags(): Promise<string[]> {
        return this.git(["for-each-ref", "--format=%(refname:strip=2)", "refs/tags/"]).then(
            (s) => s.split("\n").filter(Boolean),
            () => [],
        );
    }
    /** An object's type (commit, tag, tree, blob), or null when the repository has no such object. */
    async objectType(sha: string): Promise<string | null> {
        return this.git(["cat-file", "-t", sha]).then(
            (t) => t.trim(),
            () => null,
        );
    }
    /** The tags whose own object is `sha` (an annotated tag's SHA). */
    async tagsOfObject(sha: string): Promise<string[]> {
        return this.git(["for-each-ref", "--format=%(objectname) %(refname:strip=2)", "refs/tags/"]).then(
            (s) => s.split("\n").flatMap((l) => (l.startsWith(`${sha} `) ? [l.slice(sha.length + 1)] : [])),
            () => [],
        );
    }
    async isCommit(sha: unknown): Promise<boolean> {
        // a commit that is absent may be pushed later: only its presence is kept
        if (!isFullSha(sha)) return false;
        if (this.known.get(`commit ${sha}`)) return true;
        // the object itself (an annotated tag's own SHA names a tag object, which peels to a commit but is none)
        const present = (await this.objectType(sha)) === "commit";
        if (present) this.known.set(`commit ${sha}`, true);
        return present;
    }
    async parents(sha: string): Promise<string[]> {
        const key = isFullSha(sha) ? `parents ${sha}` : undefined;
        const ask = async () => (await this.git(["rev-list", "--parents", "-n", "1", sha])).trim().split(/\s+/).slice(1);
        return [...(key ? await this.once(key, ask) : await ask())];
    }
    async isAncestor(a: string, b: string): Promise<boolean> {
        const ask = () =>
            run("git", ["--git-dir", this.gitDir, "merge-base", "--is-ancestor", a, b]).then(
                () => true,
                (e) => {
                    if (e.exitCode === 1) return false;
                    throw e;
                },
            );
        return isFullSha(a) && isFullSha(b) ? this.once(`ancestor ${a} ${b}`, ask) : ask();
    }
    async file(sha: string, p: string): Promise<string | null> {
        const key = `file ${sha}:${p}`;
        if (isFullSha(sha) && this.known.has(key)) return this.known.get(key) as string;
        const text = await this.git(["show", `${sha}:${p}`]).catch(() => null);
        if (text !== null && isFullSha(sha)) this.known.set(key, text);
        return text;
    }
    /** Whether two commits hold the same files (the same tree). */
    async sameTree(a: string, b: string): Promise<boolean> {
        const ask = async () => {
            const [ta, tb] = await Promise.all([a, b].map(async (c) => (await this.git(["rev-parse", `${c}^{tree}`])).trim()));
            return ta === tb;
        };
        return isFullSha(a) && isFullSha(b) ? this.once(`same tree ${a} ${b}`, ask) : ask();
    }
    async message(sha: string): Promise<string> {
        const ask = () => this.git(["log", "-1", "--format=%B", sha]);
        return isFullSha(sha) ? this.once(`message ${sha}`, ask) : ask();
    }
    /** The merge commits on `tip`'s first-parent line that `base` does not hold: merges made on that branch itself. */
    async ownMerges(tip: string, base: string | null): Promise<string[]> {
        const ask = async () =>
            (await this.git(["rev-list", "--first-parent", "--merges", tip, ...(base ? ["--not", base] : [])])).split("\n").filter(Boolean);
        return isFullSha(tip) && (!base || isFullSha(base)) ? this.once(`merges ${tip} ${base}`, ask) : ask();
    }
    /** The paths a commit changes against its first parent (all of its files for a root commit). */
    /** The files a commit changes: against its parent, or `against` (one of a merge's parents: a merge alone lists none). */
    async changedFiles(sha: string, against?: string): Promise<string[]> {
        const ask = async () =>
            (await this.git(["diff-tree", "--no-commit-id", "--name-only", "-r", ...(against ? [against, sha] : ["--root", sha])]))
                .split("\n")
                .filter(Boolean);
        return isFullSha(sha) && (!against || isFullSha(against)) ? this.once(`changed ${sha} ${against ?? ""}`, ask) : ask();
    }
    /**
     * The commits a branch has stood at, newest first, from its reflog (the lab's repositories keep one:
     * core.logAllRefUpdates); null where the repository keeps none (one made by hand).
     */
    async tipsOf(branch: string): Promise<string[] | null> {
        if (!fs.existsSync(path.join(this.gitDir, "logs", "refs", "heads", ...branch.split("/")))) return null;
        return (await this.git(["reflog", "show", "--format=%H", `refs/heads/${branch}`])).split("\n").filter(Boolean);
    }
    /**
     * When the branch first held `sha` (its tip at it or past it), in ms, by its reflog; null where the repository keeps
     * none (one made by hand) or the reflog never shows it.
     */
    async heldSince(branch: string, sha: string): Promise<number | null> {
        if (!fs.existsSync(path.join(this.gitDir, "logs", "refs", "heads", ...branch.split("/")))) return null;
        const entries = (await this.git(["reflog", "show", "--date=unix", "--format=%H %gd", `refs/heads/${branch}`]))
            .split("\n")
            .filter(Boolean)
            .reverse(); // oldest first
        for (const e of entries) {
            const [tip, ref] = e.split(" ");
            const at = /@\{(\d+)\}$/.exec(ref ?? "")?.[1];
            if (at && (tip === sha || (await this.isAncestor(sha, tip)))) return Number(at) * 1000;
        }
        return null;
    }
    /** When a commit was made (its committer date), in ms. */
    async committedAt(sha: string): Promise<number> {
        const ask = async () => Date.parse((await this.git(["show", "-s", "--format=%cI", sha])).trim());
        return isFullSha(sha) ? this.once(`committed ${sha}`, ask) : ask();
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
        // what git upload-pack (the daemon's clone and fetch) never reads: hooks run on push, as the pusher
        const unread = new Set(["hooks", "description", "logs"].map((d) => path.join(this.gitDir, d)));
        const walk = (p: string) => {
            if (bad.length >= limit || unread.has(p)) return;
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

/** A clone's repository (its .git) with the clone's folder, as a grading names it: the lab's clone, or a served lab's. */
export const cloneAt = (dir: string) => ({ dir, repo: new BareRepo(path.join(dir, ".git")) });
