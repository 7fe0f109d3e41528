/** Phase: the link to the host, a veth pair: the only addresses the host learns of the node. */
import { run } from "../../lab/ports/exec";
import { NODE } from "../config";
import { NodeContext } from "./context";

export async function link(ctx: NodeContext): Promise<void> {
    ctx.record({ hostVeth: NODE.hostVeth });
    await run("ip", ["link", "add", NODE.hostVeth, "type", "veth", "peer", "name", NODE.nodeVeth, "netns", String(ctx.holderPid)]);
    await run("ip", ["addr", "add", `${NODE.hostIp}/${NODE.linkPrefix}`, "dev", NODE.hostVeth]);
    await run("ip", ["link", "set", NODE.hostVeth, "up"]);
    await ctx.nodeRun("ip", ["addr", "add", `${NODE.nodeIp}/${NODE.linkPrefix}`, "dev", NODE.nodeVeth]);
    await ctx.nodeRun("ip", ["link", "set", NODE.nodeVeth, "up"]);
}
