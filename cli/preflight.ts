/** gitops-lab preflight: the host checks `up` runs before it installs anything. */
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { formatPreflight, preflightChecks, PreflightResult, realHost } from "../lab/platform/preflight";
import { shopLayout } from "../lab/shop/layout";
import { shopRepoPaths } from "../lab/shop/repo";
import { tenantsLayout } from "../lab/tenants/layout";
import { platformRepoPaths } from "../lab/tenants/repo";
import { imagesNeedAWay, k3sBinary } from "../lab/platform/images";
import { DEFAULTS } from "../lab/platform/defaults";
import { clusterStateFile } from "../sim/simulatedLab";
import { kitPlaceOf, simulatedLabAbove } from "../sim/hostRoot";
import { isServedKubeconfig, servedLabOf } from "../sim/servedFiles";
import { Command, EXIT, stringOption } from "./command";
import {
    CONFIG_FILE,
    CONFIG_FILE_DETAIL,
    configFileOf,
    environmentsNote,
    idleK3sKey,
    idleTenantsKey,
    shortReadyWaits,
    shortTenantsWait,
    noKeysNote,
    readStackFile,
    secretKeysNote,
} from "./stackConfig";

/** Why a kubeconfigPath that exists is no kubeconfig (a folder, a file naming no cluster); undefined when it is one or is not there. */
function kubeconfigProblem(file: string): string | undefined {
    const st = fs.statSync(file, { throwIfNoEntry: false });
    if (!st) return undefined; // "kubeconfigPath readable" says so
    if (st.isDirectory())
        return `${file} is a folder: give the kubeconfig file in it (k3s writes /etc/rancher/k3s/k3s.yaml; kubectl's is ~/.kube/config)`;
    let doc: unknown;
    try {
        doc = parse(fs.readFileSync(file, "utf8"));
    } catch {
        doc = undefined; // not YAML
    }
    const k = doc as { clusters?: unknown; contexts?: unknown; "current-context"?: unknown } | null | undefined;
    if (!Array.isArray(k?.clusters) || !k.clusters.length)
        return `${file} is not a kubeconfig (it names no cluster under clusters:): give the cluster's kubeconfig`;
    // a current-context naming no context of the file (the lab's client refuses it, as kubectl does)
    const contexts = Array.isArray(k.contexts) ? k.contexts.map((c) => String((c as { name?: unknown })?.name)) : [];
    if (contexts.length && !contexts.includes(String(k["current-context"] ?? "")))
        return `${file} has no current-context naming one of its contexts (${k["current-context"] ? `it names ${String(k["current-context"])}; ` : ""}${contexts.slice(0, 5).join(", ")}): kubectl --kubeconfig ${file} config use-context NAME`;
    return undefined;
}

/** Why the kubeconfigPath that exists is no cluster's to adopt, or undefined. */
function notAClusterKubeconfig(kubeconfigPath: string): string | undefined {
    // a served simulated lab's kubeconfig: no cluster a stack can install into, and gone when the served lab stops
    // (by its contents too: a copy of it, into ~/.kube/config, is one all the same)
    if (
        servedLabOf(kubeconfigPath) ||
        (fs.statSync(kubeconfigPath, { throwIfNoEntry: false })?.isFile() && isServedKubeconfig(kubeconfigPath))
    )
        return `${kubeconfigPath} is a simulated lab's kubeconfig (gitops-lab simulate --serve writes it, for that lab alone): a stack adopts a real cluster (its admin kubeconfig), or leave kubeconfigPath empty to install k3s`;
    // a folder, or a file that is no kubeconfig (it names no cluster): up would fail at its first request
    return kubeconfigProblem(path.resolve(kubeconfigPath));
}

/** The checks for this stack's configuration (root, kubeconfigPath) on this host. */
export async function runPreflight(
    overrides: { root?: string; kubeconfigPath?: string } = {},
    configFile?: string,
): Promise<PreflightResult[]> {
    const stack = readStackFile(undefined, undefined, configFile);
    const cfg = {
        ...stack.config,
        ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
    };
    const notes = [
        noKeysNote(stack.given, stack.secret, stack.config, stack.file),
        idleTenantsKey(stack.given, stack.config, stack.file),
        shortTenantsWait(stack.config, stack.file),
        ...shortReadyWaits(stack.config, stack.file),
        idleK3sKey(stack.given, stack.config, stack.file),
        environmentsNote(stack.environments, stack.file),
        secretKeysNote(stack.secret, stack.file),
        stack.octal.length ? `${stack.file}: ${stack.octal.join("; ")}` : undefined,
        ...stack.unread.map((u) => `${stack.file}: ${u}`),
    ].filter((n): n is string => !!n);
    const adopt = !!cfg.kubeconfigPath;
    // a k3s already on the host is adopted, not installed (components/k3s.ts)
    const installK3s = !adopt && !fs.existsSync(k3sBinary());
    const notAClusters = adopt ? notAClusterKubeconfig(cfg.kubeconfigPath) : undefined;
    const checks = await preflightChecks(realHost, {
        installK3s,
        kubeconfigPath: cfg.kubeconfigPath || undefined,
        askCluster: !notAClusters,
        imageRegistry: cfg.tenantsLab ? cfg.imageRegistry || undefined : undefined,
        repos: [...shopRepoPaths(shopLayout(cfg.root)), ...(cfg.tenantsLab ? platformRepoPaths(tenantsLayout(cfg.root)) : [])],
    });
    const at = fs.statSync(cfg.root, { throwIfNoEntry: false });
    // what up would trip on, said before it installs anything (lab:up runs these checks first)
    const refused: PreflightResult[] = [
        ...(at && !at.isDirectory()
            ? [{ check: "the stack's root", verdict: "FAIL" as const, detail: `${cfg.root} is a file, not a folder: set root to a folder` }]
            : []),
        // a lab's own folder given as the root (srv/bare, root/cnpa-env): the lab would go a second time under it
        ...[
            ["srv", "bare"],
            ["root", "cnpa-env"],
            ["root", "tenants-lab"],
        ]
            .filter((p) => path.resolve(cfg.root).endsWith(path.join("/", ...p)))
            .map((p) => ({
                check: "the stack's root",
                verdict: "FAIL" as const,
                detail: `root ${cfg.root} ends with ${path.join(...p)}, a folder the lab makes under its root, so the lab would go under ${path.join(cfg.root, ...p)}: root names the folder above the lab's paths (such as ${path.dirname(path.dirname(path.resolve(cfg.root)))})`,
            })),
        // /root or /srv (root read as root's home): the lab's paths doubled under it (/root/root/cnpa-env), said, not refused
        ...(["srv", "root"].includes(path.basename(path.resolve(cfg.root))) && path.dirname(path.resolve(cfg.root)) === "/"
            ? [
                  {
                      check: "the stack's root",
                      verdict: "WARN" as const,
                      detail: `root ${cfg.root} puts the lab at ${path.join(cfg.root, "srv", "bare")} and ${path.join(cfg.root, "root", "cnpa-env")}: root is the folder above the lab's srv/ and root/ (/ on a lab host), not ${path.basename(path.resolve(cfg.root)) === "root" ? "root's home" : "the folder of the bare repositories (the lab makes srv/bare under root)"}; leave it at / unless a folder of its own is meant`,
                  },
              ]
            : []),
        // the kit's own folder (or one of its folders): the lab's srv/ and root/ would go among the kit's files
        ...(kitPlaceOf(cfg.root)
            ? [
                  {
                      check: "the stack's root",
                      verdict: "FAIL" as const,
                      detail: `root ${cfg.root} is ${kitPlaceOf(cfg.root)}: the lab's srv/ and root/ would go among the kit's files; set root to a folder of its own (/ on a lab host)`,
                  },
              ]
            : []),
        // a simulated lab's files: up would take its result files for steps done on a cluster that never saw them
        ...(fs.existsSync(clusterStateFile(cfg.root))
            ? [
                  {
                      check: "the stack's root",
                      verdict: "FAIL" as const,
                      detail: `${cfg.root} holds a simulated lab (${clusterStateFile(cfg.root)}): take it down first (gitops-lab simulate --root ${cfg.root} --reset), or set root to another folder`,
                  },
              ]
            : []),
        // inside a simulated lab (its results folder): up would build a lab among that one's files
        ...(!fs.existsSync(clusterStateFile(cfg.root)) && simulatedLabAbove(path.resolve(cfg.root))
            ? [
                  {
                      check: "the stack's root",
                      verdict: "FAIL" as const,
                      detail: `${cfg.root} is inside the simulated lab under ${simulatedLabAbove(path.resolve(cfg.root))}: a lab is not built inside another; set root to a folder outside it`,
                  },
              ]
            : []),
        ...(notAClusters ? [{ check: "kubeconfigPath is a cluster's", verdict: "FAIL" as const, detail: notAClusters }] : []),
        // the k3s the stack installs: the tenants lab's image volumes need Kubernetes 1.35+ (ImageVolume on by default)
        ...(cfg.tenantsLab && installK3s && k3sMinor(cfg.k3sVersion) < 35
            ? [
                  {
                      check: "k3sVersion mounts the tenants lab's images",
                      verdict: "FAIL" as const,
                      detail: `k3sVersion ${cfg.k3sVersion} is Kubernetes 1.${k3sMinor(cfg.k3sVersion)}: the tenants lab mounts each release as an image volume, on by default from Kubernetes 1.35; set a k3s of 1.35 or later (${DEFAULTS.k3sVersion} if the key is left out)`,
                  },
              ]
            : []),
        // a registry for a k3s the stack installs: the images are imported into k3s, and nothing makes it pull from the registry
        // (a registries.yaml of the author's, which k3s reads when it first starts, mirroring registry.lab.internal: theirs)
        ...(cfg.tenantsLab && installK3s && cfg.imageRegistry && !mirrorsLabRegistry()
            ? [
                  {
                      check: "the tenants lab's images have a way into the cluster",
                      verdict: "FAIL" as const,
                      detail: `imageRegistry ${cfg.imageRegistry} is for a cluster that mirrors registry.lab.internal from it; the k3s the stack installs has no such mirror (the lab leaves ${K3S_REGISTRIES} alone, and it holds none) and gets the images imported: leave imageRegistry empty, or write that mirror into ${K3S_REGISTRIES} first`,
                  },
              ]
            : []),
        ...(cfg.tenantsLab && adopt && !cfg.imageRegistry && !fs.existsSync(k3sBinary())
            ? [{ check: "the tenants lab's images have a way into the cluster", verdict: "FAIL" as const, detail: imagesNeedAWay() }]
            : []),
    ];
    // a stack file in the current folder (a lab author's copy) while the project's is read: said
    const here = path.join(process.cwd(), path.basename(stack.file));
    const elsewhere =
        !configFile && path.resolve(here) !== path.resolve(stack.file) && fs.existsSync(here)
            ? [`${here} is not read: preflight reads the project's ${stack.file}; to check yours, --config-file ${here}`]
            : [];
    const overridden = [
        ...(overrides.root !== undefined && stack.given.includes("root") && stack.config.root !== overrides.root
            ? [`--root ${overrides.root} is checked in place of the file's root ${stack.config.root}, which up uses`]
            : []),
        ...(overrides.kubeconfigPath !== undefined &&
        stack.given.includes("kubeconfigPath") &&
        stack.config.kubeconfigPath !== overrides.kubeconfigPath
            ? [
                  `--kubeconfig-path ${overrides.kubeconfigPath || '""'} is checked in place of the file's kubeconfigPath ${stack.config.kubeconfigPath || '""'}, which up uses`,
              ]
            : []),
    ];
    return [
        ...checks,
        ...refused,
        ...[...notes, ...elsewhere, ...overridden].map((detail) => ({
            check: "the stack's configuration",
            verdict: "WARN" as const,
            detail,
        })),
    ];
}

/** k3s's registry configuration, read when it first starts (GITOPS_LAB_K3S_REGISTRIES: a test's). */
const K3S_REGISTRIES = process.env.GITOPS_LAB_K3S_REGISTRIES || "/etc/rancher/k3s/registries.yaml";
const mirrorsLabRegistry = (): boolean => {
    try {
        return fs.readFileSync(K3S_REGISTRIES, "utf8").includes("registry.lab.internal");
    } catch {
        return false;
    }
};

/** The Kubernetes minor version of a k3s release tag (v1.36.4+k3s1: 36). */
const k3sMinor = (tag: string): number => Number(/^v1\.(\d+)\./.exec(tag)?.[1] ?? NaN);

export const preflight: Command = {
    name: "preflight",
    summary: "check this host before anything is installed (root, Node, git, curl, systemd, disk, memory, ports, paths)",
    usage: "preflight [--config-file FILE] [--root DIR] [--kubeconfig-path FILE]",
    details: [
        `${CONFIG_FILE_DETAIL}; a bad value in it is named, as up names it`,
        "--root DIR               the stack's root (default: from Pulumi.dev.yaml, else /; a relative one is taken from here)",
        '--kubeconfig-path FILE   check for adopting this cluster instead of installing k3s ("" checks installing k3s)',
    ],
    options: { root: { type: "string" }, "kubeconfig-path": { type: "string" }, ...CONFIG_FILE },
    // the lab chosen as simulate and verify choose it: preflight reads it from the stack file
    misread: {
        "--lab":
            "preflight checks the labs the stack file builds: the tenants lab with gitops-lab:tenantsLab: true in it (pulumi config set tenantsLab true, or a --config-file FILE that sets it); --lab is simulate's and verify's",
    },
    async run(values) {
        // a relative --root is taken from the current folder, as simulate and verify take it (said, so it is never a surprise)
        const rootArg = stringOption(values, "root");
        const root = rootArg === undefined ? undefined : path.resolve(rootArg);
        if (rootArg !== undefined && !path.isAbsolute(rootArg)) console.log(`preflight: --root ${rootArg} is relative: checking ${root}`);
        // a relative --kubeconfig-path likewise (the stack's kubeconfigPath is absolute: said with the path to write there)
        // "" is the stack's own empty kubeconfigPath: check for installing k3s, whatever the file says
        const kubeArg = values["kubeconfig-path"] === "" ? "" : stringOption(values, "kubeconfig-path");
        const kubeconfigPath = kubeArg === undefined || kubeArg === "" ? kubeArg : path.resolve(kubeArg);
        if (kubeArg && !path.isAbsolute(kubeArg))
            console.log(
                `preflight: --kubeconfig-path ${kubeArg} is relative: checking ${kubeconfigPath} (in the stack, write gitops-lab:kubeconfigPath: ${kubeconfigPath})`,
            );
        const rs = await runPreflight({ root, kubeconfigPath }, configFileOf(values));
        console.log(formatPreflight(rs));
        const failed = rs.filter((r) => r.verdict === "FAIL").length;
        console.log(failed ? `\n${failed} check${failed === 1 ? "" : "s"} failed: nothing was installed.` : "\nthe host is ready.");
        return failed ? EXIT.FINDING : EXIT.OK;
    },
};
