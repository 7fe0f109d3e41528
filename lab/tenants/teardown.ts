/**
 * Taking the tenants lab down, in the order `pulumi destroy` takes its resources down: the result
 * files, the ApplicationSet with its Applications (waiting for Argo CD's finalizer) and the tenants'
 * namespaces (with their data), then the platform repository and its clone. Argo CD itself goes
 * only after all of this.
 */
import * as path from "path";
import { ClusterPort } from "../ports/cluster";
import { DeleteOptions } from "../argo/teardown";
import { deleteTenantsAppSet } from "./appset";
import { TenantsLayout } from "./layout";
import { deletePlatformRepo } from "./repo";
import { TENANTS_RESULT_FILES } from "./results";
import { removeResultFiles } from "../kit/results";

export type Log = (line: string) => void;

export function removeTenantsResults(layout: TenantsLayout, log: Log = () => {}): void {
    removeResultFiles(
        TENANTS_RESULT_FILES.flatMap((k) => [layout.resultFile(k), path.join(layout.workDir, `.${k}-pushed.json`)]),
        log,
    );
    log(`removed the result files from ${layout.workDir}`);
}

export async function teardownTenantsLab(
    layout: TenantsLayout,
    cluster: ClusterPort,
    log: Log = () => {},
    opts: DeleteOptions = {},
): Promise<void> {
    removeTenantsResults(layout, (l) => log(`[tenants scenario] ${l}`));
    await deleteTenantsAppSet(cluster, layout, (l) => log(`[tenants appset] ${l}`), opts);
    await deletePlatformRepo(layout, (l) => log(`[platform-repo] ${l}`));
}
