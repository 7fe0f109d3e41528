/**
 * The stack's configuration, one schema (zod) for every reader: index.ts (from Pulumi's config),
 * and `preflight`/`up` (from Pulumi.yaml's defaults and the stack file) before anything is
 * installed. Each value may come as YAML gives it or as the string Pulumi's config holds; a bad one
 * is one line naming the key, where it came from and what is allowed.
 */
import * as os from "os";
import * as path from "path";
import { closest, distance } from "fastest-levenshtein";
import { z } from "zod";
import { ARGOCD_VERSIONS, ArgoCdVersion } from "./argocd";
import { DEFAULTS } from "./defaults";
import { redactedUrl, registryUrlProblem } from "./images";

const K3S_VERSION_RE = /^v\d+\.\d+\.\d+\+k3s\d+$/;

/** A whole number in [min, max], written as a number or a string of digits. */
const whole = (min: number, max: number, allowed: string) =>
    z.preprocess(
        (v) => (typeof v === "string" && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v),
        z.number({ error: allowed }).int({ error: allowed }).min(min, { error: allowed }).max(max, { error: allowed }),
    );
/** true or false, written as a YAML boolean or the string Pulumi's config holds. */
const bool = z.preprocess((v) => (v === "true" ? true : v === "false" ? false : v), z.boolean({ error: "true or false" }));
const seconds = whole(1, 86_400, "a whole number of seconds from 1 to 86400");
/**
 * An image reference as the distribution reference grammar has it ([domain[:port]/]path[:tag][@digest]: a first
 * component is a domain only with a dot, a port or as localhost; the path lower-case): hand-written, as the grammar's own regular expression is Go code, not a package.
 */
const IMAGE_REF =
    /^(?:(?:localhost|\[[0-9a-fA-F:]+\]|[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)+|[a-zA-Z0-9-]+(?=:\d))(?::\d+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::\w[\w.-]{0,127})?(?:@(?:sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128}))?$/;
const REGISTRY_ALLOWED = "a registry's address, http://host:port (or https://), or empty to import into k3s";

/** The official base images (docker.io/library/debian, ubuntu, alpine, busybox; any tag or digest): none holds git. */
const BASE_WITHOUT_GIT =
    /^(?:(?:docker\.io|index\.docker\.io|registry-1\.docker\.io)\/)?(?:library\/)?(?:debian|ubuntu|alpine|busybox)(?:[:@]|$)/;

export const STACK_CONFIG = z.object({
    // absolute: a relative one would depend on the folder pulumi runs in
    root: z
        .string({ error: "an absolute directory path, e.g. /" })
        .refine((v) => v.startsWith("/"), { error: "an absolute directory path, e.g. /" })
        // a path pasted with a space at an end names another folder: said, never taken
        .refine((v) => v.trim() === v, { error: "a path with no space at either end (a pasted one often has one: remove it)" })
        .default(DEFAULTS.root),
    solveThrough: whole(0, 8, "a whole number from 0 to 8").default(DEFAULTS.solveThrough),
    k3sVersion: z.string().regex(K3S_VERSION_RE, { error: "a k3s release tag like v1.36.4+k3s1" }).default(DEFAULTS.k3sVersion),
    argocdVersion: z
        .enum(ARGOCD_VERSIONS as [ArgoCdVersion, ...ArgoCdVersion[]], { error: `one of ${ARGOCD_VERSIONS.join(", ")}` })
        .default(DEFAULTS.argocdVersion as ArgoCdVersion),
    kubeconfigPath: z
        .string({ error: "a kubeconfig file's absolute path, or empty to install k3s" })
        .refine((v) => v === "" || v.startsWith("/"), { error: "a kubeconfig file's absolute path, or empty to install k3s" })
        .refine((v) => v.trim() === v, { error: "a path with no space at either end (a pasted one often has one: remove it)" })
        .default(""),
    gitDaemonImage: z
        .string()
        .regex(IMAGE_REF, {
            error: "an image reference with git daemon in it, registry/name:tag or @sha256: and 64 lower-case hex digits (no spaces, the name lower-case)",
        })
        // alpine/git has git but not its daemon (Alpine's git-daemon package): up would fail only at the daemon's readiness wait
        .refine((v) => !/^(?:(?:docker\.io|index\.docker\.io|registry-1\.docker\.io)\/)?alpine\/git(?:[:@]|$)/.test(v), {
            error: `an image with git daemon in it; alpine/git has no git daemon (on Alpine it is the git-daemon package): leave the key out for ${DEFAULTS.gitDaemonImage}`,
        })
        // the official base images (debian, ubuntu, alpine, busybox, any tag) hold no git at all: the same late failure
        .refine((v) => !BASE_WITHOUT_GIT.test(v), {
            error: `an image with git daemon in it; debian, ubuntu, alpine and busybox are base images without git: leave the key out for ${DEFAULTS.gitDaemonImage} (Debian with git), or build one FROM them that installs git`,
        })
        .default(DEFAULTS.gitDaemonImage),
    syncTimeoutSeconds: seconds.default(DEFAULTS.syncTimeoutSeconds),
    k3sReadyTimeoutSeconds: seconds.default(DEFAULTS.k3sReadyTimeoutSeconds),
    argocdReadyTimeoutSeconds: seconds.default(DEFAULTS.argocdReadyTimeoutSeconds),
    gitDaemonReadyTimeoutSeconds: seconds.default(DEFAULTS.gitDaemonReadyTimeoutSeconds),
    destroyTimeoutSeconds: seconds.default(DEFAULTS.destroyTimeoutSeconds),
    tenantsLab: bool.default(DEFAULTS.tenantsLab),
    tenantsSolveThrough: whole(1, 3, "1, 2 or 3").default(DEFAULTS.tenantsSolveThrough),
    tenantsWaitTimeoutSeconds: seconds.default(DEFAULTS.tenantsWaitTimeoutSeconds),
    imageRegistry: z
        .string({ error: REGISTRY_ALLOWED })
        .superRefine((v, ctx) => {
            const problem = v === "" ? null : registryUrlProblem(v);
            if (problem) ctx.addIssue({ code: "custom", message: `${REGISTRY_ALLOWED} (${problem})` });
        })
        .default(DEFAULTS.imageRegistry),
    rolloutDoctor: z.enum(["auto", "on", "off"], { error: "auto, on or off" }).default(DEFAULTS.rolloutDoctor as "auto"),
});

export type StackConfig = z.infer<typeof STACK_CONFIG>;
export const CONFIG_KEYS = Object.keys(STACK_CONFIG.shape) as (keyof StackConfig)[];

/** The command line's options a stack file's key is sometimes named after, and the key each stands for. */
const OPTION_KEYS: Record<string, { key: keyof StackConfig; as: string }> = {
    through: { key: "solveThrough", as: "--through N is simulate's option" },
    "tenants-through": { key: "tenantsSolveThrough", as: "--tenants-through N is simulate's option" },
    tenantsThrough: { key: "tenantsSolveThrough", as: "--tenants-through N is simulate's option" },
    lab: { key: "tenantsLab", as: "--lab is simulate's and verify's option (the tenants lab in a stack is tenantsLab: true)" },
    kubeconfig: { key: "kubeconfigPath", as: "--kubeconfig is verify's and the doctor's option (an existing cluster's file)" },
};

/**
 * Checks raw values (absent keys take their defaults); `source` says where they came from, e.g.
 * "Pulumi.dev.yaml". Unknown keys are refused too: a typo would otherwise be ignored.
 */
export function parseStackConfig(raw: Record<string, unknown>, source: string): StackConfig {
    // a character nobody sees (a zero-width space pasted with a path): in a key or a value it makes another one, unseen
    for (const [k, v] of Object.entries(raw)) {
        const where = INVISIBLE.exec(k) ? "key" : typeof v === "string" && INVISIBLE.exec(v) ? "value" : undefined;
        if (!where) continue;
        const text = where === "key" ? k : String(v);
        const at = text.search(INVISIBLE);
        const code = `U+${text.codePointAt(at)!.toString(16).toUpperCase().padStart(4, "0")}`;
        throw new Error(
            `${source}: gitops-lab:${k.replace(INVISIBLE_ALL, "")}'s ${where} holds a character nobody sees (${code}, ${INVISIBLE_NAMES[code] ?? "a format character"}, pasted with it?) at position ${at + 1}: type the ${where} again (${JSON.stringify(text.replace(INVISIBLE_ALL, ""))})`,
        );
    }
    const unknown = Object.keys(raw).filter((k) => !(CONFIG_KEYS as string[]).includes(k));
    // a key with a letter's case wrong or a letter or two off (tenantslab, solveThrugh): the key it means
    const meant = (k: string) =>
        CONFIG_KEYS.find((c) => c.toLowerCase() === k.toLowerCase()) ?? [closest(k, CONFIG_KEYS)].find((c) => distance(c, k) <= 2);
    const guess = unknown.length === 1 ? meant(unknown[0]) : undefined;
    // an option of the command line written as a key (simulate's --through, --lab, --kubeconfig): the key it stands for
    const option = unknown.length === 1 && !guess ? OPTION_KEYS[unknown[0]] : undefined;
    if (option)
        throw new Error(
            `${source}: gitops-lab:${unknown[0]} is not a key of this lab: ${option.as}; in a stack file it is gitops-lab:${option.key}`,
        );
    if (unknown.length)
        throw new Error(
            guess
                ? `${source}: gitops-lab:${unknown[0]} is not a key of this lab; did you mean gitops-lab:${guess}?${guess.toLowerCase() === unknown[0].toLowerCase() ? " (keys are case-sensitive)" : ""}`
                : `${source}: ${unknown.map((k) => `gitops-lab:${k}`).join(", ")} ${unknown.length === 1 ? "is not a key" : "are not keys"} of this lab; the keys are ${CONFIG_KEYS.join(", ")} (see the README)`,
        );
    const values = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v !== null));
    const r = STACK_CONFIG.safeParse(values);
    if (r.success) return r.data;
    const issue = r.error.issues[0];
    const key = String(issue.path[0]);
    return fail(source, key, values[key], `${issue.message}${slip(key, values[key])}`);
}

/** Characters that show as nothing: zero-width spaces and joiners, the word joiner, a byte-order mark, a soft hyphen. */
const INVISIBLE = /[\u200B-\u200D\u2060\uFEFF\u00AD]/;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, "g");
const INVISIBLE_NAMES: Record<string, string> = {
    "U+200B": "a zero-width space",
    "U+200C": "a zero-width non-joiner",
    "U+200D": "a zero-width joiner",
    "U+2060": "a word joiner",
    "U+FEFF": "a byte-order mark",
    "U+00AD": "a soft hyphen",
};

/** A value written the way people write it, where the fix is plain: a duration for seconds, a ~ for the home folder. */
function slip(key: string, value: unknown): string {
    const unit: Record<string, number> = { s: 1, m: 60, h: 3600 };
    const d = typeof value === "string" ? /^\s*(\d+)\s*([smh])\s*$/.exec(value) : null;
    if (d && /Seconds$/.test(key)) return `; for ${value} write ${Number(d[1]) * unit[d[2]]}`;
    // a k3s tag as the rancher/k3s image writes it (v1.36.4-k3s1), or without its v or its +k3sN
    const k = key === "k3sVersion" && typeof value === "string" ? /^v?(\d+\.\d+\.\d+)(?:[-_+]?(k3s\d+))?$/.exec(value.trim()) : null;
    if (k)
        return `; k3s releases are tagged v, the Kubernetes version, + and k3sN (${String(value).includes("-k3s") ? `${value} is the rancher/k3s image's tag, with - for +` : "as on k3s's releases page"}): write v${k[1]}+${k[2] ?? "k3s1"}`;
    // a number YAML reads as one, which Pulumi hands the program as written (8.0, 0x8, 1e1): whole numbers are digits alone
    const n =
        typeof value === "string" && /^[-+]?(?:\d+\.\d*|\.\d+|\d+(?:\.\d*)?e[-+]?\d+|0x[0-9a-f]+|0o[0-7]+|\+\d+)$/i.test(value)
            ? Number(value)
            : NaN;
    const shape = STACK_CONFIG.shape[key as keyof typeof STACK_CONFIG.shape];
    // (only where the digits alone are a value the key takes: a number key, in its range)
    if (Number.isInteger(n) && shape && shape.safeParse(String(n)).success && !shape.safeParse(String(value)).success)
        return `; Pulumi hands the program the value as it is written (${value}), and a whole number is read in digits alone: write ${n}`;
    // True, TRUE, yes: YAML 1.1's booleans, which Pulumi hands the program as written
    if (typeof value === "string" && /^(true|false)$/i.test(value) && value !== value.toLowerCase())
        return `; Pulumi hands the program the value as it is written, and reads true and false in lower case alone: write ${value.toLowerCase()}`;
    // a block scalar (| or >): it keeps the line break at its end
    if (typeof value === "string" && /\n$/.test(value) && value.trim())
        return `; it ends with a line break, which a block scalar (| or >) keeps: write the value on the key's own line (gitops-lab:${key}: ${value.trim()})`;
    if (typeof value === "string" && value.startsWith("~/"))
        return `; ~ is not expanded here: write the whole path (${path.join(os.homedir(), value.slice(2))})`;
    // typographic quotes (copied from a document): YAML reads them as part of the value
    const q = typeof value === "string" ? /^[\u201c\u2018\u00ab](.*)[\u201d\u2019\u00bb]$/.exec(value) : null;
    if (q)
        return `; its quotes are typographic (“ ”, copied from a document?), which YAML reads as part of the value: use plain quotes or none (${q[1]})`;
    // a comment with no space before its #: YAML reads it as part of the value
    const c = typeof value === "string" ? /^(\S.*?)#\s*(.*)$/.exec(value) : null;
    if (c && !/\s$/.test(c[1]))
        return `; YAML reads # as a comment only after a space, so the comment is part of the value: write ${c[1]} # ${c[2]}`;
    // $HOME/lab, ${HOME}/lab: no shell reads the file, so a variable stays as written
    const v = typeof value === "string" ? /^\$\{?(\w+)\}?(\/.*)?$/.exec(value) : null;
    if (v)
        return `; $${v[1]} is not expanded here (no shell reads the file): write ${key === "root" || key === "kubeconfigPath" ? "the whole path" : "the value itself"}${process.env[v[1]] ? ` (${key === "imageRegistry" ? redactedUrl(`${process.env[v[1]]}${v[2] ?? ""}`) : `${process.env[v[1]]}${v[2] ?? ""}`})` : ""}`;
    return "";
}

function fail(source: string, key: string, value: unknown, allowed: string): never {
    throw new Error(
        `${source}: gitops-lab:${key} is ${JSON.stringify(key === "imageRegistry" && typeof value === "string" ? redactedUrl(value) : value)}; allowed: ${allowed} (pulumi config set ${key} <value>, or edit the file)`,
    );
}
