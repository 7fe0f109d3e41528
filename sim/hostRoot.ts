/**
 * Where a simulated lab may not go: a host's own lab location, a folder another lab's files hold, or a folder inside
 * another simulated lab. Read by simulate before anything starts, and by preflight for a stack's root.
 */
import * as fs from "fs";
import { distance } from "fastest-levenshtein";
import * as path from "path";
import { madeRecordFile } from "../lab/kit/layout";
import { shopLayout } from "../lab/shop/layout";
import { tenantsLayout } from "../lab/tenants/layout";
import { clusterStateFile } from "./servedFiles";

/** The simulated lab a folder is inside of (its results folder, its srv/), or undefined. */
export function simulatedLabAbove(root: string): string | undefined {
    return path
        .dirname(root)
        .split(path.sep)
        .map((_, i, parts) => parts.slice(0, parts.length - i).join(path.sep) || path.sep)
        .find((d) => fs.existsSync(clusterStateFile(d)));
}

/** A folder beside a root that is not there, named a letter or two otherwise (root2 for rot2), that holds a lab. */
export function labBeside(root: string, hasLab: (dir: string) => boolean): string | undefined {
    const parent = path.dirname(root);
    if (!fs.existsSync(parent)) return undefined;
    const name = fs.readdirSync(parent).find((d) => distance(d, path.basename(root)) <= 2 && hasLab(path.join(parent, d)));
    return name === undefined ? undefined : path.join(parent, name);
}

/** The kit's own folder (this file's project): where its sources are. */
const KIT_DIR = path.resolve(__dirname, "..");
/** The kit's own top-level folders (test/architecture.test.ts holds it to the tree's), the installed packages too. */
export const KIT_FOLDERS = [
    ".ci",
    ".git",
    "bin",
    "cli",
    "components",
    "docs",
    "gitrepo",
    "lab",
    "lint",
    "loader",
    "node_modules",
    "program",
    "realnode",
    "realplane",
    "sim",
    "test",
];

/**
 * A root that is the kit's folder, or inside one of its own folders (lab/, docs/, node_modules/: `--root lab` run from
 * the kit's folder), would put the lab's srv/, root/ and saved cluster among the kit's files: the one line refusing it.
 * A folder of the user's beside them (--root mylab) is theirs.
 */
function kitFolderOf(root: string): string | undefined {
    const where = kitPlaceOf(root);
    return (
        where &&
        `--root ${root} is ${where}: the lab's srv/, root/ and saved cluster would go among the kit's files; give a folder of its own, such as --root /tmp/lab`
    );
}

/** Where a root is in the kit ("the kit's own folder (DIR)", "inside the kit's own lab/ folder (DIR)"), or undefined. */
export function kitPlaceOf(root: string): string | undefined {
    const real = (p: string) => (fs.existsSync(p) ? fs.realpathSync(p) : path.resolve(p));
    const rel = path.relative(real(KIT_DIR), real(root));
    if (rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
    const first = rel.split(path.sep)[0];
    if (first && !KIT_FOLDERS.includes(first)) return undefined;
    return `${first ? `inside the kit's own ${first}/ folder` : "the kit's own folder"} (${KIT_DIR})`;
}

/**
 * A root that is a host's own lab location is no simulation's: `/` (the lab host's /srv/bare and
 * /root/cnpa-env), or one whose lab folders hold something while nothing says a simulation ran there
 * (no saved cluster, no record of what a run made). The one line that refuses it, naming what is there.
 */
export function hostRootProblem(root: string, opts: { reset?: boolean } = {}): string | undefined {
    const shop = shopLayout(root);
    const tenants = tenantsLayout(root);
    if (shop.root === "/")
        return `--root / is this host's own lab location (${shop.bareDir}, ${shop.workDir}): a simulated lab goes under a folder of its own, such as --root /tmp/lab`;
    if (fs.existsSync(clusterStateFile(root)) || fs.existsSync(madeRecordFile(root))) return undefined;
    // a root inside another simulated lab (its results folder, its srv/): a second lab would be built among the first's files
    const outer = simulatedLabAbove(root);
    if (outer)
        return opts.reset
            ? `--root ${root} is inside the simulated lab under ${outer}, which is reset as a whole: gitops-lab simulate --root ${outer} --reset`
            : `--root ${root} is inside the simulated lab under ${outer}: a lab is not built inside another; to go on with that one, give --root ${outer}, or give a folder outside it`;
    const kit = kitFolderOf(root);
    if (kit && !opts.reset) return kit;
    // a lab's own folder given as the root (root/cnpa-env, the results folder the lab's docs name): the lab would go a
    // second time under it (…/root/cnpa-env/root/cnpa-env)
    const labPath = [
        ["root", "cnpa-env"],
        ["root", "tenants-lab"],
        ["srv", "bare"],
    ].find((p) => shop.root.endsWith(path.join("/", ...p)));
    if (labPath && !opts.reset)
        return `--root ${root} ends with ${path.join(...labPath)}, a folder the lab makes under its root, so the lab would go under ${path.join(shop.root, ...labPath)}: --root names the folder above the lab's paths (such as --root ${path.dirname(path.dirname(shop.root))}, or a new folder)`;
    // a folder of labs given for one of them (its name left out): a new lab would be built beside them, at their parent
    const below =
        fs.existsSync(root) && fs.statSync(root).isDirectory()
            ? fs.readdirSync(root).filter((d) => fs.existsSync(clusterStateFile(path.join(root, d))))
            : [];
    if (below.length && !opts.reset)
        return `--root ${root} holds no lab itself, but ${below.length === 1 ? "a lab is" : "labs are"} under it (${below
            .slice(0, 3)
            .map((d) => path.join(root, d))
            .join(", ")}${below.length > 3 ? ", ..." : ""}): to go on with one, give it as --root; for a new lab, give a new folder`;
    const held = [shop.bareDir, shop.workDir, tenants.workDir].flatMap((d) => {
        const entries = fs.existsSync(d) && fs.statSync(d).isDirectory() ? fs.readdirSync(d) : [];
        return entries.length ? [`${d} holds ${entries.slice(0, 3).join(", ")}${entries.length > 3 ? ", ..." : ""}`] : [];
    });
    if (!held.length) return undefined;
    // a reset of it: nothing there is a simulation's to take down, and what is there is not to be moved for one
    return opts.reset
        ? `--root ${shop.root} holds no simulated lab (${held.join("; ")}, which no simulation made), so nothing was reset and nothing removed: give the --root you ran gitops-lab simulate with`
        : `--root ${shop.root} is not a simulated lab's: ${held.join("; ")}, which no simulation made; give a new folder with --root, or move those away`;
}
