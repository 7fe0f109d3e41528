/**
 * The tenants lab from the command line: `simulate --lab tenants` step by step and resumed,
 * `verify --lab tenants`, `--reset`, and bad input as one line. In this process (runMain: what a run
 * prints and leaves), but for one bad input through the bin in a process of its own.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { shopLayout } from "../lab/shop/layout";
import { RELEASES, TENANTS, tenantsLayout } from "../lab/tenants/layout";
import { tenantFile, tenantPath } from "../lab/tenants/repoFiles";
import { serveInstructions } from "../cli/simulate";
import { STALL_MESSAGE } from "../lab/tenants/scenario";
import { runCliAsync, runMain } from "./helpers/cli";
import { git, tenantsRootAt } from "./helpers/tenantsAt";

describe("gitops-lab simulate --lab tenants / verify --lab tenants", function () {
    this.timeout(300_000);
    let root: string;
    before(() => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "tenants-cli-"));
    });
    after(() => fs.rmSync(root, { recursive: true, force: true }));

    // given --through 2 at step 1, then it stops at the stall and verify grades it; run again, it recovers; a lower
    // step is refused and --reset leaves nothing
    it("--through 2, then on, a lower step refused, reset", async () => {
        root = await tenantsRootAt(1); // the first rollout done (the snapshot), as an earlier --through 1 leaves it
        const first = await runMain("simulate", ["--lab", "tenants", "--root", root, "--through", "2"]);
        assert.match(first.out, /\[tenants 1 platform\] repository already in place/);
        assert.strictEqual(first.code, 0, first.out);
        assert.match(first.out, /SIMULATED CLUSTER/);
        assert.match(first.out, /stall\.json:\n\{\n {2}"appset": "argocd\/tenants"/);
        assert.ok(!fs.existsSync(tenantsLayout(root).resultFile("recovery")));
        const v2 = await runMain("verify", ["--lab", "tenants", "--root", root, "--through", "2", "--offline"]);
        assert.strictEqual(v2.code, 0, v2.out);
        assert.match(v2.out, /, 0 failed/);

        const again = await runMain("simulate", ["--lab", "tenants", "--root", root]);
        assert.strictEqual(again.code, 0, again.out);
        assert.match(again.out, /\[tenants 2 stall\] already done/);
        // the stall was saved while mandant-b's sync waited for a retry: the resumed run waits until it gives up
        // the recovery waited for the blocking sync to give up (still retrying, or already given up when it started)
        assert.match(
            again.out,
            /\[tenants 3 recovery\] (… mandant-b's sync Running \(retry \d\)|mandant-b's sync to give up \(its retries spent\): after)/,
        );
        assert.match(again.out, /recovery\.json:/);
        const v3 = await runMain("verify", ["--lab", "tenants", "--root", root, "--offline", "--json"]);
        assert.strictEqual(v3.code, 0, v3.out);
        assert.strictEqual(JSON.parse(v3.stdout).lab, "tenants");

        // at step 3: a lower step is refused (steps cannot be undone), and --reset leaves nothing of the lab
        const lower = await runMain("simulate", ["--lab", "tenants", "--root", root, "--through", "2"]);
        assert.strictEqual(lower.code, 1);
        assert.match(lower.out, /the tenants lab under .* is at step 3 already and steps cannot be undone/);
        const reset = await runMain("simulate", ["--root", root, "--reset"]);
        assert.strictEqual(reset.code, 0, reset.out);
        const layout = tenantsLayout(root);
        for (const p of [layout.bareRepo, layout.clone, layout.appsetFile, layout.resultFile("stall"), layout.resultFile("recovery")])
            assert.ok(!fs.existsSync(p), p);
    });

    it("--lab left out where the tenants lab is begun: refused while no shop lab is, said beside one", async () => {
        const at = await tenantsRootAt(1);
        try {
            const refused = await runMain("simulate", ["--root", at, "--through", "0"]);
            assert.strictEqual(refused.code, 2, refused.out);
            assert.match(
                refused.stderr,
                /^gitops-lab simulate: the tenants lab is under \S+ \(at step 1\), and --lab was left out, which means the shop lab: to go on with the tenants lab, \S+ simulate --root \S+ --lab tenants; to build the shop lab beside it, \S+ simulate --root \S+ --lab shop --through 0 \(or --lab both\)/,
            );
            assert.ok(!fs.existsSync(shopLayout(at).bareRepo), "nothing of a shop lab built");
            const beside = await runMain("simulate", ["--root", at, "--lab", "shop", "--through", "1"]);
            assert.strictEqual(beside.code, 0, beside.out);
            const shop = await runMain("simulate", ["--root", at, "--through", "1"]);
            assert.strictEqual(shop.code, 0, shop.out);
            assert.match(
                shop.out,
                /simulate: the tenants lab is here too \(at step 1\); this run is the shop lab's \(--lab left out\): \S+ simulate --root \S+ --lab tenants goes on with it/,
            );
        } finally {
            fs.rmSync(at, { recursive: true, force: true });
        }
    });

    it("step 2's push made by hand, then --through 2: the push is taken as the step's", async () => {
        const at = await tenantsRootAt(1);
        try {
            const { clone } = tenantsLayout(at);
            for (const t of TENANTS) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.faulty).replace(/"/g, "")); // unquoted: the same release
            const id = ["-c", "user.name=l", "-c", "user.email=l@x"];
            await git([...id, "commit", "-qam", "my rollout of the new release"], clone);
            await git(["push", "-q", "origin", "main"], clone);
            const mine = await git(["rev-parse", "HEAD"], clone);
            const r = await runMain("simulate", ["--lab", "tenants", "--root", at, "--through", "2"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(
                r.out,
                /\[tenants 2 stall\] [0-9a-f]{12} on main already sets 1\.2\.0 for every tenant: this step's push, made by hand\n/,
            );
            assert.doesNotMatch(r.out, /pushed by an earlier run/);
            assert.strictEqual(JSON.parse(fs.readFileSync(tenantsLayout(at).resultFile("stall"), "utf8")).commit, mine);
            const v = await runMain("verify", ["--lab", "tenants", "--root", at, "--through", "2", "--offline"]);
            assert.strictEqual(v.code, 0, v.out);
        } finally {
            fs.rmSync(at, { recursive: true, force: true });
        }
    });

    it("a run stopped between writing step 2's files and their commit: the next run commits them as its own", async () => {
        const at = await tenantsRootAt(1);
        try {
            const { clone } = tenantsLayout(at);
            for (const t of TENANTS) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.faulty));
            const r = await runMain("simulate", ["--lab", "tenants", "--root", at, "--through", "2"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.doesNotMatch(r.out, /made by hand|uncommitted changes/);
            const stall = JSON.parse(fs.readFileSync(tenantsLayout(at).resultFile("stall"), "utf8"));
            assert.strictEqual(await git(["log", "-1", "--format=%s", stall.commit], clone), STALL_MESSAGE);
        } finally {
            fs.rmSync(at, { recursive: true, force: true });
        }
    });

    it("a stall commit made 10 minutes before its push: detected_after_seconds counted from the making is refused, from the push taken", async () => {
        const at = await tenantsRootAt(1);
        try {
            const { clone } = tenantsLayout(at);
            for (const t of TENANTS) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.faulty));
            const made = `${Math.floor(Date.now() / 1000) - 600} +0000`;
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", "rollout"], clone, { GIT_COMMITTER_DATE: made });
            await git(["push", "-q", "origin", "main"], clone);
            const r = await runMain("simulate", ["--lab", "tenants", "--root", at, "--through", "2"]);
            assert.strictEqual(r.code, 0, r.out);
            const file = tenantsLayout(at).resultFile("stall");
            const stall = JSON.parse(fs.readFileSync(file, "utf8"));
            assert.ok(stall.detected_after_seconds < 300, `from the push: ${stall.detected_after_seconds}`);
            fs.writeFileSync(file, JSON.stringify({ ...stall, detected_after_seconds: 590 }));
            const v = await runMain("verify", ["--lab", "tenants", "--root", at, "--step", "2", "--offline"]);
            assert.strictEqual(v.code, 1, v.out);
            assert.match(
                v.stdout,
                /hint: detected_after_seconds holds 590, longer than stall\.commit has been on main \(since its push, by the repository's reflog\)/,
            );
        } finally {
            fs.rmSync(at, { recursive: true, force: true });
        }
    });

    it("the fix pushed by hand, then --through 3: seconds count from that push, not from the run", async () => {
        const at = await tenantsRootAt(2);
        try {
            const { clone } = tenantsLayout(at);
            for (const t of TENANTS) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", "my fix"], clone);
            // pushed 40 s ago by the repository's reflog (git takes the time of its entry from GIT_COMMITTER_DATE)
            const when = `${Math.floor(Date.now() / 1000) - 40} +0000`;
            await git(["push", "-q", "origin", "main"], clone, { GIT_COMMITTER_DATE: when });
            const r = await runMain("simulate", ["--lab", "tenants", "--root", at, "--through", "3"]);
            assert.strictEqual(r.code, 0, r.out);
            assert.match(r.out, /on main already sets 1\.2\.1 for every tenant: this step's push, made by hand/);
            const seconds = JSON.parse(fs.readFileSync(tenantsLayout(at).resultFile("recovery"), "utf8")).seconds;
            assert.ok(seconds >= 40, `recovery.seconds ${seconds}: from the push 40 s ago`);
        } finally {
            fs.rmSync(at, { recursive: true, force: true });
        }
    });

    it("the fix pushed from elsewhere (the clone behind), then --through 3: refused, naming the pull", async () => {
        const at = await tenantsRootAt(2);
        const other = fs.mkdtempSync(path.join(os.tmpdir(), "tenants-other-"));
        try {
            const { clone, bareRepo } = tenantsLayout(at);
            await git(["clone", "-q", bareRepo, other], os.tmpdir());
            for (const t of TENANTS) fs.writeFileSync(path.join(other, tenantPath(t)), tenantFile(t, RELEASES.fixed));
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", "my fix"], other);
            await git(["push", "-q", "origin", "main"], other);
            const r = await runMain("simulate", ["--lab", "tenants", "--root", at, "--through", "3"]);
            assert.notStrictEqual(r.code, 0, r.out);
            assert.match(r.out, /the remote's main is at [0-9a-f]{40}, ahead of the clone \S+ \(at [0-9a-f]{40}\): pushed from elsewhere/);
            assert.ok(r.out.includes(`git -C ${clone} pull --ff-only`), r.out);
        } finally {
            fs.rmSync(at, { recursive: true, force: true });
            fs.rmSync(other, { recursive: true, force: true });
        }
    });

    it("a change not committed in the clone at the stall, then --through 3: refused before the wait for the give-up", async () => {
        const at = await tenantsRootAt(2);
        try {
            const { clone } = tenantsLayout(at);
            const file = path.join(clone, tenantPath("mandant-b"));
            fs.writeFileSync(file, tenantFile("mandant-b", RELEASES.first));
            const r = await runMain("simulate", ["--lab", "tenants", "--root", at, "--through", "3"]);
            assert.strictEqual(r.code, 1, r.out);
            assert.match(r.out, /has uncommitted changes \(M tenants\/mandant-b\.yaml\): commit or discard them, then run again/);
            assert.doesNotMatch(r.out, /to give up/, "no wait before the refusal");
            assert.strictEqual(fs.readFileSync(file, "utf8"), tenantFile("mandant-b", RELEASES.first), "the learner's change stays");
        } finally {
            fs.rmSync(at, { recursive: true, force: true });
        }
    });

    it("the served block at step 1 with step 2's push made: what is left of step 2 is said", async () => {
        const at = await tenantsRootAt(1);
        try {
            const { clone } = tenantsLayout(at);
            const block = () =>
                serveInstructions({ root: at, url: (r) => `git://127.0.0.1:9418/${r}` }, `${at}/kubeconfig`, { tenants: 1 });
            assert.ok(!block().some((l) => l.includes("step 2's push is made already")), block().join("\n"));
            for (const t of TENANTS) fs.writeFileSync(path.join(clone, tenantPath(t)), tenantFile(t, RELEASES.faulty));
            await git(["-c", "user.name=l", "-c", "user.email=l@x", "commit", "-qam", "rollout"], clone);
            await git(["push", "-q", "origin", "main"], clone);
            assert.ok(
                block().includes(
                    "  # step 2's push is made already (main sets 1.2.0 for every tenant): what is left of it is stall.json, once the rollout is stuck",
                ),
                block().join("\n"),
            );
        } finally {
            fs.rmSync(at, { recursive: true, force: true });
        }
    });

    it("bad input is one line and exit 2", async () => {
        const inputs = [
            ["--lab", "nope"],
            ["--lab", "tenants", "--through", "4"],
            ["--lab", "shop", "--tenants-through", "2"],
            ["--lab", "tenants", "--cluster", "kind"],
        ];
        for (const [i, args] of inputs.entries()) {
            // the first through the bin (its exit code and stderr as a shell sees them), the rest in this process
            const r =
                i === 0 ? await runCliAsync("simulate", ["--root", root, ...args]) : await runMain("simulate", ["--root", root, ...args]);
            assert.strictEqual(r.code, 2, `${args.join(" ")}: ${r.out}`);
            assert.strictEqual(r.stderr.trim().split("\n").length, 1, r.stderr);
        }
        const v = await runMain("verify", ["--lab", "both", "--root", root]);
        assert.strictEqual(v.code, 2, v.out);
    });
});
