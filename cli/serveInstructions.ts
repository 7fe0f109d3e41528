/**
 * What a served or finished simulated lab prints for its learner: the block that says how to use the
 * served lab at the step it stands at, and the lines that grade what a finished run left.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { servedCloneDir } from "../lab/kit/layout";
import { GIT_OPTS } from "../lab/ports/exec";
import { LabStep, nextStepOf } from "../lab/grader/steps";
import { shopLayout, REPO_URL } from "../lab/shop/layout";
import { shopSteps } from "../lab/shop/steps";
import { PLATFORM_REPO_URL, RELEASES, TENANTS, tenantsLayout } from "../lab/tenants/layout";
import { tenantPath } from "../lab/tenants/repoFiles";
import { parse } from "yaml";
import { tenantsSteps } from "../lab/tenants/steps";
import { shellWord } from "../lab/ports/shellWord";

/** This project's command by its absolute path: a printed line works from any folder. */
export const GITOPS_LAB = shellWord(path.resolve(__dirname, "..", "bin", "gitops-lab"));

/** The refresh that makes Argo CD look at Git now, and what its own poll would take without it (docs/argocd-v3.5.1.md). */
const REFRESH = {
    shop: {
        command: "kubectl -n argocd annotate applications --all argocd.argoproj.io/refresh=normal --overwrite",
        without:
            "without it Argo CD's own poll sees the push in up to about 6 minutes (every 120 s plus up to 60 s of jitter, behind the repo-server's 3-minute revision cache)",
    },
    tenants: {
        command: "kubectl -n argocd annotate applicationset tenants argocd.argoproj.io/application-set-refresh=true --overwrite",
        without:
            "without it the ApplicationSet reads Git at its 3-minute requeue; refresh the ApplicationSet, never the Applications (docs/tenants-lab.md)",
    },
} as const;

/** The next step of a lab at step `at`, as two comment lines: what it asks for, or that the lab is done. */
function nextStep(lab: string, steps: LabStep[], at: number, grade: string, notDone?: number): string[] {
    const project = path.resolve(__dirname, "..");
    // a step written but not done (a learner's): that one comes next, not the one after the files' step
    const from = notDone !== undefined && notDone <= at ? notDone - 1 : at;
    const next = nextStepOf(steps, from, { inFull: path.join(project, "docs", `${lab}-lab.md`), verify: grade });
    if (!next) return [`  # the ${lab} lab: every step is done (${steps.length}); grade it all with the verify line below`];
    return [
        from < at
            ? `  # the ${lab} lab's files are at step ${at}, but step ${next.step} is not done: first, step ${next.step} ${next.name}: ${next.ask}`
            : `  # the ${lab} lab is at step ${at}; next, step ${next.step} ${next.name}: ${next.ask}`,
        `  # each step in full: ${next.inFull}; the repository's files: ${path.join(project, "gitrepo", lab)}/`,
        `  # when step ${next.step} is done: ${next.verify} (once a step is done, it names the next one's ask)`,
    ];
}

/**
 * The learner's own clone of a served repository: made, or, when a run before made it (a served lab
 * started again, its git daemon perhaps on another port), pointed at where the repository is served now.
 */
function cloneLine(url: string, dir: string, bareRepo: string): string[] {
    const git = (args: string[]) => spawnSync("git", args, { encoding: "utf8", ...GIT_OPTS() });
    // the learner's git rewriting git:// (url.<base>.insteadOf, to https:// most often): the served address kept, in the
    // clone's own configuration too (the longest insteadOf wins), so that its fetches reach the served daemon
    const rewritten = git(["ls-remote", "--get-url", url]).stdout.trim();
    const keep = rewritten && rewritten !== url ? `url.${url}.insteadOf=${url}` : undefined;
    const said = keep
        ? [`  # your git configuration rewrites ${url} to ${rewritten} (url.<base>.insteadOf): the clone keeps the served address`]
        : [];
    // -b main: a repository made by hand may have its HEAD on master (git init without --initial-branch)
    const clone = [...said, `  git clone -b main${keep ? ` --config ${keep}` : ""} ${url} ${shellWord(dir)}`];
    if (!fs.existsSync(path.join(dir, ".git"))) return clone;
    // a clone a reset kept (its work not pushed) of the repository before it: its history is not this one's
    const theirs = git(["-C", dir, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/main^{commit}"]).stdout.trim();
    if (theirs && git(["--git-dir", bareRepo, "cat-file", "-e", `${theirs}^{commit}`]).status !== 0)
        return [
            `  # ${dir} is a clone of this lab before a reset (its origin/main is not in the repository now): keep it aside, then clone again`,
            `  mv -T ${shellWord(dir)} ${shellWord(`${dir}.before-reset`)}`,
            ...clone,
        ];
    return [
        ...said,
        `  git -C ${shellWord(dir)} remote set-url origin ${url}`,
        ...(keep ? [`  git -C ${shellWord(dir)} config ${keep.replace("=", " ")}`] : []),
    ];
}

/** Whether the repository's main sets `release` in every tenant's file (read with git, as the grader reads it). */
function mainSetsEveryTenant(bareRepo: string, release: string): boolean {
    return TENANTS.every((t) => {
        const text = spawnSync("git", ["--git-dir", bareRepo, "show", `main:${tenantPath(t)}`], { encoding: "utf8", ...GIT_OPTS() });
        return text.status === 0 && String(parse(text.stdout)?.release ?? "") === release;
    });
}

/** The push from the lab's clone; where that clone is not (step 1 cloned elsewhere by hand), the clone that makes it first. */
function pushLine(clone: string, bareRepo: string): string[] {
    const push = `  git -C ${shellWord(clone)} push origin main`;
    // the git daemon serves to read: a push from its clone is refused ("access denied or repository not exported")
    const readOnly = `  # that clone reads; commits go in the lab's clone, and are pushed from there:`;
    if (fs.existsSync(path.join(clone, ".git"))) return [readOnly, push];
    return [
        readOnly,
        `  # the lab's clone ${clone} is not there (cloned elsewhere?): the lab's steps name it`,
        `  git clone -b main ${shellWord(bareRepo)} ${shellWord(clone)}`,
        push,
    ];
}

/**
 * How to use a served lab at the step it stands at: the kubeconfig, and for each lab its next step
 * (what it asks for and its paths), the commands that work at that state (the clone once the
 * repository exists, the push, the refresh that makes Argo CD look now and how long its own poll
 * would take), how to check the next step and how to grade the lab. Every line is a command or a
 * `#` comment, so the block runs as printed in a shell from any folder (a test runs it). The clones
 * go under DIR/clones/, which --reset removes with the rest.
 */
export function serveInstructions(
    lab: { root: string; url(repo: string): string },
    kubeconfigFile: string,
    labs: { shop?: number; tenants?: number },
    /** The first step of each lab written but not done (a learner's): the next step the block names. */
    notDone: { shop?: number; tenants?: number } = {},
): string[] {
    const lines = [
        "",
        "SERVING the simulated lab until Ctrl-C (or SIGTERM):",
        `  export KUBECONFIG=${shellWord(kubeconfigFile)}`,
        "  kubectl get applications -n argocd",
    ];
    const through = (n: number, all: number) => (n === all ? "" : ` --through ${n}`);
    if (labs.shop !== undefined) {
        const l = shopLayout(lab.root);
        const grade = `${GITOPS_LAB} verify --root ${shellWord(lab.root)} --kubeconfig ${shellWord(kubeconfigFile)}`;
        lines.push(...nextStep("shop", shopSteps(l), labs.shop, grade, notDone.shop));
        lines.push(`  # Argo CD reads ${l.bareRepo} as ${REPO_URL}; the lab's clone is ${l.clone}; its result files go in ${l.workDir}`);
        if (labs.shop >= 1) {
            lines.push(...cloneLine(lab.url(path.basename(l.bareRepo)), servedCloneDir(lab.root, "shop-envs"), l.bareRepo));
            lines.push(...pushLine(l.clone, l.bareRepo));
        }
        if (labs.shop >= 2) lines.push(`  ${REFRESH.shop.command}`, `  # ${REFRESH.shop.without}`);
        lines.push(`  ${grade}${through(labs.shop, 8)}`);
    }
    if (labs.tenants !== undefined) {
        const l = tenantsLayout(lab.root);
        const grade = `${GITOPS_LAB} verify --lab tenants --root ${shellWord(lab.root)} --kubeconfig ${shellWord(kubeconfigFile)}`;
        lines.push(...nextStep("tenants", tenantsSteps(l), labs.tenants, grade, notDone.tenants));
        // at step 1 with step 2's push made already (by hand, or by a solver stopped after it): what is left of step 2
        if (labs.tenants === 1 && mainSetsEveryTenant(l.bareRepo, RELEASES.faulty))
            lines.push(
                `  # step 2's push is made already (main sets ${RELEASES.faulty} for every tenant): what is left of it is stall.json, once the rollout is stuck`,
            );
        lines.push(
            `  # Argo CD reads ${l.bareRepo} as ${PLATFORM_REPO_URL}; the lab's clone is ${l.clone}; its result files go in ${l.workDir}`,
        );
        lines.push(...cloneLine(lab.url(path.basename(l.bareRepo)), servedCloneDir(lab.root, "platform"), l.bareRepo));
        lines.push(...pushLine(l.clone, l.bareRepo));
        lines.push(`  ${REFRESH.tenants.command}`, `  # ${REFRESH.tenants.without}`);
        lines.push(`  kubectl get pods -n mandant-b`);
        lines.push(`  ${grade}${through(labs.tenants, 3)}`);
    }
    return lines;
}

/** How to grade what a run that ends left (its cluster gone with it: offline), one command a lab, from any folder. */
export function gradingLines(root: string, labs: { shop?: number; tenants?: number }): string[] {
    const lines: string[] = [];
    if (labs.shop !== undefined)
        lines.push(`grade it: ${GITOPS_LAB} verify --root ${shellWord(root)} --offline${labs.shop === 8 ? "" : ` --through ${labs.shop}`}`);
    if (labs.tenants !== undefined)
        lines.push(
            `grade it: ${GITOPS_LAB} verify --lab tenants --root ${shellWord(root)} --offline${labs.tenants === 3 ? "" : ` --through ${labs.tenants}`}`,
        );
    return lines;
}
