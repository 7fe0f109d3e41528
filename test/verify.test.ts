/**
 * The grader: passes on a good simulated run, offline and live, and fails the right check on
 * each tampered state (each made from a copy of the good run).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { KubeCluster } from "../lab/ports/cluster";
import { run } from "../lab/ports/exec";
import { CheckResult } from "../lab/grader/grader";
import { verify } from "../lab/shop/checks";
import { shopLayout, ShopLayout } from "../lab/shop/layout";
import { ShopResultName } from "../lab/shop/results";
import { labAt, LabAt } from "./helpers/labAt";
import { runCli, runMain } from "./helpers/cli";

const failed = (rs: CheckResult[]) => rs.filter((r) => !r.ok).map((r) => r.check);

describe("verify (the independent grader)", function () {
    this.timeout(180_000);
    let at: LabAt;
    let good: ShopLayout;
    let cluster: KubeCluster;
    const read = (l: ShopLayout, f: ShopResultName) => JSON.parse(fs.readFileSync(l.resultFile(f), "utf8"));
    const write = (l: ShopLayout, f: ShopResultName, v: unknown) =>
        fs.writeFileSync(l.resultFile(f), typeof v === "string" ? v : JSON.stringify(v));

    /** A copy of the good run's files and repository, to tamper with. */
    function copy(): ShopLayout {
        const dst = fs.mkdtempSync(path.join(os.tmpdir(), "tampered-"));
        fs.cpSync(path.join(good.root, "srv"), path.join(dst, "srv"), { recursive: true });
        fs.cpSync(path.join(good.root, "root"), path.join(dst, "root"), { recursive: true });
        return shopLayout(dst);
    }
    const gitIn = (l: ShopLayout, ...args: string[]) => run("git", ["--git-dir", l.bareRepo, ...args]);

    before(async () => {
        at = await labAt(8);
        good = at.lab.layout;
        cluster = new KubeCluster(at.lab.kubeconfig);
    });
    after(async () => at?.stop());

    it("given a good run, every check passes offline", async () => {
        const rs = await verify({ layout: good, through: 8 });
        assert.deepStrictEqual(failed(rs), []);
        assert.ok(rs.length >= 60, `${rs.length} checks`);
    });

    it("given the ApplicationSet deleted by hand, then the hint says how it comes back", async () => {
        // the cluster as it answers once `kubectl delete applicationset shop` has gone through
        const gone = Object.assign(Object.create(cluster), { getApplicationSet: async () => null }) as KubeCluster;
        const rs = await verify({ layout: good, through: 8, cluster: gone });
        const r = rs.find((x) => x.check === "live ApplicationSet shop: dev=main, prod=release/prod")!;
        assert.strictEqual(r.ok, false);
        assert.match(
            r.hint ?? "",
            /^the ApplicationSet shop is not in the cluster \(deleted\?\): kubectl apply -f \S+appset\.yaml brings it back$/,
        );
    });

    it("given prod pinned before the incident, then the hint says it never synced it", async () => {
        const commit = read(good, "incident").commit;
        const hourBefore = new Date(Date.now() - 3_600_000).toISOString();
        // shop-prod's history as the cluster would show it: without the incident, its syncs an hour before it (pinned
        // first), or only after it (the Application made again since, which has no history of the incident to show)
        const withHistory = (edit: (h: any[]) => any[]) =>
            Object.assign(Object.create(cluster), {
                getApplication: async (name: string) => {
                    const a = (await cluster.getApplication(name))!;
                    if (name === "shop-prod") a.status!.history = edit(a.status!.history!.filter((h) => h.revision !== commit));
                    return a;
                },
            }) as KubeCluster;
        const check = async (c: KubeCluster) =>
            (await verify({ layout: good, through: 8, cluster: c })).find(
                (x) => x.check === "live shop-prod synced incident.commit (its history)",
            )!;
        const pinnedFirst = await check(withHistory((h) => h.map((x) => ({ ...x, deployedAt: hourBefore }))));
        assert.strictEqual(pinnedFirst.ok, false);
        assert.match(pinnedFirst.hint ?? "", /^shop-prod never synced incident\.commit: was prod pinned before the incident\?/);
        const madeAgain = await check(withHistory((h) => h.map((x) => ({ ...x, deployedAt: new Date().toISOString() }))));
        assert.ok(!madeAgain || madeAgain.ok, JSON.stringify(madeAgain)); // not failed: no evidence either way
    });

    // drift.uid copied from another object than shop-prod's shop-config: the hint says whose uid it is
    const OTHER_UIDS: [whose: string, read: () => Promise<{ metadata?: { uid?: string } } | null | undefined>, hint: RegExp][] = [
        [
            "the namespace",
            () => cluster.getNamespace("shop-prod"),
            /^drift\.uid is the namespace shop-prod's uid, not the ConfigMap's: kubectl get configmap shop-config -n shop-prod/,
        ],
        [
            "the namespace's CA bundle ConfigMap",
            () => cluster.getConfigMap("shop-prod", "kube-root-ca.crt"),
            /^drift\.uid is ConfigMap kube-root-ca\.crt's \(the namespace's CA bundle, which kubectl lists first\)/,
        ],
        [
            "shop-dev's ConfigMap",
            () => cluster.getConfigMap("shop-dev", "shop-config"),
            /^drift\.uid is shop-dev's ConfigMap's uid: the drift test is on shop-prod's/,
        ],
        [
            "the Application shop-prod",
            () => cluster.getApplication("shop-prod"),
            /^drift\.uid is the Application shop-prod's uid \(in argocd\), not the ConfigMap's it deploys: kubectl get configmap shop-config -n shop-prod/,
        ],
    ];
    for (const [whose, read, hint] of OTHER_UIDS)
        it(`given drift.uid of ${whose}, then the hint says whose it is`, async () => {
            const l = copy();
            const file = l.resultFile("drift");
            const uid = (await read())?.metadata?.uid;
            assert.ok(uid, `the served cluster has ${whose}, with a uid`);
            fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), uid }));
            const rs = await verify({ layout: l, through: 8, cluster });
            const r = rs.find((x) => x.check === "live shop-prod ConfigMap uid is drift.uid, LOG_LEVEL warn")!;
            assert.strictEqual(r.ok, false);
            assert.match(r.hint ?? "", hint);
        });

    it("given a good run, every check passes against the (simulated) cluster too", async () => {
        const rs = await verify({ layout: good, through: 8, cluster });
        assert.deepStrictEqual(failed(rs), []);
        for (const name of [
            "live shop-prod ConfigMap uid is drift.uid, LOG_LEVEL warn",
            "live ApplicationSet shop: dev=main, prod=release/prod",
            "live shop-prod is synced to promote.to",
        ]) {
            assert.ok(
                rs.some((r) => r.check === name && r.ok),
                name,
            );
        }
    });

    it("compares the stack outputs with the files when given them", async () => {
        // as pulumi stack output --json prints them: keys sorted
        const sorted = (o: any) =>
            Object.fromEntries(
                Object.keys(o)
                    .sort()
                    .map((k) => [k, o[k]]),
            );
        const outputs: any = Object.fromEntries(
            (["incident", "pin", "drift", "promote", "revert", "report"] as ShopResultName[]).map((f) => [f, sorted(read(good, f))]),
        );
        assert.deepStrictEqual(failed(await verify({ layout: good, through: 8, stackOutputs: outputs })), []);
        outputs.promote = { ...outputs.promote, to: outputs.pin.release_prod_initial };
        assert.deepStrictEqual(failed(await verify({ layout: good, through: 8, stackOutputs: outputs })), [
            "stack output promote equals promote.json",
        ]);
    });

    it("--through grades only the steps asked for", async () => {
        const l = copy();
        for (const f of ["pin", "drift", "promote", "revert", "report"] as ShopResultName[]) fs.rmSync(l.resultFile(f));
        const rs = await verify({ layout: l, through: 3 });
        assert.ok(rs.every((r) => r.step <= 3));
        assert.deepStrictEqual(
            failed(rs),
            ["appset.yaml: ApplicationSet argocd/shop, dev=main, prod=main"],
            "appset.yaml was already pinned in the copy",
        );
    });

    describe("tampered states", () => {
        it("1. a wrong SHA in promote.json", async () => {
            const l = copy();
            const r = read(l, "revert");
            write(l, "promote", { ...read(l, "promote"), to: r.bad_commit });
            const f = failed(await verify({ layout: l, through: 8 }));
            assert.ok(f.includes("promote.to is incident.commit"), f.join("\n"));
            assert.ok(f.includes("release/prod is at promote.to (its history never rewritten)"));
        });

        it("2. release/prod force-moved to the bad commit", async () => {
            const l = copy();
            await gitIn(l, "update-ref", "refs/heads/release/prod", read(l, "revert").bad_commit);
            const f = failed(await verify({ layout: l, through: 8 }));
            assert.ok(f.includes("release/prod is at promote.to (its history never rewritten)"), f.join("\n"));
            assert.ok(f.includes("bad_commit is not in release/prod's history"));
            assert.ok(f.includes("report.bad_commit_reached_prod agrees with git merge-base --is-ancestor (and is false)"));
        });

        it("3. a reset used instead of a revert", async () => {
            const l = copy();
            await gitIn(l, "update-ref", "refs/heads/main", read(l, "incident").commit);
            const f = failed(await verify({ layout: l, through: 8 }));
            assert.ok(f.includes("bad_commit stays in main's history (rolled back by a revert, not a reset)"), f.join("\n"));
            assert.ok(f.includes("revert_commit is on main"));
        });

        it("4. a drift uid that differs from the live ConfigMap", async () => {
            const l = copy();
            write(l, "drift", { ...read(l, "drift"), uid: "00000000-0000-0000-0000-000000000000" });
            const offline = failed(await verify({ layout: l, through: 8 }));
            assert.deepStrictEqual(offline, [], "offline nothing contradicts it");
            const f = failed(await verify({ layout: l, through: 8, cluster }));
            assert.deepStrictEqual(f, ["live shop-prod ConfigMap uid is drift.uid, LOG_LEVEL warn"]);
        });

        it("5. seconds given as a string", async () => {
            const l = copy();
            write(l, "drift", { ...read(l, "drift"), seconds: "3" });
            const f = failed(await verify({ layout: l, through: 8 }));
            assert.ok(f.includes("drift.seconds is an integer"), f.join("\n"));
        });

        it("5b. an empty drift uid is wrong offline too", async () => {
            const l = copy();
            write(l, "drift", { ...read(l, "drift"), uid: "" });
            const f = failed(await verify({ layout: l, through: 8 }));
            assert.ok(f.includes("drift.uid is a Kubernetes uid (a UUID, as metadata.uid)"), f.join("\n"));
        });

        it("5c. corrupted result files: each says what it found, printably, and that its other checks wait", async () => {
            const l = copy();
            // a byte-order mark (an editor's "UTF-8 with BOM"): named, as JSON.parse's own message shows it as an invisible token
            fs.writeFileSync(l.resultFile("incident"), "\ufeff" + fs.readFileSync(l.resultFile("incident"), "utf8"));
            fs.writeFileSync(l.resultFile("pin"), "[1,2]");
            fs.writeFileSync(l.resultFile("drift"), "ab\0cd");
            fs.writeFileSync(l.resultFile("promote"), '{"from":');
            const rs = await verify({ layout: l, through: 8 });
            const found = (name: string) => rs.find((r) => r.check === `${name}.json exists and is JSON`)?.found;
            assert.strictEqual(found("pin"), "an array: [1,2]; the checks of its keys and values wait for it");
            assert.match(
                String(found("drift")),
                /"ab\\u0000cd" is not valid JSON \(it holds a NUL byte, U\+0000, at line 1, column 3: remove it\); the checks of its keys and values wait for it$/,
            );
            assert.match(
                String(found("incident")),
                /^it starts with a byte-order mark \(U\+FEFF, which editors do not show\): save it as UTF-8 without a BOM;/,
            );
            assert.match(String(found("promote")), /; the checks of its keys and values wait for it$/);
            // eslint-disable-next-line no-control-regex -- the control characters are what must not be printed
            for (const r of rs) assert.doesNotMatch(`${r.expected ?? ""}${r.found ?? ""}`, /[\u0000-\u001f]/, r.check);
        });

        it("5d. a trailing comma, Python's print of a dict, typographic quotes, UTF-16: each slip named", async () => {
            const l = copy();
            fs.writeFileSync(l.resultFile("drift"), fs.readFileSync(l.resultFile("drift"), "utf8").replace(/\s*\}\s*$/, ",\n}\n"));
            fs.writeFileSync(l.resultFile("report"), "{'dev_tracks': 'main', 'bad_commit_reached_prod': False}\n");
            // typographic quotes (typed in a word processor), and UTF-16 with its byte-order mark (PowerShell's >)
            fs.writeFileSync(l.resultFile("incident"), "{\n  \u201ccommit\u201d: \u201cabc\u201d\n}\n");
            fs.writeFileSync(l.resultFile("promote"), Buffer.from("\ufeff" + JSON.stringify(read(l, "promote")), "utf16le"));
            const rs = await verify({ layout: l, through: 8 });
            const found = (name: string) => String(rs.find((r) => r.check === `${name}.json exists and is JSON`)?.found);
            assert.match(
                found("drift"),
                /^a comma after the last entry, at line \d+, column \d+: JSON takes none before the closing \}; remove it/,
            );
            assert.match(
                found("report"),
                /^single quotes at line 1, column 2: JSON's keys and strings take double quotes \(Python's print of a dict is not JSON/,
            );
            assert.match(
                found("incident"),
                /^a typographic quote \u201c \(U\+201C\) at line 2, column 3: JSON takes straight double quotes \("\); type them so/,
            );
            assert.match(
                found("promote"),
                /^it is UTF-16 \(a NUL byte beside every letter: [^)]*\), and JSON here is UTF-8: save it as UTF-8 \(iconv -f UTF-16 -t UTF-8/,
            );
        });

        it("6. a missing key", async () => {
            const l = copy();
            const { rollback, ...rest } = read(l, "report");
            assert.strictEqual(rollback, "revert");
            write(l, "report", rest);
            const f = failed(await verify({ layout: l, through: 8 }));
            assert.ok(
                f.includes(
                    "report.json has exactly the keys dev_tracks, prod_tracks, promoted_commit, drift_seconds, bad_commit_reached_prod, rollback",
                ),
                f.join("\n"),
            );
        });

        it("7. report.json claims the bad commit reached prod", async () => {
            const l = copy();
            write(l, "report", { ...read(l, "report"), bad_commit_reached_prod: true });
            const f = failed(await verify({ layout: l, through: 8 }));
            assert.deepStrictEqual(f, ["report.bad_commit_reached_prod agrees with git merge-base --is-ancestor (and is false)"]);
        });

        it("8. appset.yaml still on main", async () => {
            const l = copy();
            fs.writeFileSync(l.appsetFile, fs.readFileSync(l.appsetFile, "utf8").replace("revision: release/prod", "revision: main"));
            const f = failed(await verify({ layout: l, through: 8 }));
            assert.deepStrictEqual(f, ["appset.yaml: ApplicationSet argocd/shop, dev=main, prod=release/prod"]);
        });

        it("9. malformed JSON is a FAIL line, not a crash", async () => {
            const l = copy();
            write(l, "pin", "{ release_prod_initial: ");
            const rs = await verify({ layout: l, through: 8 });
            const bad = rs.find((r) => r.check === "pin.json exists and is JSON")!;
            assert.strictEqual(bad.ok, false);
            assert.match(bad.found!, /JSON|Unexpected|Expected/);
        });

        it("10. a SHA that does not exist", async () => {
            const l = copy();
            write(l, "incident", { ...read(l, "incident"), commit: "f".repeat(40) });
            const f = failed(await verify({ layout: l, through: 8 }));
            assert.ok(f.includes("incident.commit is a commit of the repository"), f.join("\n"));
            assert.ok(f.includes("pin.release_prod_initial is the parent of incident.commit"));
        });

        it("11. an unreachable cluster is a FAIL line, not a crash", async () => {
            // port 1 on loopback: nothing listens there (a port found free may be taken by another worker's server meanwhile)
            const dead = new KubeCluster(at.lab.kubeconfig.replace(/http:\/\/127\.0\.0\.1:\d+/, "http://127.0.0.1:1"));
            const rs = await verify({ layout: good, through: 8, cluster: dead });
            const answer = rs.find((r) => r.check === "the cluster answers")!;
            assert.strictEqual(answer.ok, false);
            assert.match(answer.found!, /ECONNREFUSED|connect/);
        });

        it("12. prod's ConfigMap still off after promotion (last: it stops the simulated Argo CD)", async () => {
            await at.lab.argo.apps.stop();
            const cm = at.lab.kube.get("ConfigMap", "shop-prod", "shop-config");
            at.lab.kube.put({ ...cm!, data: { ...cm!.data, FEATURE_CHECKOUT_V2: "off" } }, "someone");
            const f = failed(await verify({ layout: good, through: 8, cluster }));
            assert.deepStrictEqual(f, ["live shop-prod FEATURE_CHECKOUT_V2 is on"]);
        });
    });

    describe("npm run verify", () => {
        // through the bin in a process: the good run (exit 0) and bad usage (exit 2); the rest in this process
        it("prints the table and exits 0 on a good run (offline), 1 with what was expected and found on a bad one", async () => {
            const ok = runCli("verify", ["--root", good.root, "--offline"]);
            assert.strictEqual(ok.code, 0, ok.out);
            assert.match(ok.stdout, /^verify: the shop lab under \S+ through step 8, files and repository only \(offline\)$/m);
            assert.match(ok.stdout, /^ {3}6 {2}PASS {2}promote\.to is incident\.commit$/m);
            assert.match(ok.stdout, /\d+ passed, 0 failed/);
            const l = copy();
            write(l, "drift", { ...read(l, "drift"), seconds: "3" });
            const bad = await runMain("verify", ["--root", l.root, "--offline"]);
            assert.strictEqual(bad.code, 1);
            assert.match(bad.stdout, / {3}5 {2}FAIL {2}drift\.seconds is an integer\n {14}expected: an integer\n {14}found: {4}"3"/);
            // a value whose flaw the two lines do not show (a SHA in upper case): why, beside it
            const incident = read(l, "incident");
            write(l, "incident", { ...incident, commit: String(incident.commit).toUpperCase() });
            const upper = await runMain("verify", ["--root", l.root, "--offline"]);
            assert.ok(
                upper.stdout.includes(
                    `found:    "${String(incident.commit).toUpperCase()}" (it holds upper-case letters: write the SHA in lower case, as git prints it)\n`,
                ),
                upper.stdout,
            );
        });

        it("--json prints the same checks as JSON", async () => {
            const r = await runMain("verify", ["--root", good.root, "--offline", "--json"]);
            assert.strictEqual(r.code, 0, r.out);
            const j = JSON.parse(r.stdout);
            assert.strictEqual(j.ok, true);
            assert.ok(j.checks.some((c: any) => c.step === 8 && c.ok));
        });

        it("without a reachable kubeconfig it says so as a FAIL line; bad arguments exit 2", async () => {
            const r = await runMain("verify", ["--root", good.root, "--kubeconfig", "/nonexistent/kubeconfig"]);
            assert.strictEqual(r.code, 1);
            assert.match(
                r.stdout,
                /FAIL {2}the cluster answers\n\s+expected: a kubeconfig \(or --offline to grade the files and repository only\)/,
            );
            // the header says offline only when it is, and the line names both ways to get a kubeconfig
            assert.match(
                r.stdout,
                /^verify: the shop lab under \S+ through step 8, files and repository; the cluster could not be read \(see its check\)$/m,
            );
            assert.doesNotMatch(r.stdout, /\(offline\)/);
            assert.match(
                r.stdout,
                /pulumi stack output kubeconfig --show-secrets > FILE\), or a simulated lab's DIR\/kubeconfig \(gitops-lab simulate --root DIR --serve writes it\)/,
            );
            const t = await runMain("verify", ["--lab", "tenants", "--root", good.root, "--kubeconfig", "/nonexistent/kubeconfig"]);
            assert.match(
                t.stderr,
                /^gitops-lab verify: there is no tenants lab under \S+ \(no \S+platform\.git\); build it with gitops-lab simulate --lab tenants --root /,
                "a shop root holds nothing of the tenants lab: its step 1 is the lab's to build, not the learner's",
            );
            // through step 1, nothing reads the cluster: no kubeconfig is no failure
            const one = await runMain("verify", ["--root", good.root, "--through", "1", "--kubeconfig", "/nonexistent/kubeconfig"]);
            assert.strictEqual(one.code, 0, one.out);
            assert.match(
                one.stdout,
                /through step 1 as the lab stands \(at step 8\), files and repository \(no check before step 2 reads the cluster\)$/m,
            );
            const b = runCli("verify", ["--through", "9"]);
            assert.strictEqual(b.code, 2);
            assert.match(b.stderr, /^gitops-lab verify: --through takes a whole number from 0 to 8, got "9"\n$/);
        });
    });
});
