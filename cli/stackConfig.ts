/**
 * The stack's configuration as the command line sees it before Pulumi runs (the preflight needs
 * root, kubeconfigPath and k3sVersion before anything is installed): the stack file's values
 * (Pulumi.<stack>.yaml, or the file given with --config-file) through the same schema index.ts
 * uses, absent keys at their defaults (the same as Pulumi.yaml's, a test keeps them equal).
 */
import * as fs from "fs";
import * as path from "path";
import { distance } from "fastest-levenshtein";
import { Document, isAlias, isMap, isScalar, parseDocument } from "yaml";
import { CONFIG_KEYS, parseStackConfig, StackConfig } from "../lab/platform/stackConfig";
import { DEFAULTS } from "../lab/platform/defaults";
import { codeOf } from "../lab/ports/errors";
import { stringOption, UsageError, Values } from "./command";
import { isServedKubeconfig } from "../sim/servedFiles";
import { SHOP_RESULT_FILES } from "../lab/shop/results";
import { TENANTS_RESULT_FILES } from "../lab/tenants/results";

export const PROJECT_DIR = path.resolve(__dirname, "..");
/**
 * The stack: `dev`, or GITOPS_LAB_STACK. Creating a stack makes Pulumi write its `encryptionsalt` into
 * Pulumi.<stack>.yaml beside Pulumi.yaml (as `pulumi stack init` does), so the tests and the bench use
 * stacks of their own (`Pulumi.test-*.yaml`, ignored by git, removed after) and never touch Pulumi.dev.yaml.
 */
export function stackName(v = process.env.GITOPS_LAB_STACK): string {
    if (!v) return "dev";
    // the stack's file given for its name (Pulumi.dev.yaml): the name is what lies between Pulumi. and .yaml
    const file = /(?:^|\/)Pulumi\.([^/]+)\.ya?ml$/.exec(v)?.[1] ?? (/\.ya?ml$/.test(v) ? "" : undefined);
    if (file !== undefined)
        throw new Error(
            `GITOPS_LAB_STACK ${JSON.stringify(v)} names a file; it takes a stack's name${file ? ` (GITOPS_LAB_STACK=${file}, whose file is Pulumi.${file}.yaml beside Pulumi.yaml)` : ""}; to check a stack file as it is, preflight --config-file ${v}`,
        );
    // read when a command needs it (not when the module loads): a bad value is the command's one-line error, not a stack trace
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(v))
        throw new Error(
            `GITOPS_LAB_STACK ${JSON.stringify(v)} is not a stack name (letters, digits, _ . -, starting with a letter or digit): unset it for the stack dev, or give one such as ${v.replace(/[^A-Za-z0-9_.-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "") || "dev"}`,
        );
    return v;
}

/** A YAML file's content; a syntax error is one line naming the file and the line. */
function readYaml(file: string): unknown {
    return readYamlDocument(file).toJSON();
}

/**
 * A plain scalar's number as Go's yaml.v3 reads it, which Pulumi 3.248 hands the program (as JSON writes it): its
 * underscores dropped (1_000 is 1000), 0b and 0o prefixes, and a leading 0 for octal (010 is 8), where YAML 1.2,
 * as read here, makes strings of the first and 10 of the last; undefined where yaml.v3 reads no number. (Hand-written:
 * yaml.v3's resolve rules, a few lines, have no JavaScript package.)
 */
export function goYamlNumber(source: string): number | undefined {
    if (!/^[-+.0-9]/.test(source)) return undefined;
    const plain = source.replace(/_/g, "");
    const int = /^([-+]?)(?:0[xX]([0-9a-fA-F]+)|0[bB]([01]+)|0[oO]([0-7]+)|0([0-7]*)|([1-9][0-9]*))$/.exec(plain);
    if (int) {
        const [, sign, hex, bin, oct12, oct, dec] = int;
        const n = hex
            ? parseInt(hex, 16)
            : bin
              ? parseInt(bin, 2)
              : oct12 !== undefined
                ? parseInt(oct12, 8)
                : dec
                  ? Number(dec)
                  : parseInt(oct || "0", 8);
        return sign === "-" ? -n : n;
    }
    return /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(plain) ? Number(plain) : undefined;
}

/** config:'s plain scalars that Go's yaml.v3 reads as another number than YAML 1.2 does here (goYamlNumber). */
function asPulumiReads(doc: Document): Record<string, number> {
    const config = doc.get("config", true);
    if (!isMap(config)) return {};
    const out: Record<string, number> = {};
    for (const pair of config.items) {
        const node = isAlias(pair.value) ? pair.value.resolve(doc) : pair.value;
        if (!isScalar(pair.key) || !isScalar(node) || node.type !== "PLAIN" || node.source === undefined) continue;
        const n = goYamlNumber(node.source);
        if (n !== undefined && n !== node.value) out[String(pair.key.value)] = n;
    }
    return out;
}

function readYamlDocument(file: string): Document {
    if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory())
        throw new Error(`${file} is a folder, not a stack configuration file: give the file in it (its Pulumi.<stack>.yaml)`);
    let bytes: Buffer;
    try {
        bytes = fs.readFileSync(file);
    } catch (e) {
        // not readable by this user (root's file, mode 0600, read without sudo): said, not Node's EACCES line
        if (codeOf(e) !== "EACCES") throw e;
        const st = fs.statSync(file);
        throw new Error(
            `cannot read ${file} (permission denied: owned by uid ${st.uid}, mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}, and this is uid ${process.getuid?.() ?? "?"}): run it as the user who may read it (root, as the lab needs), or make the file readable`,
        );
    }
    // saved as UTF-16 (a Windows editor's "Unicode"): its byte-order mark, or a NUL beside every ASCII byte
    const bom = bytes.subarray(0, 2).toString("hex");
    if (bom === "fffe" || bom === "feff" || (bytes.length > 1 && (bytes[0] === 0 || bytes[1] === 0)))
        throw new Error(
            `${file} is UTF-16${bom === "fffe" || bom === "feff" ? ` (it starts with the bytes ${bom.toUpperCase().replace(/(..)(..)/, "$1 $2")})` : " (a NUL byte beside every letter)"}, and YAML here is UTF-8: save it as UTF-8 (iconv -f UTF-16 -t UTF-8)`,
        );
    // bytes that are no UTF-8 (saved as Latin-1 or Windows-1252): read as UTF-8 they turn into U+FFFD, a value nobody wrote
    const strict = new TextDecoder("utf-8", { fatal: true });
    let from = 0;
    for (const [i, line] of bytes.toString("latin1").split("\n").entries()) {
        const raw = bytes.subarray(from, from + line.length);
        from += line.length + 1;
        try {
            strict.decode(raw);
        } catch {
            const bad = [...raw].find((b) => b >= 0x80) ?? 0;
            throw new Error(
                `${file} line ${i + 1}: bytes that are no UTF-8 (0x${bad.toString(16).toUpperCase()}: saved as Latin-1 or Windows-1252?), and YAML here is UTF-8: save it as UTF-8 (iconv -f LATIN1 -t UTF-8)`,
            );
        }
    }
    const text = bytes.toString("utf8");
    // merge keys (<<: *defaults) are merged, as Pulumi's Go YAML (yaml.v3) merges them
    const doc = parseDocument(text, { prettyErrors: true, merge: true });
    const err = doc.errors[0];
    if (!err) return doc;
    // a line indented under a key that already has a value: yaml names the key's line, the mistake is the line after it
    const deeper = doc.errors.find((e) => e.code === "MULTILINE_IMPLICIT_KEY")?.linePos?.[1]?.line;
    if (deeper !== undefined)
        throw new Error(
            `${file} line ${deeper}: indented deeper than the key above it, which already has a value; align it with the other keys (fix the YAML there)`,
        );
    const at = `line ${err.linePos?.[0].line ?? "?"}, column ${err.linePos?.[0].col ?? "?"}`;
    // gitops-lab:solveThrough:3: a key's colon with no space after it is part of the key, and the line has no value
    const line = err.linePos ? text.split(/\r?\n/)[err.linePos[0].line - 1] : undefined;
    // a non-breaking space (copied from a web page): it looks like a space, and YAML reads it as none
    const nbsp = (line ?? "").indexOf("\u00a0");
    if (nbsp >= 0)
        throw new Error(
            `${file} line ${err.linePos![0].line}, column ${nbsp + 1}: a non-breaking space (U+00A0, copied from a web page?), which YAML does not read as a space: type it again as a plain space`,
        );
    // KEY=VALUE, as a shell or pulumi config set's --path habit writes it: YAML reads no key there
    const assigned = /^\s*((?:[\w-]+:)?[\w-]+)=(\S.*)$/.exec(line ?? "");
    if (assigned)
        throw new Error(
            `${file} ${at}: ${assigned[1]}=${assigned[2]} is written KEY=VALUE, which YAML does not read as a key; in the file write ${assigned[1]}: ${assigned[2]}`,
        );
    const glued = err.code === "MISSING_CHAR" ? /^\s*((?:[\w-]+:)?[\w-]+):(\S.*)$/.exec(line ?? "") : null;
    if (glued)
        throw new Error(
            `${file} ${at}: ${glued[1]}:${glued[2]} has no space after the colon, so YAML reads no value; write ${glued[1]}: ${glued[2]}`,
        );
    // a key written twice (a line added rather than changed, or two config: blocks): Pulumi refuses the file too
    // ("mapping key ... already defined at line N"), so both lines are named
    if (err.code === "DUPLICATE_KEY" && line !== undefined) {
        const key = /^(\s*)(["']?)([^"':#]+(?::[^"':#\s]+)?)\2\s*:(?:\s|$)/.exec(line);
        const lines = text.split(/\r?\n/);
        // the earlier line of the same mapping: searched back to the line that opens it (one indented less)
        let first = -1;
        if (key) {
            const same = new RegExp(`^${key[1]}${key[2]}${key[3].replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}${key[2]}\\s*:(?:\\s|$)`);
            for (let i = err.linePos![0].line - 2; i >= 0; i--) {
                if (same.test(lines[i])) {
                    first = i;
                    break;
                }
                if (/^\s*(?:#|$)/.test(lines[i])) continue;
                if (/^\s*/.exec(lines[i])![0].length < key[1].length) break;
            }
        }
        if (key && first >= 0)
            throw new Error(
                `${file} line ${err.linePos![0].line}: ${key[3]} is written twice (lines ${first + 1} and ${err.linePos![0].line}), which Pulumi refuses (mapping key already defined)${key[3] === "config" ? ": put every key under one config:" : ": keep one"}`,
            );
    }
    // a second value after a whole first one ({...}{...}, two JSON objects): yaml says "at node end"
    if (/ at node end\b/.test(err.message))
        throw new Error(
            `${file} ${at}: something follows the file's first value, which had ended there (a second {...} or mapping?): the file holds one mapping; remove or merge what follows`,
        );
    // a --- line and a second document (two stack files pasted together): yaml names the API to read many
    if (err.code === "MULTIPLE_DOCS")
        throw new Error(
            `${file} ${at}: a second YAML document begins here (after a --- line), and a stack file is one document, one config: mapping: merge the two into one and remove the ---`,
        );
    throw new Error(`${file} ${at}: ${err.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "")}; fix the YAML there`);
}

/** `configFile` stands in for Pulumi.<stack>.yaml, as Pulumi's own `--config-file` does. */
export function readStackConfig(projectDir = PROJECT_DIR, stack = stackName(), configFile?: string): StackConfig {
    return readStackFile(projectDir, stack, configFile).config;
}

/** A kubeconfig given for the stack's file: what it is, and (a served simulated lab's, which no stack can adopt) what to use. */
function kubeconfigGiven(file: string, doc: unknown): string | undefined {
    if (!doc || typeof doc !== "object" || (doc as { kind?: unknown }).kind !== "Config" || !("clusters" in doc)) return undefined;
    return isServedKubeconfig(file)
        ? `${file} is a kubeconfig (kind: Config), a served simulated lab's, not a stack configuration; a stack adopts a real cluster's kubeconfig (gitops-lab:kubeconfigPath), and the simulated lab is simulate's: gitops-lab simulate --help`
        : `${file} is a kubeconfig (kind: Config), not a stack configuration: to adopt that cluster, set gitops-lab:kubeconfigPath: ${file} under config: in the stack's file (Pulumi.dev.yaml)`;
}

/** A file's YAML (JSON is YAML too), or undefined where it is none. */
function readYamlLoosely(file: string): unknown {
    try {
        return parseDocument(fs.readFileSync(file, "utf8")).toJSON();
    } catch {
        return undefined;
    }
}

/** The stack's configuration, with the lab's keys its file sets itself (Pulumi.yaml's defaults give the rest). */
export function readStackFile(
    projectDir = PROJECT_DIR,
    stack = stackName(),
    configFile?: string,
): {
    config: StackConfig;
    file: string;
    given: string[];
    secret: string[];
    environments: string[];
    octal: string[];
    /** Keys of another package's that the lab never reads, though they look meant for it (kubernetes:kubeconfig), each said. */
    unread: string[];
} {
    readYaml(path.join(projectDir, "Pulumi.yaml")); // its syntax, too, before anything runs
    const stackFile = configFile ?? path.join(projectDir, `Pulumi.${stack}.yaml`);
    // Pulumi reads a stack file by its extension (encoding.Detect: .yaml, .yml or .json, as written), and refuses one without
    // (a kubeconfig, which has none, said as what it is first: renamed, it would be refused as a kubeconfig anyway)
    if (configFile && fs.statSync(configFile, { throwIfNoEntry: false })?.isFile() && !/\.(yaml|yml|json)$/.test(configFile)) {
        const kubeconfig = kubeconfigGiven(configFile, (() => readYamlLoosely(configFile))());
        if (kubeconfig) throw new Error(kubeconfig);
        throw new Error(
            `${configFile}: Pulumi reads a stack file by its extension, .yaml, .yml or .json in lower case ("no marshaler found for file format" otherwise), and this one has ${path.extname(configFile) || "none"}: name it ${/\.(yaml|yml|json)$/i.test(configFile) ? configFile.replace(/\.[^.]+$/, (e) => e.toLowerCase()) : `${configFile}.yaml`}`,
        );
    }
    const values: Record<string, unknown> = {};
    const secret: string[] = [];
    let environments: string[] = [];
    let octal: string[] = [];
    const unread: string[] = [];
    if (fs.existsSync(stackFile)) {
        // a mapping is checked below before its fields are read; config:'s values are the lab's or another package's
        const document = readYamlDocument(stackFile);
        const asRead = asPulumiReads(document);
        // a leading 0 (0300): Go's YAML reads octal there, as Pulumi hands it over; said, as no one writes seconds in octal
        octal = Object.entries(asRead).flatMap(([k, n]) => {
            const source = String(
                document.getIn(["config", k], true) && (document.getIn(["config", k], true) as { source?: string }).source,
            );
            return /^[-+]?0[0-7_]+$/.test(source) && Number(source.replace(/_/g, "")) !== n
                ? [
                      `${k} is written ${source}, which Pulumi (Go's YAML) reads as octal, ${n}: write ${Number(source.replace(/_/g, ""))} if that is meant`,
                  ]
                : [];
        });
        const doc = (document.toJSON() ?? {}) as { config?: Record<string, unknown> | null };
        const kind = (v: unknown) => (Array.isArray(v) ? "a list" : v === null ? "nothing" : `a ${typeof v}`);
        if (typeof doc !== "object" || Array.isArray(doc))
            throw new Error(
                `${stackFile} holds ${kind(doc)}, not a stack configuration: a YAML mapping with config: and its gitops-lab: keys`,
            );
        // one line KEY=VALUE under config: (YAML reads it as config:'s string)
        const assigned = typeof doc.config === "string" ? /^((?:[\w-]+:)?[\w-]+)=(\S.*)$/.exec(doc.config) : null;
        if (assigned)
            throw new Error(
                `${stackFile}: ${assigned[1]}=${assigned[2]} is written KEY=VALUE, which YAML does not read as a key; in the file write ${assigned[1]}: ${assigned[2]}`,
            );
        if (doc.config !== undefined && doc.config !== null && (typeof doc.config !== "object" || Array.isArray(doc.config)))
            throw new Error(
                `${stackFile}: config: holds ${kind(doc.config)}; it is a mapping of gitops-lab:<key>: <value>, one a line, indented`,
            );
        // Pulumi.yaml (name:, runtime:) given for the stack's file: its config: holds the keys' declarations, not values
        if (doc.config !== undefined && "runtime" in doc && "name" in doc)
            throw new Error(
                `${stackFile} is a Pulumi project file (name: ${JSON.stringify((doc as { name?: unknown }).name)}, runtime:), not a stack configuration: give a stack's file like Pulumi.dev.yaml, whose config: holds gitops-lab:<key>: <value>`,
            );
        // a kubeconfig given for the stack's file: it is what kubeconfigPath names
        const kubeconfig = kubeconfigGiven(stackFile, doc);
        if (kubeconfig) throw new Error(kubeconfig);
        // a lab's result file (stall.json, incident.json): what a step wrote, no config:
        if (
            doc.config === undefined &&
            ([...SHOP_RESULT_FILES, ...TENANTS_RESULT_FILES].some((n) => path.basename(stackFile) === `${n}.json`) ||
                typeof (doc as { commit?: unknown }).commit === "string")
        )
            throw new Error(
                `${stackFile} is a lab's result file (what a step wrote: a commit and what was seen), not a stack configuration: give a stack's file like Pulumi.dev.yaml, whose config: holds gitops-lab:<key>: <value>`,
            );
        // another Kubernetes manifest (the lab's appset.yaml): apiVersion and kind, no config:
        const manifest = doc as { apiVersion?: unknown; kind?: unknown };
        if (doc.config === undefined && typeof manifest.kind === "string" && typeof manifest.apiVersion === "string")
            throw new Error(
                `${stackFile} is a Kubernetes manifest (kind: ${manifest.kind}), not a stack configuration: give a stack's file like Pulumi.dev.yaml, whose config: holds gitops-lab:<key>: <value>`,
            );
        // a simulated lab's saved cluster (simulate keeps it under its root): no stack file, though JSON
        if (doc.config === undefined && path.basename(stackFile) === "simulated-cluster.json")
            throw new Error(
                `${stackFile} is a simulated lab's saved cluster (gitops-lab simulate keeps it under its --root), not a stack configuration: give a stack's file like Pulumi.dev.yaml, whose config: holds gitops-lab:<key>: <value>`,
            );
        // Config: or CONFIG: for config: Pulumi reads the key as written, so nothing under it is read
        const cased = Object.keys(doc).find((k) => k !== "config" && k.toLowerCase() === "config");
        if (cased && doc.config === undefined)
            throw new Error(
                `${stackFile}: ${cased}: is not Pulumi's key, which is config: in lower case: write config:, and its keys are read`,
            );
        // a key of ours outside config: is read by nobody: say where it goes
        const outside = Object.keys(doc).find((k) => k.startsWith("gitops-lab:") || (CONFIG_KEYS as string[]).includes(k));
        if (outside)
            throw new Error(
                `${stackFile}: ${outside} is at the top level, where Pulumi reads nothing of it: put it under config:, indented`,
            );
        // Pulumi ESC environments (environment: [name]): their values reach Pulumi, not this reader
        const env = (doc as { environment?: unknown }).environment;
        environments = Array.isArray(env) ? env.map(String) : typeof env === "string" ? [env] : [];
        const seen = new Map<string, string>();
        for (const [k, v] of Object.entries(doc.config ?? {})) {
            // (gitops-lab:config:root: Pulumi's older form of a key, which config.ParseKey still reads as gitops-lab:root)
            const m = /^(?:gitops-lab:(?:config:)?)?([^:]+)$/.exec(k);
            // a misspelt prefix (gitops_lab:) would be taken for another package's key and ignored
            const prefix = /^([^:]+):/.exec(k)?.[1];
            if (!m && prefix && prefix !== "gitops-lab" && distance(prefix, "gitops-lab") <= 2)
                throw new Error(
                    `${stackFile}: ${k}: ${prefix}: is not this project's prefix; write gitops-lab:${k.slice(prefix.length + 1)}`,
                );
            // this lab's key under another project's prefix (a lab copied from another project's stack file): Pulumi gives it
            // to that project, so this lab would run on its default without a word
            const suffix = prefix ? k.slice(prefix.length + 1) : "";
            if (!m && prefix && prefix !== "gitops-lab" && (CONFIG_KEYS as string[]).includes(suffix))
                throw new Error(
                    `${stackFile}: ${k} is this lab's key ${suffix} under another project's prefix (${prefix}:), which Pulumi never gives to this project: write gitops-lab:${suffix}`,
                );
            // the keys nested under gitops-lab: as a mapping: Pulumi reads gitops-lab:<key> whole, one a line
            if (k === "gitops-lab" && v !== null && typeof v === "object" && !Array.isArray(v))
                throw new Error(
                    `${stackFile}: gitops-lab: holds a mapping (${Object.keys(v).slice(0, 3).join(", ")}); Pulumi's keys are written whole, one a line under config:, as gitops-lab:${Object.keys(v)[0] ?? "root"}: VALUE`,
                );
            // the Kubernetes provider's own cluster keys: the lab's provider is made from k3s's or kubeconfigPath's kubeconfig
            if (k === "kubernetes:kubeconfig" || k === "kubernetes:context")
                unread.push(
                    `${k} is set, which the lab's Kubernetes provider never reads (it is made from the k3s it installs, or from gitops-lab:kubeconfigPath)${k === "kubernetes:kubeconfig" && typeof v === "string" && path.isAbsolute(v) ? `: to adopt that cluster, set gitops-lab:kubeconfigPath: ${v}` : ""}`,
                );
            if (!m) continue; // another package's key (e.g. kubernetes:context): not ours to check
            // a space inside a quoted key ("gitops-lab:root "): Pulumi reads another key, and the lab's takes its default
            if (m[1] !== m[1].trim() && (CONFIG_KEYS as string[]).includes(m[1].trim()))
                throw new Error(
                    `${stackFile}: ${JSON.stringify(k)} has a space at its ${m[1].startsWith(" ") ? "start" : "end"} (inside the quotes), so Pulumi reads another key than gitops-lab:${m[1].trim()}, which would take its default: write gitops-lab:${m[1].trim()}`,
                );
            // a key with nothing after its colon: not the default, a value forgotten
            if (v === null)
                throw new Error(`${stackFile}: gitops-lab:${m[1]} has no value: give it one, or remove the line to take the default`);
            // one key twice (solveThrough and gitops-lab:solveThrough): Pulumi would take one and hide the other
            if (seen.has(m[1]))
                throw new Error(`${stackFile}: gitops-lab:${m[1]} is given twice (as ${seen.get(m[1])} and ${k}): keep one`);
            seen.set(m[1], k);
            // secrets stay with Pulumi, their key names are checked all the same (a misspelt one would be ignored)
            if (v !== null && typeof v === "object" && "secure" in v) {
                if ((CONFIG_KEYS as string[]).includes(m[1])) {
                    secret.push(m[1]);
                    continue;
                }
                values[m[1]] = "(secret)";
            } else values[m[1]] = k in asRead ? asRead[k] : v;
        }
    }
    return {
        config: parseStackConfig(values, stackFile),
        file: stackFile,
        given: Object.keys(values),
        secret,
        environments,
        octal,
        unread,
    };
}

/**
 * A tenants key the stack file sets while the tenants lab is off: it is taken and does nothing, which is
 * what `pulumi config set tenantsLab false` leaves (the other keys stay); said, not refused.
 */
export function idleTenantsKey(given: readonly string[], config: StackConfig, file: string): string | undefined {
    // imageRegistry too: only the tenants lab's release images go through it; a key written at its default value sets nothing
    const defaults = DEFAULTS as Record<string, unknown>;
    const idle = (["tenantsSolveThrough", "tenantsWaitTimeoutSeconds", "imageRegistry"] as const).filter(
        (k) => given.includes(k) && config[k] !== defaults[k],
    );
    if (config.tenantsLab || !idle.length) return undefined;
    return `${file} sets ${idle.map((k) => `gitops-lab:${k}`).join(" and ")}, but gitops-lab:tenantsLab is false: no tenants lab is built (pulumi config set tenantsLab true to build it)`;
}

/**
 * A tenants wait deadline shorter than the lab's longest wait: the blocked sync giving up takes about 382 s on Argo CD
 * 3.5 and up to 570 s on 3.6.2 (docs/tenants-lab.md), so up would install everything and stop there. Said, not refused.
 */
export function shortTenantsWait(config: StackConfig, file: string): string | undefined {
    if (!config.tenantsLab || config.tenantsSolveThrough < 3) return undefined;
    // (3.6 may sync the tenant once more after it gives up, and that sync gives up 570 s later: each its own wait)
    const longest = config.argocdVersion.startsWith("v3.5") ? 382 : 570;
    if (config.tenantsWaitTimeoutSeconds >= longest + 60) return undefined;
    return `${file} sets gitops-lab:tenantsWaitTimeoutSeconds to ${config.tenantsWaitTimeoutSeconds}, while the tenants lab's longest wait, the blocked sync giving up, takes about ${longest} s on Argo CD ${config.argocdVersion} (docs/tenants-lab.md): up would build the lab and stop there; ${DEFAULTS.tenantsWaitTimeoutSeconds} (the default) leaves room`;
}

/**
 * Readiness and sync deadlines a fresh host cannot meet (seconds taken for minutes: argocdReadyTimeoutSeconds: 10):
 * the floor of each wait as it runs with its images first pulled from the internet, far above what this machine's
 * pre-pulled install takes (docs/speed.md: 41 s for all of it). Said, not refused: up would install and then stop.
 */
const WAIT_FLOORS = {
    k3sReadyTimeoutSeconds: 60,
    argocdReadyTimeoutSeconds: 120,
    gitDaemonReadyTimeoutSeconds: 60,
    syncTimeoutSeconds: 60,
} as const;
export function shortReadyWaits(config: StackConfig, file: string): string[] {
    return (Object.keys(WAIT_FLOORS) as (keyof typeof WAIT_FLOORS)[])
        .filter((k) => config[k] < WAIT_FLOORS[k])
        .map(
            (k) =>
                `${file} sets gitops-lab:${k} to ${config[k]} (seconds), less than the ${WAIT_FLOORS[k]} s that wait can take on a fresh host (images pulled from the internet): up would install and stop there; ${DEFAULTS[k]} (the default) leaves room`,
        );
}

/** A k3s key the stack file sets while kubeconfigPath adopts a cluster: k3s is not installed, so it does nothing; said, not refused. */
export function idleK3sKey(given: readonly string[], config: StackConfig, file: string): string | undefined {
    const idle = ["k3sVersion", "k3sReadyTimeoutSeconds"].filter((k) => given.includes(k));
    if (!config.kubeconfigPath || !idle.length) return undefined;
    return `${file} sets ${idle.map((k) => `gitops-lab:${k}`).join(" and ")}, but gitops-lab:kubeconfigPath adopts the cluster of ${config.kubeconfigPath}: k3s is not installed, so ${idle.length === 1 ? "it does" : "they do"} nothing (leave kubeconfigPath empty to install k3s)`;
}

/** Pulumi ESC environments the stack file imports: what they give is read by Pulumi alone, so not checked here; said. */
export function environmentsNote(environments: readonly string[], file: string): string | undefined {
    if (!environments.length) return undefined;
    return `${file} imports the Pulumi ESC environment${environments.length === 1 ? "" : "s"} ${environments.join(", ")} (environment:): a gitops-lab key it gives reaches Pulumi alone, so it is not checked here; up checks it when it runs`;
}

/** A key of the lab's given as a secret (secure:): only Pulumi reads it, so nothing before up can check it; said, not refused. */
export function secretKeysNote(secret: readonly string[], file: string): string | undefined {
    if (!secret.length) return undefined;
    const keys = secret.map((k) => `gitops-lab:${k}`).join(", ");
    return `${file} gives ${keys} as a secret (secure:), which only Pulumi can read, so it is not checked here; none of the lab's keys is secret: set ${secret.length === 1 ? "it" : "them"} plainly (pulumi config set ${secret[0]} <value>)`;
}

/** A stack file that sets none of the lab's keys (empty, or only another package's): every key at its default, said. */
export function noKeysNote(given: readonly string[], secret: readonly string[], config: StackConfig, file: string): string | undefined {
    if (given.length || secret.length) return undefined;
    const what = fs.existsSync(file) ? "sets no gitops-lab: key" : "does not exist";
    // the stack named in another case (GITOPS_LAB_STACK=Dev beside Pulumi.dev.yaml): stack names are case-sensitive
    const dir = path.dirname(file);
    const other =
        what === "does not exist" && fs.existsSync(dir)
            ? fs.readdirSync(dir).find((f) => f !== path.basename(file) && f.toLowerCase() === path.basename(file).toLowerCase())
            : undefined;
    if (other)
        return `${file} does not exist, but ${other} does: stack names are case-sensitive, so this is another stack, with every key at its default; for that one, GITOPS_LAB_STACK=${other.replace(/^Pulumi\.|\.ya?ml$/g, "")}`;
    return `${file} ${what}: every key is at its default (root ${config.root}, solveThrough ${config.solveThrough}, argocdVersion ${config.argocdVersion}, tenantsLab ${config.tenantsLab}); set them under config: (pulumi config set KEY VALUE)`;
}

/** `--config-file FILE`: a stack configuration file in place of Pulumi.<stack>.yaml (up, preview, refresh, destroy, preflight). */
export const CONFIG_FILE = { "config-file": { type: "string" } } as const;
export const CONFIG_FILE_DETAIL =
    "--config-file FILE  the stack's configuration from FILE instead of Pulumi.dev.yaml (Pulumi's own --config-file)";

export function configFileOf(values: Values): string | undefined {
    const f = stringOption(values, "config-file");
    if (f === undefined) return undefined;
    // - for standard input: the file is read more than once (the check, then the stack's program), a pipe only once
    if (f === "-")
        throw new UsageError(
            "--config-file - (standard input) is not read: the stack's file is read more than once, which a pipe allows once; save it to a file (Pulumi.mine.yaml) and give its path",
        );
    const abs = path.resolve(f);
    if (fs.existsSync(abs)) return abs;
    // run through npm (npm --prefix DIR run ...): a relative path is the caller's, in the folder npm was started from
    const from = process.env.INIT_CWD;
    const theirs = from && !path.isAbsolute(f) ? path.resolve(from, f) : undefined;
    if (theirs && fs.existsSync(theirs)) return theirs;
    throw new UsageError(
        `--config-file ${f} does not exist (looked at ${abs}${theirs && theirs !== abs ? ` and ${theirs}` : ""}); give a stack configuration file like Pulumi.dev.yaml`,
    );
}
