/**
 * Where the lab lives on a host. Every path of the shop lab (docs/shop-lab.md) hangs off one `root` prefix:
 * `/` on a real lab host, a temporary directory in tests and in `npm run simulate`.
 */
import * as path from "path";
import type { ResultName } from "./results";

/** The in-cluster URL Argo CD reads the repository from (the git daemon Pod's Service). */
export const REPO_URL = "git://gitd.gitsrv.svc.cluster.local:9418/shop-envs.git";
export const REPO_NAME = "shop-envs.git";
export const APPSET_NAME = "shop";

export interface LabLayout {
    /** The prefix everything below hangs off (`/` on a real host). */
    root: string;
    /** Directory the git daemon serves: `<root>/srv/bare`. */
    bareDir: string;
    /** The bare repository: `<root>/srv/bare/shop-envs.git`. */
    bareRepo: string;
    /** The lab's working directory: `<root>/root/cnpa-env`. */
    workDir: string;
    /** The working clone: `<root>/root/cnpa-env/repo`. */
    clone: string;
    /** The ApplicationSet manifest as applied: `<root>/root/cnpa-env/appset.yaml`. */
    appsetFile: string;
    /** A result file, e.g. `resultFile("incident")` = `<root>/root/cnpa-env/incident.json`. */
    resultFile(name: ResultName): string;
}

export function labLayout(root = "/"): LabLayout {
    if (!path.isAbsolute(root)) {
        throw new Error(`root must be an absolute path, got "${root}"; use "/" on a lab host or a temporary directory in tests`);
    }
    const r = path.resolve(root);
    const bareDir = path.join(r, "srv", "bare");
    const workDir = path.join(r, "root", "cnpa-env");
    return {
        root: r,
        bareDir,
        bareRepo: path.join(bareDir, REPO_NAME),
        workDir,
        clone: path.join(workDir, "repo"),
        appsetFile: path.join(workDir, "appset.yaml"),
        resultFile: (name) => path.join(workDir, `${name}.json`),
    };
}
