/**
 * A lab under a root that no run can serve or build on as asked, refused in one line before anything
 * starts: its repository removed by hand while its steps stand on it, or step 1 made by hand while the
 * solver is asked for the steps after it (it builds only on a repository it made).
 */
import * as fs from "fs";
import * as path from "path";
import { BareRepo } from "../lab/grader/bareRepo";
import { isOurBareRepo } from "../lab/platform/labRepo";
import { shopLayout } from "../lab/shop/layout";
import { OWNER_VALUE } from "../lab/shop/repo";
import { tenantsLayout } from "../lab/tenants/layout";
import { shellWord } from "../lab/ports/shellWord";
import { realHost } from "../lab/platform/preflight";
import { UsageError } from "./command";

export async function refuseUnbuildable(
    root: string,
    labs: { shop?: { through: number; done: number }; tenants?: { done: number } },
): Promise<void> {
    const shopRepo = shopLayout(root).bareRepo;
    const shop = labs.shop;
    if (
        shop &&
        shop.through > shop.done &&
        fs.existsSync(path.join(shopRepo, "HEAD")) &&
        !(await isOurBareRepo(shopRepo, OWNER_VALUE)) &&
        (await new BareRepo(shopRepo).branch("main")) !== null
    )
        throw new Error(
            `${shopRepo} was made by hand (step 1 is yours), and the solver builds its steps only on a repository it made: do steps ${shop.done + 1}-${shop.through} by hand on the served lab (gitops-lab simulate --root ${shellWord(root)} --through ${shop.done} --serve), or start over with --reset and let the solver make step 1 too`,
        );
    // a lab past its first step whose repository was removed by hand: nothing it stands on can be served or built
    for (const [done, repo] of [
        [shop?.done, shopRepo],
        [labs.tenants?.done, tenantsLayout(root).bareRepo],
    ] as const)
        if (done !== undefined && done >= 2 && !fs.existsSync(path.join(repo, "HEAD")))
            throw new Error(
                `${repo} is gone while the lab under ${root} is at step ${done}: its steps stand on it, so it is neither served nor built on; put that folder itself back (a copy of it, cp -a; a repository made again from the clone lacks the lab's mark and is refused as yours), or start over: gitops-lab simulate --root ${shellWord(root)} --reset (which keeps the lab's clone, the history's last copy: copy out what you need, git bundle create FILE --all, and move the clone away), then the lab again`,
            );
}

/** The simulated repo-server renders with kubectl kustomize, as step 1 does: no kubectl is said before anything is made. */
export async function refuseWithoutKubectl(): Promise<void> {
    if (await realHost.which("kubectl")) return;
    throw new UsageError(
        `the simulated Argo CD renders the labs' repositories with "kubectl kustomize", and kubectl is not on PATH (${process.env.PATH ?? ""}): install kubectl (https://kubernetes.io/docs/tasks/tools/), or put the folder that holds it on PATH, then run again`,
    );
}
