/**
 * gitops-lab verify [--root DIR] [--through N] [--offline] [--json] [--kubeconfig FILE] [--stack-outputs FILE]
 *
 * Re-checks the lab from the world: the six files under ROOT/root/cnpa-env/, the bare repository
 * ROOT/srv/bare/shop-envs.git and (unless --offline) the cluster.
 */
import * as fs from "fs";
import * as path from "path";
import { CheckResult, formatTable } from "../lab/grader/grader";
import { KubeCluster } from "../lab/ports/cluster";
import { verify as verifyShop } from "../lab/shop/checks";
import { labLayout } from "../lab/shop/layout";
import { Command, EXIT, intOption, stringOption } from "./command";
import { findKubeconfig } from "./kubeconfig";

export const verify: Command = {
    name: "verify",
    summary: "grade the lab: every check re-derived from the files, the repository and the cluster",
    usage: "verify [--root DIR] [--through N] [--offline] [--json] [--kubeconfig FILE] [--stack-outputs FILE]",
    details: [
        "--root DIR           the prefix of the lab's host paths (default /)",
        "--through N          grade steps up to N (0-8, default 8; matches solveThrough)",
        "--offline            files and repository only, no cluster",
        "--json               the checks as one JSON object",
        "--kubeconfig FILE    the cluster (default: $KUBECONFIG, /etc/rancher/k3s/k3s.yaml, ~/.kube/config)",
        "--stack-outputs FILE also compare `pulumi stack output --json` with the files",
    ],
    options: { root: { type: "string" }, through: { type: "string" }, offline: { type: "boolean" }, json: { type: "boolean" }, kubeconfig: { type: "string" }, "stack-outputs": { type: "string" } },
    async run(values) {
        const layout = labLayout(path.resolve(stringOption(values, "root") ?? "/"));
        const through = intOption(values, "through", { min: 0, max: 8, default: 8 });
        const extra: CheckResult[] = [];
        let cluster: KubeCluster | undefined;
        if (!values.offline) {
            try {
                cluster = new KubeCluster(findKubeconfig(stringOption(values, "kubeconfig")).text);
            } catch (e: any) {
                extra.push({ step: 2, check: "the cluster answers", ok: false, expected: "a kubeconfig (or --offline)", found: e.message });
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
        const results = [...extra, ...(await verifyShop({ layout, through, cluster, stackOutputs }))];
        const ok = results.every((r) => r.ok);
        if (values.json) {
            console.log(JSON.stringify({ ok, root: layout.root, through, live: !!cluster, checks: results }, null, 2));
        } else {
            console.log(`verify: ${layout.root} through step ${through}, ${cluster ? "files, repository and cluster" : "files and repository only (offline)"}`);
            console.log(formatTable(results));
        }
        return ok ? EXIT.OK : EXIT.FINDING;
    },
};
