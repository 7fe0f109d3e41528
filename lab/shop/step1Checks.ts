/**
 * The shop grader's checks of step 1: the bare repository, readable by the git daemon, and its first
 * commit's base and overlays. Part of the table in checks.ts, which runs them.
 */
import { shellWord } from "../ports/shellWord";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { Check, eq, eqFields } from "../grader/grader";
import type { ConfigMap } from "../argo/types";
import { renderShopConfigMapAt } from "./render";
import { ShopWorld } from "./world";
import { REPO_FILES } from "./repoFiles";
import { kustomizationOf, readKustomization } from "./overlays";

/** Each commit's overlay rendered once per grading (two checks read it). */
const renders = new WeakMap<ShopWorld, Map<string, Promise<ConfigMap>>>();
function configMapAt(w: ShopWorld, sha: string, dir: string): Promise<ConfigMap> {
    let done = renders.get(w);
    if (!done) renders.set(w, (done = new Map()));
    const key = `${sha} ${dir}`;
    if (!done.has(key)) done.set(key, renderShopConfigMapAt(w.repo, sha, dir, w.kubectl));
    return done.get(key)!;
}
const shopConfigAt = async (w: ShopWorld, sha: string, dir: string) => (await configMapAt(w, sha, dir)).data ?? {};

/** How step 1 is done again: main's first commit is what it grades, and main takes fast-forwards only. */
const redo = (w: ShopWorld, first: string) =>
    first === w.main
        ? `while it is main's only commit, make it again: fix the files in the lab's clone and amend that commit there (git add -A && git commit --amend --no-edit: a new commit on top would leave this one first), make the bare repository again (rm -rf ${shellWord(w.layout.bareRepo)}, git init --bare --shared=0644 --initial-branch=main it) and push: git push origin main`
        : "do step 1 over on the lab begun again (its reset)";

export const STEP1_CHECKS: Check<ShopWorld>[] = [
    {
        step: 1,
        name: "the lab's clone is where the step puts it",
        run: async (w) => {
            if (!w.main || fs.existsSync(path.join(w.layout.clone, ".git")) || !fs.existsSync(w.layout.workDir)) return true;
            // git clone's default name (the repository's, shop-envs) beside where the step asks for it (repo): the steps'
            // and the served lab's commands run in the lab's clone
            const bare = path.resolve(w.layout.bareRepo);
            const beside = fs
                .readdirSync(w.layout.workDir, { withFileTypes: true })
                .filter((e) => e.isDirectory() && fs.existsSync(path.join(w.layout.workDir, e.name, ".git", "config")))
                .map((e) => path.join(w.layout.workDir, e.name))
                .find((d) => {
                    const url = /^\s*url\s*=\s*(.+)$/m.exec(fs.readFileSync(path.join(d, ".git", "config"), "utf8"))?.[1]?.trim();
                    return !!url && path.resolve(w.layout.workDir, d, url.replace(/^file:\/\//, "")) === bare;
                });
            if (!beside) return true; // a clone elsewhere (or none): the repository is what step 1 grades
            return {
                ok: false,
                expected: w.layout.clone,
                found: beside,
                hint: `your clone of the repository is ${beside}, and the steps' commands (and the served lab's) run in ${w.layout.clone}: move it there (mv ${shellWord(beside)} ${shellWord(w.layout.clone)})`,
            };
        },
    },
    {
        step: 1,
        name: "the bare repository exists with a main branch",
        run: async (w) => {
            const outcome = { ok: !!w.main, expected: `${w.layout.bareRepo} with refs/heads/main`, found: "no repository" };
            // a repository with a working tree (git init without --bare): its git is in .git, and the daemon serves bare ones
            if (!outcome.ok && !w.repo.exists() && fs.existsSync(path.join(w.layout.bareRepo, ".git", "HEAD")))
                return {
                    ...outcome,
                    found: `a repository with a working tree at ${w.layout.bareRepo} (its git in .git), not a bare one`,
                    hint: `${w.layout.bareRepo} was made with git init, not git init --bare: the git daemon serves (and Argo CD reads) a bare repository; move it away, make it with git init --bare --shared=0644 --initial-branch=main ${w.layout.bareRepo}, and push your commit to it from a clone`,
                };
            if (!outcome.ok && !w.repo.exists()) {
                // made under another name beside it (shop-envs without .git, most often): the git daemon serves the lab's name only
                const beside = fs.existsSync(w.layout.bareDir)
                    ? fs
                          .readdirSync(w.layout.bareDir)
                          // a name like the lab's (shop-envs, shop_envs.git, shop-env): never another lab's or one of the learner's own
                          .filter((n) => /^shop[-_]?envs?(\.git)?$/i.test(n) && fs.existsSync(path.join(w.layout.bareDir, n, "HEAD")))
                    : [];
                if (!beside.length) return outcome;
                const other = path.join(w.layout.bareDir, beside[0]);
                return {
                    ...outcome,
                    found: `no repository there (a bare repository is at ${other})`,
                    hint: `the bare repository is at ${other}, and the lab's (which the git daemon serves, and Argo CD reads) is ${w.layout.bareRepo}: mv ${shellWord(other)} ${shellWord(w.layout.bareRepo)}, then in your clone git remote set-url origin ${shellWord(w.layout.bareRepo)}`,
                };
            }
            if (outcome.ok || !w.repo.exists()) return outcome;
            // pushed under another name (git's default master, most often)
            const others = await w.repo.branches();
            if (!others.length) return { ...outcome, found: "no main branch" };
            return {
                ...outcome,
                found: `no main branch (its branches: ${others.join(", ")})`,
                hint: `the lab's branch is main, the push made ${others.join(", ")}: in the clone, git branch -m ${others[0]} main, then git push origin main`,
            };
        },
    },
    {
        step: 1,
        name: "every file of the bare repository is readable by others (the git daemon runs as nobody)",
        run: async (w) => {
            if (!w.repo.exists()) return null;
            const bad = [
                ...((fs.statSync(w.layout.bareDir).mode & 0o005) === 0o005 ? [] : [w.layout.bareDir]),
                ...w.repo.unreadableByOthers(5),
            ];
            return {
                ok: bad.length === 0,
                expected: "o+r on files, o+rx on directories (core.sharedRepository)",
                found: `not readable by others: ${bad.join(", ")}`,
                // --shared applies to what is written after it: what a umask already closed stays closed until opened
                hint: `the git daemon reads the repository as nobody: open what is closed (chmod -R o+rX ${w.layout.bareRepo}), and keep later pushes readable whatever the pusher's umask (git --git-dir ${w.layout.bareRepo} config core.sharedRepository 0644)`,
            };
        },
    },
    {
        step: 1,
        name: "the first commit's base ConfigMap: shop-config, no namespace, FEATURE_CHECKOUT_V2 off, LOG_LEVEL info",
        run: async (w) => {
            if (!w.main) return null;
            const first = await w.repo.rootOf("main");
            const text = await w.repo.file(first, "base/configmap.yaml");
            // the ConfigMap under another file name (configmap.yml): the lab reads base/configmap.yaml
            const other = text === null ? (await w.repo.changedFiles(first)).find((f) => /^base\/configmap\.\w+$/i.test(f)) : undefined;
            if (other)
                return {
                    ok: false,
                    expected: "base/configmap.yaml",
                    found: other,
                    hint: `the first commit has ${other}, not base/configmap.yaml, the file the lab names: in a new lab (the reset, then step 1 again) name it base/configmap.yaml, and list it so in base/kustomization.yaml`,
                };
            if (text === null) {
                const files = await w.repo.changedFiles(first);
                // the files one folder down (gitrepo/shop copied as a folder, cp -r shop .): the lab's files belong at the top
                const nested = files.find((f) => /^[^/]+\/base\/configmap\.yaml$/.test(f));
                if (nested)
                    return {
                        ok: false,
                        expected: "base/configmap.yaml in main's first commit",
                        found: nested,
                        hint: `the first commit holds ${nested}: the lab's files go at the repository's top (base/, envs/), not in a folder ${nested.split("/")[0]}/ (cp -r gitrepo/shop/. into the clone copies what is in it); ${redo(w, first)}`,
                    };
                return {
                    ok: false,
                    expected: "base/configmap.yaml in main's first commit",
                    found: `no base/configmap.yaml (the first commit holds ${files.slice(0, 5).join(", ") || "no file"}${files.length > 5 ? ", ..." : ""})`,
                    hint: `step 1 grades main's first commit, and it holds no base/configmap.yaml: the first commit is to hold the lab's files (base/ and envs/dev, envs/prod) as they are; ${redo(w, first)}`,
                };
            }
            const want = { name: "shop-config", namespace: undefined, data: { FEATURE_CHECKOUT_V2: "off", LOG_LEVEL: "info" } };
            const fields = (t: string | null) => {
                const cm = parse(t ?? "null");
                return { name: cm?.metadata?.name, namespace: cm?.metadata?.namespace, data: cm?.data };
            };
            const outcome = eqFields(want, fields(text), {
                namespace: "the base names none: each environment's Application puts it in its own namespace (shop-dev, shop-prod)",
            });
            // a key of the lab's written in another case (FEATURE_CHECKOUT_v2): keys are case-sensitive
            const data = fields(text).data;
            const cased =
                data && typeof data === "object"
                    ? Object.keys(want.data).flatMap((k) => {
                          const other = Object.keys(data).find((d) => d !== k && d.toUpperCase() === k.toUpperCase());
                          return other && !(k in data) ? [`${other} and no ${k}`] : [];
                      })
                    : [];
            if (!outcome.ok && cased.length)
                return {
                    ...outcome,
                    hint: `the first commit's base/configmap.yaml has ${cased.join(", ")}: keys are case-sensitive, and the later steps read ${Object.keys(want.data).join(" and ")}; ${redo(w, first)}`,
                };
            // put right by a later commit: the first one is what step 1 grades, and main never rewinds
            if (!outcome.ok && first !== w.main) {
                const latest = await w.repo.file(w.main, "base/configmap.yaml").catch(() => null);
                const fixed =
                    latest !== null &&
                    (() => {
                        try {
                            return eqFields(want, fields(latest), {}).ok;
                        } catch {
                            return false; // no YAML at main: not put right
                        }
                    })();
                if (fixed)
                    return {
                        ...outcome,
                        hint: `main's latest commit has base/configmap.yaml right, its first (${first.slice(0, 12)}) does not${outcome.hint ? ` (${outcome.hint})` : ""}: step 1 grades the first commit, which a fast-forward never changes; ${redo(w, first)}`,
                    };
            }
            return outcome;
        },
    },
    {
        step: 1,
        name: "the first commit's overlays render LOG_LEVEL debug (dev) and warn (prod)",
        run: async (w) => {
            if (!w.main) return null;
            const first = await w.repo.rootOf("main");
            const want = { dev: "debug", prod: "warn" };
            const at = async (sha: string) => ({
                dev: (await shopConfigAt(w, sha, "envs/dev")).LOG_LEVEL,
                prod: (await shopConfigAt(w, sha, "envs/prod")).LOG_LEVEL,
            });
            // an overlay that renames the ConfigMap (a namePrefix), or does not render: said where --step reads it, not only in the table
            const got = await at(first).catch((e: unknown) => String((e as Error)?.message ?? e));
            if (typeof got === "string" && !/renamed by a namePrefix/.test(got)) {
                const outcome = { ok: false, expected: want, found: got.split("\n")[0] };
                if (first !== w.main && eq(want, await at(w.main).catch(() => ({}))).ok)
                    return {
                        ...outcome,
                        hint: `main's latest commit renders right, its first (${first.slice(0, 12)}) does not (${outcome.found}): step 1 grades the first commit, which a fast-forward never changes; ${redo(w, first)}`,
                    };
                // the overlays under other names (envs/development): the Applications read envs/dev and envs/prod
                const files = await w.repo.changedFiles(first);
                const envs = [...new Set(files.filter((f) => f.startsWith("envs/")).map((f) => f.split("/")[1]))];
                const lacking = ["dev", "prod"].filter((e) => !envs.includes(e));
                // a file of the lab's in the clone that the first commit lacks: never added (git add left it out)
                const kept: string[] = [];
                for (const f of REPO_FILES)
                    if ((await w.repo.file(first, f)) === null && fs.existsSync(path.join(w.layout.clone, f))) kept.push(f);
                if (!lacking.length && kept.length)
                    return {
                        ...outcome,
                        hint: `the first commit lacks ${kept.join(", ")}, which ${kept.length === 1 ? "is" : "are"} in your clone but ${kept.length === 1 ? "was" : "were"} never committed (git status shows what git add left out), so its overlays do not render; ${redo(w, first)} (git add -A before the commit)`,
                    };
                return {
                    ...outcome,
                    hint: lacking.length
                        ? `the first commit has no ${lacking.map((e) => `envs/${e}`).join(" or ")}${envs.length ? ` (its envs/: ${envs.join(", ")})` : ""}: the lab's overlays are envs/dev and envs/prod, the paths its Applications read; ${redo(w, first)}`
                        : `the first commit's overlays do not render (${outcome.found}): kubectl kustomize envs/dev and envs/prod in the clone show why; ${redo(w, first)}`,
                };
            }
            if (typeof got === "string") {
                const [, dir, name] = /(envs\/\S+) at \S+ does not render: .* but (\S+) \(renamed/.exec(got) ?? [];
                return {
                    ok: false,
                    expected: want,
                    found: got,
                    hint: `the first commit's ${dir ?? "overlay"} renders the ConfigMap as ${name ?? "another name"} (a namePrefix or nameSuffix): the lab's ConfigMap is shop-config in every environment, which the later steps read by name; take the prefix out`,
                };
            }
            const outcome = eq(want, got);
            // put right by a later commit: the step asks for a first commit that renders
            if (!outcome.ok && (first === w.main || !eq(want, await at(w.main)).ok)) {
                // an overlay's value changed from the lab's files: which one, and what it is to be
                const off = (["dev", "prod"] as const).filter((e) => got[e] !== want[e]);
                // base's value kept: the patch set a key of another case beside it (/data/log_level), or changed nothing
                const why = async (e: "dev" | "prod") => {
                    if (got[e] !== "info") return "";
                    const other = Object.keys(await shopConfigAt(w, first, `envs/${e}`)).find(
                        (k) => k !== "LOG_LEVEL" && k.toUpperCase() === "LOG_LEVEL",
                    );
                    if (other)
                        return ` (base's value: its patch sets ${other} beside it, and keys are case-sensitive: the path is /data/LOG_LEVEL)`;
                    // no patch at all (patches: left out): nothing changes base's value
                    let k: Record<string, unknown> | null = null;
                    try {
                        k = readKustomization((await kustomizationOf(w, first, `envs/${e}`)) ?? "") as Record<string, unknown> | null;
                    } catch {
                        k = null;
                    }
                    const patches = ["patches", "patchesStrategicMerge", "patchesJson6902"].some(
                        (key) => Array.isArray(k?.[key]) && (k?.[key] as unknown[]).length > 0,
                    );
                    return k && !patches
                        ? ` (base's value: its kustomization.yaml has no patch, and the overlay sets LOG_LEVEL by one)`
                        : " (base's value: its patch changes nothing, so its target names no object of base: kind ConfigMap, name shop-config, as written)";
                };
                const whys = await Promise.all(off.map(why));
                return {
                    ...outcome,
                    hint: `the first commit's ${off.map((e, i) => `envs/${e} renders LOG_LEVEL ${got[e] === undefined ? "unset" : JSON.stringify(got[e])}, not "${want[e]}"${whys[i]}`).join("; ")}: the lab's files have it right (${off.map((e) => `gitrepo/shop/envs/${e}/kustomization.yaml's patch sets ${want[e]}`).join(", ")}), and step 1 grades main's first commit, which a fast-forward never changes: ${redo(w, first)}`,
                };
            }
            if (outcome.ok) return outcome;
            return {
                ...outcome,
                hint: `main's latest commit renders right, its first (${first.slice(0, 12)}) does not: step 1 asks for a first commit that renders both overlays, and main takes fast-forwards only, so the first commit stays as it is (the later steps build on the latest, which is right): to have step 1 done, do it over on a new lab (the lab's reset, then the lab again)`,
            };
        },
    },
    {
        step: 1,
        name: "the first commit's overlays render FEATURE_CHECKOUT_V2 off, base's (the overlays leave the flag alone)",
        run: async (w) => {
            if (!w.main) return null;
            const first = await w.repo.rootOf("main");
            let got: Record<"dev" | "prod", string | undefined>;
            try {
                got = {
                    dev: (await shopConfigAt(w, first, "envs/dev")).FEATURE_CHECKOUT_V2,
                    prod: (await shopConfigAt(w, first, "envs/prod")).FEATURE_CHECKOUT_V2,
                };
            } catch {
                return null; // an overlay that does not render: the check above says why
            }
            const outcome = eq({ dev: "off", prod: "off" }, got);
            if (outcome.ok) return outcome;
            const lost = (["dev", "prod"] as const).filter((e) => got[e] === undefined);
            return {
                ...outcome,
                hint: lost.length
                    ? `the first commit's ${lost.map((e) => `envs/${e}`).join(" and ")} render${lost.length === 1 ? "s" : ""} shop-config without FEATURE_CHECKOUT_V2: ${lost.length === 1 ? "its patch replaces" : "their patches replace"} /data whole (or remove the key), while the later steps turn the flag on in base and read it in each environment; patch /data/LOG_LEVEL alone, as the lab's files do; ${redo(w, first)}`
                    : `the first commit's overlays render FEATURE_CHECKOUT_V2 ${JSON.stringify(got)}, not base's off: the overlays set LOG_LEVEL alone and leave the flag to base, where the incident turns it on; ${redo(w, first)}`,
            };
        },
    },
    {
        step: 1,
        name: "the first commit's overlays render shop-config in no namespace (each Application's destination gives it)",
        run: async (w) => {
            if (!w.main) return null;
            const first = await w.repo.rootOf("main");
            // an overlay's own namespace that is its destination's (shop-dev in envs/dev) changes nothing Argo CD does
            const ns = async (e: string) => {
                const n = (await configMapAt(w, first, `envs/${e}`)).metadata?.namespace;
                return n === undefined || n === `shop-${e}` ? "none" : n;
            };
            // one that does not render: the check above says why
            const got = await Promise.all([ns("dev"), ns("prod")]).catch(() => null);
            if (!got) return null;
            const outcome = eq({ dev: "none", prod: "none" }, { dev: got[0], prod: got[1] });
            if (outcome.ok) return outcome;
            // which kustomization.yaml sets it (a namespace: there puts every object it renders into that namespace)
            const files = ["base/kustomization.yaml", "envs/dev/kustomization.yaml", "envs/prod/kustomization.yaml"];
            const setting: string[] = [];
            for (const f of files) {
                const text = (await w.repo.file(first, f)) ?? "null";
                // read as kustomize reads it (a key twice: the last), and one it cannot read sets nothing
                const k = (() => {
                    try {
                        return readKustomization(text) as { namespace?: unknown } | null;
                    } catch {
                        return null;
                    }
                })();
                if (k?.namespace) setting.push(f);
            }
            return {
                ...outcome,
                hint: `the first commit renders shop-config into namespace ${got.find((n) => n !== "none")} (${setting.length ? `namespace: in ${setting.join(", ")}` : "its metadata.namespace"}): each environment's Application puts it in its own namespace (shop-dev, shop-prod), and a namespace written in the repository sends both to one namespace, which CreateNamespace does not make (it makes the destination's only); ${redo(w, first)}`,
            };
        },
    },
];
