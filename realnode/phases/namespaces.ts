/** Phase: the holder of the node's namespaces, with its own /run, /var/lib and /var/log (realnode/holder.sh). */
import { spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { NODE } from "../config";
import { NodeContext } from "./context";

export async function namespaces(ctx: NodeContext): Promise<void> {
    const p = ctx.p;
    ctx.log("making the node's network and mount namespaces ...");
    const holder = spawn(
        "sh",
        [
            "-c",
            'echo $$ > "$1" && shift && exec "$@"',
            "sh",
            ctx.systemProcs,
            "unshare",
            "--mount",
            "--net",
            "--propagation",
            "private",
            "--",
            "setpriv",
            "--pdeathsig",
            "KILL",
            "--",
            "sh",
            path.join(__dirname, "..", "holder.sh"),
            p.logs,
            NODE.serviceCidr,
        ],
        { stdio: ["ignore", "pipe", fs.openSync(path.join(p.logs, "holder.log"), "a")] },
    );
    ctx.procs.push(holder);
    ctx.holderPid = holder.pid!;
    ctx.record({ holderPid: ctx.holderPid });
    await new Promise<void>((resolve, reject) => {
        let out = "";
        holder.stdout!.on("data", (d) => {
            out += d;
            if (out.includes("ready")) resolve();
        });
        holder.on("exit", (code) =>
            reject(new Error(`the node's namespaces could not be made (exit ${code}; see ${path.join(p.logs, "holder.log")})`)),
        );
    });
}
