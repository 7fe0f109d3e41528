/** Phase: the node's folder under the root (only one this program made is emptied) and the host checks before any change. */
import * as fs from "fs";
import * as path from "path";
import { run } from "../../lab/ports/exec";
import { MARKER, NODE } from "../config";
import { hostLinkExists } from "../ledger";
import { NodeContext } from "./context";

export async function folders(ctx: NodeContext): Promise<void> {
    const p = ctx.p;
    if (fs.existsSync(p.dir)) {
        if (!fs.existsSync(path.join(p.dir, MARKER)))
            throw new Error(`${p.dir} exists and is not a real node's folder; choose another --root, or remove it yourself`);
        fs.rmSync(p.dir, { recursive: true, force: true });
    }
    for (const d of [p.logs, p.pki, p.kubeconfigs, p.config, path.join(p.dir, "cni", "net.d")]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(p.dir, MARKER), "the state of a real node of gitops-lab: removed at its next start\n");

    const overlap = await overlappingRoutes();
    if (overlap.length)
        throw new Error(
            `the host already routes ${overlap.join(", ")}, which overlaps the node's link ${NODE.hostIp}/${NODE.linkPrefix}; nothing was changed`,
        );
    if (hostLinkExists(NODE.hostVeth))
        throw new Error(`the host already has an interface ${NODE.hostVeth}, which the node would create; nothing was changed`);
}

/** The host's routes that overlap the node's link (the only addresses the host learns of the node). */
export async function overlappingRoutes(): Promise<string[]> {
    const routes: { dst: string; dev?: string }[] = JSON.parse((await run("ip", ["-j", "route", "show", "table", "all"])).stdout || "[]");
    const toInt = (ip: string) => ip.split(".").reduce((a, o) => a * 256 + Number(o), 0);
    const net = (cidr: string) => {
        const [ip, bits] = cidr.split("/");
        const size = 2 ** (32 - Number(bits ?? 32));
        const start = Math.floor(toInt(ip) / size) * size;
        return [start, start + size - 1];
    };
    const [a0, a1] = net(`${NODE.hostIp}/${NODE.linkPrefix}`);
    return routes
        .filter((r) => /^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(r.dst) && r.dev !== NODE.hostVeth)
        .filter((r) => {
            const [b0, b1] = net(r.dst);
            return a0 <= b1 && b0 <= a1;
        })
        .map((r) => `${r.dst}${r.dev ? ` dev ${r.dev}` : ""}`);
}
