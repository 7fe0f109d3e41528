/**
 * Where a lab's files say it stands is not always where it grades: a learner's step can be written
 * and wrong. Before the solver builds on a lab, and when a served lab is started again as it stands,
 * the steps it holds are graded as `verify --offline` grades them (the files and the repository).
 */
import type { CheckResult } from "../lab/grader/grader";
import { verify } from "../lab/shop/checks";
import { shopLayout } from "../lab/shop/layout";
import { verifyTenants } from "../lab/tenants/checks";
import { tenantsLayout } from "../lab/tenants/layout";

/**
 * The learner's steps: those with a result file (the shop lab's from 3, the tenants lab's from 2). The
 * steps before are the lab's set-up, which a run interrupted during it does again on the next run.
 */
const FIRST_WRITTEN = { shop: 3, tenants: 2 } as const;

/** The first failing check of the learner's steps up to `done` (offline), or undefined when each grades done. */
export async function firstStepNotDone(root: string, lab: "shop" | "tenants", done: number): Promise<CheckResult | undefined> {
    if (done < FIRST_WRITTEN[lab]) return undefined;
    const rs =
        lab === "shop"
            ? await verify({ layout: shopLayout(root), through: done })
            : await verifyTenants({ layout: tenantsLayout(root), through: done });
    return rs.filter((r) => !r.ok && r.step >= FIRST_WRITTEN[lab] && r.step <= done).sort((a, b) => a.step - b.step)[0];
}

/** The line that says so: which step, its first failing check, and the command that says why (`rootWord`: the root as a shell word). */
export function notDoneLine(rootWord: string, lab: "shop" | "tenants", done: number, r: CheckResult): string {
    const labFlag = lab === "tenants" ? " --lab tenants" : "";
    return `the ${lab} lab's files are at step ${done}, but step ${r.step} does not grade done (${r.check}): gitops-lab verify${labFlag} --root ${rootWord} --step ${r.step} says why`;
}
