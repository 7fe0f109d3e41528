/**
 * A lab's repository on the host: the bare repository the git daemon serves and the working clone,
 * with the first commit on main. Each lab (shop, tenants) says what makes it its own (RepoKind).
 * Everything created is marked, so a second run recognises its own work and a delete removes
 * exactly that, and nothing that somebody else put at the same paths.
 */
import { shellWord } from "../ports/shellWord";
import * as fs from "fs";
import * as path from "path";
import { run } from "../ports/exec";
import { mkdirReadable } from "../ports/files";
import { LAB_GIT_IDENTITY, gitIn } from "../ports/git";

/** git config key in the bare repository that says "the lab made this". */
export const OWNER_KEY = "gitops-lab.owner";
const INITIAL_KEY = "gitops-lab.initialcommit";

/** Where a lab repository lives on the host. */
export interface RepoSite {
    /** Directory the git daemon serves. */
    bareDir: string;
    /** The bare repository. */
    bareRepo: string;
    /** The lab's working directory. */
    workDir: string;
    /** The working clone. */
    clone: string;
}

/** What makes one lab's repository its own. */
export interface RepoKind {
    /** The value of gitops-lab.owner in the bare repository ("shop-repo", "platform-repo"). */
    owner: string;
    /** The first commit's message. */
    initialMessage: string;
    /** Checks the files in the clone before the first commit (e.g. that kustomize renders them). */
    check?: (clone: string, log: Log) => Promise<void>;
}

export interface LabRepoResult {
    /** SHA of the first commit on main. */
    initialCommit: string;
}

export type Log = (line: string) => void;

/**
 * `git <args>` (in `cwd`, else this process's folder) as the lab's identity, through simple-git; its
 * stdout, trimmed. Commands run without `--quiet` where git then prints (simple-git waits 50 ms after
 * a command that printed nothing: lab/ports/git.ts).
 */
async function git(args: string[], cwd?: string): Promise<string> {
    // a command that names its repository (--git-dir, absolute paths) runs from /: the folder it was started from may be
    // the lab's clone, which a reset removes on the way (process.cwd() then throws, and git cannot start there)
    return (await gitIn(cwd ?? "/", args, { allowConfig: [OWNER_KEY, INITIAL_KEY, "core.sharedRepository"] })).trim();
}

async function configGet(gitDir: string, key: string): Promise<string | null> {
    try {
        return await git(["--git-dir", gitDir, "config", "--get", key]);
    } catch {
        return null;
    }
}

function exists(p: string): boolean {
    return fs.existsSync(p);
}

function isEmptyDir(p: string): boolean {
    return fs.readdirSync(p).length === 0;
}

/** Is the bare repository at this path one the lab created? */
export async function isOurBareRepo(bareRepo: string, owner: string): Promise<boolean> {
    if (!exists(bareRepo)) return false;
    return (await configGet(bareRepo, OWNER_KEY)) === owner;
}

async function isOurClone(layout: RepoSite): Promise<boolean> {
    if (!exists(path.join(layout.clone, ".git"))) return false;
    const url = await configGet(path.join(layout.clone, ".git"), "remote.origin.url");
    return url !== null && path.resolve(url) === path.resolve(layout.bareRepo);
}

/** The name of the clone's remote that is the lab's bare repository (origin renamed: upstream), or undefined. */
async function remoteNamed(clone: string, bareRepo: string): Promise<string | undefined> {
    const urls = await git(["--git-dir", path.join(clone, ".git"), "config", "--get-regexp", "^remote\\..*\\.url$"]).catch(() => "");
    const line = urls.split("\n").find((l) => l.includes(" ") && path.resolve(l.split(" ").slice(1).join(" ")) === path.resolve(bareRepo));
    return line ? /^remote\.(.+)\.url /.exec(line)?.[1] : undefined;
}

/** Whether the clone has a remote of any name (origin renamed: upstream) that is the lab's bare repository. */
async function isCloneOfBare(layout: RepoSite): Promise<boolean> {
    return exists(path.join(layout.clone, ".git")) && (await remoteNamed(layout.clone, layout.bareRepo)) !== undefined;
}

/** Files of a repository are 0644 and directories 0755 whatever the pusher's umask (git's core.sharedRepository). */
export const SHARED_REPOSITORY = "0644";

/** The path a half-built copy of `final` is made at, renamed into place only when complete. */
const partial = (final: string) => path.join(path.dirname(final), `.${path.basename(final)}.partial`);

/**
 * Creates (or recognises) the bare repository and the clone, and pushes the first commit.
 * `files` maps repository paths (base/configmap.yaml, ...) to their contents.
 *
 * Safe to interrupt at any instant: the bare repository and the clone are built under a
 * `.partial` name and renamed into place when complete (a leftover `.partial` is the lab's own
 * and is rebuilt), and the first commit is recognised wherever a run stopped: made but not pushed,
 * pushed but not recorded.
 */
export async function createLabRepo(
    layout: RepoSite,
    kind: RepoKind,
    files: Record<string, string>,
    log: Log = () => {},
): Promise<LabRepoResult> {
    const { bareRepo, clone } = layout;

    if (exists(bareRepo)) {
        if (!(await isOurBareRepo(bareRepo, kind.owner))) {
            throw new Error(
                `${bareRepo} already exists and was not created by this lab (its git config has no ${OWNER_KEY}). ` +
                    `Nothing was changed. Move it away, or set the stack's "root" to another prefix, then run again.`,
            );
        }
        // pushes by root keep the umask's bits off: keep an existing repository readable too
        await git(["--git-dir", bareRepo, "config", "core.sharedRepository", SHARED_REPOSITORY]);
        const initial = await configGet(bareRepo, INITIAL_KEY);
        if (initial) {
            if (!exists(clone)) {
                log(`clone ${clone} is missing; cloning it again`);
                await cloneBare(layout);
            } else if (!(await isOurClone(layout))) {
                // a clone of the same repository at the root's other place (the root copied or moved): pointed here, it is this one's
                const url = await configGet(path.join(clone, ".git"), "remote.origin.url");
                const moved = url && path.basename(url) === path.basename(bareRepo) && url !== bareRepo;
                // a URL (a served lab's git daemon, git://127.0.0.1:PORT/...): the clone reads through it, and pushes nowhere
                const served = url && /^git:\/\//i.test(url);
                // the repository under another remote name (origin renamed: upstream): the lab pushes to origin
                const renamed = url ? undefined : await remoteNamed(clone, bareRepo);
                throw new Error(
                    renamed
                        ? `${clone} reaches ${bareRepo} as its remote ${renamed}, not as origin, the remote the lab pushes to. Nothing was changed. Name it origin again (git -C ${shellWord(clone)} remote rename ${renamed} origin), then run again.`
                        : served
                          ? `${clone}'s origin is ${url}, a URL (a served lab's git daemon is one), not ${bareRepo}: the git daemon serves to read, and the lab's clone pushes to the repository by its path. Nothing was changed. Point it back (git -C ${shellWord(clone)} remote set-url origin ${shellWord(bareRepo)}), then run again; a clone to read through the daemon is made elsewhere (git clone ${url} DIR).`
                          : moved
                            ? `${clone}'s origin is ${url}, the repository at the root it was copied or moved from, not ${bareRepo}. Nothing was changed. If the root was moved, point it here (git -C ${shellWord(clone)} remote set-url origin ${shellWord(bareRepo)}), then run again; else move it away.`
                            : `${clone} exists but is not a clone of ${bareRepo}. Nothing was changed. Move it away, then run again.`,
                );
            }
            await makeWorldReadable(layout);
            log(`repository already in place at ${bareRepo} (first commit ${initial.slice(0, 12)})`);
            return { initialCommit: initial };
        }
        // ours, but the first commit was never recorded: carry on below
    } else {
        mkdirReadable(path.dirname(bareRepo));
        const tmp = partial(bareRepo);
        fs.rmSync(tmp, { recursive: true, force: true });
        await git(["init", "--bare", "--initial-branch=main", `--shared=${SHARED_REPOSITORY}`, tmp]);
        await git(["--git-dir", tmp, "config", OWNER_KEY, kind.owner]);
        // every push recorded in the branch's reflog: the grader reads where a branch has stood (a bad commit pushed on
        // its own, or together with its revert), which a bare repository does not keep by default
        await git(["--git-dir", tmp, "config", "core.logAllRefUpdates", "always"]);
        fs.renameSync(tmp, bareRepo);
        log(`created bare repository ${bareRepo} (core.sharedRepository=${SHARED_REPOSITORY})`);
    }

    if (exists(clone) && !isEmptyDir(clone) && !(await isOurClone(layout))) {
        throw new Error(
            `${clone} already exists and is not a clone of ${bareRepo}. Nothing in it was changed. Move it away, then run again.`,
        );
    }
    if (!exists(path.join(clone, ".git"))) {
        if (exists(clone)) fs.rmdirSync(clone); // empty
        await cloneBare(layout);
    }

    const sha = await pushInitialCommit(layout, kind, files, log);
    await git(["branch", "--set-upstream-to=origin/main", "main"], clone).catch(() => undefined);
    await git(["--git-dir", bareRepo, "config", INITIAL_KEY, sha]);
    await makeWorldReadable(layout);
    log(`pushed main at ${sha}`);
    return { initialCommit: sha };
}

/** The first commit on main: found where an earlier run left it, or made and pushed now. */
async function pushInitialCommit(layout: RepoSite, kind: RepoKind, files: Record<string, string>, log: Log): Promise<string> {
    const { bareRepo, clone } = layout;
    const remote = await git(["--git-dir", bareRepo, "rev-parse", "--verify", "--quiet", "refs/heads/main"]).catch(() => "");
    if (remote) {
        // pushed by a run that stopped before recording it
        const subject = await git(["--git-dir", bareRepo, "log", "-1", "--format=%s", remote]);
        const count = await git(["--git-dir", bareRepo, "rev-list", "--count", remote]);
        if (subject !== kind.initialMessage || count !== "1") {
            throw new Error(
                `${bareRepo} has a main branch that is not the lab's first commit (${remote}: "${subject}"). Nothing was changed. Remove the repository (or pulumi destroy), then run again.`,
            );
        }
        await git(["fetch", "--verbose", "origin"], clone);
        await git(["reset", "--hard", remote], clone);
        log(`found the first commit ${remote} already pushed by an earlier run`);
        return remote;
    }
    const head = await git(["rev-parse", "--verify", "--quiet", "HEAD"], clone).catch(() => "");
    if (head) {
        // a first commit made but not pushed, alone: an earlier run's; any other history is someone's work
        // (the clone a reset kept for its unpushed work): never committed on top of, nor pushed
        const subject = await git(["log", "-1", "--format=%s", head], clone);
        const count = await git(["rev-list", "--count", head], clone);
        const all = await unpushedWork(clone);
        // an interrupted run's first commit is main's alone, not pushed: anything else (a file, a commit on another branch) is work
        const work = all.filter((w) => !w.includes("not pushed") || !/, on main$/.test(w));
        if (subject !== kind.initialMessage || count !== "1" || work.length) {
            throw new Error(
                `${clone} holds work of its own (${count} commit${count === "1" ? "" : "s"} on ${await git(["rev-parse", "--abbrev-ref", "HEAD"], clone).catch(() => "HEAD")}, the last "${subject}"${work.length ? `; ${work.join("; ")}` : ""}) while ${bareRepo} is new: the clone a reset or destroy kept for its work? Nothing in it was changed. Move it away (copy out what you need first), then run again.`,
            );
        }
        // the clone's origin/main at it: it was pushed, and the repository made again since (deleted by hand)
        const pushedOnce = (await git(["rev-parse", "--verify", "--quiet", "refs/remotes/origin/main"], clone).catch(() => "")) === head;
        log(
            pushedOnce
                ? `${bareRepo} was missing (deleted?), while the clone holds its first commit ${head}, pushed before: made it again and pushing that commit`
                : `found the first commit ${head} made but not pushed by an earlier run`,
        );
    } else {
        for (const [rel, content] of Object.entries(files)) {
            const abs = path.join(clone, rel);
            fs.mkdirSync(path.dirname(abs), { recursive: true });
            fs.writeFileSync(abs, content);
        }
        await kind.check?.(clone, log);
        await git(["add", "--verbose", "--", ...Object.keys(files)], clone);
        await git(["commit", "-m", kind.initialMessage], clone);
    }
    const sha = await git(["rev-parse", "HEAD"], clone);
    await git(["push", "origin", "HEAD:refs/heads/main"], clone);
    return sha;
}

async function cloneBare(layout: RepoSite): Promise<void> {
    fs.mkdirSync(path.dirname(layout.clone), { recursive: true });
    const tmp = partial(layout.clone);
    fs.rmSync(tmp, { recursive: true, force: true });
    // the clone's own config names the lab's identity, for people who commit in it by hand
    await git(["clone", ...LAB_GIT_IDENTITY.flatMap((c) => ["--config", c]), layout.bareRepo, tmp]);
    // an empty repository clones without a branch: make sure we commit on main
    await git(["symbolic-ref", "HEAD", "refs/heads/main"], tmp);
    fs.renameSync(tmp, layout.clone);
}

/** `chmod -R a+rX` on the bare repository: the git daemon Pod runs as nobody. */
export async function makeWorldReadable(layout: RepoSite): Promise<void> {
    await run("chmod", ["a+rX", layout.bareDir]);
    await run("chmod", ["-R", "a+rX", layout.bareRepo]);
}

/**
 * What a clone holds that its repository does not: changes not committed (or files not added), commits not pushed,
 * stashes, worktrees of it, tags. `repository`: the repository's path, where origin is a URL that may not answer (a
 * served lab's git daemon, ended).
 */
export async function unpushedWork(clone: string, repository?: string): Promise<string[]> {
    const out: string[] = [];
    const few = (xs: string[]) => `${xs.slice(0, 5).join(", ")}${xs.length > 5 ? ` and ${xs.length - 5} more` : ""}`;
    // a clone git will not read as this user (another user's: git's "dubious ownership"): nothing in it can be checked,
    // so it counts as holding work (each question below would read as "none" and the clone would go)
    const unreadable = await git(["rev-parse", "--git-dir"], clone).then(
        () => undefined,
        (e: unknown) =>
            String((e as Error)?.message ?? e)
                .split("\n")
                .find((l) => /fatal|error/i.test(l)) ?? "git failed",
    );
    if (unreadable !== undefined) {
        const owner = fs.statSync(clone).uid;
        return [
            `work that could not be checked: git will not read it${owner !== process.getuid?.() ? ` (it belongs to uid ${owner}, not to you)` : ""}: ${unreadable.trim()}`,
        ];
    }
    // files git ignores (.git/info/exclude, a .gitignore) are the learner's too: --ignored lists them ("!! path")
    const changed = (await git(["status", "--porcelain", "--untracked-files=all", "--ignored"], clone).catch(() => ""))
        .split("\n")
        .filter(Boolean)
        // "XY path": the output is trimmed, so the first line may have lost its leading blank status column
        .map((l) => l.replace(/^[ MTADRCU?!]{1,2} /, ""));
    if (changed.length) out.push(`not committed: ${few(changed)}`);
    // HEAD too: commits made on a detached HEAD are on no branch
    const ahead = (await git(["log", "--branches", "HEAD", "--not", "--remotes", "--format=%h"], clone).catch(() => ""))
        .split("\n")
        .filter(Boolean);
    // on which branches: a learner's own branch (my-fix) is what they look for
    const branches = (await git(["for-each-ref", "--format=%(refname:short)", "refs/heads"], clone).catch(() => ""))
        .split("\n")
        .filter(Boolean);
    const on: string[] = [];
    for (const b of branches)
        if (Number(await git(["rev-list", "--count", `refs/heads/${b}`, "--not", "--remotes"], clone).catch(() => "0")) > 0) on.push(b);
    const detached = (await git(["symbolic-ref", "-q", "HEAD"], clone).catch(() => "")) === "";
    if (detached && Number(await git(["rev-list", "--count", "HEAD", "--not", "--remotes"], clone).catch(() => "0")) > 0)
        on.push("a detached HEAD");
    if (ahead.length) out.push(`${ahead.length} commit${ahead.length === 1 ? "" : "s"} not pushed${on.length ? `, on ${few(on)}` : ""}`);
    // hooks of the learner's (git's own are *.sample) and local configuration beyond what a clone and the lab set (an
    // alias, a diff driver): theirs too, and in this clone alone
    const hooksDir = path.join(clone, ".git", "hooks");
    const hooks = exists(hooksDir) ? fs.readdirSync(hooksDir).filter((h) => !h.endsWith(".sample")) : [];
    if (hooks.length) out.push(`${hooks.length} hook${hooks.length === 1 ? "" : "s"} of yours in .git/hooks (${few(hooks)})`);
    const config = (await git(["config", "--local", "--list", "--name-only"], clone).catch(() => ""))
        .split("\n")
        .filter((k) => k && !/^(core|remote|branch|user|extensions|maintenance|url)\./.test(k));
    if (config.length) out.push(`local git configuration of yours (${few([...new Set(config)])})`);
    const stashes = (await git(["stash", "list"], clone).catch(() => "")).split("\n").filter(Boolean);
    if (stashes.length) out.push(`${stashes.length} stash${stashes.length === 1 ? "" : "es"}`);
    // worktrees of it (git worktree add): their commits, a detached HEAD's among them, and their index live in this clone
    const worktrees = (await git(["worktree", "list", "--porcelain"], clone).catch(() => ""))
        .split("\n")
        .filter((l) => l.startsWith("worktree "))
        .slice(1)
        .map((l) => l.slice("worktree ".length));
    if (worktrees.length)
        out.push(
            `${worktrees.length} worktree${worktrees.length === 1 ? "" : "s"} of it (${few(worktrees)}), whose commits and files it keeps`,
        );
    // tags made in the clone (an annotated tag's message lives in it alone) and not in the remote, as name and object
    // (ls-remote lists every ref, a tag's ^{} line too, which no local ref matches)
    const lines = (text: string) => text.split("\n").filter(Boolean);
    const asked = await git(["ls-remote", repository ?? "origin"], clone).then(
        (t) => t,
        () => undefined,
    );
    const remote = new Set(lines(asked ?? "").map((l) => l.replace(/\s+/, " ")));
    const tags = lines(await git(["for-each-ref", "--format=%(objectname) %(refname)", "refs/tags"], clone).catch(() => ""))
        .filter((l) => !remote.has(l))
        .map((l) => l.split(" ")[1].replace(/^refs\/tags\//, ""));
    if (tags.length)
        out.push(
            asked === undefined
                ? `${tags.length} tag${tags.length === 1 ? "" : "s"} (${few(tags)}) its origin could not be asked about (it does not answer)`
                : `${tags.length} tag${tags.length === 1 ? "" : "s"} not pushed (${few(tags)})`,
        );
    // any other ref of its own (git notes' refs/notes/commits, a backup filter-branch made): work the repository lacks too
    const others = lines(await git(["for-each-ref", "--format=%(objectname) %(refname)"], clone).catch(() => ""))
        // (refs/prefetch/: git maintenance's copies of the remote's branches, nothing of the learner's)
        .filter((l) => !/ refs\/(?:heads|remotes|tags|prefetch)\/| refs\/stash$/.test(l) && !remote.has(l))
        .map((l) => l.split(" ")[1]);
    if (others.length)
        out.push(
            `${others.length} other ref${others.length === 1 ? "" : "s"} ${asked === undefined ? "its origin could not be asked about" : "not pushed"} (${few(others)}${others.some((r) => r.startsWith("refs/notes/")) ? ": git notes" : ""})`,
        );
    return out;
}

/** Removes exactly what createLabRepo made: the bare repository and the clone, if they are ours (a clone holding unpushed work is kept). */
export async function deleteLabRepo(layout: RepoSite, kind: RepoKind, log: Log = () => {}): Promise<void> {
    // a repository the lab did not make (step 1 done by hand) is the learner's, and so is the clone of it
    const theirs = exists(layout.bareRepo) && !(await isOurBareRepo(layout.bareRepo, kind.owner));
    const work = !theirs && (await isCloneOfBare(layout)) ? await unpushedWork(layout.clone) : undefined;
    // the repository removed by hand: the clone's commits, pushed or not, are the only copy of its history left
    if (work && !exists(layout.bareRepo) && (await git(["rev-list", "-n", "1", "--all"], layout.clone).catch(() => "")).trim())
        work.unshift(`the history of ${layout.bareRepo}, which is gone: this clone is the only copy left`);
    if (theirs && exists(path.join(layout.clone, ".git")))
        log(`kept ${layout.clone}: a clone of ${layout.bareRepo}, which is yours (below), so it is yours too`);
    else if (work && work.length) {
        // the lab made the clone, but what the learner did in it and never pushed is theirs
        // a bundle holds commits and refs alone: files not committed, hooks and configuration are copied as files
        const has = (re: RegExp) => work.some((x) => re.test(x));
        const how = [
            has(/^not committed|worktree/) ? "cp the files not committed (or commit them)" : "",
            has(/hook/) ? "cp your hooks from .git/hooks" : "",
            has(/configuration/) ? "git config --local --list shows your settings" : "",
            has(/commit.* not pushed|stash|tag|ref|history|worktree/) ? "git bundle create FILE --all keeps every branch" : "",
        ]
            .filter(Boolean)
            .join("; ");
        log(
            `kept ${layout.clone}: it holds work the repository does not (${work.join("; ")}); the repository goes with the lab, so copy out what you need (${how || "cp -a the folder"}), then remove the folder by hand`,
        );
    } else if (work) {
        fs.rmSync(layout.clone, { recursive: true, force: true });
        log(`removed clone ${layout.clone}`);
    } else if (exists(path.join(layout.clone, ".git"))) {
        // a clone of another repository is never the lab's to remove (a root copied from another keeps that one's origin)
        const url = await configGet(path.join(layout.clone, ".git"), "remote.origin.url");
        log(
            `kept ${layout.clone}: its origin is ${url ?? "(none)"}, not ${layout.bareRepo}, so it is not this lab's clone (a root copied from another?); remove it by hand if it is yours`,
        );
    }
    if (await isOurBareRepo(layout.bareRepo, kind.owner)) {
        fs.rmSync(layout.bareRepo, { recursive: true, force: true });
        log(`removed bare repository ${layout.bareRepo}`);
    } else if (exists(layout.bareRepo))
        log(
            fs.statSync(layout.bareRepo).isDirectory()
                ? `kept ${layout.bareRepo}: not a repository the lab made (made by hand, at step 1 or again: it lacks the lab's mark), so it is yours; move it away (or remove it) before the lab is built here again`
                : `kept ${layout.bareRepo}: a file, not a repository (the lab's was replaced by it); move it away (or remove it) before the lab is built here again`,
        );
    // half-built copies an interrupted step 1 left: the lab's own by their name
    for (const p of [partial(layout.bareRepo), partial(layout.clone)]) fs.rmSync(p, { recursive: true, force: true });
    for (const dir of [layout.bareDir, layout.workDir]) {
        if (exists(dir) && isEmptyDir(dir)) fs.rmdirSync(dir);
    }
}

/** Whether anything of a lab's repository is there: the bare repository, its folder of results, or a half-built copy. */
export function labRepoBegun(layout: RepoSite): boolean {
    return [layout.bareRepo, layout.workDir, partial(layout.bareRepo), partial(layout.clone)].some(exists);
}

/** What must be the lab's own (or absent) at a lab repository's paths, for the preflight. */
export function labRepoPaths(layout: RepoSite, kind: RepoKind): { path: string; gitDir: string; key: string; value: string }[] {
    return [
        { path: layout.bareRepo, gitDir: layout.bareRepo, key: OWNER_KEY, value: kind.owner },
        { path: layout.clone, gitDir: path.join(layout.clone, ".git"), key: "remote.origin.url", value: layout.bareRepo },
    ];
}
