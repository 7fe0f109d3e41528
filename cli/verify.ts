/**
 * gitops-lab verify [--lab shop|tenants] [--root DIR] [--through N] [--offline] [--json] [--kubeconfig FILE] [--stack-outputs FILE]
 *
 * Re-checks a lab from the world: the shop lab's six files under ROOT/root/cnpa-env/ and
 * ROOT/srv/bare/shop-envs.git, or the tenants lab's two under ROOT/root/tenants-lab/ and
 * ROOT/srv/bare/platform.git, and (unless --offline) the cluster.
 */
import * as fs from "fs";
import * as path from "path";
import { CheckResult, formatTable } from "../lab/grader/grader";
import { KubeCluster } from "../lab/ports/cluster";
import { verify as verifyShop } from "../lab/shop/checks";
import { labLayout } from "../lab/shop/layout";
import { verifyTenants } from "../lab/tenants/checks";
import { tenantsLayout } from "../lab/tenants/layout";
import { checkRoot, Command, EXIT, intOption, stringOption, UsageError } from "./command";
import { findKubeconfig } from "./kubeconfig";

export const verify: Command = {
    name: "verify",
    summary: "grade the lab: every check re-derived from the files, the repository and the cluster",
    usage: "verify [--lab shop|tenants] [--root DIR] [--through N] [--offline] [--json] [--kubeconfig FILE] [--stack-outputs FILE]",
    details: [
        "--lab LAB            shop (Part 1, the default) or tenants (Part 2)",
        "--root DIR           the prefix of the lab's host paths (default /)",
        "--through N          grade steps up to N (shop 0-8, default 8, as solveThrough; tenants 1-3, default 3, as tenantsSolveThrough)",
        "--offline            files and repository only, no cluster",
        "--json               the checks as one JSON object",
        "--kubeconfig FILE    the cluster (default: $KUBECONFIG, /etc/rancher/k3s/k3s.yaml, ~/.kube/config)",
        "--stack-outputs FILE also compare `pulumi stack output --json` with the files",
    ],
    options: { lab: { type: "string" }, root: { type: "string" }, through: { type: "string" }, offline: { type: "boolean" }, json: { type: "boolean" }, kubeconfig: { type: "string" }, "stack-outputs": { type: "string" } },
    async run(values) {
        const which = stringOption(values, "lab") ?? "shop";
        if (which !== "shop" && which !== "tenants") throw new UsageError(`--lab takes shop or tenants, got "${which}"`);
        const root = checkRoot(stringOption(values, "root") ?? "/");
        const layout = which === "shop" ? labLayout(root) : tenantsLayout(root);
        const through = which === "shop" ? intOption(values, "through", { min: 0, max: 8, default: 8 }) : intOption(values, "through", { min: 1, max: 3, default: 3 });
        const extra: CheckResult[] = [];
        let cluster: KubeCluster | undefined;
        if (!values.offline) {
            try {
                cluster = new KubeCluster(findKubeconfig(stringOption(values, "kubeconfig")).text);
            } catch (e: any) {
                // the first step whose checks read the cluster: the shop lab's ApplicationSet (2), the tenants lab's first rollout (1)
                extra.push({ step: which === "shop" ? 2 : 1, check: "the cluster answers", ok: false, expected: "a kubeconfig (or --offline to grade the files and repository only)", found: e.message });
            }
        }
        let stackOutputs: Record<string, unknown> | undefined;
        const outputsFile = stringOption(values, "stack-outputs");
        if (outputsFile) {
            try {
                stackOutputs = JSON.parse(fs.readFileSync(outputsFile, "utf8"));
            } catch (e: any) {
                extra.push({ step: 3, check: "the stack outputs can be read", ok: false, expected: `pulumi stack output --json in ${outputsFile}`, found: e.message });
            }
        }
        const checks = which === "shop" ? await verifyShop({ layout: labLayout(root), through, cluster, stackOutputs }) : await verifyTenants({ layout: tenantsLayout(root), through, cluster, stackOutputs });
        const results = [...extra, ...checks];
        const ok = results.every((r) => r.ok);
        if (values.json) {
            console.log(JSON.stringify({ ok, lab: which, root: layout.root, through, live: !!cluster, checks: results }, null, 2));
        } else {
            const what = cluster ? "files, repository and cluster" : values.offline ? "files and repository only (offline)" : "files and repository; the cluster could not be read (see its check)";
            console.log(`verify: the ${which} lab under ${layout.root} through step ${through}, ${what}`);
            console.log(formatTable(results));
        }
        return ok ? EXIT.OK : EXIT.FINDING;
    },
};
