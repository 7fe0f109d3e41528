/**
 * Where a lab lives on a host: every path hangs off one `root` prefix (`/` on a real lab host, a
 * temporary directory in tests and in `simulate`). A lab names its working folder and its bare
 * repository; the rest is the same for every lab: the git daemon's folder, the clone, the applied
 * ApplicationSet and the result files.
 */
import * as path from "path";
import type { RepoSite } from "../platform/labRepo";

export interface LabSite<N extends string> extends RepoSite {
    /** The prefix everything below hangs off (`/` on a real host). */
    root: string;
    /** The ApplicationSet manifest as applied: `<workDir>/appset.yaml`. */
    appsetFile: string;
    /** A result file: `<workDir>/<name>.json`. */
    resultFile(name: N): string;
}

export interface SiteOptions {
    /** The lab's working folder under `<root>/root` ("cnpa-env", "tenants-lab"). */
    workDir: string;
    /** The bare repository's name under `<root>/srv/bare` ("shop-envs.git"). */
    repoName: string;
}

export function labSite<N extends string>(root: string, o: SiteOptions): LabSite<N> {
    if (!path.isAbsolute(root)) {
        throw new Error(`root must be an absolute path, got "${root}"; use "/" on a lab host or a temporary directory in tests`);
    }
    const r = path.resolve(root);
    const bareDir = path.join(r, "srv", "bare");
    const workDir = path.join(r, "root", o.workDir);
    return {
        root: r,
        bareDir,
        bareRepo: path.join(bareDir, o.repoName),
        workDir,
        clone: path.join(workDir, "repo"),
        appsetFile: path.join(workDir, "appset.yaml"),
        resultFile: (name) => path.join(workDir, `${name}.json`),
    };
}
