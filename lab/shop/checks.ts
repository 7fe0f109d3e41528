/**
 * The independent grader: re-derives every fact of LAB-SPEC.md Part 1 from the world (the six
 * files, the bare repository, and, unless offline, the cluster) and says, check by check, what
 * holds. It shares no bookkeeping with the scenario: it reads the bare repository directly.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { ClusterPort } from "../ports/cluster";
import { run } from "../ports/exec";
import { isFullSha } from "../ports/git";
import { LabLayout, REPO_URL, RESULT_FILES, ResultName } from "./layout";
import { renderOverlay } from "./repo";

export interface CheckResult {
    step: number;
    check: string;
    ok: boolean;
    expected?: string;
    found?: string;
}

export interface VerifyOptions {
    layout: LabLayout;
    /** Grade steps 1..through. */
    through: number;
    /** The live cluster; undefined means offline. */
    cluster?: ClusterPort;
    /** `pulumi stack output --json` of the lab's stack, if there is one to compare with. */
    stackOutputs?: Record<string, unknown>;
    kubectl?: string;
}

/** Exactly the keys and types LAB-SPEC.md gives each file. */
export const FILE_SCHEMA: Record<ResultName, Record<string, "sha" | "string" | "integer" | "boolean">> = {
    incident: { commit: "sha", dev_value: "string", prod_value: "string" },
    pin: { release_prod_initial: "sha", prod_value_after_pin: "string" },
    drift: { uid: "string", edited: "string", restored: "string", seconds: "integer" },
    promote: { from: "sha", to: "sha" },
    revert: { bad_commit: "sha", revert_commit: "sha", dev_error: "string", prod_revision_during: "sha" },
    report: { dev_tracks: "string", prod_tracks: "string", promoted_commit: "sha", drift_seconds: "integer", bad_commit_reached_prod: "boolean", rollback: "string" },
};
const FILE_STEP: Record<ResultName, number> = { incident: 3, pin: 4, drift: 5, promote: 6, revert: 7, report: 8 };

const show = (v: unknown) => (v === undefined ? "(nothing)" : typeof v === "string" ? v : JSON.stringify(v));

/** Read-only questions to the bare repository. */
class BareRepo {
    constructor(private readonly gitDir: string) {}
    private async git(args: string[]) {
        return (await run("git", ["--git-dir", this.gitDir, ...args])).stdout;
    }
    async exists(): Promise<boolean> {
        return fs.existsSync(path.join(this.gitDir, "HEAD"));
    }
    async branch(name: string): Promise<string | null> {
        return this.git(["rev-parse", "--verify", "--quiet", `refs/heads/${name}^{commit}`]).then((s) => s.trim(), () => null);
    }
    async isCommit(sha: string): Promise<boolean> {
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
    /** The shop ConfigMap's data that `kubectl kustomize <dir>` renders at a commit. */
    async render(sha: string, dir: string, kubectl: string): Promise<Record<string, string>> {
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "verify-"));
        try {
            const tar = path.join(tmp, "src.tar");
            await this.git(["archive", "--format=tar", "-o", tar, sha]);
            await run("tar", ["-xf", tar, "-C", tmp]);
            return await renderOverlay(path.join(tmp, dir), kubectl);
        } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    }
}

function typeOk(kind: string, v: unknown): boolean {
    switch (kind) {
        case "sha":
            return isFullSha(v);
        case "integer":
            return typeof v === "number" && Number.isInteger(v);
        case "boolean":
            return typeof v === "boolean";
        default:
            return typeof v === "string";
    }
}

function resourcesOf(kustomization: string | null): string[] {
    if (!kustomization) return [];
    try {
        return (parse(kustomization)?.resources ?? []).map(String);
    } catch {
        return [];
    }
}

export async function verify(opts: VerifyOptions): Promise<CheckResult[]> {
    const { layout, through } = opts;
    const kubectl = opts.kubectl ?? "kubectl";
    const results: CheckResult[] = [];
    const repo = new BareRepo(layout.bareRepo);

    /** Runs one check; an exception is a FAIL with its message, never a crash. */
    async function check(step: number, name: string, f: () => Promise<{ ok: boolean; expected?: unknown; found?: unknown } | boolean>) {
        if (step > through) return;
        try {
            const r = await f();
            const o = typeof r === "boolean" ? { ok: r } : r;
            results.push({ step, check: name, ok: o.ok, ...(o.ok ? {} : { expected: show(o.expected), found: show(o.found) }) });
        } catch (e: any) {
            results.push({ step, check: name, ok: false, expected: "the check to be answerable", found: String(e?.message ?? e).split("\n")[0] });
        }
    }
    // when either side is not a string, both are shown as JSON, so "3" and 3 look different
    const eq = (expected: unknown, found: unknown) => {
        const json = typeof expected !== "string" || typeof found !== "string";
        return { ok: JSON.stringify(expected) === JSON.stringify(found), expected: json ? JSON.stringify(expected) : expected, found: json ? JSON.stringify(found) ?? "(nothing)" : found };
    };

    // ---- the six files: present, JSON, exactly the keys, the right types
    const files: Partial<Record<ResultName, any>> = {};
    for (const name of RESULT_FILES) {
        const step = FILE_STEP[name];
        const file = layout.resultFile(name);
        let parsed: any;
        await check(step, `${name}.json exists and is JSON`, async () => {
            if (!fs.existsSync(file)) return { ok: false, expected: file, found: "no such file" };
            try {
                parsed = JSON.parse(fs.readFileSync(file, "utf8"));
            } catch (e: any) {
                return { ok: false, expected: "valid JSON", found: e.message };
            }
            return { ok: parsed !== null && typeof parsed === "object" && !Array.isArray(parsed), expected: "a JSON object", found: typeof parsed };
        });
        if (parsed === undefined || parsed === null || typeof parsed !== "object") continue;
        files[name] = parsed;
        const schema = FILE_SCHEMA[name];
        await check(step, `${name}.json has exactly the keys ${Object.keys(schema).join(", ")}`, async () => eq(Object.keys(schema).sort(), Object.keys(parsed).sort()));
        for (const [key, kind] of Object.entries(schema)) {
            if (!(key in parsed)) continue;
            await check(step, `${name}.${key} is ${kind === "sha" ? "a full 40-hex SHA" : `a${kind === "integer" ? "n" : ""} ${kind}`}`, async () => ({ ok: typeOk(kind, parsed[key]), expected: kind, found: JSON.stringify(parsed[key]) }));
            if (kind === "sha" && typeOk(kind, parsed[key])) {
                await check(step, `${name}.${key} is a commit of the repository`, async () => ({ ok: await repo.isCommit(parsed[key]), expected: "a commit in the bare repo", found: `${parsed[key]} not found` }));
            }
        }
    }
    const { incident, pin, drift, promote, revert, report } = files;
    const sha = (v: unknown): v is string => typeOk("sha", v);

    // ---- step 1: the repository
    const main = (await repo.exists()) ? await repo.branch("main") : null;
    await check(1, "the bare repository exists with a main branch", async () => ({ ok: !!main, expected: `${layout.bareRepo} with refs/heads/main`, found: (await repo.exists()) ? "no main branch" : "no repository" }));
    if (main) {
        const first = await repo.rootOf("main");
        await check(1, "the first commit's base ConfigMap: shop-config, no namespace, FEATURE_CHECKOUT_V2 off, LOG_LEVEL info", async () => {
            const cm = parse((await repo.file(first, "base/configmap.yaml")) ?? "null");
            return eq({ name: "shop-config", namespace: undefined, data: { FEATURE_CHECKOUT_V2: "off", LOG_LEVEL: "info" } }, { name: cm?.metadata?.name, namespace: cm?.metadata?.namespace, data: cm?.data });
        });
        await check(1, "the first commit's overlays render LOG_LEVEL debug (dev) and warn (prod)", async () =>
            eq({ dev: "debug", prod: "warn" }, { dev: (await repo.render(first, "envs/dev", kubectl)).LOG_LEVEL, prod: (await repo.render(first, "envs/prod", kubectl)).LOG_LEVEL }),
        );
    }

    // ---- step 2: the ApplicationSet as written and as applied
    const wantProd = through >= 4 ? "release/prod" : "main";
    await check(2, `appset.yaml: ApplicationSet argocd/shop, dev=main, prod=${wantProd}`, async () => {
        if (!fs.existsSync(layout.appsetFile)) return { ok: false, expected: layout.appsetFile, found: "no such file" };
        const a = parse(fs.readFileSync(layout.appsetFile, "utf8"));
        const els = a?.spec?.generators?.[0]?.list?.elements ?? [];
        return eq(
            { kind: "ApplicationSet", name: "shop", namespace: "argocd", elements: [{ env: "dev", revision: "main" }, { env: "prod", revision: wantProd }] },
            { kind: a?.kind, name: a?.metadata?.name, namespace: a?.metadata?.namespace, elements: els },
        );
    });
    await check(2, "appset.yaml template: shop-{{env}}, repoURL, {{revision}}, envs/{{env}}, prune+selfHeal, CreateNamespace", async () => {
        const t = parse(fs.readFileSync(layout.appsetFile, "utf8"))?.spec?.template;
        return eq(
            { name: "shop-{{env}}", project: "default", repoURL: REPO_URL, targetRevision: "{{revision}}", path: "envs/{{env}}", namespace: "shop-{{env}}", automated: { prune: true, selfHeal: true }, syncOptions: ["CreateNamespace=true"] },
            { name: t?.metadata?.name, project: t?.spec?.project, repoURL: t?.spec?.source?.repoURL, targetRevision: t?.spec?.source?.targetRevision, path: t?.spec?.source?.path, namespace: t?.spec?.destination?.namespace, automated: t?.spec?.syncPolicy?.automated, syncOptions: t?.spec?.syncPolicy?.syncOptions },
        );
    });

    // ---- step 3: incident
    if (incident) {
        await check(3, "incident: dev_value and prod_value are on", async () => eq({ dev_value: "on", prod_value: "on" }, { dev_value: incident.dev_value, prod_value: incident.prod_value }));
        if (sha(incident.commit)) {
            await check(3, "incident.commit turns FEATURE_CHECKOUT_V2 on in base, its parent has it off", async () => {
                const [parent] = await repo.parents(incident.commit);
                const now = parse((await repo.file(incident.commit, "base/configmap.yaml")) ?? "null")?.data?.FEATURE_CHECKOUT_V2;
                const before = parent ? parse((await repo.file(parent, "base/configmap.yaml")) ?? "null")?.data?.FEATURE_CHECKOUT_V2 : undefined;
                return eq({ commit: "on", parent: "off" }, { commit: now, parent: before });
            });
            if (main) await check(3, "incident.commit is on main", async () => ({ ok: await repo.isAncestor(incident.commit, main), expected: `an ancestor of main (${main})`, found: "not in main's history" }));
        }
    }

    // ---- step 4: pin
    const releaseTip = main ? await repo.branch("release/prod") : null;
    if (through >= 4) await check(4, "release/prod exists", async () => ({ ok: !!releaseTip, expected: "refs/heads/release/prod", found: "no such branch" }));
    if (pin) {
        if (incident && sha(incident.commit)) {
            await check(4, "pin.release_prod_initial is the parent of incident.commit", async () => eq((await repo.parents(incident.commit))[0], pin.release_prod_initial));
        }
        await check(4, "pin.prod_value_after_pin is off", async () => eq("off", pin.prod_value_after_pin));
    }

    // ---- step 5: drift
    if (drift) {
        await check(5, "drift: edited debug, restored warn", async () => eq({ edited: "debug", restored: "warn" }, { edited: drift.edited, restored: drift.restored }));
        if (typeof drift.seconds === "number") await check(5, "drift.seconds is not negative", async () => ({ ok: drift.seconds >= 0, expected: ">= 0", found: drift.seconds }));
    }

    // ---- step 6: promote
    if (promote) {
        if (pin) await check(6, "promote.from is pin.release_prod_initial", async () => eq(pin.release_prod_initial, promote.from));
        if (incident) await check(6, "promote.to is incident.commit", async () => eq(incident.commit, promote.to));
        if (sha(promote.from) && sha(promote.to)) {
            await check(6, "promote.from is an ancestor of promote.to (a fast-forward)", async () => ({ ok: await repo.isAncestor(promote.from, promote.to), expected: "an ancestor", found: "not an ancestor: not a fast-forward" }));
        }
        await check(6, "release/prod is at promote.to (its history never rewritten)", async () => eq(promote.to, releaseTip));
        if (sha(promote.from) && releaseTip) {
            await check(6, "release/prod still contains promote.from", async () => ({ ok: await repo.isAncestor(promote.from, releaseTip), expected: `${promote.from} in release/prod's history`, found: "missing: release/prod was rewritten" }));
        }
    }

    // ---- step 7: revert
    if (revert) {
        const bad = revert.bad_commit;
        if (sha(bad) && (await repo.isCommit(bad))) {
            await check(7, "bad_commit adds missing.yaml to envs/dev/kustomization.yaml resources", async () => {
                const [parent] = await repo.parents(bad);
                return eq({ before: false, after: true }, { before: resourcesOf(await repo.file(parent, "envs/dev/kustomization.yaml")).includes("missing.yaml"), after: resourcesOf(await repo.file(bad, "envs/dev/kustomization.yaml")).includes("missing.yaml") });
            });
            if (main) await check(7, "bad_commit stays in main's history (rolled back by a revert, not a reset)", async () => ({ ok: await repo.isAncestor(bad, main), expected: "an ancestor of main", found: "not in main's history: history was rewritten" }));
            if (releaseTip) await check(7, "bad_commit is not in release/prod's history", async () => ({ ok: !(await repo.isAncestor(bad, releaseTip)), expected: "not an ancestor of release/prod", found: `release/prod (${releaseTip}) contains it` }));
        }
        if (sha(revert.revert_commit) && (await repo.isCommit(revert.revert_commit))) {
            await check(7, "revert_commit is a revert of bad_commit (its parent, its message, its content)", async () => {
                const [parent] = await repo.parents(revert.revert_commit);
                const msg = await repo.message(revert.revert_commit);
                const [grand] = sha(bad) && (await repo.isCommit(bad)) ? await repo.parents(bad) : [undefined];
                const same = grand ? (await repo.file(revert.revert_commit, "envs/dev/kustomization.yaml")) === (await repo.file(grand, "envs/dev/kustomization.yaml")) : false;
                return eq({ parent: bad, message: true, content: true }, { parent, message: msg.includes(`This reverts commit ${bad}`), content: same });
            });
            if (main) await check(7, "revert_commit is on main", async () => ({ ok: await repo.isAncestor(revert.revert_commit, main), expected: "an ancestor of main", found: "not in main's history" }));
        }
        await check(7, "dev_error mentions missing.yaml", async () => ({ ok: typeof revert.dev_error === "string" && revert.dev_error.includes("missing.yaml"), expected: "…missing.yaml…", found: revert.dev_error }));
        if (promote) await check(7, "prod_revision_during is promote.to", async () => eq(promote.to, revert.prod_revision_during));
    }

    // ---- step 8: report
    if (report) {
        await check(8, "report: dev_tracks main, prod_tracks release/prod, rollback revert", async () =>
            eq({ dev_tracks: "main", prod_tracks: "release/prod", rollback: "revert" }, { dev_tracks: report.dev_tracks, prod_tracks: report.prod_tracks, rollback: report.rollback }),
        );
        if (promote) await check(8, "report.promoted_commit is promote.to", async () => eq(promote.to, report.promoted_commit));
        if (drift) await check(8, "report.drift_seconds is drift.seconds", async () => eq(drift.seconds, report.drift_seconds));
        if (revert && sha(revert.bad_commit) && releaseTip && (await repo.isCommit(revert.bad_commit))) {
            await check(8, "report.bad_commit_reached_prod agrees with git merge-base --is-ancestor (and is false)", async () => {
                const reached = await repo.isAncestor(revert.bad_commit, releaseTip);
                return eq({ reported: reached, value: false }, { reported: report.bad_commit_reached_prod, value: reached });
            });
        }
    }

    // ---- stack outputs carry the same values as the files
    if (opts.stackOutputs) {
        for (const name of RESULT_FILES) {
            if (FILE_STEP[name] > through || !files[name]) continue;
            await check(FILE_STEP[name], `stack output ${name} equals ${name}.json`, async () => eq(files[name], opts.stackOutputs![name]));
        }
    }

    // ---- live: the cluster
    if (opts.cluster) await verifyLive(opts.cluster, through, files, check, eq);
    return results;
}

type CheckFn = (step: number, name: string, f: () => Promise<{ ok: boolean; expected?: unknown; found?: unknown } | boolean>) => Promise<void>;

async function verifyLive(cluster: ClusterPort, through: number, files: Partial<Record<ResultName, any>>, check: CheckFn, eq: (e: unknown, f: unknown) => { ok: boolean; expected: unknown; found: unknown }) {
    if (through < 2) return; // nothing of the lab is in the cluster before step 2
    let reachable = true;
    await check(2, "the cluster answers", async () => {
        try {
            await cluster.getApplicationSet("shop");
            return true;
        } catch (e: any) {
            reachable = false;
            return { ok: false, expected: "an answer from the Kubernetes API", found: e.message };
        }
    });
    if (!reachable) return;
    const wantProd = through >= 4 ? "release/prod" : "main";
    await check(2, `live ApplicationSet shop: dev=main, prod=${wantProd}`, async () => eq([{ env: "dev", revision: "main" }, { env: "prod", revision: wantProd }], (await cluster.getApplicationSet("shop"))?.spec?.generators?.[0]?.list?.elements));
    for (const [app, want] of [["shop-dev", "main"], ["shop-prod", wantProd]] as const) {
        await check(2, `live Application ${app} tracks ${want} and is Synced`, async () => {
            const a = await cluster.getApplication(app);
            return eq({ targetRevision: want, sync: "Synced" }, { targetRevision: a?.spec?.source?.targetRevision, sync: a?.status?.sync?.status });
        });
    }
    const value = async (ns: string, key: string) => (await cluster.getConfigMap(ns, "shop-config"))?.data?.[key];
    const feature = through >= 6 ? "on" : through >= 4 ? "off" : through >= 3 ? "on" : "off";
    await check(Math.max(2, Math.min(through, 6)), `live shop-prod FEATURE_CHECKOUT_V2 is ${feature}`, async () => eq(feature, await value("shop-prod", "FEATURE_CHECKOUT_V2")));
    await check(Math.min(through, 3), `live shop-dev FEATURE_CHECKOUT_V2 is ${through >= 3 ? "on" : "off"}`, async () => eq(through >= 3 ? "on" : "off", await value("shop-dev", "FEATURE_CHECKOUT_V2")));
    if (files.drift) {
        await check(5, "live shop-prod ConfigMap uid is drift.uid, LOG_LEVEL warn", async () => {
            const cm = await cluster.getConfigMap("shop-prod", "shop-config");
            return eq({ uid: files.drift.uid, LOG_LEVEL: "warn" }, { uid: cm?.metadata?.uid, LOG_LEVEL: cm?.data?.LOG_LEVEL });
        });
    }
    if (files.promote) {
        await check(6, "live shop-prod is synced to promote.to", async () => eq(files.promote.to, (await cluster.getApplication("shop-prod"))?.status?.sync?.revision));
    }
    if (files.revert) {
        await check(7, "live shop-dev has no ComparisonError", async () => {
            const conds = ((await cluster.getApplication("shop-dev"))?.status?.conditions ?? []).filter((c: any) => c.type === "ComparisonError");
            return { ok: conds.length === 0, expected: "no ComparisonError", found: conds.map((c: any) => c.message).join("; ") };
        });
    }
    if (files.report) {
        await check(8, "report tracks equal the live Applications' targetRevision", async () =>
            eq({ dev_tracks: (await cluster.getApplication("shop-dev"))?.spec?.source?.targetRevision, prod_tracks: (await cluster.getApplication("shop-prod"))?.spec?.source?.targetRevision }, { dev_tracks: files.report.dev_tracks, prod_tracks: files.report.prod_tracks }),
        );
    }
}

/** The table a person reads: step, check, PASS/FAIL, and for a FAIL what was expected and found. */
export function formatTable(results: CheckResult[]): string {
    const lines = results
        .slice()
        .sort((a, b) => a.step - b.step)
        .map((r) => {
            const head = `${String(r.step).padStart(4)}  ${r.ok ? "PASS" : "FAIL"}  ${r.check}`;
            return r.ok ? head : `${head}\n              expected: ${r.expected}\n              found:    ${r.found}`;
        });
    const failed = results.filter((r) => !r.ok).length;
    return [`step  result  check`, ...lines, "", `${results.length - failed} passed, ${failed} failed`].join("\n");
}
