/**
 * gitops-lab verify [--lab shop|tenants] [--root DIR] [--through N | --step N] [--offline] [--json] [--kubeconfig FILE] [--stack-outputs FILE]
 *
 * Re-checks a lab from the world: the shop lab's six files under ROOT/root/cnpa-env/ and
 * ROOT/srv/bare/shop-envs.git, or the tenants lab's two under ROOT/root/tenants-lab/ and
 * ROOT/srv/bare/platform.git, and (unless --offline) the cluster. --step N grades one step and
 * answers in one line (what a lab platform's per-step check calls).
 */
import { shellWord } from "../lab/ports/shellWord";
import * as fs from "fs";
import * as path from "path";
import { CheckResult, checkKey, formatTable } from "../lab/grader/grader";
import { KubeCluster } from "../lab/ports/cluster";
import { parseJson } from "../lab/ports/files";
import { verify as verifyShop } from "../lab/shop/checks";
import { stepVerdict } from "../lab/grader/steps";
import { shopLayout } from "../lab/shop/layout";
import { shopLabProgress } from "../lab/shop/solve";
import { shopSteps } from "../lab/shop/steps";
import { verifyTenants } from "../lab/tenants/checks";
import { tenantsLayout } from "../lab/tenants/layout";
import { tenantsLabProgress } from "../lab/tenants/solve";
import { tenantsSteps } from "../lab/tenants/steps";
import { checkRoot, Command, EXIT, intOption, oneOf, stringOption, UsageError } from "./command";
import { clusterOf, findKubeconfig } from "./kubeconfig";
import { servedKubeconfigGone, servedLabSilent, simulatedNotServed } from "./servedLab";
import { messageOf } from "../lab/ports/errors";
import {
    clusterStateFile,
    currentContextElsewhere,
    isServedKubeconfig,
    servedKubeconfig,
    servedLabOf,
    staleServedCopy,
} from "../sim/servedFiles";
import { goneHolder, liveHolder, lockFile, SERVING } from "../lab/ports/lock";
import { resetMarkerFile } from "../sim/simulatedLab";

/**
 * Whether a lab not begun is ready for its learner: the environment is there (the folder the git daemon
 * serves). Only the shop lab has a step 0 (the environment only); the tenants lab's step 1 is built by the lab.
 */
const begins = (which: "shop" | "tenants", bareDir: string) => which === "shop" && fs.existsSync(bareDir);
/**
 * A shop lab whose only trace of step 2 is appset.yaml (no result file, and no clone of the lab's at its place): most
 * likely the ApplicationSet applied before step 1's repository was made, not a repository made and deleted since.
 */
const repoNeverMade = (which: "shop" | "tenants", root: string, progress: number) =>
    which === "shop" && progress === 2 && !fs.existsSync(path.join(shopLayout(root).clone, ".git"));

export const verify: Command = {
    name: "verify",
    summary: "grade the lab: every check re-derived from the files, the repository and the cluster",
    usage: "verify [--lab shop|tenants] [--root DIR] [--through N | --step N] [--offline] [--json] [--kubeconfig FILE] [--stack-outputs FILE]",
    details: [
        "--lab LAB            shop (Part 1, the default) or tenants (Part 2)",
        "--root DIR           the prefix of the lab's host paths (default /)",
        "--through N          grade steps up to N (shop 0-8, default 8, as solveThrough; tenants 1-3, default 3, as tenantsSolveThrough)",
        "--step N             grade step N alone (shop 1-8, tenants 1-3): exit 0 when it is done, else 1 with one line naming the first thing missing and a hint",
        "--offline            files and repository only, no cluster",
        "--json               the checks as one JSON object",
        "--kubeconfig FILE    the cluster (default: $KUBECONFIG, /etc/rancher/k3s/k3s.yaml, ~/.kube/config)",
        "--stack-outputs FILE also compare `pulumi stack output --json` with the files",
    ],
    options: {
        lab: { type: "string" },
        root: { type: "string" },
        through: { type: "string" },
        step: { type: "string" },
        offline: { type: "boolean" },
        json: { type: "boolean" },
        kubeconfig: { type: "string" },
        "stack-outputs": { type: "string" },
    },
    // a result file given bare: verify reads them where the lab keeps them
    bare: (word) =>
        /\.json$/i.test(word) && !/output/i.test(word)
            ? `verify reads the result files where the lab keeps them: give the lab's folder, --root DIR (not a file)`
            : undefined,
    // a lab's name given as an option: --lab names it
    misread: {
        "--tenants": "the lab is chosen with --lab tenants",
        // simulate --lab both's, copied over: verify grades one lab at a time
        "--tenants-through":
            "verify grades one lab at a time: --lab tenants --through N (--tenants-through is simulate's, with --lab both)",
        "--shop": "the lab is chosen with --lab shop (the default)",
        "--argocd-version":
            "verify grades the lab as its cluster stands, whichever Argo CD runs it: leave it out; it is simulate's, for the version a simulated lab is built as",
    },
    async run(values) {
        // offline reads no cluster: a kubeconfig beside it would be read by nothing, without a word
        oneOf("verify", values, ["offline", "kubeconfig"]);
        const which = stringOption(values, "lab") ?? "shop";
        if (which === "both")
            throw new UsageError(
                `--lab takes shop or tenants, got "both": verify grades one lab at a time (--lab shop, then --lab tenants)`,
            );
        if (which !== "shop" && which !== "tenants") throw new UsageError(`--lab takes shop or tenants, got "${which}"`);
        // a file named that is not there is a mistake in the command, said before anything is graded
        const outputsArg = stringOption(values, "stack-outputs");
        if (outputsArg !== undefined && !fs.existsSync(outputsArg))
            throw new UsageError(
                `--stack-outputs ${outputsArg} does not exist; make it with pulumi stack output --json > ${outputsArg}, or leave the option out`,
            );
        oneOf("verify", values, ["through", "step"]);
        const rootArg = stringOption(values, "root") ?? "/";
        const root = checkRoot(rootArg);
        const layout = which === "shop" ? shopLayout(root) : tenantsLayout(root);
        const steps = which === "shop" ? shopSteps(shopLayout(root)) : tenantsSteps(tenantsLayout(root));
        const step = values.step === undefined ? undefined : intOption(values, "step", { min: 1, max: steps.length, default: 1 });
        const through =
            step ??
            (which === "shop"
                ? intOption(values, "through", { min: 0, max: 8, default: 8 })
                : intOption(values, "through", { min: 1, max: 3, default: 3 }));
        const progress = which === "shop" ? shopLabProgress(shopLayout(root)) : tenantsLabProgress(tenantsLayout(root));
        // the other lab is here: most often --lab was left out (or given for the other one)
        const other = which === "shop" ? "tenants" : "shop";
        const otherAt = other === "shop" ? shopLabProgress(shopLayout(root)) : tenantsLabProgress(tenantsLayout(root));
        const theOther =
            otherAt > 0
                ? `; the ${other} lab is here (at step ${otherAt}): gitops-lab verify${other === "tenants" ? " --lab tenants" : ""} --root ${layout.root}`
                : "";
        // no --root (so the host's /), and the kubeconfig a served lab's: that lab's root is the one meant
        const kubeconfigGiven = stringOption(values, "kubeconfig") ?? process.env.KUBECONFIG?.split(path.delimiter)[0];
        const servedRoot = rootArg === "/" && progress === 0 && !values.root && kubeconfigGiven ? servedLabOf(kubeconfigGiven) : undefined;
        if (servedRoot) {
            console.error(
                `gitops-lab verify: no --root given, so verify reads a lab host's paths under /, and ${values.kubeconfig === undefined ? "KUBECONFIG" : "--kubeconfig"} is the served lab's under ${servedRoot}: give its root, gitops-lab verify${which === "shop" ? "" : " --lab tenants"} --root ${shellWord(servedRoot)}${step === undefined ? "" : ` --step ${step}`}${step === undefined && values.through !== undefined ? ` --through ${through}` : ""}${values.json ? " --json" : ""}`,
            );
            return EXIT.USAGE;
        }
        // a reset of the root not finished: what is left of the lab is no learner's work to grade
        if (fs.existsSync(resetMarkerFile(root))) {
            const holder = liveHolder(lockFile(root));
            console.error(
                holder
                    ? `gitops-lab verify: a reset of ${root} is under way (PID ${holder.pid}): wait for it to end; then gitops-lab simulate builds the lab again`
                    : `gitops-lab verify: the reset of ${root} was interrupted (part of the lab is taken down already): gitops-lab simulate --root ${shellWord(root)} --reset finishes it; then gitops-lab simulate builds the lab again`,
            );
            return EXIT.FINDING;
        }
        // --step with a --root inside a lab (its results folder, its clone): the lab's root named, as for the table
        const labAbove = () =>
            [1, 2, 3, 4]
                .map((n) => path.resolve(root, ...Array<string>(n).fill("..")))
                .find(
                    (r) => r !== root && fs.existsSync(path.join((which === "shop" ? shopLayout(r) : tenantsLayout(r)).bareRepo, "HEAD")),
                );
        const outer = progress === 0 && step !== undefined ? labAbove() : undefined;
        if (outer) {
            console.error(
                `gitops-lab verify: ${layout.root} is inside the ${which} lab under ${outer}: give its root, gitops-lab verify${which === "shop" ? "" : " --lab tenants"} --root ${outer} --step ${step}`,
            );
            // a wrong --root is the command's mistake, not a step not done (a platform's check script tells them by exit code)
            return EXIT.USAGE;
        }
        if (progress === 0 && step === undefined && through > 0) {
            // nothing of the lab there: one line, not a FAIL for every check that has nothing to read
            const how = which === "shop" ? "" : " --lab tenants";
            // a --root inside a lab (its results folder, its clone): the lab is a few folders up
            const above = labAbove();
            const line =
                (above
                    ? `gitops-lab verify: ${layout.root} is inside the ${which} lab under ${above}: give its root, gitops-lab verify${how} --root ${above}`
                    : otherAt > 0 && begins(which, layout.bareDir)
                      ? // the tenants lab is what is here (--lab left out): that first; the shared bare folder is no shop lab begun
                        `gitops-lab verify: no ${which} lab is begun under ${layout.root}, but the ${other} lab is (at step ${otherAt}): gitops-lab verify${other === "tenants" ? " --lab tenants" : ""} --root ${layout.root}; to start the ${which} lab here, its step 1 is yours to do (gitops-lab verify${how} --root ${layout.root} --step 1 grades it)`
                      : begins(which, layout.bareDir)
                        ? `gitops-lab verify: the ${which} lab under ${layout.root} is ready and not begun (${fs.existsSync(layout.bareRepo) ? `${layout.bareRepo} holds no bare repository: verify --step 1 says what is there` : `no ${layout.bareRepo} yet`}): step 1 is yours to do; gitops-lab verify${how} --root ${layout.root} --step 1 grades it with a hint`
                        : layout.root === "/"
                          ? // the default root, the lab host's: a simulated lab is under a --root of its own
                            `gitops-lab verify: there is no ${which} lab under / (no ${layout.bareRepo}), the lab host's paths and verify's default --root: a simulated lab is graded with the --root it was built under (gitops-lab verify${how} --root DIR); a lab host's lab is built by lab:up`
                          : labsBelow(root, which).length
                            ? // the folder that holds the labs: one of them is the root
                              `gitops-lab verify: there is no ${which} lab under ${layout.root}, but in folders of it: ${labsBelow(root, which).join(", ")}: give one, gitops-lab verify${how} --root ${labsBelow(root, which)[0]}`
                            : `gitops-lab verify: there is no ${which} lab under ${layout.root} (no ${layout.bareRepo}); build it with gitops-lab simulate${how} --root ${layout.root} (or pulumi up), or give the --root it was built under`) +
                (!above && otherAt > 0 && begins(which, layout.bareDir) ? "" : theOther);
            // a script that asked for JSON reads JSON, whatever the answer
            if (values.json)
                console.log(
                    JSON.stringify(
                        { ok: false, lab: which, root: layout.root, through, error: line.replace(/^gitops-lab verify: /, ""), checks: [] },
                        null,
                        2,
                    ),
                );
            console.error(line);
            return above ? EXIT.USAGE : EXIT.FINDING;
        }
        const extra: CheckResult[] = [];
        let cluster: KubeCluster | undefined;
        // the first step whose checks read the cluster: the shop lab's ApplicationSet (2), the tenants lab's first rollout (1)
        const liveFrom = which === "shop" ? 2 : 1;
        // --through below it reads no cluster (--step may grade a lab that has moved past: it may)
        if (!values.offline && (step !== undefined || through >= liveFrom)) {
            try {
                const kc = findKubeconfig(stringOption(values, "kubeconfig"));
                // another simulated lab's served kubeconfig (a KUBECONFIG still exported from it): its cluster is not this lab's
                const elsewhere = servedLabOf(kc.file);
                if (elsewhere && elsewhere !== (fs.existsSync(layout.root) ? fs.realpathSync(layout.root) : path.resolve(layout.root)))
                    throw new Error(
                        `${kc.file} is the kubeconfig of the simulated lab under ${elsewhere}, not of this one (${values.kubeconfig === undefined ? "KUBECONFIG still names it" : "--kubeconfig"}); its cluster never saw this lab's work: give this lab's cluster`,
                    );
                // a served lab's kubeconfig switched to another cluster's context (kubectl config use-context)
                const elsewhereNow = servedLabOf(kc.file) ? currentContextElsewhere(kc.file) : undefined;
                if (elsewhereNow) throw new Error(elsewhereNow);
                // this lab's (or a) served lab's kubeconfig while nothing serves it (stopped, or suspended: Ctrl-Z): said at once
                const silent = servedLabSilent(kc.file, "verify");
                if (silent) throw new Error(silent);
                // a copy of this lab's served kubeconfig made in an earlier run: its port is gone
                const stale = staleServedCopy(kc.file, layout.root);
                // (the lab stopped, its own kubeconfig does not answer either: serving it again is said first)
                if (stale) throw new Error(servedLabSilent(servedKubeconfig(layout.root), "verify") ?? stale);
                cluster = clusterOf(kc);
            } catch (caught) {
                // the served lab's kubeconfig removed while it serves: said, not "no kubeconfig found"
                const gone = servedKubeconfigGone(layout.root);
                // a simulated lab not served, no kubeconfig given: its cluster is the saved one, which only a served run answers for
                const unserved =
                    values.kubeconfig === undefined && /no kubeconfig found/.test(messageOf(caught))
                        ? simulatedNotServed(layout.root, "verify again")
                        : undefined;
                const e =
                    gone && /no kubeconfig found|cannot read the kubeconfig/.test(messageOf(caught))
                        ? new Error(gone)
                        : unserved
                          ? new Error(unserved)
                          : caught;
                // a served lab under the root wrote its own: named, when no kubeconfig was given
                const ours = servedKubeconfig(layout.root);
                const served = values.kubeconfig === undefined && fs.existsSync(ours) && isServedKubeconfig(ours) ? ours : undefined;
                extra.push({
                    step: liveFrom,
                    check: "the cluster answers",
                    ok: false,
                    expected: "a kubeconfig (or --offline to grade the files and repository only)",
                    // the table's line names the served lab's kubeconfig too (it shows no hint)
                    found: `${messageOf(e)}${served ? ` (this lab is served: --kubeconfig ${served})` : ""}`,
                    // why this kubeconfig will not do (none there, not a kubeconfig), then what to give
                    hint: /serve it again|is suspended|from an earlier run|config use-context|nothing serves it now/.test(messageOf(e))
                        ? `${messageOf(e)}, or --offline to grade the files and repository only`
                        : `${messageOf(e)
                              .split(";")[0]
                              .replace(
                                  /: give .*$/,
                                  "",
                              )}: give ${served ? `--kubeconfig ${served} (the served lab's)` : "--kubeconfig FILE (or set KUBECONFIG) for the lab's cluster"}, or --offline to grade the files and repository only`,
                });
            }
        }
        let stackOutputs: Record<string, unknown> | undefined;
        const outputsFile = stringOption(values, "stack-outputs");
        if (outputsFile) {
            try {
                stackOutputs = readStackOutputs(outputsFile);
            } catch (e) {
                // a simulated lab (its cluster saved under the root) has no stack, so no outputs to give
                const simulated = fs.existsSync(clusterStateFile(root));
                extra.push({
                    // said with the steps graded (the first one of --step's, else the lowest of --through's that reads outputs)
                    step: step ?? Math.max(1, Math.min(3, through)),
                    check: "the stack outputs can be read",
                    ok: false,
                    expected: `pulumi stack output --json in ${outputsFile}`,
                    found: messageOf(e),
                    hint: simulated
                        ? `the lab under ${root} is simulated: it has no stack, so no stack outputs (pulumi up writes them on a lab host); leave --stack-outputs out`
                        : `make it with: pulumi stack output --json > ${outputsFile} (or gitops-lab outputs > ${outputsFile})`,
                });
            }
        }
        const grade = (upTo: number, offline = false) =>
            which === "shop"
                ? verifyShop({ layout: shopLayout(root), through: upTo, cluster: offline ? undefined : cluster, stackOutputs })
                : verifyTenants({ layout: tenantsLayout(root), through: upTo, cluster: offline ? undefined : cluster, stackOutputs });
        let results = [...extra, ...(await grade(through))];
        let asItStands = "";
        if (step === undefined && progress > through) {
            // a lab past N is graded as it stands, as --step grades a step it has moved past: its checks of steps up
            // to N as grading through where it is has them (step 4 points appset.yaml's prod at release/prod, which
            // grading through 3 would call wrong)
            const mine = new Set(results.map(checkKey));
            results = [...extra, ...(await grade(progress)).filter((r) => r.step <= through || mine.has(checkKey(r)))];
            asItStands = ` as the lab stands (at step ${progress})`;
        }
        if (step !== undefined) {
            // the steps before, as their files and the repository hold them (the cluster has moved on since)
            const before = step > 1 ? await grade(step - 1, true) : [];
            const at = Math.max(progress, step);
            let verdict = stepVerdict(before, results, steps, step, { at });
            // a step the lab has moved past (a later step's result file is there) is graded as the lab stands
            if (!verdict.done && at > step)
                verdict = stepVerdict(before, results, steps, step, { at, results: [...extra, ...(await grade(at))] });
            // nothing of the lab there: a learner who has not begun (the environment is there: the folder the git
            // daemon serves), or a --root that is not the lab's
            if (!verdict.done && !fs.existsSync(layout.bareRepo))
                verdict = {
                    ...verdict,
                    line:
                        (progress >= 2 && !repoNeverMade(which, root, progress)
                            ? `${verdict.line} (the ${which} lab under ${layout.root} is at step ${progress}, but its repository ${layout.bareRepo} is gone: put it back, or start over (a simulated lab: gitops-lab simulate --root ${layout.root} --reset; a lab host: destroy, then up))`
                            : progress >= 2
                              ? `${verdict.line} (step 1 comes first: the repository ${layout.bareRepo} is not there, never made?, and an ApplicationSet applied before it syncs once main is pushed: make it, push main, then verify --step 1)`
                              : begins(which, layout.bareDir) && verdict.missing?.hint
                                ? verdict.line // its own hint says what is there
                                : begins(which, layout.bareDir)
                                  ? `${verdict.line} (the ${which} lab under ${layout.root} is ready and not begun: step 1 is yours to do)`
                                  : `${verdict.line} (nothing of the ${which} lab is under ${layout.root} yet: is that the --root it is built under?)`) +
                        theOther,
                };
            // done offline, a step the cluster shows too: said, so the line is never read as the cluster's checks passing
            if (verdict.done && values.offline && step >= liveFrom)
                verdict = {
                    ...verdict,
                    line: verdict.line.replace(
                        /\((\d+) checks pass( as the lab stands)?\)/,
                        (_, n: string, as = "") =>
                            `(${n} checks of the files and repository pass${as}; the cluster was not read (--offline))`,
                    ),
                };
            if (values.json) {
                // the hint, never the answer: the missing check without its expected and found values
                const missing = verdict.missing && { step: verdict.missing.step, check: verdict.missing.check };
                console.log(JSON.stringify({ lab: which, root: layout.root, live: !!cluster, ...verdict, missing }, null, 2));
            } else console.log(`${verdict.line}${verdict.done ? "" : stoppedRun(layout.root)}`);
            return verdict.done ? EXIT.OK : EXIT.FINDING;
        }
        const ok = results.every((r) => r.ok);
        if (values.json) {
            console.log(JSON.stringify({ ok, lab: which, root: layout.root, through, live: !!cluster, checks: results }, null, 2));
        } else {
            const what = cluster
                ? "files, repository and cluster"
                : values.offline
                  ? "files and repository only (offline)"
                  : through < liveFrom
                    ? `files and repository (no check before step ${liveFrom} reads the cluster)`
                    : "files and repository; the cluster could not be read (see its check)";
            console.log(`verify: the ${which} lab under ${layout.root} through step ${through}${asItStands}, ${what}`);
            console.log(formatTable(results));
            if (!ok && stoppedRun(layout.root)) console.log(stoppedRun(layout.root).replace(/^ \((.*)\)$/, "$1"));
        }
        return ok ? EXIT.OK : EXIT.FINDING;
    },
};

/** The folders right under `root` that hold a lab of this kind (a --root one level too high). */
function labsBelow(root: string, which: string): string[] {
    const entries = fs.existsSync(root) && fs.statSync(root).isDirectory() ? fs.readdirSync(root, { withFileTypes: true }) : [];
    return entries
        .filter((e) => e.isDirectory())
        .map((e) => path.join(root, e.name))
        .filter((d) => fs.existsSync(path.join((which === "shop" ? shopLayout(d) : tenantsLayout(d)).bareRepo, "HEAD")))
        .slice(0, 5);
}

/**
 * A simulate on the root that is not done: stopped half-way (its lock held by a PID that is gone), said with how it
 * resumes; or still at work (its lock held, not yet serving), what it has not done yet failing here.
 */
function stoppedRun(root: string): string {
    const pid = goneHolder(lockFile(root));
    if (pid !== undefined)
        return ` (a gitops-lab simulate on ${root} stopped half-way: its PID ${pid} is gone; the same simulate command resumes it)`;
    const run = liveHolder(lockFile(root));
    return run && run.what !== SERVING && run.state !== "T"
        ? ` (a gitops-lab simulate, PID ${run.pid}, is still at work on ${root}: what it has not done yet fails here; verify again when it has ended, or serves the lab)`
        : "";
}

/** `pulumi stack output --json` from a file: a JSON object with the stack's completedThrough, or an error saying what the file is instead. */
function readStackOutputs(file: string): Record<string, unknown> {
    const text = fs.readFileSync(file, "utf8");
    // outputs > FILE that failed (a simulated lab has no stack): an empty file
    if (!text.trim())
        throw new Error(
            `${file} is empty (did the command that wrote it fail? gitops-lab outputs needs the lab host's stack; a simulated lab has none: grade it with --root DIR --offline)`,
        );
    // YAML (a kubeconfig, a stack's Pulumi.<stack>.yaml) given for the outputs: said as such, not as a JSON syntax error
    if (/^\s*(?:#.*\n\s*)*[\w.-]+:(?:\s|$)/.test(text))
        throw new Error(
            `${file} is YAML${/^kind:\s*Config\s*$/m.test(text) ? " (a kubeconfig: it goes with --kubeconfig)" : ""}, not the stack's outputs, which are JSON`,
        );
    const value: unknown = parseJson(text);
    if (value === null || typeof value !== "object" || Array.isArray(value))
        throw new Error(
            `${file} holds ${Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`}, not the stack's outputs (a JSON object)`,
        );
    // verify's own --json output (ok, lab, root, through): graded results, not what the stack exported
    if (
        !("completedThrough" in value) &&
        (["ok", "lab", "root", "through"].every((k) => k in value) || ["lab", "root", "live", "done"].every((k) => k in value))
    )
        throw new Error(`${file} is verify's own --json output (graded results), not the stack's outputs`);
    if (!("completedThrough" in value))
        throw new Error(
            `${file} has no completedThrough: it is not this stack's outputs (a result file? keys: ${Object.keys(value).slice(0, 5).join(", ") || "none"})`,
        );
    return value as Record<string, unknown>;
}
