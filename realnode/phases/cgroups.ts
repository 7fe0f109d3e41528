/** Phase: the node's cgroup in every cgroup v1 hierarchy (and its `system` child for the daemons), recorded first. */
import * as fs from "fs";
import * as path from "path";
import { NODE } from "../config";
import { cgroupHierarchies } from "../ledger";
import { NodeContext } from "./context";

export async function cgroups(ctx: NodeContext): Promise<void> {
    ctx.record({ cgroup: NODE.name });
    for (const h of cgroupHierarchies()) {
        for (const sub of ["", "system"]) {
            const dir = path.join(h, NODE.name, sub);
            fs.mkdirSync(dir, { recursive: true });
            // a new cpuset cgroup starts with no CPUs and no memory nodes: its parent's
            if (path.basename(h) === "cpuset")
                for (const f of ["cpuset.cpus", "cpuset.mems"])
                    fs.writeFileSync(path.join(dir, f), fs.readFileSync(path.join(path.dirname(dir), f), "utf8").trim());
        }
    }
}
