/**
 * npm run verify -- [--root DIR] [--through N] [--offline] [--json] [--kubeconfig FILE] [--stack-outputs FILE]
 *
 * Re-checks the lab from the world: the six files under ROOT/root/cnpa-env/, the bare repository
 * ROOT/srv/bare/shop-envs.git and (unless --offline) the cluster. Exit 0 when every check passes,
 * 1 when one fails, 2 when it cannot run at all (bad arguments).
 */
import * as fs from "fs";
import * as path from "path";
import { KubeCluster } from "../lab/ports/cluster";
import { findKubeconfig } from "./kubeconfig";
import { labLayout } from "../lab/shop/layout";
import { CheckResult, formatTable } from "../lab/grader/grader";
import { verify } from "../lab/shop/checks";

const USAGE = "usage: npm run verify -- [--root DIR] [--through N] [--offline] [--json] [--kubeconfig FILE] [--stack-outputs FILE]";

function parseArgs(argv: string[]) {
    const o = { root: "/", through: 8, offline: false, json: false, kubeconfig: undefined as string | undefined, stackOutputs: undefined as string | undefined };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const value = () => {
            const v = argv[++i];
            if (v === undefined) throw new Error(`${a} needs a value\n${USAGE}`);
            return v;
        };
        if (a === "--root") o.root = path.resolve(value());
        else if (a === "--through") {
            const v = value();
            if (!/^[1-8]$/.test(v)) throw new Error(`--through takes a step number from 1 to 8, got "${v}"`);
            o.through = Number(v);
        } else if (a === "--offline") o.offline = true;
        else if (a === "--json") o.json = true;
        else if (a === "--kubeconfig") o.kubeconfig = value();
        else if (a === "--stack-outputs") o.stackOutputs = value();
        else throw new Error(`unknown argument "${a}"\n${USAGE}`);
    }
    return o;
}

async function main(): Promise<number> {
    let args: ReturnType<typeof parseArgs>;
    try {
        args = parseArgs(process.argv.slice(2));
    } catch (e: any) {
        console.error(`verify: ${e.message}`);
        return 2;
    }
    const layout = labLayout(args.root);
    const extra: CheckResult[] = [];
    let cluster: KubeCluster | undefined;
    if (!args.offline) {
        try {
            cluster = new KubeCluster(findKubeconfig(args.kubeconfig).text);
        } catch (e: any) {
            extra.push({ step: 2, check: "the cluster answers", ok: false, expected: "a kubeconfig (or --offline)", found: e.message });
        }
    }
    let stackOutputs: Record<string, unknown> | undefined;
    if (args.stackOutputs) {
        try {
            stackOutputs = JSON.parse(fs.readFileSync(args.stackOutputs, "utf8"));
        } catch (e: any) {
            extra.push({ step: 3, check: "the stack outputs can be read", ok: false, expected: `pulumi stack output --json in ${args.stackOutputs}`, found: e.message });
        }
    }
    const results = [...extra, ...(await verify({ layout, through: args.through, cluster, stackOutputs }))];
    const ok = results.every((r) => r.ok);
    if (args.json) {
        console.log(JSON.stringify({ ok, root: layout.root, through: args.through, live: !!cluster, checks: results }, null, 2));
    } else {
        console.log(`verify: ${layout.root} through step ${args.through}, ${cluster ? "files, repository and cluster" : "files and repository only (offline)"}`);
        console.log(formatTable(results));
    }
    return ok ? 0 : 1;
}

main().then(
    (code) => process.exit(code),
    (e) => {
        console.error(`verify: ${e?.message ?? e}`);
        process.exit(2);
    },
);
