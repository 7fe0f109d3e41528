/**
 * The doctor's alert rules, proven with Prometheus's own rule test tool: `promtool test rules`
 * (Prometheus 3.16.0, built from its Go module and cached like the plane) over the series recorded
 * from the simulated tenants stall at Argo CD v3.5.1's and Kubernetes' defaults on the simulation's
 * clock (test/helpers/stallSeries.ts): the doctor's rounds as `--watch` runs them (on each change,
 * at least every 30 s), and Prometheus's defaults: a scrape and a rule evaluation every minute.
 *
 * In the real tier, not `npm test`: promtool is a Go build, and the fast tier needs no Go.
 */
import * as assert from "assert";
import { execFile } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseAllDocuments, stringify } from "yaml";
import { buildPromtool } from "../../realplane/promtoolBuild";
import { recordStall, StallRecording } from "../helpers/stallSeries";

const DOCTOR_RULE = path.join(__dirname, "..", "..", "lab", "doctor", "prometheusrule.yaml");
const KSM_RULE = path.join(__dirname, "..", "..", "lab", "doctor", "kube-state-metrics-rule.yaml");
const EVALUATION_SECONDS = 60;
/** The doctor's alert: from the hook Job's BackoffLimitExceeded. */
const DOCTOR_WITHIN_SECONDS = 120;
/** kube-state-metrics' alert, which sees only the sync's failure: from the step's first failed attempt. */
const KSM_WITHIN_SECONDS = 300;

/** The rule file a PrometheusRule holds (its spec is one). */
const ruleFile = (file: string) => parseAllDocuments(fs.readFileSync(file, "utf8"))[0].toJSON().spec;

/**
 * The slot of a scrape: the nearest, but never one before a mark the scrape came after (a scrape 5 s after
 * the fix's push, rounded down, would put the fixed state before the push and stop the alert too early).
 */
function slotOf(rec: StallRecording, at: number): number {
    const nearest = Math.round(at / rec.intervalSeconds);
    const marks = Object.values(rec.marks).filter((m): m is number => typeof m === "number");
    return marks.some((m) => nearest * rec.intervalSeconds < m && m <= at) ? Math.ceil(at / rec.intervalSeconds) : nearest;
}

/** The recording as promtool's input series: one value per 30 s slot, `_` where no scrape fell, `stale` where a series vanished (as a scrape marks it). */
function inputSeries(rec: StallRecording): { series: string; values: string }[] {
    const slots = new Map<number, Map<string, number>>();
    for (const s of rec.scrapes) slots.set(slotOf(rec, s.at), s.series);
    const last = Math.max(...slots.keys());
    const names = [...new Set(rec.scrapes.flatMap((s) => [...s.series.keys()]))].sort();
    return names.map((name) => {
        const values: string[] = [];
        let seen = false;
        for (let i = 0; i <= last; i++) {
            const scrape = slots.get(i);
            const v = scrape?.get(name);
            if (!scrape) values.push("_");
            else if (v !== undefined) {
                values.push(String(v));
                seen = true;
            } else {
                values.push(seen ? "stale" : "_");
                seen = false;
            }
        }
        return { series: name, values: values.join(" ") };
    });
}

/** An alert's annotations as Prometheus renders these templates (only `{{ $labels.x }}` is used). */
function rendered(rule: any, labels: Record<string, string>): Record<string, string> {
    return Object.fromEntries(
        Object.entries(rule.annotations as Record<string, string>).map(([k, v]) => [
            k,
            v.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, l) => labels[l] ?? ""),
        ]),
    );
}

const floorTo = (s: number, step: number) => Math.floor(s / step) * step;
const minutesBetween = (from: number, to: number) => {
    const out: number[] = [];
    // strictly between: a scrape in the same second as the event may see the state before it or after it
    for (let t = (Math.floor(from / EVALUATION_SECONDS) + 1) * EVALUATION_SECONDS; t < to; t += EVALUATION_SECONDS) out.push(t);
    return out;
};

/** promtool with these arguments in `dir`: its exit code and output. */
const promtoolIn = (promtool: string, dir: string, args: string[]): Promise<{ code: number; out: string }> =>
    new Promise((resolve) =>
        execFile(promtool, args, { cwd: dir, timeout: 120_000 }, (err, stdout, stderr) =>
            resolve({ code: err ? ((err as any).code ?? 1) : 0, out: `${stdout}${stderr}` }),
        ),
    );

/** `promtool test rules` over this test file (its rule_files beside it in `dir`). */
function runPromtool(promtool: string, dir: string, test: object): Promise<{ code: number; out: string }> {
    fs.writeFileSync(path.join(dir, "test.yaml"), stringify(test));
    return promtoolIn(promtool, dir, ["test", "rules", "test.yaml"]);
}

describe("the doctor's alert fires within 2 minutes of the hook Job's BackoffLimitExceeded, kube-state-metrics' within 5 minutes of the first failed sync (promtool test rules over the simulated stall at v3.5.1's timings, Prometheus's default intervals)", function () {
    this.timeout(1_800_000);
    let promtool: string;
    let rec: StallRecording;
    let dir: string;

    before(async () => {
        promtool = await buildPromtool((l) => console.log(`  [promtool] ${l}`));
        rec = await recordStall();
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "promtool-"));
        const m = rec.marks;
        console.log(
            `  recorded ${rec.scrapes.length} scrapes: pushed 1.2.0 at ${m.stallPush} s, mandant-b's hook Job failed at ${m.hookFailed} s, its sync's first failure at ${m.firstFailure} s, gave up at ${m.gaveUp} s, pushed 1.2.1 at ${m.fixPush} s, complete at ${m.recovered} s`,
        );
        assert.ok(
            m.stallPush < m.hookFailed &&
                m.hookFailed <= m.firstFailure &&
                m.firstFailure < m.fixPush &&
                (m.recovered === undefined || m.fixPush <= m.recovered),
            JSON.stringify(m),
        );
        if (rec.recoveryError) console.log(`  the recovery did not complete (the checks after it are left out): ${rec.recoveryError}`);
    });
    after(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

    /**
     * The alert test: no alert before the hook Job's failure; then an expected firing at every rule
     * evaluation from then until the fix is pushed; none after the recovery. promtool names each
     * evaluation where the alert was not firing: those must all come before the first firing (it
     * never flaps). Returns the first firing's time.
     */
    async function firing(rules: any, alertname: string, labels: Record<string, string>): Promise<{ firstFiring: number; out: string }> {
        const m = rec.marks;
        const rule = rules.groups.flatMap((g: any) => g.rules).find((r: any) => r.alert === alertname);
        const expected = [{ exp_labels: { ...labels, severity: "warning" }, exp_annotations: rendered(rule, labels) }];
        const at = (s: number, exp: object[]) => ({ eval_time: `${s}s`, alertname, exp_alerts: exp });
        const end = floorTo(Math.max(...rec.scrapes.map((s) => s.at)), EVALUATION_SECONDS);
        const during = minutesBetween(m.hookFailed, m.fixPush);
        fs.writeFileSync(path.join(dir, "rules.yaml"), stringify(rules));
        const r = await runPromtool(promtool, dir, {
            rule_files: ["rules.yaml"],
            evaluation_interval: `${EVALUATION_SECONDS}s`,
            // none after the recovery: checked when the recording's recovery completed
            tests: [
                {
                    interval: `${rec.intervalSeconds}s`,
                    input_series: inputSeries(rec),
                    alert_rule_test: [
                        at(floorTo(m.hookFailed, EVALUATION_SECONDS), []),
                        ...during.map((t) => at(t, expected)),
                        ...(m.recovered !== undefined ? [at(end, [])] : []),
                    ],
                },
            ],
        });
        const failedAt = [...r.out.matchAll(/alertname: \w+, time: ((?:\d+h)?(?:\d+m)?(?:\d+s)?),/g)].map((x) => seconds(x[1]));
        const unexpected = failedAt.filter((t) => !during.includes(t));
        assert.deepStrictEqual(unexpected, [], `an alert where none was expected:\n${r.out}`);
        const first = during.find((t) => !failedAt.includes(t));
        assert.ok(first !== undefined, `never fired:\n${r.out}`);
        assert.deepStrictEqual(
            failedAt,
            during.filter((t) => t < first),
            `it stopped firing after it fired:\n${r.out}`,
        );
        return { firstFiring: first, out: r.out };
    }

    /** A promtool duration ("8m", "1h2m30s") in seconds. */
    const seconds = (d: string) =>
        [...d.matchAll(/(\d+)([hms])/g)].reduce((n, [, v, u]) => n + Number(v) * { h: 3600, m: 60, s: 1 }[u as "h" | "m" | "s"], 0);

    it("promtool accepts both rule files", async () => {
        for (const file of [DOCTOR_RULE, KSM_RULE]) {
            fs.writeFileSync(path.join(dir, "check.yaml"), stringify(ruleFile(file)));
            const r = await promtoolIn(promtool, dir, ["check", "rules", "check.yaml"]);
            assert.strictEqual(r.code, 0, `${file}: ${r.out}`);
        }
    });

    it("RollingSyncRolloutStuck (the doctor's series) fires within 2 minutes of the hook Job's BackoffLimitExceeded and stays firing while the hook's failure and the retry's wait alternate", async () => {
        const reasons = new Set(
            rec.scrapes.flatMap((s) =>
                [...s.series.keys()].filter((k) => k.startsWith("gitops_lab_rollout_stuck")).map((k) => /reason="(\w+)"/.exec(k)?.[1]),
            ),
        );
        assert.deepStrictEqual(
            [...reasons].sort(),
            ["PreSyncHookFailed", "SyncRetrying"],
            "the recorded stall alternates between the two reasons",
        );
        const r = await firing(ruleFile(DOCTOR_RULE), "RollingSyncRolloutStuck", {
            namespace: "argocd",
            appset: "tenants",
            step: "2",
            application: "mandant-b",
        });
        const after = r.firstFiring - rec.marks.hookFailed;
        console.log(`  RollingSyncRolloutStuck firing ${after} s after the hook Job's BackoffLimitExceeded`);
        assert.ok(after <= DOCTOR_WITHIN_SECONDS, r.out);
    });

    it("with a for: of 2 minutes it would fire, but too late: the 2 minutes tell the rules apart", async () => {
        const rules = ruleFile(DOCTOR_RULE);
        rules.groups[0].rules.find((x: any) => x.alert === "RollingSyncRolloutStuck").for = "2m";
        const r = await firing(rules, "RollingSyncRolloutStuck", {
            namespace: "argocd",
            appset: "tenants",
            step: "2",
            application: "mandant-b",
        });
        assert.ok(r.firstFiring - rec.marks.hookFailed > DOCTOR_WITHIN_SECONDS, r.out);
    });

    it("the rule grouped by reason (for: 5m) does not fire and stay firing: the same test fails, so the test tells them apart", async () => {
        const rules = ruleFile(DOCTOR_RULE);
        const rule = rules.groups[0].rules.find((x: any) => x.alert === "RollingSyncRolloutStuck");
        rule.expr = "max by (namespace, appset, step, application, reason) (gitops_lab_rollout_stuck) == 1";
        rule.for = "5m";
        await assert.rejects(
            firing(rules, "RollingSyncRolloutStuck", { namespace: "argocd", appset: "tenants", step: "2", application: "mandant-b" }),
            /it stopped firing after it fired|never fired/,
        );
    });

    it("RollingSyncStepFailing (kube-state-metrics' series) fires within 5 minutes of the first failed sync and stays firing until the fix", async () => {
        const r = await firing(ruleFile(KSM_RULE), "RollingSyncStepFailing", {
            namespace: "argocd",
            customresource_name: "tenants",
            step: "2",
            application: "mandant-b",
        });
        const after = r.firstFiring - rec.marks.firstFailure;
        console.log(`  RollingSyncStepFailing firing ${after} s after the first failed sync`);
        assert.ok(after <= KSM_WITHIN_SECONDS, r.out);
    });

    it("RollingSyncStepNotCompleting (kube-state-metrics, the 30-minute hang) stays silent through the whole stall, and RollingSyncApplicationSkipped fires 5 minutes into a skip", async () => {
        const ksm = ruleFile(KSM_RULE);
        const end = floorTo(Math.max(...rec.scrapes.map((s) => s.at)), EVALUATION_SECONDS);
        fs.writeFileSync(path.join(dir, "rules.yaml"), stringify(ksm));
        const hang = await runPromtool(promtool, dir, {
            rule_files: ["rules.yaml"],
            evaluation_interval: `${EVALUATION_SECONDS}s`,
            tests: [
                {
                    interval: `${rec.intervalSeconds}s`,
                    input_series: inputSeries(rec),
                    alert_rule_test: minutesBetween(0, end).map((t) => ({
                        eval_time: `${t}s`,
                        alertname: "RollingSyncStepNotCompleting",
                        exp_alerts: [],
                    })),
                },
            ],
        });
        assert.strictEqual(hang.code, 0, hang.out);

        const doctor = ruleFile(DOCTOR_RULE);
        const rule = doctor.groups[0].rules.find((x: any) => x.alert === "RollingSyncApplicationSkipped");
        const labels = { namespace: "argocd", appset: "tenants", step: "4", application: "mandant-d" };
        fs.writeFileSync(path.join(dir, "rules.yaml"), stringify(doctor));
        // a skip the doctor reports from the first minute on (written by hand: the recorded stall has none)
        const skip = await runPromtool(promtool, dir, {
            rule_files: ["rules.yaml"],
            evaluation_interval: `${EVALUATION_SECONDS}s`,
            tests: [
                {
                    interval: "30s",
                    input_series: [
                        {
                            series: `gitops_lab_rollout_skipped{namespace="argocd",appset="tenants",step="4",application="mandant-d"}`,
                            values: "_ _ 1x30",
                        },
                    ],
                    alert_rule_test: [
                        { eval_time: "5m", alertname: "RollingSyncApplicationSkipped", exp_alerts: [] },
                        {
                            eval_time: "7m",
                            alertname: "RollingSyncApplicationSkipped",
                            exp_alerts: [{ exp_labels: { ...labels, severity: "warning" }, exp_annotations: rendered(rule, labels) }],
                        },
                    ],
                },
            ],
        });
        assert.strictEqual(skip.code, 0, skip.out);
    });
});
