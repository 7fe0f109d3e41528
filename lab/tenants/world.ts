/**
 * What the tenants lab's checks read (the world of a grading) and what each step leaves the sites running.
 */
import * as path from "path";
import { parse } from "yaml";
import { BareRepo, cloneAt } from "../grader/bareRepo";
import { servedCloneDir } from "../kit/layout";
import { clusterErrorOf } from "../grader/live";
import { isSha, readResultFiles } from "../grader/resultFiles";
import { LiveWorld } from "../grader/live";
import { ResultFilesWorld, resultObject } from "../grader/resultFiles";
import { ClusterPort } from "../ports/cluster";
import { RELEASES, TENANTS, TENANTS_APPSET, TenantsLayout } from "./layout";
import { tenantPath } from "./repoFiles";
import { TenantsResultName, TENANTS_RESULT_FILES } from "./results";

export interface TenantsVerifyOptions {
    layout: TenantsLayout;
    /** Grade steps 1..through (1-3, as tenantsSolveThrough). */
    through: number;
    cluster?: ClusterPort;
    stackOutputs?: Record<string, unknown>;
}

export interface TenantsWorld extends ResultFilesWorld<TenantsResultName>, LiveWorld {
    layout: TenantsLayout;
    through: number;
    main: string | null;
}

/** An entry of recovery.order as a learner may have written it: any field missing or of another type. */
export type Order = { application?: unknown; healthy_at?: unknown } | null;

export const obj = (w: TenantsWorld, name: TenantsResultName) => resultObject(w, name);

/** The release each tenant file names at a commit. */
export async function releasesAt(w: TenantsWorld, sha: string): Promise<Record<string, string | null>> {
    const out: Record<string, string | null> = {};
    for (const t of TENANTS) {
        const text = await w.repo.file(sha, tenantPath(t));
        out[t] = text ? String(readTenantFile(text).release ?? null) : null;
    }
    return out;
}

/**
 * A tenant file's keys, or its YAML error (a quote left open: Argo CD's git generator refuses the file as well). A key
 * given twice is read as Argo CD reads it: the last one holds (sigs.k8s.io/yaml's Unmarshal ignores duplicates).
 */
export function readTenantFile(text: string): { release?: unknown; error?: string } {
    try {
        const v: unknown = parse(text, { uniqueKeys: false, merge: true });
        return v && typeof v === "object" ? (v as { release?: unknown }) : {};
    } catch (e) {
        return {
            error: String((e as Error)?.message ?? e)
                .split("\n")[0]
                .replace(/:$/, ""),
        };
    }
}
export const all = (release: string) => Object.fromEntries(TENANTS.map((t) => [t, release]));

/** The tenants after the blocked step (mandant-b's, step 2). */
export const AFTER_BLOCKED = TENANTS.slice(TENANTS.indexOf("mandant-b") + 1);
/**
 * Those of them the stall found at the faulty release already: v3.5.1's RollingSync lets a later
 * step's tenant through when its comparison of the faulty commit arrives before mandant-b's (a race
 * between the two controllers, docs/tenants-lab.md). Read from stall.json; such a tenant must then
 * not be waiting, and the live check holds the cluster to it.
 */
export const racedAhead = (w: TenantsWorld): string[] => {
    const running = obj(w, "stall")?.running;
    // a running that has the blocked tenant at the faulty release too is Git's releases copied, not what ran: no race read from it
    if (running?.["mandant-b"] === RELEASES.faulty) return [];
    return AFTER_BLOCKED.filter((t) => running?.[t] === RELEASES.faulty);
};

/** What the graded step leaves each site running (at the stall: with the tenants that raced ahead). */
export const expectedRunning = (through: number, raced: string[] = []) =>
    through >= 3
        ? all(RELEASES.fixed)
        : through >= 2
          ? { ...all(RELEASES.first), "mandant-a": RELEASES.faulty, ...Object.fromEntries(raced.map((t) => [t, RELEASES.faulty])) }
          : all(RELEASES.first);
export const expectedPath = (through: number, _tenant: string) =>
    `releases/${through >= 3 ? RELEASES.fixed : through >= 2 ? RELEASES.faulty : RELEASES.first}`;

/** What a grading reads: the result files, the repository and its clones, the cluster (its error, once). */
export async function readTenantsWorld(opts: TenantsVerifyOptions): Promise<TenantsWorld> {
    const { layout } = opts;
    const repo = new BareRepo(layout.bareRepo);
    const files = readResultFiles(TENANTS_RESULT_FILES, layout.resultFile);
    const main = repo.exists() ? await repo.branch("main") : null;
    const clusterError = await clusterErrorOf(opts.cluster, TENANTS_APPSET);
    return {
        layout,
        fileOf: layout.resultFile,
        clone: new BareRepo(path.join(layout.clone, ".git")),
        servedClone: cloneAt(servedCloneDir(layout.root, "platform")),
        repo,
        files,
        through: opts.through,
        main,
        cluster: opts.cluster,
        clusterError,
        stackOutputs: opts.stackOutputs,
    };
}

/**
 * The fix behind a later commit: from `from` (a commit with every tenant at the fixed release) up its first
 * parents, the commit that set all four at once from the faulty release; undefined when there is none such.
 */
async function fixBehind(w: TenantsWorld, from: string | undefined): Promise<string | undefined> {
    const every = async (sha: string, release: string) => {
        const at = await releasesAt(w, sha);
        return TENANTS.every((t) => at[t] === release);
    };
    let fix = from;
    for (let n = 0; fix && n < 50; n++) {
        const [up] = await w.repo.parents(fix);
        if (!up || !(await every(up, RELEASES.fixed))) break;
        fix = up;
    }
    const before = fix ? (await w.repo.parents(fix))[0] : undefined;
    return fix && before && (await every(before, RELEASES.faulty)) ? fix : undefined;
}

/** recovery.commit a later commit than the fix (every tenant at the fixed release before it): said, with the fix's SHA. */
export async function laterThanFix(w: TenantsWorld, commit: string, parent: string | undefined) {
    const fix = await fixBehind(w, parent);
    return fix
        ? {
              ok: false,
              expected: `the commit that sets every tenant to ${RELEASES.fixed}`,
              found: `${commit.slice(0, 12)}, which changes no tenant's release`,
              hint: `recovery.commit ${commit.slice(0, 12)} changes no tenant's release (every tenant was at ${RELEASES.fixed} before it): the fix is its ancestor ${fix.slice(0, 12)}, the commit that set all four at once: write ${fix}`,
          }
        : undefined;
}

/**
 * The parent of `sha` that main stood at before it: a merge's parent holding stall.commit (git pull after a refused
 * push makes the learner's own commit the first parent), else the first parent; undefined for the root commit.
 */
export async function parentOnMain(w: TenantsWorld, sha: string): Promise<string | undefined> {
    const parents = await w.repo.parents(sha);
    const stall = obj(w, "stall")?.commit;
    if (parents.length > 1 && isSha(stall)) for (const p of parents) if (await w.repo.isAncestor(String(stall), p)) return p;
    return parents[0];
}

/** The files `sha` changed on main: against the parent main stood at (a merge's own changes, not none). */
export async function changedOnMain(w: TenantsWorld, sha: string): Promise<string[]> {
    const parents = await w.repo.parents(sha);
    return parents.length > 1 ? w.repo.changedFiles(sha, await parentOnMain(w, sha)) : w.repo.changedFiles(sha);
}
