/**
 * The node's images, made here from realnode/images.yaml: each one layer, a Debian root filesystem
 * made by mmdebstrap from Debian's packages (or none) with the recipe's users, files, links and
 * directories, cached by the hash of its inputs (the recipe, and every file it copies in) under
 * `${XDG_CACHE_HOME:-~/.cache}/gitops-lab/images/`. crane then pushes it to the node's registry under
 * its upstream name (`<registry>/quay.io/argoproj/argocd:v3.5.1`), with the recipe's config and the
 * inputs' hash as a label, so an image already there with that label is not pushed again.
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { z } from "zod";
import { run } from "../lab/ports/exec";
import { argoCdBuildDir, binPath, moduleDir, pinnedCacheDir, type Binary } from "../realplane/build";
import { REAL_ARGOCD, RealArgoCd } from "../realplane/versions";
import { isAlive } from "../lab/ports/proc";
import { nodeBinPath, NodeBinary } from "./build";
import { messageOf } from "../lab/ports/errors";

const HERE = __dirname;
export const IMAGES_FILE = path.join(HERE, "images.yaml");
/** The label that carries the hash of an image's inputs. */
export const INPUTS_LABEL = "dev.gitops-lab.inputs";
export const DEBIAN_MIRROR = process.env.GITOPS_LAB_DEBIAN_MIRROR ?? "http://deb.debian.org/debian";

const owner = z.string().regex(/^\d+:\d+$/, "owner is uid:gid");
const mode = z.string().regex(/^[0-7]{3,4}$/, "mode is octal, e.g. 0755");
const absolute = z.string().regex(/^\/[^\0]*$/, "an absolute path");
const Recipe = z
    .object({
        name: z.string().regex(/^[a-z0-9.-]+(\/[a-z0-9._-]+)+:[\w.-]+$/, "a full image name with its registry and tag"),
        debian: z
            .object({
                suite: z.enum(["bookworm", "trixie"]),
                variant: z.enum(["minbase", "extract"]).default("minbase"),
                packages: z.array(z.string().regex(/^[a-z0-9.+-]+$/)),
            })
            .strict()
            .optional(),
        groups: z.array(z.object({ name: z.string(), gid: z.number().int() }).strict()).default([]),
        users: z
            .array(z.object({ name: z.string(), uid: z.number().int(), group: z.string(), system: z.boolean().default(false) }).strict())
            .default([]),
        files: z
            .array(
                z
                    .object({
                        source: z.string().regex(/^(plane|node|argocd|argocd@v[\d.]+|build@v[\d.]+|here)\/[^\0]+$/),
                        path: absolute,
                        mode: mode.default("0644"),
                    })
                    .strict(),
            )
            .default([]),
        links: z.record(absolute, absolute).default({}),
        dirs: z.array(z.object({ path: absolute, owner: owner.default("0:0"), mode: mode.default("0755") }).strict()).default([]),
        emptyFiles: z.array(absolute).default([]),
        run: z.array(z.array(z.string()).min(1)).default([]),
        config: z
            .object({
                entrypoint: z.array(z.string()).optional(),
                cmd: z.array(z.string()).optional(),
                user: z.string().optional(),
                workdir: absolute.optional(),
                env: z.record(z.string(), z.string()).default({}),
            })
            .strict(),
    })
    .strict();
export type ImageRecipe = z.infer<typeof Recipe>;

/** The recipes of realnode/images.yaml (or another file), checked: a bad one is one line naming it. */
export function imageRecipes(file = IMAGES_FILE): ImageRecipe[] {
    const doc = parse(fs.readFileSync(file, "utf8"));
    const got = z.object({ images: z.array(z.unknown()) }).safeParse(doc);
    if (!got.success) throw new Error(`${file}: expected a list under "images"`);
    return got.data.images.map((raw, i) => {
        const r = Recipe.safeParse(raw);
        if (!r.success) {
            const issue = r.error.issues[0];
            throw new Error(
                `${file}: image ${i + 1} (${(raw as { name?: unknown } | null)?.name ?? "no name"}): ${issue.path.join(".")}: ${issue.message}`,
            );
        }
        return r.data;
    });
}

/**
 * Where a recipe's file comes from: the plane's or the node's build, an Argo CD release's module
 * (`argocd@<version>/`) or build (`build@<version>/`, realplane/versions.ts REAL_ARGOCD), or beside
 * this file.
 */
export async function sourcePath(source: string): Promise<string> {
    const [kind, ...rest] = source.split("/");
    const rel = rest.join("/");
    const at = /^(argocd|build)@(v[\d.]+)$/.exec(kind);
    if (at) {
        const version = at[2];
        if (!Object.hasOwn(REAL_ARGOCD, version))
            throw new Error(`${source}: Argo CD ${version} is not one the real tier builds (REAL_ARGOCD)`);
        const v = version as RealArgoCd;
        if (at[1] === "build") return path.join(argoCdBuildDir(v), "bin", rel);
        const toolchain: string | undefined = (REAL_ARGOCD[v] as { goToolchain?: string }).goToolchain;
        return path.join(await moduleDir(`github.com/argoproj/argo-cd/v3@${version}`, toolchain ? { GOTOOLCHAIN: toolchain } : {}), rel);
    }
    switch (kind) {
        case "plane":
            return binPath(rel as Binary);
        case "node":
            return nodeBinPath(rel as NodeBinary);
        case "here":
            return path.join(HERE, rel);
    }
    throw new Error(`unknown source ${source}`);
}

/** Whether an image copies in a binary the Go builds make (so it is made after them). */
export const needsBuiltFiles = (recipe: ImageRecipe) =>
    recipe.files.some((f) => f.source.startsWith("plane/") || f.source.startsWith("node/") || f.source.startsWith("build@"));

const sha256File = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** The hash of everything an image is made of: its recipe, each file's content, the mirror it is made from. */
export async function imageInputs(recipe: ImageRecipe): Promise<string> {
    const files: Record<string, string> = {};
    for (const f of recipe.files) {
        const p = await sourcePath(f.source);
        if (!fs.existsSync(p))
            throw new Error(`the image ${recipe.name} needs ${f.source} (${p}), which is not built yet: run gitops-lab build-real-plane`);
        files[f.source] = sha256File(p);
    }
    return createHash("sha256")
        .update(JSON.stringify({ recipe, files, mirror: recipe.debian ? DEBIAN_MIRROR : undefined }))
        .digest("hex")
        .slice(0, 16);
}

export const imagesCacheDir = () => path.dirname(pinnedCacheDir("images", "x", {}));
const slug = (name: string) => name.replace(/[^a-zA-Z0-9.-]+/g, "_");

/** The cached layer of an image at these inputs (it may not exist yet). */
export const layerPath = (recipe: ImageRecipe, inputs: string) =>
    path.join(imagesCacheDir(), `${slug(recipe.name)}-${inputs}`, "layer.tar");

const chroot = (rootfs: string, cmd: string[]) =>
    run("chroot", [rootfs, ...cmd], { timeoutMs: 300_000, env: { ...process.env, PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } });

/**
 * Removes the work folders that builds of `done` left when they were killed: `<done>.partial-<pid>-…`
 * of a process that is gone, and any without a PID. A live build's folder stays, and so does one with
 * something still mounted under it (a killed mmdebstrap's /dev or /proc: removing through a mount
 * would reach the host's), said in `kept`.
 */
export function removeStalePartials(done: string): { removed: string[]; kept: string[] } {
    const dir = path.dirname(done);
    const prefix = `${path.basename(done)}.partial-`;
    const out = { removed: [] as string[], kept: [] as string[] };
    if (!fs.existsSync(dir)) return out;
    const mounts = fs
        .readFileSync("/proc/self/mountinfo", "utf8")
        .split("\n")
        .map((l) => l.split(" ")[4])
        .filter(Boolean);
    for (const e of fs.readdirSync(dir).sort()) {
        if (!e.startsWith(prefix)) continue;
        const pid = /^(\d+)-/.exec(e.slice(prefix.length))?.[1];
        if (pid && isAlive(Number(pid))) continue;
        const folder = path.join(dir, e);
        if (mounts.some((m) => m === folder || m.startsWith(`${folder}/`))) {
            out.kept.push(e);
            continue;
        }
        fs.rmSync(folder, { recursive: true, force: true });
        out.removed.push(e);
    }
    return out;
}

/**
 * Makes an image's layer unless it is cached; returns its path. The root filesystem is made in a
 * folder of its own (named with this process's PID) and renamed into place when whole, so an
 * interrupted build is redone, and its folder removed by the next call.
 */
export async function buildImageLayer(recipe: ImageRecipe, log: (line: string) => void = () => {}): Promise<string> {
    const inputs = await imageInputs(recipe);
    const layer = layerPath(recipe, inputs);
    const done = path.dirname(layer);
    const stale = removeStalePartials(done);
    for (const e of stale.removed) log(`${recipe.name}: removed ${e}, left by a build that was interrupted`);
    for (const e of stale.kept)
        log(`${recipe.name}: ${e}, left by an interrupted build, still has mounts under it: unmount them (findmnt -R), then it is removed`);
    if (fs.existsSync(layer)) return layer;
    fs.mkdirSync(path.dirname(done), { recursive: true });
    const work = fs.mkdtempSync(`${done}.partial-${process.pid}-`);
    const rootfs = path.join(work, "rootfs");
    const t0 = Date.now();
    try {
        if (recipe.debian) {
            const d = recipe.debian;
            log(`${recipe.name}: Debian ${d.suite} (${d.variant}) with ${d.packages.join(", ")}, by mmdebstrap from ${DEBIAN_MIRROR} ...`);
            await run(
                "mmdebstrap",
                [
                    `--variant=${d.variant}`,
                    `--include=${d.packages.join(",")}`,
                    '--aptopt=Acquire::Languages "none"',
                    "--dpkgopt=path-exclude=/usr/share/doc/*",
                    "--dpkgopt=path-exclude=/usr/share/man/*",
                    "--dpkgopt=path-exclude=/usr/share/locale/*",
                    "--quiet",
                    d.suite,
                    rootfs,
                    DEBIAN_MIRROR,
                ],
                { timeoutMs: 1_800_000 },
            );
        } else {
            fs.mkdirSync(rootfs);
        }
        for (const g of recipe.groups) await chroot(rootfs, ["groupadd", "-g", String(g.gid), g.name]);
        for (const u of recipe.users)
            await chroot(rootfs, ["useradd", ...(u.system ? ["-r"] : []), "-u", String(u.uid), "-g", u.group, u.name]);
        const inRoot = (p: string) => path.join(rootfs, p);
        for (const d of recipe.dirs) {
            fs.mkdirSync(inRoot(d.path), { recursive: true });
            const [uid, gid] = d.owner.split(":").map(Number);
            fs.chownSync(inRoot(d.path), uid, gid);
            fs.chmodSync(inRoot(d.path), parseInt(d.mode, 8));
        }
        for (const f of recipe.emptyFiles) if (!fs.existsSync(inRoot(f))) fs.writeFileSync(inRoot(f), "");
        for (const f of recipe.files) {
            fs.mkdirSync(path.dirname(inRoot(f.path)), { recursive: true });
            fs.copyFileSync(await sourcePath(f.source), inRoot(f.path));
            fs.chmodSync(inRoot(f.path), parseInt(f.mode, 8));
        }
        for (const [link, target] of Object.entries(recipe.links)) {
            fs.mkdirSync(path.dirname(inRoot(link)), { recursive: true });
            fs.rmSync(inRoot(link), { force: true });
            fs.symlinkSync(target, inRoot(link));
        }
        for (const cmd of recipe.run) await chroot(rootfs, cmd);
        await run("tar", ["--numeric-owner", "--sort=name", "--xattrs", "-C", rootfs, "-cf", path.join(work, "layer.tar"), "."], {
            timeoutMs: 600_000,
        });
        fs.rmSync(rootfs, { recursive: true, force: true });
        fs.rmSync(done, { recursive: true, force: true });
        fs.renameSync(work, done);
    } catch (e) {
        fs.rmSync(work, { recursive: true, force: true });
        throw e;
    }
    log(`${recipe.name}: made in ${((Date.now() - t0) / 1000).toFixed(0)} s (${(fs.statSync(layer).size / 1e6).toFixed(0)} MB)`);
    return layer;
}

/** Makes the layers of every recipe, `parallel` at a time (mmdebstrap mostly waits for the mirror). */
export async function buildImageLayers(
    recipes: ImageRecipe[],
    log: (line: string) => void = () => {},
    parallel = 3,
): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const queue = [...recipes];
    const worker = async () => {
        for (let r = queue.shift(); r; r = queue.shift()) out.set(r.name, await buildImageLayer(r, log));
    };
    await Promise.all(Array.from({ length: Math.min(parallel, recipes.length) }, worker));
    return out;
}

/** The image's reference in a registry at `registry` (host:port), under its upstream name. */
export const mirrorRef = (registry: string, name: string) => `${registry}/${name}`;

async function crane(crane: string, args: string[]): Promise<string> {
    return (await run(crane, [...args, "--insecure"], { timeoutMs: 600_000, env: { ...process.env, HOME: os.tmpdir() } })).stdout;
}

/** The inputs' hash of the image the registry has under that name, or undefined when it has none. */
export async function pushedInputs(craneBin: string, registry: string, name: string): Promise<string | undefined> {
    try {
        return JSON.parse(await crane(craneBin, ["config", mirrorRef(registry, name)])).config?.Labels?.[INPUTS_LABEL];
    } catch (e) {
        if (/MANIFEST_UNKNOWN|NAME_UNKNOWN|404/.test(messageOf(e))) return undefined;
        throw e;
    }
}

/** Pushes an image (its layer, then its config and label) unless the registry has it at these inputs. */
export async function pushImage(
    craneBin: string,
    registry: string,
    recipe: ImageRecipe,
    log: (line: string) => void = () => {},
): Promise<"pushed" | "present"> {
    const inputs = await imageInputs(recipe);
    if ((await pushedInputs(craneBin, registry, recipe.name)) === inputs) return "present";
    const layer = await buildImageLayer(recipe, log);
    const ref = mirrorRef(registry, recipe.name);
    await crane(craneBin, ["append", "--platform", "linux/amd64", "-f", layer, "-t", ref]);
    const c = recipe.config;
    await crane(craneBin, [
        "mutate",
        ref,
        "-t",
        ref,
        "--set-platform",
        "linux/amd64",
        // repeated flags, one element each (crane's lists also split a value at commas: none has one)
        ...(c.entrypoint ?? []).flatMap((e) => ["--entrypoint", e]),
        ...(c.cmd ?? []).flatMap((e) => ["--cmd", e]),
        ...(c.user ? ["--user", c.user] : []),
        ...(c.workdir ? ["--workdir", c.workdir] : []),
        ...Object.entries(c.env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
        "--label",
        `${INPUTS_LABEL}=${inputs}`,
    ]);
    log(`${recipe.name}: pushed to the node's registry`);
    return "pushed";
}
