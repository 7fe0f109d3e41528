/** The shop repository's first commit: the real files kept in gitrepo/. */
import * as fs from "fs";
import * as path from "path";

export const REPO_FILES = ["base/configmap.yaml", "base/kustomization.yaml", "envs/dev/kustomization.yaml", "envs/prod/kustomization.yaml"];

export function readRepoFiles(dir = path.join(__dirname, "gitrepo")): Record<string, string> {
    return Object.fromEntries(REPO_FILES.map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
}
