/**
 * Step 1: the bare repository, the working clone, the base and the overlays.
 * Everything it creates is marked, so a second run recognises its own work and a delete
 * removes exactly that, and nothing that somebody else put at the same paths.
 */
import * as fs from "fs";
import * as path from "path";
import { run } from "../ports/exec";
import { LAB_GIT_IDENTITY } from "../ports/git";
import { LabLayout } from "./layout";
import { renderShopConfig } from "./render";

/** git config key in the bare repository that says "the lab made this". */
export const OWNER_KEY = "gitops-lab.owner";
export const OWNER_VALUE = "shop-repo";
const INITIAL_KEY = "gitops-lab.initialcommit";
export const INITIAL_MESSAGE = "Shop base and dev/prod overlays (lab step 1)";

export interface ShopRepoResult {
    /** SHA of the commit on main that holds the base and overlays. */
    initialCommit: string;
}

export type Log = (line: string) => void;

const identity = LAB_GIT_IDENTITY.flatMap((c) => ["-c", c]);

async function git(args: string[], cwd?: string): Promise<string> {
    return (await run("git", [...identity, ...args], { cwd })).stdout.trim();
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
export async function isOurBareRepo(bareRepo: string): Promise<boolean> {
    if (!exists(bareRepo)) return false;
    return (await configGet(bareRepo, OWNER_KEY)) === OWNER_VALUE;
}

async function isOurClone(layout: LabLayout): Promise<boolean> {
    if (!exists(path.join(layout.clone, ".git"))) return false;
    const url = await configGet(path.join(layout.clone, ".git"), "remote.origin.url");
    return url !== null && path.resolve(url) === path.resolve(layout.bareRepo);
}

/**
 * Creates (or recognises) the bare repository and the clone, and pushes the first commit.
 * `files` maps repository paths (base/configmap.yaml, ...) to their contents.
 */
export async function createShopRepo(layout: LabLayout, files: Record<string, string>, log: Log = () => {}, kubectl = "kubectl"): Promise<ShopRepoResult> {
    const { bareRepo, clone } = layout;

    if (exists(bareRepo)) {
        if (!(await isOurBareRepo(bareRepo))) {
            throw new Error(
                `${bareRepo} already exists and was not created by this lab (its git config has no ${OWNER_KEY}). ` +
                    `Nothing was changed. Move it away, or set the stack's "root" to another prefix, then run again.`,
            );
        }
        const initial = await configGet(bareRepo, INITIAL_KEY);
        if (initial) {
            if (!exists(clone)) {
                log(`clone ${clone} is missing; cloning it again`);
                await cloneBare(layout);
            } else if (!(await isOurClone(layout))) {
                throw new Error(`${clone} exists but is not a clone of ${bareRepo}. Nothing was changed. Move it away, then run again.`);
            }
            log(`shop repo already in place at ${bareRepo} (initial commit ${initial})`);
            return { initialCommit: initial };
        }
        // ours but the first push never happened: carry on below with the existing bare repo
    } else {
        fs.mkdirSync(path.dirname(bareRepo), { recursive: true });
        await git(["init", "--quiet", "--bare", "--initial-branch=main", bareRepo]);
        await git(["--git-dir", bareRepo, "config", OWNER_KEY, OWNER_VALUE]);
        log(`created bare repository ${bareRepo}`);
    }

    if (exists(clone) && !isEmptyDir(clone) && !(await isOurClone(layout))) {
        throw new Error(`${clone} already exists and is not a clone of ${bareRepo}. Nothing in it was changed. Move it away, then run again.`);
    }
    if (!exists(path.join(clone, ".git"))) await cloneBare(layout);

    for (const [rel, content] of Object.entries(files)) {
        const abs = path.join(clone, rel);
        fs.mkdirSync(path.dirname(abs), { recursive: true });
        fs.writeFileSync(abs, content);
    }
    for (const env of ["dev", "prod"]) {
        const data = await renderShopConfig(path.join(clone, "envs", env), kubectl);
        log(`kubectl kustomize envs/${env}: LOG_LEVEL=${data.LOG_LEVEL} FEATURE_CHECKOUT_V2=${data.FEATURE_CHECKOUT_V2}`);
    }
    await git(["add", "--", ...Object.keys(files)], clone);
    await git(["commit", "--quiet", "-m", INITIAL_MESSAGE], clone);
    const sha = await git(["rev-parse", "HEAD"], clone);
    await git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], clone);
    await git(["branch", "--quiet", "--set-upstream-to=origin/main", "main"], clone).catch(() => undefined);
    await git(["--git-dir", bareRepo, "config", INITIAL_KEY, sha]);
    await makeWorldReadable(layout);
    log(`pushed main at ${sha}`);
    return { initialCommit: sha };
}

async function cloneBare(layout: LabLayout): Promise<void> {
    fs.mkdirSync(path.dirname(layout.clone), { recursive: true });
    await git(["clone", "--quiet", layout.bareRepo, layout.clone]);
    // an empty repository clones without a branch: make sure we commit on main
    await git(["symbolic-ref", "HEAD", "refs/heads/main"], layout.clone);
    for (const c of LAB_GIT_IDENTITY) {
        const [k, v] = c.split("=");
        await git(["config", k, v], layout.clone);
    }
}

/** `chmod -R a+rX` on the bare repository: the git daemon Pod runs as nobody. */
export async function makeWorldReadable(layout: LabLayout): Promise<void> {
    await run("chmod", ["a+rX", layout.bareDir]);
    await run("chmod", ["-R", "a+rX", layout.bareRepo]);
}

/** Removes exactly what createShopRepo made: the bare repository and the clone, if they are ours. */
export async function deleteShopRepo(layout: LabLayout, log: Log = () => {}): Promise<void> {
    if (await isOurClone(layout)) {
        fs.rmSync(layout.clone, { recursive: true, force: true });
        log(`removed clone ${layout.clone}`);
    }
    if (await isOurBareRepo(layout.bareRepo)) {
        fs.rmSync(layout.bareRepo, { recursive: true, force: true });
        log(`removed bare repository ${layout.bareRepo}`);
    }
    for (const dir of [layout.bareDir, layout.workDir]) {
        if (exists(dir) && isEmptyDir(dir)) fs.rmdirSync(dir);
    }
}

/** What must be the lab's own (or absent) at the shop lab's paths, for the preflight. */
export function shopRepoPaths(layout: LabLayout): { path: string; gitDir: string; key: string; value: string }[] {
    return [
        { path: layout.bareRepo, gitDir: layout.bareRepo, key: OWNER_KEY, value: OWNER_VALUE },
        { path: layout.clone, gitDir: path.join(layout.clone, ".git"), key: "remote.origin.url", value: layout.bareRepo },
    ];
}
