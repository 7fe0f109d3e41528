/** Phase: the node's registry, then the images it lacks (pushed by crane under their upstream names). */
import * as fs from "fs";
import * as path from "path";
import { pollUntil } from "../../lab/ports/wait";
import { nodeBinPath } from "../build";
import { NODE, registryConfig, registryStorage } from "../config";
import { pushImage } from "../images";
import { NodeContext } from "./context";

/** The registry's address, reached from the host. */
export const REGISTRY = `${NODE.nodeIp}:${NODE.registryPort}`;

export async function registry(ctx: NodeContext): Promise<void> {
    fs.mkdirSync(registryStorage(), { recursive: true });
    fs.writeFileSync(path.join(ctx.p.config, "registry.yml"), registryConfig());
    const reg = ctx.daemon("registry", "docker-registry", ["serve", path.join(ctx.p.config, "registry.yml")]);
    await pollUntil(
        async () => {
            ctx.alive("registry", reg);
            return (
                (await fetch(`http://${REGISTRY}/v2/`)
                    .then((r) => r.ok)
                    .catch(() => false)) || undefined
            );
        },
        {
            timeoutMs: 30_000,
            intervalMs: 200,
            describe: () => `the node's registry did not answer at http://${REGISTRY}/v2/ within 30 s`,
        },
    );
    for (const r of ctx.recipes) await pushImage(nodeBinPath("crane"), REGISTRY, r, ctx.log);
    ctx.log(`registry up with the ${ctx.recipes.length} images after ${ctx.since()}`);
}
