/**
 * The shop repository's overlays as the grader reads them at a commit: a kustomization's resources, under
 * any name kustomize reads it by, and the commit that added missing.yaml (step 7's bad commit) to one.
 */
import * as path from "path";
import { parse } from "yaml";
import type { ShopWorld } from "./world";

/** A kustomization as kustomize reads it: a key written twice (resources: appended again) is the last one, no error; a merge key (<<) merged. */
export const readKustomization = (text: string): unknown => parse(text, { uniqueKeys: false, merge: true });

/** A kustomization's resources, each as kustomize resolves it (./missing.yaml is missing.yaml), bases: (its deprecated alias) too. */
export function resourcesOf(kustomization: string | null): string[] {
    if (!kustomization) return [];
    try {
        const k = readKustomization(kustomization) as Record<string, unknown> | null;
        const list = (v: unknown) => (Array.isArray(v) ? v : []);
        return [...list(k?.resources), ...list(k?.bases)].map((r: unknown) => path.posix.normalize(String(r)));
    } catch {
        return [];
    }
}

/** An overlay's kustomization at a commit, under any of the names kustomize reads (kustomization.yaml, .yml, Kustomization). */
export async function kustomizationOf(w: ShopWorld, sha: string, dir: string): Promise<string | null> {
    for (const name of ["kustomization.yaml", "kustomization.yml", "Kustomization"]) {
        const text = await w.repo.file(sha, `${dir}/${name}`);
        if (text !== null) return text;
    }
    return null;
}

/** The first commit after `from` on `tip`'s first-parent line that adds missing.yaml to `dir` (envs/dev: step 7's), if any. */
export async function missingYamlAfter(w: ShopWorld, from: string, tip: string, dir = "envs/dev"): Promise<string | undefined> {
    const dev = async (sha: string) => resourcesOf(await kustomizationOf(w, sha, dir));
    const line: string[] = [];
    for (let at: string | undefined = tip; at && at !== from && line.length < 50; at = (await w.repo.parents(at))[0]) line.unshift(at);
    for (const sha of line) {
        const [parent] = await w.repo.parents(sha);
        if (parent && (await dev(sha)).includes("missing.yaml") && !(await dev(parent)).includes("missing.yaml")) return sha;
    }
    return undefined;
}

/** The top-level key of a kustomization whose list names `file` (components:, patches: as a path), or undefined. */
export function keyHolding(kustomization: string, file: string): string | undefined {
    try {
        const k = readKustomization(kustomization) as Record<string, unknown> | null;
        return Object.keys(k ?? {}).find((key) => JSON.stringify(k?.[key] ?? null).includes(JSON.stringify(file).slice(1, -1)));
    } catch {
        return undefined;
    }
}
