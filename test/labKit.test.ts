/**
 * The labs' kit (lab/kit/): what both labs are made of, tried as a third lab would use it — its
 * paths, its result files' schemas, and its steps run from a checkpoint.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { z } from "zod";
import { labSite, startAgainAt } from "../lab/kit/layout";
import { resultSet } from "../lab/kit/results";
import { LabStep, refuseLowerStep, runSteps } from "../lab/kit/steps";
import { realClock } from "../lab/ports/clock";

const THIRD = resultSet(
    { late: z.strictObject({ n: z.number().int() }), early: z.strictObject({ word: z.string() }) },
    { early: 2, late: 3 },
);
type ThirdSchemas = typeof THIRD.schemas;

describe("the labs' kit, as a third lab uses it", function () {
    let root: string;
    beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), "lab-kit-"))));
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    const site = () => labSite<keyof ThirdSchemas>(root, { workDir: "third-lab", repoName: "third.git" });
    const steps = (ran: string[], late: unknown = { n: 3 }): LabStep<ThirdSchemas, string>[] => [
        { n: 1, name: "setup", run: async (c) => void ran.push(c) },
        { n: 2, name: "early", file: "early", run: async (c) => (ran.push(c), { word: "two" }) },
        { n: 3, name: "late", file: "late", run: async (c) => (ran.push(c), late) },
    ];
    const run = (ran: string[], through: number, log: string[] = [], late?: unknown) =>
        runSteps({
            steps: steps(ran, late),
            through,
            set: THIRD,
            results: THIRD.read(site().resultFile),
            resultFile: site().resultFile,
            log: (l) => log.push(l),
            prefix: (s) => `[third ${s.n} ${s.name}]`,
            context: (_s, prefix) => prefix,
            clock: realClock,
        });

    it("given a root, then its paths are the labs' pattern under it; a relative root is refused", () => {
        const s = site();
        assert.deepStrictEqual(
            [s.bareRepo, s.clone, s.appsetFile, s.resultFile("early")].map((p) => path.relative(root, p)),
            ["srv/bare/third.git", "root/third-lab/repo", "root/third-lab/appset.yaml", "root/third-lab/early.json"],
        );
        assert.throws(() => labSite("relative", { workDir: "x", repoName: "x.git" }), /root must be an absolute path, got "relative"/);
    });

    it("given schemas declared out of order, then the files are in step order and each field says what it must be", () => {
        assert.deepStrictEqual(THIRD.names, ["early", "late"]);
        assert.deepStrictEqual(
            THIRD.fieldsOf("late").map((f) => f.key),
            ["n"],
        );
    });

    it("when the steps run through 2, then step 3 does not; when run again through 3, then steps 1 and 2 are skipped from the checkpoint", async () => {
        const ran: string[] = [];
        await run(ran, 2);
        assert.deepStrictEqual(ran, ["[third 1 setup]", "[third 2 early]"]);
        assert.deepStrictEqual(JSON.parse(fs.readFileSync(site().resultFile("early"), "utf8")), { word: "two" });
        const log: string[] = [];
        const timings = await run(ran, 3, log);
        assert.deepStrictEqual(ran.slice(2), ["[third 3 late]"]);
        assert.deepStrictEqual(
            timings.map((t) => [t.step, t.skipped]),
            [
                [1, true],
                [2, true],
                [3, false],
            ],
        );
        assert.match(log[0], /^\[third 1 setup\] already done; skipped$/);
    });

    it("when a step's result does not match its schema, then nothing is written and the error names the field", async () => {
        await assert.rejects(run([], 3, [], { n: "three" }), /late/);
        assert.ok(!fs.existsSync(site().resultFile("late")), "a bad result is never written");
        assert.ok(fs.existsSync(site().resultFile("early")));
    });

    it("given a later result file without an earlier one, then the checkpoint is refused as inconsistent", () => {
        fs.mkdirSync(path.dirname(site().resultFile("late")), { recursive: true });
        fs.writeFileSync(site().resultFile("late"), JSON.stringify({ n: 3 }));
        assert.throws(() => THIRD.read(site().resultFile), /late\.json exists but .*early\.json does not: the checkpoint is inconsistent/);
    });

    it("a later result file without an earlier one does not move the lab's progress past the gap", () => {
        fs.mkdirSync(path.dirname(site().resultFile("late")), { recursive: true });
        fs.writeFileSync(site().resultFile("late"), JSON.stringify({ n: 3 }));
        assert.strictEqual(THIRD.progress(site().resultFile), 0);
    });

    it("given result files on disk, then the lab's progress is the highest step among them, and a step below is refused in one line", async () => {
        assert.strictEqual(THIRD.progress(site().resultFile), 0);
        await run([], 2);
        assert.strictEqual(THIRD.progress(site().resultFile), 2);
        const lower = {
            lab: "the third lab",
            done: THIRD.progress(site().resultFile),
            asked: "--through",
            fix: (d: number) => `Ask for ${d}.`,
        };
        assert.doesNotThrow(() => refuseLowerStep({ ...lower, through: 2 }));
        assert.throws(
            () => refuseLowerStep({ ...lower, through: 1 }),
            /^Error: the third lab is at step 2 already and steps cannot be undone \(--through 1 asked\)\. Ask for 2\.$/,
        );
    });
});

describe("the way back to a step (startAgainAt)", () => {
    it("on a host: destroy and up alone; a root with a space quoted for the shell", () => {
        assert.strictEqual(startAgainAt("/", { lab: "shop", through: 5 }), "pulumi destroy, then pulumi up with solveThrough 5");
        const quoted = startAgainAt("/tmp/my lab", { lab: "tenants", through: 1 });
        assert.ok(
            quoted.startsWith("gitops-lab simulate --reset --root '/tmp/my lab' (it takes down every lab under the root), then "),
            quoted,
        );
        assert.ok(quoted.includes("gitops-lab simulate --root '/tmp/my lab' --lab tenants --through 1 --serve"), quoted);
        assert.ok(quoted.endsWith("on a host, pulumi destroy, then pulumi up with tenantsSolveThrough 1"), quoted);
    });
});
