/**
 * What a served lab writes under its root besides the labs: the kubeconfig of its simulated API and
 * the folder its instructions clone the labs' repositories into. A reset removes them only as far as
 * they are the lab's: a kubeconfig of the learner's own, a file they put in the clones' folder, a
 * clone holding work the repository lacks, and a folder that was there before the lab stay, each said.
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { parse, stringify } from "yaml";
import { CLONES_DIR, keptNotMade, madeDirs, recordMade } from "../lab/kit/layout";
import { unpushedWork } from "../lab/platform/labRepo";
import { writeFileAtomic } from "../lab/ports/files";

export { CLONES_DIR };
/** Each lab's clone's name in CLONES_DIR. */
const LAB_CLONES = ["shop-envs", "platform"];

export const servedKubeconfig = (root: string) => path.join(root, "kubeconfig");
/** The simulated cluster's state under a root (simulate's resume reads it). */
export const clusterStateFile = (root: string) => path.join(root, "simulated-cluster.json");

/**
 * The root (as a real path) of the simulated lab whose served kubeconfig `file` is; undefined for any
 * other file. Compared as real paths: a symlinked folder (macOS's /tmp) or a relative path names the same file.
 */
export function servedLabOf(file: string): string | undefined {
    const real = fs.existsSync(file) ? fs.realpathSync(file) : path.resolve(file);
    const root = path.dirname(real);
    return real === servedKubeconfig(root) && fs.existsSync(clusterStateFile(root)) ? root : undefined;
}
export const servedFiles = (root: string) => [servedKubeconfig(root), path.join(root, CLONES_DIR)];

/**
 * Whether a kubeconfig is one a served lab wrote: its cluster its own (servedClusterName; "fake" in older ones), the
 * simulated API on loopback, whatever the
 * learner made of its contexts since (kubectl config rename-context, a namespace
 * set: kubectl writes the file again in its own layout).
 */
export function isServedKubeconfig(file: string): boolean {
    let k: { clusters?: unknown } | null;
    try {
        k = parse(fs.readFileSync(file, "utf8"));
    } catch {
        return false;
    }
    const named = (list: unknown) =>
        Array.isArray(list) ? list.find((e) => e?.name === "fake" || /^gitops-lab-sim-/.test(String(e?.name))) : undefined;
    const server = named(k?.clusters)?.cluster?.server;
    return typeof server === "string" && /^https?:\/\/127\.0\.0\.1:\d+$/.test(server);
}

/**
 * Why `file`, a copy of the served kubeconfig of the lab under `root` made in an earlier run (its cluster named as
 * this lab's, its server another than the one the lab wrote this run), does not reach the lab: each start writes a
 * new port and token. Undefined for any other file.
 */
export function staleServedCopy(file: string, root: string): string | undefined {
    const ours = servedKubeconfig(root);
    if (!fs.existsSync(file) || !fs.existsSync(ours) || path.resolve(file) === path.resolve(ours)) return undefined;
    if (!isServedKubeconfig(file) || !isServedKubeconfig(ours)) return undefined;
    const cluster = (f: string) => {
        const k = parse(fs.readFileSync(f, "utf8")) as { clusters?: { name?: string; cluster?: { server?: string } }[] };
        return k.clusters?.find((c) => /^gitops-lab-sim-/.test(String(c?.name)));
    };
    const copy = cluster(file);
    const now = cluster(ours);
    if (!copy || copy.name !== servedClusterName(root) || !now || copy.cluster?.server === now.cluster?.server) return undefined;
    return `${file} is a copy of this lab's served kubeconfig from an earlier run (its server ${copy.cluster?.server} is gone: each start of the served lab writes a new port and token): give --kubeconfig ${ours}, the one it writes, or copy it again`;
}

/** The one line refusing to serve over a kubeconfig that is not a served lab's; undefined when there is none or it is ours. */
export function foreignKubeconfig(root: string): string | undefined {
    const file = servedKubeconfig(root);
    if (!fs.existsSync(file) || (fs.statSync(file).isFile() && isServedKubeconfig(file))) return undefined;
    return `${file} is there and is not a served lab's kubeconfig (yours?): the served lab writes its own there; move it away, or give another --root`;
}

interface Named {
    name?: unknown;
    context?: { cluster?: unknown; user?: unknown; namespace?: unknown };
}
interface KubeconfigDoc {
    clusters?: Named[];
    users?: Named[];
    contexts?: Named[];
    "current-context"?: unknown;
}
const isLabName = (n: unknown) => n === "fake" || /^gitops-lab-sim-/.test(String(n));

/**
 * A served kubeconfig's entries that are not the lab's (another cluster's, user's, context's: kind and cloud tools add
 * theirs to $KUBECONFIG), by their names: what the learner put there, which is theirs.
 */
function othersIn(doc: KubeconfigDoc | null): { clusters: Named[]; users: Named[]; contexts: Named[] } {
    const not = (list: unknown) => (Array.isArray(list) ? (list as Named[]).filter((e) => !isLabName(e?.name)) : []);
    // a context of the lab's, renamed by the learner (kubectl config rename-context), is still the lab's
    const contexts = not(doc?.contexts).filter((c) => !isLabName(c?.context?.cluster));
    return { clusters: not(doc?.clusters), users: not(doc?.users), contexts };
}

/**
 * The served lab's kubeconfig for this run (its port and token are new), keeping the namespace the learner set in
 * the lab's context before (kubectl config set-context --current --namespace=...) and every entry of another cluster
 * they added to the file, which they would lose without a word. `others`: the names of those entries kept.
 */
export function servedKubeconfigText(root: string, fresh: string): { text: string; namespace?: string; others?: string[] } {
    const file = servedKubeconfig(root);
    let before: KubeconfigDoc | null = null;
    try {
        before = parse(fs.readFileSync(file, "utf8")) as KubeconfigDoc | null;
    } catch {
        before = null; // none there, or not YAML: nothing to keep
    }
    const labContext = before?.contexts?.find((c) => isLabName(c?.context?.cluster));
    const ns = labContext?.context?.namespace;
    const namespace = typeof ns === "string" && /^[a-z0-9-]+$/.test(ns) ? ns : undefined;
    const others = othersIn(before);
    const kept = [...others.clusters, ...others.users, ...others.contexts].map((e) => String(e.name));
    if (!namespace && !kept.length) return { text: fresh };
    const doc = parse(fresh) as Required<Pick<KubeconfigDoc, "clusters" | "users" | "contexts">> & KubeconfigDoc;
    if (namespace) doc.contexts[0].context = { ...doc.contexts[0].context, namespace };
    doc.clusters.push(...others.clusters);
    doc.users.push(...others.users);
    doc.contexts.push(...others.contexts);
    return {
        text: stringify(doc),
        ...(namespace ? { namespace } : {}),
        ...(kept.length ? { others: [...new Set(kept)] } : {}),
    };
}

/**
 * Why a served lab's kubeconfig does not reach the lab: its current context is another cluster's (kubectl config
 * use-context kind-dev), said with the command back to the lab's. Undefined when it is the lab's, or unreadable.
 */
export function currentContextElsewhere(file: string): string | undefined {
    let doc: KubeconfigDoc | null;
    try {
        doc = parse(fs.readFileSync(file, "utf8")) as KubeconfigDoc | null;
    } catch {
        return undefined;
    }
    const current = doc?.["current-context"];
    const lab = doc?.contexts?.find((c) => isLabName(c?.context?.cluster));
    if (!lab || doc?.contexts?.find((c) => c?.name === current)?.context?.cluster === lab.context?.cluster) return undefined;
    return `${file}'s current context is ${current ? String(current) : "none"}, not the served lab's ${String(lab.name)}: kubectl --kubeconfig ${file} config use-context ${String(lab.name)}`;
}

/**
 * The served kubeconfig with the lab's entries taken out, for a reset: the text left (another cluster's entries, the
 * learner's), or undefined when nothing else is in it.
 */
function withoutLabEntries(file: string): string | undefined {
    let doc: KubeconfigDoc | null;
    try {
        doc = parse(fs.readFileSync(file, "utf8")) as KubeconfigDoc | null;
    } catch {
        return undefined;
    }
    const others = othersIn(doc);
    if (!others.clusters.length && !others.users.length && !others.contexts.length) return undefined;
    const current = others.contexts.some((c) => c.name === doc?.["current-context"]) ? doc?.["current-context"] : undefined;
    return stringify({ ...doc, ...others, ...(current ? { "current-context": current } : { "current-context": "" }) });
}

/**
 * The name of a served lab's cluster, user and context in its kubeconfig: the root's folder and a hash of its path
 * (gitops-lab-sim-lab-3f2a), so that two labs' kubeconfigs merge (KUBECONFIG=a:b) into two contexts, not one.
 */
export function servedClusterName(root: string): string {
    const real = fs.existsSync(root) ? fs.realpathSync(root) : path.resolve(root);
    const base =
        path
            .basename(real)
            .toLowerCase()
            .replace(/[^a-z0-9-]+/g, "-")
            .replace(/^-+|-+$/g, "")
            .slice(0, 30) || "root";
    return `gitops-lab-sim-${base}-${createHash("sha256").update(real).digest("hex").slice(0, 4)}`;
}

/** Before the served lab writes them: which of its files and folders were not there (so a reset removes only those). */
export const recordServed = (root: string) => recordMade(root, servedFiles(root));

/** Removes what a served lab wrote under the root and is still the lab's; returns what it kept (`recordGone`: as keptNotMade). */
export async function removeServedFiles(root: string, log: (line: string) => void, recordGone?: string): Promise<string[]> {
    const kept: string[] = [];
    const made = new Set(madeDirs(root));
    const kubeconfig = servedKubeconfig(root);
    if (fs.existsSync(kubeconfig)) {
        const left = fs.statSync(kubeconfig).isFile() && isServedKubeconfig(kubeconfig) ? withoutLabEntries(kubeconfig) : undefined;
        if (left !== undefined) {
            // entries of the learner's own in it (another cluster's): those stay, the lab's go
            writeFileAtomic(kubeconfig, left, 0o600);
            kept.push(kubeconfig);
            log(`kept ${kubeconfig} with the entries you added to it (another cluster's); the served lab's are taken out of it`);
        } else if (fs.statSync(kubeconfig).isFile() && isServedKubeconfig(kubeconfig)) {
            fs.rmSync(kubeconfig, { force: true });
            log(`removed ${kubeconfig} (written for the served lab)`);
        } else {
            kept.push(kubeconfig);
            log(`kept ${kubeconfig}: it is not a served lab's kubeconfig`);
        }
    }
    const clones = path.join(root, CLONES_DIR);
    if (!fs.existsSync(clones) || !fs.statSync(clones).isDirectory()) return kept;
    const theirs: string[] = [];
    let removedClones = 0;
    for (const name of fs.readdirSync(clones)) {
        const clone = path.join(clones, name);
        // a lab's clone the instructions made: the learner's once it holds work its repository lacks
        const isClone = LAB_CLONES.includes(name) && fs.existsSync(path.join(clone, ".git"));
        // (its origin the served daemon, ended by now: the repository asked by its path)
        const work = isClone ? await unpushedWork(clone, path.join(root, "srv", "bare", `${name}.git`)) : [];
        if (isClone && !work.length) {
            fs.rmSync(clone, { recursive: true, force: true });
            removedClones++;
        } else {
            theirs.push(name);
            log(
                isClone
                    ? `kept ${clone}: it holds work the repository does not (${work.join("; ")}): copy it out, then remove the folder by hand`
                    : `kept ${clone}: the served lab did not make it`,
            );
        }
    }
    if (theirs.length) return [...kept, clones];
    // a link of the learner's to a folder of theirs (the lab's clones made through it, and gone now): the link and the folder stay
    if (fs.lstatSync(clones).isSymbolicLink()) {
        kept.push(clones);
        log(`kept ${clones}: a link of yours (to ${fs.readlinkSync(clones)}); the lab's clones in it are gone`);
        return kept;
    }
    // recorded as made, or (a lab served before such records) made by the git clone of the lab's clones it held alone
    if (made.has(clones) || removedClones > 0) {
        fs.rmdirSync(clones);
        log(`removed ${clones} (written for the served lab)`);
    } else {
        kept.push(clones);
        log(keptNotMade(clones, recordGone));
    }
    return kept;
}
