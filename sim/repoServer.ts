/**
 * The simulation's repo-server: resolves a targetRevision to a commit with `git ls-remote`
 * against the real git daemon, and renders a path at that commit with real `kubectl kustomize`.
 * Render failures carry Argo CD v3.5.1's message format, and after 3 failures of the same
 * commit and path the error is cached ("Manifest generation error (cached)") until a hard refresh.
 * Like v3.5.1's repo-server it caches what it rendered per commit and path (a hard refresh renders
 * again) and the git files generator's answers per commit and pattern.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { run } from "../lab/ports/exec";

export class RenderError extends Error {}

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

/**
 * `kubectl kustomize` reports errors through klog (`E1129 ... "command failed" err="..."`), the
 * kustomize binary the repo-server runs as `Error: ...`: turn the first into the second.
 */
export function asKustomizeError(stderr: string): string {
    const m = /err="((?:[^"\\]|\\.)*)"/.exec(stderr);
    if (!m) return stderr.trim().replace(/^error: /, "Error: ");
    const inner = m[1].replace(/\\'/g, "'");
    try {
        return `Error: ${JSON.parse(`"${inner}"`)}`;
    } catch {
        return `Error: ${inner}`;
    }
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
    private readonly renders = new Map<string, any[]>();
    /** The git files generator's answers per repo, commit and pattern: GetGitFiles caches them with no bypass (repository.go, s.cache.GetGitFiles). */
    private readonly gitFiles = new Map<string, { path: string; content: string }[]>();

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
    rendered(repoURL: string, sha: string, appPath: string): any[] {
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
        // a repository Argo CD cannot read is a comparison error on the app, never a crash of the controller
        const { stdout } = await run("git", ["ls-remote", this.urlFor(repoURL)]).catch((e) => {
            throw new RenderError(`Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = failed to list refs: ${String(e.stderr || e.message).trim()}`);
        });
        const refs = new Map(stdout.trim().split("\n").filter(Boolean).map((l) => { const [sha, ref] = l.split(/\s+/); return [ref, sha] as [string, string]; }));
        const want = revision === "" || revision === "HEAD" ? ["HEAD"] : [`refs/heads/${revision}`, `refs/tags/${revision}`];
        for (const r of want) if (refs.has(r)) return refs.get(r)!;
        throw new RenderError(`unable to resolve '${revision}' to a commit SHA`);
    }

    private async mirror(repoURL: string): Promise<string> {
        const dir = path.join(this.cacheDir, Buffer.from(repoURL).toString("hex").slice(0, 40) + ".git");
        if (!fs.existsSync(dir)) await run("git", ["init", "--quiet", "--bare", dir]);
        await run("git", ["--git-dir", dir, "fetch", "--quiet", "--force", this.urlFor(repoURL), "+refs/heads/*:refs/heads/*"]);
        return dir;
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
        return this.serialized(async () => {
            const git = await this.mirror(repoURL);
            const { stdout } = await run("git", ["--git-dir", git, "ls-tree", "-r", "--name-only", sha]);
            const paths = stdout.split("\n").filter((p) => p && re.test(p)).sort();
            const out: { path: string; content: string }[] = [];
            for (const p of paths) out.push({ path: p, content: (await run("git", ["--git-dir", git, "show", `${sha}:${p}`])).stdout });
            this.gitFiles.set(key, out);
            return out.map((f) => ({ ...f }));
        }).catch((e) => {
            if (e instanceof RenderError) throw e;
            throw new RenderError(`error generating params from git: error retrieving Git files: rpc error: code = Unknown desc = ${String(e.stderr || e.message).trim()}`);
        });
    }

    /** The objects at `path` of commit `sha`, or a RenderError with Argo CD's message. */
    async render(repoURL: string, sha: string, appPath: string, opts: { hard: boolean }): Promise<any[]> {
        const key = `${repoURL}@${sha}:${appPath}`;
        const failed = this.failures.get(key);
        if (!opts.hard && failed && failed.count >= 3) {
            throw new RenderError(`Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = Manifest generation error (cached): ${failed.message}`);
        }
        const cached = opts.hard ? undefined : this.renders.get(key);
        if (cached) return JSON.parse(JSON.stringify(cached));
        const work = fs.mkdtempSync(path.join(this.cacheDir, "src-"));
        try {
            const tar = path.join(work, "..", path.basename(work) + ".tar");
            await this.serialized(async () => {
                const git = await this.mirror(repoURL);
                await run("git", ["--git-dir", git, "archive", "--format=tar", "-o", tar, sha]);
            }).catch((e) => {
                throw new RenderError(`Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = failed to fetch ${sha}: ${String(e.stderr || e.message).trim()}`);
            });
            await run("tar", ["-xf", tar, "-C", work]);
            fs.rmSync(tar);
            const dir = path.join(work, appPath);
            try {
                const { stdout } = await run(this.kubectl, ["kustomize", dir]);
                this.failures.delete(key);
                const docs = parseAllDocuments(stdout).map((d) => d.toJSON()).filter(Boolean);
                this.renders.set(key, docs);
                return docs;
            } catch (e: any) {
                const stderr = asKustomizeError(String(e.stderr ?? e.message));
                const message = `\`kustomize build ${dir}\` failed exit status 1: ${stderr}`;
                const n = (failed?.count ?? 0) + 1;
                this.failures.set(key, { count: n, message });
                throw new RenderError(`Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = ${message}`);
            }
        } finally {
            fs.rmSync(work, { recursive: true, force: true });
        }
    }
}
