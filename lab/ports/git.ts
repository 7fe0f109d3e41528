/**
 * The git port: everything the scenario does to the lab repository, over the working clone, through
 * simple-git. Never force-pushes; ref names are checked with `git check-ref-format` before use.
 */
import { shellWord } from "./shellWord";
import * as fs from "fs";
import * as path from "path";
import { GitError, GitPluginError, simpleGit } from "simple-git";
import { exitCodeOf, messageOf } from "./errors";
import { namesGitLocation } from "./exec";

export const LAB_GIT_IDENTITY = ["user.name=GitOps Lab", "user.email=gitops-lab@localhost"];
/** The learner's signing turned off for the lab's own commits, tags and pushes. */
const SIGNING_OFF = ["commit.gpgSign=false", "tag.gpgSign=false", "push.gpgSign=false"];

/** How long one git command may run: no git call may hang a pulumi up forever (the engine has no timeout of its own). */
export const GIT_DEADLINE_MS = 120_000;

export interface GitOptions {
    /** git config keys the command writes besides the identity (simple-git warns on keys it does not know as safe). */
    allowConfig?: string[];
}

/**
 * `git <args>` in `dir` as the lab's identity, through simple-git; its stdout. A new instance per
 * command gives each its own deadline (simple-git's abort signal belongs to the instance). A failure
 * names the command and carries git's exit status as `exitCode`: simple-git counts a non-zero exit as
 * a failure only when git wrote to stderr, and `merge-base --is-ancestor` says "no" by its status alone.
 * `--git-dir` is allowed (simple-git's allowUnsafeConfigPaths): the lab names its own bare
 * repositories that way, so that git never looks for a repository in the folders above one.
 * simple-git waits 50 ms after a command that printed nothing, so the lab's commands print where git
 * lets them (`--verbose` rather than `--quiet`, a status with its branch line).
 */
export async function gitIn(dir: string, args: string[], opts: GitOptions = {}): Promise<string> {
    // simple-git reads this process's folder for every instance: one that is gone (a shell left in a deleted folder, the
    // lab's clone a reset removed under it) would fail every git command, and the lab's repository be taken for another's;
    // such a process goes on from / (its paths are absolute by then)
    try {
        process.cwd();
    } catch {
        process.chdir("/");
    }
    const git = simpleGit({
        baseDir: dir,
        // the learner's hooks (a pre-commit of their git template, copied into every clone) are not run for the lab's own
        // commands: the lab's commits are its own, and a hook of theirs that refuses them would stop the lab for good; nor
        // is their signing (commit.gpgSign with a key that needs a passphrase, or one gpg cannot find) asked of them
        config: [...LAB_GIT_IDENTITY, "core.hooksPath=/dev/null", ...SIGNING_OFF],
        abort: AbortSignal.timeout(GIT_DEADLINE_MS),
        // (allowUnsafeHooksPath: the hooksPath set below, /dev/null, is the lab's own: it turns the hooks off)
        unsafe: { allowUnsafeConfigPaths: true, allowUnsafeHooksPath: true },
        // (the signing keys listed: simple-git warns on stderr of every key it does not know as safe)
        allowConfig: [...SIGNING_OFF.map((c) => c.split("=")[0]), ...(opts.allowConfig ?? [])],
        errors: (error, result) => {
            if (result.exitCode === 0) return error;
            const text = Buffer.concat([...result.stdErr, ...result.stdOut])
                .toString("utf8")
                .trim();
            return Object.assign(new GitError(undefined, text || `exit ${result.exitCode}`), { exitCode: result.exitCode });
        },
    });
    // a repository named by the user's environment (GIT_DIR left exported) is not the lab's: git then runs with the
    // little it needs (simple-git refuses to pass on the rest of an environment, GIT_SSL_CAINFO and the like)
    if (namesGitLocation())
        git.env(
            Object.fromEntries(
                ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"].flatMap((k) => (process.env[k] === undefined ? [] : [[k, process.env[k]!]])),
            ),
        );
    try {
        return await git.raw(args);
    } catch (e) {
        const why =
            e instanceof GitPluginError && e.plugin === "abort"
                ? `did not finish within ${GIT_DEADLINE_MS / 1000} s`
                : /\bENOENT\b/.test(messageOf(e))
                  ? "git is not installed or not on PATH"
                  : `exit ${exitCodeOf(e) ?? "?"}`;
        const owned = ownedByAnother(messageOf(e));
        if (owned) throw Object.assign(new Error(owned), { exitCode: exitCodeOf(e) });
        throw Object.assign(new Error(`git ${args.join(" ")} failed (${why}): ${messageOf(e).trim()}`), { exitCode: exitCodeOf(e) });
    }
}

/**
 * git's refusal of a repository another user owns (its several lines of "dubious ownership"), said in one line
 * naming the owner: the lab built as one user and run on as another (sudo). Undefined for any other failure.
 */
function ownedByAnother(text: string): string | undefined {
    const repo = /detected dubious ownership in repository at '(.+)'$/m.exec(text)?.[1];
    if (!repo) return undefined;
    const read = <T>(f: () => T): T | undefined => {
        try {
            return f();
        } catch {
            return undefined;
        }
    };
    // the folder git found another's: the work tree, or its .git alone (named on a line of its own by newer gits)
    const named = /^'(.+)' is owned by:$/m.exec(text)?.[1];
    const at = named ?? [repo, path.join(repo, ".git")].find((p) => read(() => fs.statSync(p).uid) !== process.getuid?.()) ?? repo;
    const uid = read(() => fs.statSync(at).uid);
    // the owner's name from the password file, where it is there (no library for one field of it)
    const name = read(() => fs.readFileSync("/etc/passwd", "utf8"))
        ?.split("\n")
        .map((l) => l.split(":"))
        .find((f) => uid !== undefined && f[2] === String(uid))?.[0];
    const owner = uid === undefined ? "another user" : name ? `${name} (uid ${uid})` : `uid ${uid}`;
    return `${at} belongs to ${owner}, not to you (uid ${process.getuid?.()}), and git refuses to work in it: run the lab as ${name ?? "its owner"}, as it was built${name ? ` (sudo -u ${name} ...)` : ""}, or give it to yourself (chown -R) if it is yours`;
}

export interface GitPort {
    /** Full SHA of a revision of the clone. */
    revParse(rev: string): Promise<string>;
    /** Full SHA of a branch on the remote (`origin`), or null; its commits are fetched into the clone. */
    remoteBranch(branch: string): Promise<string | null>;
    /**
     * Makes sure the clone is on `branch` and exactly at the remote's tip of it (refuses if either moved). Uncommitted
     * changes refuse it too, unless they are exactly `mayHold` (files with this content: the caller's own write, which a
     * run stopped before its commit left).
     */
    ensureInSync(branch: string, mayHold?: Record<string, string>): Promise<string>;
    /**
     * Why the clone cannot be committed on for `branch` now, said before the steps that would: on another branch, changes
     * not committed (but in `mayChange`, the files a step writes itself), or commits not pushed; undefined when it can.
     */
    notReadyFor(branch: string, mayChange: readonly string[]): Promise<string | undefined>;
    /** Writes files (relative paths) into the work tree, commits them, and returns the new commit's SHA. */
    commitFiles(files: Record<string, string>, message: string): Promise<string>;
    /** Reads a file as HEAD holds it. */
    readCommittedFile(relPath: string): Promise<string>;
    /** `git push origin <sha>:refs/heads/<branch>`, never forced: a non-fast-forward is refused by git. */
    pushTo(sha: string, branch: string): Promise<void>;
    /** `git merge-base --is-ancestor a b`. */
    isAncestor(a: string, b: string): Promise<boolean>;
    /** The first parent of a commit. */
    parentOf(sha: string): Promise<string>;
    /** The first line of a commit's message. */
    subjectOf(sha: string): Promise<string>;
    /** `git revert --no-edit <sha>` on the current branch; returns the new commit's SHA. */
    revert(sha: string): Promise<string>;
}

/** Branch names git accepted in this process: its rule does not change, so each is asked once. */
const validBranches = new Set<string>();

export async function checkRefFormat(branch: string): Promise<void> {
    if (validBranches.has(branch)) return;
    try {
        await gitIn("/", ["check-ref-format", "--branch", branch]);
    } catch {
        throw new Error(`"${branch}" is not a valid git branch name (git check-ref-format --branch refused it)`);
    }
    validBranches.add(branch);
}

export function isFullSha(s: unknown): s is string {
    return typeof s === "string" && /^[0-9a-f]{40}$/.test(s);
}

export class CloneGit implements GitPort {
    /** `git <args>` in the clone, as the lab's identity; its stdout (gitIn). */
    private readonly git = { raw: (args: string[]): Promise<string> => gitIn(this.clone, args) };

    constructor(private readonly clone: string) {
        if (!fs.existsSync(path.join(clone, ".git"))) {
            throw new Error(`${clone} is not a git clone of the lab repository (no .git); build the lab (step 1) first`);
        }
    }

    async revParse(rev: string): Promise<string> {
        return (await this.git.raw(["rev-parse", "--verify", "--end-of-options", `${rev}^{commit}`])).trim();
    }

    async remoteBranch(branch: string): Promise<string | null> {
        await checkRefFormat(branch);
        const out = (await this.git.raw(["ls-remote", "origin", `refs/heads/${branch}`])).trim();
        if (!out) return null;
        // bring its commits in, so ancestry questions about them can be answered locally
        await this.git.raw(["fetch", "--verbose", "origin", `+refs/heads/${branch}:refs/remotes/origin/${branch}`]);
        return out.split(/\s+/)[0];
    }

    async ensureInSync(branch: string, mayHold: Record<string, string> = {}): Promise<string> {
        await checkRefFormat(branch);
        // the caller's own write, stopped before its commit: every change a file it writes, as it writes it
        const own = (rel: string) =>
            rel in mayHold &&
            fs.existsSync(path.join(this.clone, rel)) &&
            fs.readFileSync(path.join(this.clone, rel), "utf8") === mayHold[rel];
        const { why, local } = await this.readyFor(branch, own);
        if (why) throw new Error(why);
        return local;
    }

    async notReadyFor(branch: string, mayChange: readonly string[]): Promise<string | undefined> {
        return (await this.readyFor(branch, (rel) => mayChange.includes(rel))).why;
    }

    /**
     * Whether a step may commit on the clone's `branch`: checked out (not another branch, not a detached HEAD),
     * no uncommitted change but those `own` allows (by path), at the remote's commit. `why` says what is not so.
     */
    private async readyFor(branch: string, own: (rel: string) => boolean): Promise<{ why?: string; local: string }> {
        const current = (await this.git.raw(["rev-parse", "--abbrev-ref", "HEAD"])).trim();
        const local = await this.revParse("HEAD");
        if (current === "HEAD")
            return {
                local,
                why: `the clone ${this.clone} has a detached HEAD (at ${local}), not ${branch} checked out; check it out (git -C ${shellWord(this.clone)} switch ${branch}) and run again`,
            };
        if (current !== branch)
            return { local, why: `the clone ${this.clone} is on "${current}", not "${branch}"; check out ${branch} there and run again` };
        const changed = (await this.git.raw(["status", "--porcelain", "--untracked-files=no"]))
            .split("\n")
            .filter((l) => l.trim() && !own(l.slice(3)))
            .map((l) => l.trim());
        if (changed.length) {
            // one line: the first few files (git status --short in the clone shows them all)
            const shown = changed.slice(0, 5).join(", ") + (changed.length > 5 ? `, and ${changed.length - 5} more` : "");
            return { local, why: `the clone ${this.clone} has uncommitted changes (${shown}): commit or discard them, then run again` };
        }
        return { local, why: await this.apartFrom(branch, local) };
    }

    /** Why the clone's `branch` (at `local`) and the remote's are not at one commit (behind, ahead, apart), or undefined. */
    private async apartFrom(branch: string, local: string): Promise<string | undefined> {
        const remote = await this.remoteBranch(branch);
        if (remote && remote !== local && (await this.isAncestor(local, remote)))
            return (
                `the remote's ${branch} is at ${remote}, ahead of the clone ${this.clone} (at ${local}): pushed from elsewhere ` +
                `(another clone or a worktree), or the clone's ${branch} moved back since (git reset). Nothing was committed or pushed; bring the clone up to it (git -C ${shellWord(this.clone)} pull --ff-only), then run again`
            );
        const ahead = await this.aheadOf(branch, local, remote);
        if (ahead) return ahead;
        if (remote !== local) {
            // neither ahead of the other: the clone's own commit rewritten (amend, rebase) after its push, or another's push
            return remote
                ? `the clone ${this.clone}'s ${branch} (at ${local}) and the remote's (at ${remote}) have gone apart: a commit of the clone's rewritten after its push (git commit --amend, a rebase), or a push from elsewhere. Nothing was committed or pushed; keep yours on a branch and put ${branch} back at the remote's (git -C ${shellWord(this.clone)} branch my-work && git -C ${shellWord(this.clone)} reset --hard origin/${branch}), then run again`
                : `the remote has no ${branch} (deleted?), while the clone ${this.clone} is at ${local}. Nothing was committed or pushed; push it back (git -C ${shellWord(this.clone)} push origin ${branch}), then run again`;
        }
        return undefined;
    }

    /**
     * Why the clone's HEAD cannot be committed on: it holds commits the remote's `branch` lacks (the learner's, not
     * pushed); undefined otherwise. `local` and `remote`: HEAD's and the remote branch's commits, where already read.
     */
    private async aheadOf(branch: string, local?: string, remote?: string | null): Promise<string | undefined> {
        local ??= await this.revParse("HEAD");
        if (remote === undefined) remote = await this.remoteBranch(branch);
        if (!remote || remote === local || !(await this.isAncestor(remote, local))) return undefined;
        return (
            `the clone ${this.clone} has commits the remote's ${branch} lacks (at ${remote}; git log origin/${branch}..${branch} lists them): ` +
            `nothing was committed or pushed; push them (git -C ${shellWord(this.clone)} push origin ${branch}) or keep them on a branch of their own and put ${branch} back (git -C ${shellWord(this.clone)} branch my-work && git -C ${shellWord(this.clone)} reset --hard origin/${branch}), then run again`
        );
    }

    async commitFiles(files: Record<string, string>, message: string): Promise<string> {
        for (const [rel, content] of Object.entries(files)) {
            const abs = path.join(this.clone, rel);
            fs.mkdirSync(path.dirname(abs), { recursive: true });
            fs.writeFileSync(abs, content);
        }
        await this.git.raw(["add", "--verbose", "--", ...Object.keys(files)]);
        await this.git.raw(["commit", "-m", message]);
        return this.revParse("HEAD");
    }

    async readCommittedFile(relPath: string): Promise<string> {
        return this.git.raw(["show", `HEAD:${relPath}`]);
    }

    async pushTo(sha: string, branch: string): Promise<void> {
        await checkRefFormat(branch);
        if (!isFullSha(sha)) throw new Error(`refusing to push "${sha}": not a full commit SHA`);
        await this.git.raw(["push", "origin", `${sha}:refs/heads/${branch}`]);
        // keep origin/<branch> in the clone current, for people who look at it by hand
        await this.git.raw(["fetch", "--verbose", "origin"]);
    }

    async isAncestor(a: string, b: string): Promise<boolean> {
        // the exit status is the answer: 0 yes, 1 no, else an error
        try {
            await this.git.raw(["merge-base", "--is-ancestor", a, b]);
            return true;
        } catch (e) {
            if (exitCodeOf(e) === 1) return false;
            throw e;
        }
    }

    async parentOf(sha: string): Promise<string> {
        return this.revParse(`${sha}^1`);
    }

    async subjectOf(sha: string): Promise<string> {
        return (await this.git.raw(["log", "-1", "--format=%s", sha, "--"])).trim();
    }

    async revert(sha: string): Promise<string> {
        await this.git.raw(["revert", "--no-edit", sha]);
        return this.revParse("HEAD");
    }
}
