/**
 * The house rules, checked on every tracked file: the project stands alone (nothing reads a folder
 * beside it), the core (lab/) knows nothing of Pulumi, the simulator or the command line, and
 * nothing outside test/ imports test/.
 */
import * as assert from "assert";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { ARGOCD_VERSIONS } from "../lab/platform/argocd";
import { KIT_FOLDERS } from "../sim/hostRoot";

const PROJECT = path.join(__dirname, "..");
const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: PROJECT, encoding: "utf8" })
    .split("\0")
    .filter((f) => f && fs.existsSync(path.join(PROJECT, f)));
const sources = tracked.filter((f) => /\.(ts|js)$/.test(f));
const read = (f: string) => fs.readFileSync(path.join(PROJECT, f), "utf8");

/** Every module a source file imports or requires, as a path relative to the project (or a package name). */
function importsOf(file: string): string[] {
    const out: string[] = [];
    const re = /(?:from\s+|import\(\s*|require\(\s*)["']([^"']+)["']/g;
    for (const m of read(file).matchAll(re)) {
        const spec = m[1];
        out.push(spec.startsWith(".") ? path.relative(PROJECT, path.resolve(path.dirname(path.join(PROJECT, file)), spec)) : spec);
    }
    return out;
}

/** The project's .ts files a source file takes a value from (`import type` and `export type` left out). */
function valueImportsOf(file: string): string[] {
    const out: string[] = [];
    for (const m of read(file).matchAll(/^(import|export)\s+(type\s)?[^;]*?\sfrom\s+"(\.[^"]+)"/gms)) {
        if (m[2]) continue;
        const to = path.relative(PROJECT, path.resolve(path.dirname(path.join(PROJECT, file)), m[3]));
        const found = [`${to}.ts`, `${to}/index.ts`].find((c) => fs.existsSync(path.join(PROJECT, c)));
        if (found) out.push(found);
    }
    return out;
}

const under = (dir: string) => (p: string) => p === dir || p.startsWith(`${dir}/`);

describe("the project stands alone", () => {
    it("is checked out from git (these checks read the tracked files)", () => {
        assert.ok(tracked.includes("package.json") && sources.length > 20, `${sources.length} sources`);
    });

    it("no tracked file reads a folder beside the project (../shared)", () => {
        const offenders = tracked
            .filter((f) => !f.startsWith("test/fixtures/") && f !== "test/architecture.test.ts")
            .filter((f) => /\.\.\/shared\b|["']\.\.["'],\s*["']\.\.["'],\s*["']\.\.["'],\s*["']shared["']/.test(read(f)));
        assert.deepStrictEqual(offenders, []);
    });

    it("the README, docs/ and the code describe the labs without a document that is not in the repository", () => {
        assert.ok(
            tracked.some((f) => f.startsWith("docs/")),
            "docs/ exists",
        );
        const citing = tracked.filter(
            (f) =>
                f !== "test/architecture.test.ts" &&
                !f.startsWith("test/fixtures/") &&
                /\.(ts|js|md|ya?ml|json)$/.test(f) &&
                read(f).includes("LAB-SPEC"),
        );
        assert.deepStrictEqual(citing, []);
    });

    it("the README is a front door of at most 200 lines, and every link in it and in docs/ leads to a file of the project", () => {
        assert.ok(read("README.md").split("\n").length <= 200, `README.md has ${read("README.md").split("\n").length} lines`);
        const broken: string[] = [];
        for (const doc of tracked.filter((f) => f === "README.md" || /^docs\/.*\.md$/.test(f))) {
            for (const m of read(doc).matchAll(/\]\(([^)\s#]+)(#[^)\s]*)?\)/g)) {
                if (/^[a-z]+:/.test(m[1])) continue; // a URL
                if (!fs.existsSync(path.join(PROJECT, path.dirname(doc), m[1]))) broken.push(`${doc}: ${m[1]}`);
            }
        }
        assert.deepStrictEqual(broken, []);
    });

    it("the README and docs/ say what the product does, not when or in which sitting it was done: no dates, no sessions", () => {
        const dated = tracked
            .filter((f) => f === "README.md" || /^docs\/.*\.md$/.test(f))
            .flatMap((f) =>
                read(f)
                    .split("\n")
                    .map((l, i) => [f, i + 1, l] as const),
            )
            .filter(([, , l]) => /\b\d{4}-\d{2}-\d{2}\b|\bsessions?\b/i.test(l))
            .map(([f, n, l]) => `${f}:${n}: ${l.trim().slice(0, 80)}`);
        assert.deepStrictEqual(dated, []);
    });

    // the top level is the design card's (Pulumi.yaml, Pulumi.dev.yaml, package.json, index.ts, components, gitrepo,
    // test) and the folders beside it, no stray file
    it("the top level is the design card's", () => {
        const card = ["Pulumi.yaml", "Pulumi.dev.yaml", "package.json", "index.ts", "components", "gitrepo", "test"];
        const beside = [
            "package-lock.json",
            "README.md",
            "tsconfig.json",
            ".gitignore",
            ".ci",
            "bin",
            "cli",
            "docs",
            "lab",
            "lint",
            "loader",
            "program",
            "realnode",
            "realplane",
            "sim",
        ];
        const top = [...new Set(tracked.map((f) => f.split("/")[0]))].sort();
        assert.deepStrictEqual(
            top.filter((t) => !card.includes(t) && !beside.includes(t)),
            [],
            "a stray entry at the top level",
        );
        assert.deepStrictEqual(
            card.filter((c) => !top.includes(c)),
            [],
            "the design card's entries are all there",
        );
    });

    it("simulate refuses a root inside every top-level folder of the kit's (KIT_FOLDERS is the tree's)", () => {
        const folders = [...new Set(tracked.filter((f) => f.includes("/")).map((f) => f.split("/")[0]))].sort();
        assert.deepStrictEqual(
            folders.filter((f) => !KIT_FOLDERS.includes(f)),
            [],
            "a folder of the kit that sim/hostRoot.ts's KIT_FOLDERS leaves out",
        );
    });

    it("every tracked TypeScript file is in tsconfig.json's include, so the type check reads it whether or not anything imports it", () => {
        const include: string[] = JSON.parse(read("tsconfig.json")).include;
        const covered = (f: string) =>
            include.some((g) => (g.endsWith("/**/*.ts") ? f.startsWith(g.slice(0, -"**/*.ts".length)) : f === g));
        assert.deepStrictEqual(
            tracked.filter((f) => f.endsWith(".ts") && !covered(f)),
            [],
        );
    });

    it("the upstream reference data is in the project, with licence and provenance", () => {
        for (const f of ["job-failed.yaml", "progressive-sync-applicationset.yaml", "LICENSE", "README.md"]) {
            assert.ok(tracked.includes(`test/fixtures/upstream/argo-cd-v3.5.1/${f}`), f);
        }
        assert.match(read("test/fixtures/upstream/argo-cd-v3.5.1/README.md"), /109ca7ca71139e514114499d294a492e7910a965/);
        for (const v of ARGOCD_VERSIONS)
            assert.ok(tracked.includes(`components/argocd-install/${v}/install.yaml`), `the pinned ${v} install ships with the product`);
        assert.match(read("components/argocd-install/README.md"), /109ca7ca71139e514114499d294a492e7910a965/);
    });
});

describe("files a maintainer can read", () => {
    it("no product file is over 500 lines", () => {
        const long = sources
            .filter((f) => !f.startsWith("test/"))
            .map((f) => ({ f, lines: read(f).split("\n").length - 1 }))
            .filter((x) => x.lines > 500)
            .map((x) => `${x.f}: ${x.lines} lines`);
        assert.deepStrictEqual(long, [], "split it where upstream splits it, or by what its parts do");
    });
});

describe("import rules", () => {
    it("the core (lab/) never imports Pulumi, the simulator, the components, the command line or the tests", () => {
        const bad = sources.filter(under("lab")).flatMap((f) =>
            importsOf(f)
                .filter(
                    (i) =>
                        i.startsWith("@pulumi/") ||
                        ["sim", "realplane", "realnode", "cli", "components", "program", "test"].some((d) => under(d)(i)),
                )
                .map((i) => `${f} -> ${i}`),
        );
        assert.deepStrictEqual(bad, []);
    });

    it("the real node never imports the simulator (what both use lives in lab/)", () => {
        const bad = sources.filter(under("realnode")).flatMap((f) =>
            importsOf(f)
                .filter(under("sim"))
                .map((i) => `${f} -> ${i}`),
        );
        assert.deepStrictEqual(bad, []);
    });

    it("the simulator is a product part: imported by cli/ and the tests, never by lab/, components/ or program/", () => {
        const bad = sources
            .filter((f) => under("lab")(f) || under("components")(f) || under("program")(f) || f === "index.ts")
            .flatMap((f) =>
                importsOf(f)
                    .filter(under("sim"))
                    .map((i) => `${f} -> ${i}`),
            );
        assert.deepStrictEqual(bad, []);
    });

    it("nothing outside test/ imports test/", () => {
        const bad = sources
            .filter((f) => !under("test")(f))
            .flatMap((f) =>
                importsOf(f)
                    .filter(under("test"))
                    .map((i) => `${f} -> ${i}`),
            );
        assert.deepStrictEqual(bad, []);
    });

    it("no product file takes a value from a file that takes one from it, however far round (type-only imports aside)", () => {
        const product = sources.filter((f) => f.endsWith(".ts") && !under("test")(f));
        const graph = new Map(product.map((f) => [f, valueImportsOf(f)]));
        // Tarjan's strongly connected components: any of more than one file is a cycle
        const index = new Map<string, number>();
        const low = new Map<string, number>();
        const stack: string[] = [];
        const cycles: string[][] = [];
        const visit = (v: string) => {
            index.set(v, index.size);
            low.set(v, index.get(v)!);
            stack.push(v);
            for (const w of graph.get(v) ?? []) {
                if (!index.has(w)) {
                    visit(w);
                    low.set(v, Math.min(low.get(v)!, low.get(w)!));
                } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
            }
            if (low.get(v) === index.get(v)) {
                const scc = stack.splice(stack.indexOf(v));
                if (scc.length > 1) cycles.push(scc.sort());
            }
        };
        for (const f of product) if (!index.has(f)) visit(f);
        assert.deepStrictEqual(cycles, [], "move what both use into a file of its own");
    });

    it("the rule checker sees imports (it finds the tests' own import of lab/)", () => {
        assert.ok(valueImportsOf("lab/doctor/findings.ts").includes("lab/doctor/finding.ts"), "a value import");
        assert.ok(!valueImportsOf("lab/doctor/cause.ts").includes("lab/doctor/dump.ts"), "a type-only import is not one");
        assert.ok(importsOf("test/architecture.test.ts").includes("fs"));
        assert.ok(sources.filter(under("test")).some((f) => importsOf(f).some(under("lab"))));
    });
});

describe("the dynamic providers' code in a Pulumi state", () => {
    // a resource: a ComponentResource, or a dynamic resource of its own
    it("components/ holds components: one resource per .ts file, and .js files only where stored code requires the path", () => {
        const ts = sources.filter((f) => under("components")(f) && f.endsWith(".ts"));
        assert.ok(ts.length > 5, `components found: ${ts}`);
        const notOne = ts.filter(
            (f) => (read(f).match(/^export class \w+ extends pulumi\.(ComponentResource|dynamic\.Resource)\b/gm) ?? []).length !== 1,
        );
        assert.deepStrictEqual(notOne, []);
        const forwards = sources.filter((f) => under("components")(f) && f.endsWith(".js"));
        const notForward = forwards.filter((f) => !/^module\.exports = require\("\.\.\/program\/\w+"\);$/m.test(read(f)));
        assert.deepStrictEqual(notForward, []);
    });

    it("the paths that the code in older states requires answer it: components/providerProcess and cli/register.js", () => {
        const { leaveWithEngine } = require(path.join(PROJECT, "components/providerProcess"));
        assert.strictEqual(leaveWithEngine, require(path.join(PROJECT, "program/providerProcess")).leaveWithEngine);
        assert.ok(fs.existsSync(path.join(PROJECT, "cli/register.js")));
    });

    // every lab function a component's provider takes by name from labModule() is there under that name, and so are the
    // names older states' delete code takes (layout.labLayout)
    it("every name a provider takes from labModule() is there", () => {
        // the module table as labModule() has it (read from its text: calling it would make this process leave with its engine)
        const table = new Map([...read("program/labModule.ts").matchAll(/^ {8}(\w+): "(lab\/[\w/]+)",$/gm)].map((m) => [m[1], m[2]]));
        const labModule = (mod: string) => require(path.join(PROJECT, table.get(mod) ?? `no module ${mod}`));
        const wanted = new Map<string, Set<string>>([["layout", new Set(["labLayout"])]]);
        for (const f of sources.filter(under("components"))) {
            for (const m of read(f).matchAll(/const \{ ([\w, ]+) \} = labModule\(PROJECT_DIR, "(\w+)"\)/g)) {
                const names = wanted.get(m[2]) ?? new Set<string>();
                for (const n of m[1].split(",").map((x) => x.trim())) names.add(n);
                wanted.set(m[2], names);
            }
        }
        assert.ok(wanted.size > 5, `the components' labModule() calls were found: ${[...wanted.keys()]}`);
        const missing = [...wanted].flatMap(([mod, names]) =>
            [...names].filter((n) => labModule(mod)[n] === undefined).map((n) => `${mod}.${n}`),
        );
        assert.deepStrictEqual(missing, []);
    });
});
