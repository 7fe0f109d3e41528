/** The shop repository's first commit: the real files kept in gitrepo/shop (a lab author edits them there and runs kustomize build on them). */
import * as fs from "fs";
import * as path from "path";

export const SHOP_REPO_DIR = path.join(__dirname, "..", "..", "gitrepo", "shop");

export const REPO_FILES = ["base/configmap.yaml", "base/kustomization.yaml", "envs/dev/kustomization.yaml", "envs/prod/kustomization.yaml"];

export function readRepoFiles(dir = SHOP_REPO_DIR): Record<string, string> {
    return Object.fromEntries(REPO_FILES.map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
}
