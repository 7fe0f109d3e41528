/** Phase: CoreDNS, then the check that the cluster DNS answers through the Service address (kube-proxy's rules, CoreDNS, the API). */
import * as path from "path";
import { pollUntil } from "../../lab/ports/wait";
import { NODE } from "../config";
import { NodeContext } from "./context";

const MANIFESTS = path.join(__dirname, "..", "manifests");

export async function clusterDns(ctx: NodeContext): Promise<void> {
    await ctx.kubectl(["apply", "--server-side", "-f", path.join(MANIFESTS, "coredns.yaml")]);
    await pollUntil(
        async () => {
            ctx.alive("kube-proxy", ctx.daemons.get("kube-proxy")!);
            const dep = await ctx
                .kubectl(["get", "deployment", "coredns", "-n", "kube-system", "-o", "json"], 10_000)
                .then((r) => JSON.parse(r.stdout))
                .catch(() => undefined);
            return (dep?.status?.readyReplicas ?? 0) >= 1 || undefined;
        },
        {
            timeoutMs: 180_000,
            intervalMs: 500,
            describe: () => "CoreDNS was not Ready within 180 s (kubectl -n kube-system describe pods -l k8s-app=kube-dns)",
        },
    );
    await pollUntil(
        async () => {
            const got = await ctx
                .nodeRun(
                    process.execPath,
                    [
                        "-e",
                        `const r=new (require("dns").promises.Resolver)();r.setServers(["${NODE.dnsIp}"]);r.resolve4("kube-dns.kube-system.svc.${NODE.clusterDomain}").then(a=>console.log(a.join(",")),e=>{console.error(e.code);process.exit(1)})`,
                    ],
                    10_000,
                )
                .catch(() => undefined);
            return got?.stdout.trim() === NODE.dnsIp || undefined;
        },
        {
            timeoutMs: 60_000,
            intervalMs: 500,
            describe: () =>
                `the cluster DNS at ${NODE.dnsIp} did not answer for kube-dns.kube-system within 60 s (kube-proxy's log: ${ctx.logOf("kube-proxy")})`,
        },
    );
    ctx.log(`real node up after ${ctx.since()}: the cluster DNS answers at ${NODE.dnsIp}`);
}
