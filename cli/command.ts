/**
 * One command-line convention for every subcommand of `gitops-lab`: options parsed with Node's
 * util.parseArgs, `--help` everywhere, and one exit-code convention:
 *   0  all good
 *   1  a finding or a failure (a check failed, a rollout is stuck, the work could not be done)
 *   2  a usage error (an unknown option, a bad value)
 * Errors are one line on stderr, `gitops-lab <command>: <what was wrong and what to do>`.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { closest, distance } from "fastest-levenshtein";
import { parseArgs, ParseArgsConfig } from "util";
import { CONFIG_KEYS } from "../lab/platform/stackConfig";
import { codeOf, messageOf } from "../lab/ports/errors";

export const EXIT = { OK: 0, FINDING: 1, USAGE: 2 } as const;

/** A bad command line: exit 2. */
export class UsageError extends Error {}

export type Options = NonNullable<ParseArgsConfig["options"]>;
export type Values = Record<string, string | boolean | undefined>;

export interface Command {
    name: string;
    /** One line for the list of commands. */
    summary: string;
    /** The synopsis, e.g. "simulate --root DIR [--through N]". */
    usage: string;
    /** What each option means, one line each, shown by --help. */
    details: string[];
    options: Options;
    /** Options of another tool given here by habit (kubectl's -n), each with what to do instead. */
    misread?: Record<string, string>;
    /** What to do instead of giving an option twice, where there is more to say than "give it once". */
    once?: Record<string, string>;
    /** What a word given bare means here, when not an option's value (outputs NAME, as pulumi stack output NAME). */
    bare?: (word: string) => string | undefined;
    run(values: Values): Promise<number>;
}

/** Parses a command's arguments; a bad command line becomes a UsageError naming the fix. */
export function parse(cmd: Command, argv: string[], program = `gitops-lab ${cmd.name}`): Values | "help" {
    let values: Values;
    let tokens: NonNullable<ReturnType<typeof parseArgs>["tokens"]> = [];
    // a negative number after an option that takes a value is that value (parseArgs would call it ambiguous): --through -1
    const args = argv.flatMap((a, i) =>
        i > 0 && /^-\d/.test(a) && /^--[\w-]+$/.test(argv[i - 1]) && cmd.options[argv[i - 1].slice(2)]?.type === "string"
            ? []
            : [
                  /^--[\w-]+$/.test(a) && /^-\d/.test(argv[i + 1] ?? "") && cmd.options[a.slice(2)]?.type === "string"
                      ? `${a}=${argv[i + 1]}`
                      : a,
              ],
    );
    // a -- (copied from npm run's command line) ends the options: what follows it would be taken as arguments
    const stop = args.indexOf("--");
    if (stop >= 0 && stop < args.length - 1)
        throw new UsageError(
            `a -- ends the options, so ${args.slice(stop + 1).join(" ")} after it would be no options: leave the -- out (it is for npm run: npm run -s SCRIPT -- OPTIONS) (see ${program} --help)`,
        );
    try {
        const parsed = parseArgs({
            args,
            options: { ...cmd.options, help: { type: "boolean", short: "h" } },
            strict: true,
            allowPositionals: false,
            tokens: true,
        });
        values = parsed.values as Values;
        tokens = parsed.tokens ?? [];
    } catch (e) {
        const first = messageOf(e)
            .split("\n")[0]
            .replace(/\. To specify a positional argument.*$/, "");
        const unknown = /^Unknown option '--([^'=]+)'/.exec(first)?.[1];
        const hint = unknown ? didYouMean(unknown, [...Object.keys(cmd.options), "help"]) : null;
        // a stack configuration key given as an option (--solve-through 3): where it goes instead
        const key = unknown && !hint ? CONFIG_KEYS.find((k) => k.toLowerCase() === unknown.replace(/-/g, "").toLowerCase()) : undefined;
        const habit = cmd.misread?.[/^Unknown option '(-[^'=]+)'/.exec(first)?.[1] ?? ""];
        // a name given bare where an option takes it (rollout-doctor tenants): the option it goes with
        const bare = /^Unexpected argument '([^']*)'/.exec(first)?.[1];
        // a second value after an option's one (--through 3 4): that option takes one
        // the last of its kind: a value equal to an earlier option's (--through 3 3) is the stray one
        const at = bare === undefined ? -1 : args.lastIndexOf(bare);
        const after = at >= 2 && /^--[^=]+$/.test(args[at - 2]) && !args[at - 1].startsWith("-") ? args[at - 2] : undefined;
        if (after) throw new UsageError(`'${bare}' follows ${after} ${args[at - 1]}: ${after} takes one value (see ${program} --help)`);
        if (bare === "help") throw new UsageError(`${first}; for ${cmd.name}'s options: ${program} --help`);
        // a dash a document's typesetting made (–-root, —root): it looks like --, and is no option
        const dash = bare === undefined ? null : /^([\u2012-\u2015\u2212])-?([a-z][\w-]*)/i.exec(bare);
        if (dash)
            throw new UsageError(
                `'${bare}' starts with ${dash[1] === "\u2014" ? "an em dash (U+2014" : `a typographic dash (U+${dash[1].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`}, copied from a document?), not --: type it as --${dash[2]} (see ${program} --help)`,
            );
        // an option followed by the next one, its value forgotten (--root --through 3)
        const empty = /^Option '(--[^']+)' argument is ambiguous/.exec(first)?.[1];
        if (empty) {
            const next = args[args.indexOf(empty) + 1];
            throw new UsageError(`${empty} was given no value (${next} follows it): ${empty} VALUE (see ${program} --help)`);
        }
        // a file given bare: the option that takes a file of its kind (preflight Pulumi.dev.yaml, doctor dump.json)
        const fileOption =
            bare === undefined
                ? undefined
                : /\.ya?ml$/i.test(bare)
                  ? ["config-file"].find((o) => cmd.options[o])
                  : /\.json$/i.test(bare)
                    ? // a dump for the doctor; the stack's outputs for verify (a result file is read from --root, not given)
                      ["from", ...(/output/i.test(path.basename(bare)) ? ["stack-outputs"] : [])].find((o) => cmd.options[o])
                    : undefined;
        const isFile = bare !== undefined && (/\.(ya?ml|json)$/i.test(bare) || fs.statSync(bare, { throwIfNoEntry: false })?.isFile());
        const named =
            bare === undefined || isFile
                ? fileOption
                : (["appset", "root"] as const).find((o) => cmd.options[o] && !args.includes(`--${o}`));
        // npm run without --: npm keeps the options for itself (npm_config_<name>) and passes their values on as arguments
        const eaten =
            bare !== undefined && process.env.npm_lifecycle_event
                ? Object.keys(cmd.options).filter((o) => process.env[`npm_config_${o.replace(/-/g, "_")}`] !== undefined)
                : [];
        const said = eaten.length
            ? `; npm run took ${eaten.map((o) => `--${o}`).join(", ")} for itself: put -- before the command's options (npm run -s ${process.env.npm_lifecycle_event} -- --${eaten[0]} ...)`
            : habit
              ? `: ${habit}`
              : bare !== undefined && cmd.bare?.(bare)
                ? `: ${cmd.bare(bare)}`
                : named
                  ? `; ${named === "appset" ? "to look at one ApplicationSet" : named === "root" ? "the lab's root is given" : "a file is given"}: --${named} ${bare}`
                  : hint
                    ? `; did you mean --${hint}?`
                    : key
                      ? `; ${key} is a key of the stack's configuration, not an option: pulumi config set ${key} VALUE (or in Pulumi.dev.yaml, or a --config-file)`
                      : "";
        throw new UsageError(`${first}${said} (see ${program} --help)`);
    }
    // an option given twice: parseArgs keeps the last; say so rather than choose for the user
    const given = new Map<string, string[]>();
    for (const t of tokens)
        if (t.kind === "option") given.set(t.name, [...(given.get(t.name) ?? []), t.value === undefined ? "" : `"${t.value}"`]);
    for (const [name, seen] of given)
        if (seen.length > 1 && !cmd.options[name]?.multiple)
            throw new UsageError(
                `--${name} is given ${seen.length} times${seen.every((v) => v) ? ` (${seen.join(", then ")})` : ""}: give it once${cmd.once?.[name] ? `: ${cmd.once[name]}` : ""} (see ${program} --help)`,
            );
    inline.set(values, new Set(tokens.flatMap((t) => (t.kind === "option" && t.inlineValue ? [t.name] : []))));
    return values.help ? "help" : values;
}

/** The options of a parsed command line given as --name=value (a shell expands no ~ after the =). */
const inline = new WeakMap<Values, Set<string>>();

/** Whether `word`'s letters appear in `name` in order, from its first letter on (thru in through, kcfg in kubeconfig). */
const abbreviates = (word: string, name: string): boolean => {
    if (word[0] !== name[0]) return false;
    let i = 0;
    for (const ch of name) if (ch === word[i]) i++;
    return i === word.length;
};

/**
 * The nearest of `names` to a misspelt `word` (two edits at most, or a third of its length), or the
 * one name it begins or abbreviates (--thru for --through), or null.
 */
export function didYouMean(word: string, names: string[]): string | null {
    if (!names.length) return null;
    const best = closest(word, names);
    if (distance(word, best) <= Math.max(2, Math.floor(word.length / 3))) return best;
    const begun = word.length >= 3 ? names.filter((n) => n.startsWith(word)) : [];
    if (begun.length === 1) return begun[0];
    // of several it abbreviates, the nearest when one is (thru: through, not tenants-through)
    const short = (word.length >= 3 ? names.filter((n) => abbreviates(word, n)) : []).sort((x, y) => distance(word, x) - distance(word, y));
    return short.length === 1 || (short.length > 1 && distance(word, short[0]) < distance(word, short[1])) ? short[0] : null;
}

/** `program`: the name it runs as (kubectl's plugin runs the doctor as `kubectl rollout-doctor`). */
export function helpText(cmd: Command, program = `gitops-lab ${cmd.name}`): string {
    const usage = cmd.usage.startsWith(`${cmd.name}`) ? `${program}${cmd.usage.slice(cmd.name.length)}` : `gitops-lab ${cmd.usage}`;
    return [
        `usage: ${usage}`,
        "",
        cmd.summary,
        "",
        ...cmd.details.map((d) => `  ${d}`),
        "  -h, --help          this text",
        "",
        "exit status: 0 all good, 1 a finding or a failure, 2 a usage error",
    ].join("\n");
}

/** A whole number option within [min, max], or its default. */
export function intOption(values: Values, name: string, range: { min: number; max: number; default: number }): number {
    const v = values[name];
    if (v === undefined) return range.default;
    const n = Number(v);
    if (typeof v !== "string" || !/^\d+$/.test(v) || n < range.min || n > range.max) {
        throw new UsageError(`--${name} takes a whole number from ${range.min} to ${range.max}, got "${v}"`);
    }
    return n;
}

/** A number option >= min (fractions allowed), or its default. */
export function numberOption(values: Values, name: string, range: { min: number; default: number; unit?: "seconds" }): number {
    const v = values[name];
    if (v === undefined) return range.default;
    const n = Number(v);
    if (typeof v !== "string" || v.trim() === "" || !Number.isFinite(n) || n < range.min) {
        // a duration written as Go or kubectl write them (10m, 30s, 1h): the number it meant
        const d = range.unit === "seconds" ? /^(\d+(?:\.\d+)?)(s|m|h)$/.exec(String(v).trim()) : null;
        const meant = d ? `; for ${d[1]}${d[2]} write ${Number(d[1]) * { s: 1, m: 60, h: 3600 }[d[2] as "s" | "m" | "h"]}` : "";
        throw new UsageError(`--${name} takes a number${range.unit ? ` of ${range.unit}` : ""} >= ${range.min}, got "${v}"${meant}`);
    }
    return n;
}

/** An option that makes sense only with another one: refused in one line when given without it. */
export function onlyWith(cmd: string, values: Values, name: string, other: string): void {
    if (values[name] !== undefined && !values[other]) throw new UsageError(`--${name} goes with --${other} (see gitops-lab ${cmd} --help)`);
}

/** Options that exclude each other: refused in one line when more than one is given. */
export function oneOf(cmd: string, values: Values, names: string[]): void {
    const given = names.filter((n) => values[n] !== undefined && values[n] !== false);
    if (given.length > 1)
        throw new UsageError(`${given.map((g) => `--${g}`).join(" and ")} do not go together: choose one (see gitops-lab ${cmd} --help)`);
}

/** A string option's value; an empty one (`--out ''`, an unset shell variable) is refused, never read as "here". */
export function stringOption(values: Values, name: string, opts: { required?: boolean } = {}): string | undefined {
    const v = values[name];
    if (v === "")
        throw new UsageError(
            `--${name} was given an empty value (an unset variable?): ${opts.required ? `give one, e.g. --${name} /tmp/lab` : "give one, or leave the option out"}`,
        );
    // --root=~/x: a shell expands ~ only at a word's start, so it came here as written and would name a folder called ~;
    // --root "~/x": quoted, it is not expanded either
    if (typeof v === "string" && /^~(\/|$)/.test(v)) {
        const whole = path.join(os.homedir(), v.slice(2));
        throw new UsageError(
            inline.get(values)?.has(name) === false
                ? `--${name} ${v}: the ~ came here as written (quoted, the shell does not expand it): write --${name} ${v} without quotes, or the whole path (${whole})`
                : `--${name} ${v}: ~ is not expanded after = (the shell expands it at a word's start only): write --${name} ${v} with a space, or the whole path (${whole})`,
        );
    }
    // --root '$HOME/x': quoted, the shell left the variable as written, and it would name a folder called $HOME
    const dollar = typeof v === "string" ? /^\$\{?(\w+)\}?(\/.*)?$/.exec(v) : null;
    if (dollar)
        throw new UsageError(
            `--${name} ${v}: the $${dollar[1]} came here as written (in single quotes, the shell does not expand it): write --${name} "$${dollar[1]}${dollar[2] ?? ""}" in double quotes or none${process.env[dollar[1]] ? `, or the whole path (${process.env[dollar[1]]}${dollar[2] ?? ""})` : ""}`,
        );
    // "R " pasted with a blank: invisible in the answer that names it, and another folder than R
    if (typeof v === "string" && v.trim() !== v && v.trim())
        throw new UsageError(
            `--${name} ${JSON.stringify(v)} has ${/^\s/.test(v) ? "a space at its start" : "a space at its end"} (copied with it?), which would name another ${name === "root" ? "folder" : "value"} than ${JSON.stringify(v.trim())}: give it without`,
        );
    return typeof v === "string" ? v : undefined;
}

/** Filesystems that hold no files of ours: procfs and sysfs (statfs magic numbers), and where they are mounted. */
const SPECIAL_FS = { "/proc": 0x9fa0, "/sys": 0x62656572 } as const;
const SPECIAL_DIRS = [...Object.keys(SPECIAL_FS), "/dev"];

/**
 * A lab root from the command line, checked before anything is created: not on a special
 * filesystem (Node's recursive mkdir never returns under /proc), and the nearest part of it that
 * exists is a directory (not a file, nor under one). The absolute path, or a UsageError in one line.
 */
export function checkRoot(root: string, option = "--root"): string {
    const abs = path.resolve(root);
    // (/dev/shm is a tmpfs, which holds files as /tmp does: a root there is taken)
    const special = /^\/dev\/shm(\/|$)/.test(abs) ? undefined : SPECIAL_DIRS.find((d) => abs === d || abs.startsWith(`${d}/`));
    if (special)
        throw new UsageError(
            `${option} ${root} is under ${special}, a special filesystem that cannot hold the lab's files; choose a directory on a disk, e.g. /tmp/gitops-lab`,
        );
    for (let p = abs; ; p = path.dirname(p)) {
        let st: fs.Stats;
        try {
            st = fs.statSync(p);
        } catch (e) {
            // a symlink to nothing (its target moved or not made yet): mkdir would fail on it after the run began
            const link = codeOf(e) === "ENOENT" ? fs.lstatSync(p, { throwIfNoEntry: false }) : undefined;
            if (link?.isSymbolicLink())
                throw new UsageError(
                    `${option} ${root}: ${p} is a symlink to ${fs.readlinkSync(p)}, which does not exist: create that folder, or choose another ${option}`,
                );
            if ((codeOf(e) === "ENOENT" || codeOf(e) === "ENOTDIR") && p !== path.dirname(p)) continue;
            throw new UsageError(`${option} ${root} cannot be used (${codeOf(e) ?? messageOf(e)} at ${p}); choose another directory`);
        }
        if (!st.isDirectory()) throw new UsageError(`${option} ${root}: ${p} is a file, not a directory; choose another ${option}`);
        const type = fs.statfsSync(p).type;
        const mounted = Object.entries(SPECIAL_FS).find(([, magic]) => type === magic);
        if (mounted)
            throw new UsageError(
                `${option} ${root} is on a ${mounted[0].slice(1)} filesystem, which cannot hold the lab's files; choose a directory on a disk, e.g. /tmp/gitops-lab`,
            );
        // through its real path: a lab reached by a symlink is the same lab (its clone's origin names the real one)
        return path.join(fs.realpathSync(p), path.relative(p, abs));
    }
}

/**
 * A root a command writes under: its nearest existing folder must be writable, said in one line
 * before anything is tried (Node's recursive mkdir on a read-only mount answers ENOENT).
 */
export function checkRootWritable(abs: string, root: string, option = "--root"): void {
    let p = abs;
    while (!fs.existsSync(p) && p !== path.dirname(p)) p = path.dirname(p);
    try {
        fs.accessSync(p, fs.constants.W_OK);
    } catch (e) {
        if (codeOf(e) === "EROFS")
            throw new UsageError(
                `${option} ${root}: ${p} is on a read-only filesystem; choose a directory on a writable disk, e.g. /tmp/gitops-lab`,
            );
        if (codeOf(e) === "EACCES")
            throw new UsageError(`${option} ${root}: ${p} is not writable by this user; choose another ${option} (or run as its owner)`);
        throw new UsageError(`${option} ${root} cannot be written (${codeOf(e) ?? messageOf(e)} at ${p}); choose another directory`);
    }
}

/** Runs one command with its arguments: --help, a usage error (2) or a failure (1) as one line on stderr. */
export async function runCommand(cmd: Command, argv: string[], program = `gitops-lab ${cmd.name}`): Promise<number> {
    try {
        const values = parse(cmd, argv, program);
        if (values === "help") {
            console.log(helpText(cmd, program));
            return EXIT.OK;
        }
        return await cmd.run(values);
    } catch (e) {
        // a line that points to the help points to the help of the name it runs as
        console.error(`${program}: ${messageOf(e).split(`(see gitops-lab ${cmd.name} --help)`).join(`(see ${program} --help)`)}`);
        return e instanceof UsageError ? EXIT.USAGE : EXIT.FINDING;
    }
}

/**
 * The lab's git daemon runs as nobody, as its Pod does (sim/gitDaemon.ts, when we are root): every
 * folder above the root that exists must let others pass (o+x), or the daemon cannot reach the
 * repositories and exits. Checked before anything is created; the root itself the lab opens itself.
 */
export function checkRootReachableByNobody(abs: string, root: string, option = "--root"): void {
    for (let p = path.dirname(abs); ; p = path.dirname(p)) {
        const st = fs.statSync(p, { throwIfNoEntry: false });
        if (st && !(st.mode & 0o001)) {
            throw new UsageError(
                `${option} ${root}: ${p} is closed to others (mode ${(st.mode & 0o777).toString(8)}), and the lab's git daemon serves the repositories as nobody, as its Pod does; chmod o+x ${p}, or choose another ${option}`,
            );
        }
        if (p === path.dirname(p)) return;
    }
}
