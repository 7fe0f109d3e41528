/**
 * The simulation's repo-server: resolves a targetRevision to a commit with `git ls-remote`
 * against the real git daemon, and renders a path at that commit with real `kubectl kustomize`.
 * Render failures carry Argo CD v3.5.1's message format, and after 3 failures of the same
 * commit and path the error is cached ("Manifest generation error (cached)") until a hard refresh.
 * Like v3.5.1's repo-server it caches what it rendered per commit and path (a hard refresh renders
 * again) and the git files generator's answers per commit and pattern.
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { run } from "../lab/ports/exec";
import { asKustomizeError, kustomizeBuild } from "../lab/ports/kustomize";
import { stderrOf } from "../lab/ports/errors";
import type { Manifest } from "./objects";

/** What v3.5.1's repo-server writes in an error message where its checkout's folder (/tmp/_argocd-repo/<uuid>) was. */
export const CACHED_SOURCE = "<path to cached source>";

export class RenderError extends Error {}

/**
 * git as the repo-server runs it in its Pod: none of the host's git variables (GIT_DEFAULT_HASH, GIT_ALLOW_PROTOCOL,
 * GIT_CONFIG_*) and none of its configuration files (a url.insteadOf in ~/.gitconfig), which no Pod of the cluster sees.
 */
function podGit(args: string[]) {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GIT_")));
    return run("git", args, { env: { ...env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" } });
}

/**
 * A git files generator path pattern as a RegExp: `*` and `?` stay within one path segment, `**`
 * spans segments (upstream matches with the glob library; our two patterns need no more).
 */
export function globToRegExp(pattern: string): RegExp {
    let re = "";
    for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i];
        if (c === "*" && pattern[i + 1] === "*") {
            re += ".*";
            i++;
        } else if (c === "*") re += "[^/]*";
        else if (c === "?") re += "[^/]";
        else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    }
    return new RegExp(`^${re}$`);
}

export class RepoServer {
    private readonly cacheDir: string;
    private readonly failures = new Map<string, { count: number; message: string }>();
    /** One git operation on the cache at a time (two apps reconciling at once would race on its refs). */
    private queue: Promise<unknown> = Promise.resolve();

    private serialized<T>(f: () => Promise<T>): Promise<T> {
        const next = this.queue.then(f, f);
        this.queue = next.catch(() => undefined);
        return next;
    }

    /** @param urlFor maps the in-cluster repoURL to one reachable from here (the loopback daemon) */
    /** Branch -> SHA answers, kept `revisionCacheMs` (reposerver/cache/cache.go). */
    private readonly revisions = new Map<string, { sha: string; at: number }>();
    /**
     * The manifests rendered per repo, commit and path: what an operation applies, and v3.5.1's
     * manifest cache — GenerateManifest answers from it unless the request says NoCache (a hard
     * refresh), with no git fetch and no kustomize (reposerver/repository/repository.go, cacheFn).
     */
    private readonly renders = new Map<string, Manifest[]>();
    /** The git files generator's answers per repo, commit and pattern: GetGitFiles caches them with no bypass (repository.go, s.cache.GetGitFiles). */
    private readonly gitFiles = new Map<string, { path: string; content: string }[]>();
    /** Each commit's files, checked out once (see tree). */
    private readonly trees = new Map<string, Promise<string>>();

    /**
     * @param cacheDir its working directory (emptied now, removed on close); default a new temporary one
     * @param cache the clock and the revision cache's lifetime (default: the real clock, 3 minutes)
     */
    constructor(
        private readonly urlFor: (repoURL: string) => string,
        private readonly kubectl = "kubectl",
        cacheDir?: string,
        private readonly cache: { now: () => number; revisionCacheMs: number } = { now: () => Date.now(), revisionCacheMs: 180_000 },
    ) {
        if (cacheDir) {
            fs.rmSync(cacheDir, { recursive: true, force: true }); // what a killed run left
            fs.mkdirSync(cacheDir, { recursive: true });
            this.cacheDir = cacheDir;
        } else {
            this.cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "argo-sim-repo-"));
        }
    }

    /** The manifests last rendered for this commit and path ([] if none). */
    rendered(repoURL: string, sha: string, appPath: string): Manifest[] {
        return JSON.parse(JSON.stringify(this.renders.get(`${repoURL}@${sha}:${appPath}`) ?? []));
    }

    close() {
        fs.rmSync(this.cacheDir, { recursive: true, force: true });
    }

    /** Every `git ls-remote` the repo-server ran (a cached answer runs none). */
    lsRemotes = 0;

    /**
     * A branch, tag, HEAD or full SHA to a commit, as the repo-server does with ls-remote; the answer
     * is cached for `revisionCacheMs` unless `noCache` (a refresh, or a changed source).
     */
    async resolve(repoURL: string, revision: string, opts: { noCache?: boolean } = {}): Promise<string> {
        if (/^[0-9a-f]{40}$/.test(revision)) return revision;
        const key = `${repoURL}@${revision}`;
        const cached = this.revisions.get(key);
        if (!opts.noCache && cached && this.cache.now() - cached.at < this.cache.revisionCacheMs) return cached.sha;
        const sha = await this.lsRemote(repoURL, revision);
        this.revisions.set(key, { sha, at: this.cache.now() });
        return sha;
    }

    private async lsRemote(repoURL: string, revision: string): Promise<string> {
        this.lsRemotes++;
        // a path on this machine (or a file:// URL): the repo-server's Pod has no such folder, and go-git's list of refs
        // answers that there is no repository there; the simulation's git on this host would read it
        if (/^(?:\/|file:\/\/)/.test(repoURL))
            throw new RenderError(
                "Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = failed to list refs: repository not found",
            );
        // a repository Argo CD cannot read is a comparison error on the app, never a crash of the controller
        const { stdout } = await podGit(["ls-remote", this.urlFor(repoURL)]).catch((e) => {
            throw new RenderError(
                `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = failed to list refs: ${String(e.stderr || e.message).trim()}`,
            );
        });
        const refs = new Map(
            stdout
                .trim()
                .split("\n")
                .filter(Boolean)
                .map((l) => {
                    const [sha, ref] = l.split(/\s+/);
                    return [ref, sha] as [string, string];
                }),
        );
        // a short name as a branch or tag, or the full ref name itself (util/git/client.go lsRemote: refName == revision)
        const want = revision === "" || revision === "HEAD" ? ["HEAD"] : [`refs/heads/${revision}`, `refs/tags/${revision}`, revision];
        for (const r of want) if (refs.has(r)) return refs.get(r)!;
        throw new RenderError(`unable to resolve '${revision}' to a commit SHA`);
    }

    /**
     * The commit's files, checked out once per commit into the cache and kept until close (a
     * commit's content never changes). Like upstream's checkoutRevision, it fetches only when the
     * commit is not in the local mirror yet (reposerver/repository/repository.go, IsRevisionPresent).
     */
    private tree(repoURL: string, sha: string): Promise<string> {
        const key = `${repoURL}@${sha}`;
        const known = this.trees.get(key);
        if (known) return known;
        const t = this.serialized(async () => {
            // one mirror per repository (a prefix of the URL would give platform.git and shop-envs.git one)
            const git = path.join(this.cacheDir, `${createHash("sha1").update(repoURL).digest("hex")}.git`);
            if (!fs.existsSync(git)) await podGit(["init", "--quiet", "--bare", git]);
            const dir = path.join(this.cacheDir, `tree-${createHash("sha1").update(key).digest("hex")}`);
            const tar = `${dir}.tar`;
            const archive = () => podGit(["--git-dir", git, "archive", "--format=tar", "-o", tar, sha]);
            // absent (not fetched yet): the archive fails, and the fetch comes first
            await archive().catch(async () => {
                // no automatic gc or maintenance after the fetch: it detaches and goes on writing into the mirror after the
                // simulation has stopped, racing a reset's (or a test's) removal of the root
                await podGit([
                    ...["-c", "gc.auto=0", "-c", "maintenance.auto=false"],
                    ...["--git-dir", git, "fetch", "--quiet", "--force", this.urlFor(repoURL), "+refs/heads/*:refs/heads/*"],
                ]);
                await archive();
            });
            const part = fs.mkdtempSync(`${dir}.part-`);
            try {
                await run("tar", ["-xf", tar, "-C", part]);
                fs.renameSync(part, dir);
            } finally {
                fs.rmSync(tar, { force: true });
                fs.rmSync(part, { recursive: true, force: true });
            }
            return dir;
        });
        this.trees.set(key, t);
        t.catch(() => this.trees.get(key) === t && this.trees.delete(key)); // a failed checkout is tried again next time
        return t;
    }

    /**
     * The files at commit `sha` whose paths match `pattern` (the git files generator's `files[].path`;
     * `*` within a path segment, `**` across segments), with their contents.
     */
    async files(repoURL: string, sha: string, pattern: string): Promise<{ path: string; content: string }[]> {
        const re = globToRegExp(pattern);
        const key = `${repoURL}@${sha}:${pattern}`;
        const hit = this.gitFiles.get(key);
        if (hit) return hit.map((f) => ({ ...f }));
        return (async () => {
            const dir = await this.tree(repoURL, sha);
            // every file of the checkout, relative to it (Node's own recursive listing; Linux separates with /)
            const paths = fs
                .readdirSync(dir, { recursive: true, encoding: "utf8" })
                .filter((p) => re.test(p) && fs.statSync(path.join(dir, p)).isFile())
                .sort();
            const out = paths.map((p) => ({ path: p, content: fs.readFileSync(path.join(dir, p), "utf8") }));
            this.gitFiles.set(key, out);
            return out.map((f) => ({ ...f }));
        })().catch((e) => {
            if (e instanceof RenderError) throw e;
            throw new RenderError(
                `error generating params from git: error retrieving Git files: rpc error: code = Unknown desc = ${String(e.stderr || e.message).trim()}`,
            );
        });
    }

    /** The objects at `path` of commit `sha`, or a RenderError with Argo CD's message (its checkout's folder as "<path to cached source>"). */
    async render(repoURL: string, sha: string, appPath: string, opts: { hard: boolean }): Promise<Manifest[]> {
        const key = `${repoURL}@${sha}:${appPath}`;
        const failed = this.failures.get(key);
        if (!opts.hard && failed && failed.count >= 3) {
            throw new RenderError(
                `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = Manifest generation error (cached): ${failed.message}`,
            );
        }
        const cached = opts.hard ? undefined : this.renders.get(key);
        if (cached) return JSON.parse(JSON.stringify(cached));
        const work = await this.tree(repoURL, sha).catch((e) => {
            throw new RenderError(
                `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = failed to fetch ${sha}: ${String(e.stderr || e.message).trim()}`,
            );
        });
        const dir = path.join(work, appPath);
        // util/app/path Path, before any generation (runRepoOperation): an absolute path, one outside the checkout, one
        // that is not there, and one naming a file are each refused as such
        const refused = path.isAbsolute(appPath)
            ? "app path is absolute"
            : !dir.startsWith(path.normalize(work))
              ? "app path outside root"
              : !fs.existsSync(dir)
                ? "app path does not exist"
                : fs.statSync(dir).isFile()
                  ? "app path is not a directory"
                  : undefined;
        if (refused)
            throw new RenderError(
                `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = ${appPath}: ${refused}`,
            );
        try {
            // kustomize's output is remembered by the checkout's content below this modelled cache (lab/ports/kustomize.ts); a hard refresh runs it
            // kustomize refuses a resource with no kind or name: every document has both
            const docs = (await kustomizeBuild(dir, this.kubectl, { checkout: work, fresh: opts.hard })) as Manifest[];
            this.failures.delete(key);
            this.renders.set(key, docs);
            return docs;
        } catch (e) {
            const stderr = asKustomizeError(stderrOf(e));
            // the repo-server's gRPC sanitizer puts this in place of its checkout's folder (runRepoOperation, reposerver/repository/repository.go)
            const message = `\`kustomize build ${dir}\` failed exit status 1: ${stderr}`.split(work).join(CACHED_SOURCE);
            const n = (failed?.count ?? 0) + 1;
            this.failures.set(key, { count: n, message });
            throw new RenderError(
                `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = ${message}`,
            );
        }
    }
}
