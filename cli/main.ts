/**
 * `gitops-lab <command>`: the one entry point (package.json "bin"; `npm run <command>` are aliases).
 * With `npm run`, npm prints a banner on stdout: use `npm run -s` (or `npx gitops-lab`) when
 * stdout must be JSON only.
 */
import { bench } from "./bench";
import { buildRealPlaneCommand } from "./buildRealPlane";
import { ARGOCD_VERSIONS, DEFAULT_ARGOCD_VERSION } from "../lab/platform/argocd";
import { Command, didYouMean, EXIT, runCommand } from "./command";
import { doctor } from "./doctor";
import { kubectlPlugin } from "./kubectlPlugin";
import { nodeCommand } from "./node";
import { preflight } from "./preflight";
import { simulate } from "./simulate";
import { destroy, outputs, preview, refresh, up } from "./up";
import { verify } from "./verify";

export const COMMANDS: Command[] = [
    up,
    preview,
    refresh,
    destroy,
    outputs,
    preflight,
    simulate,
    verify,
    doctor,
    kubectlPlugin,
    bench,
    buildRealPlaneCommand,
    nodeCommand,
];

/** `gitops-lab --version`: the kit's version and the Argo CD releases it installs. */
export function versionLine(): string {
    const { version } = require("../package.json") as { version: string };
    return `gitops-lab ${version} (Argo CD ${ARGOCD_VERSIONS.join(", ")}; default ${DEFAULT_ARGOCD_VERSION})`;
}

function overview(): string {
    const width = Math.max(...COMMANDS.map((c) => c.name.length));
    return [
        "usage: gitops-lab <command> [options]   (gitops-lab <command> --help for its options)",
        "",
        ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
        "",
        "  --version  the kit's version and the Argo CD releases it installs",
        "",
        "exit status: 0 all good, 1 a finding or a failure, 2 a usage error",
    ].join("\n");
}

/** Words for what a command does, not its name: which command (and option) does it. */
const DOWN = "to take a lab down: gitops-lab simulate --root DIR --reset (a simulated lab), gitops-lab destroy (a lab host)";
const WORDS: Record<string, string> = {
    ...Object.fromEntries(["reset", "down", "teardown", "delete", "remove", "clean", "uninstall"].map((w) => [w, DOWN])),
    ...Object.fromEntries(
        ["serve", "start", "run"].map((w) => [w, "to serve a simulated lab for kubectl and git: gitops-lab simulate --root DIR --serve"]),
    ),
    ...Object.fromEntries(
        ["grade", "check", "test"].map((w) => [w, "to grade a lab: gitops-lab verify --root DIR (--step N for one step)"]),
    ),
    stop: "a served lab stops with Ctrl-C where it runs (or kill its PID); its lab stays, and the same command serves it again",
};

export async function main(argv: string[]): Promise<number> {
    const [name, ...rest] = argv;
    // help COMMAND, as git takes it: that command's help
    const helped = name === "help" ? COMMANDS.find((c) => c.name === rest[0]) : undefined;
    if (helped) return runCommand(helped, ["--help"]);
    if (name === "help" && rest[0] !== undefined) {
        // help of a word that is no command: say so, as for a misspelt command, rather than the overview alone
        const hint = didYouMean(
            rest[0],
            COMMANDS.map((c) => c.name),
        );
        const word = WORDS[rest[0].toLowerCase()];
        console.error(
            `gitops-lab: no help for "${rest[0]}": no such command${word ? `; ${word}` : hint ? `; did you mean gitops-lab help ${hint}?` : ""} (one of: ${COMMANDS.map((c) => c.name).join(", ")})`,
        );
        return EXIT.USAGE;
    }
    if (name === undefined || name === "--help" || name === "-h" || name === "help") {
        console.log(overview());
        return name === undefined ? EXIT.USAGE : EXIT.OK;
    }
    if (name === "--version" || name === "-V" || name === "version") {
        console.log(versionLine());
        return EXIT.OK;
    }
    const cmd = COMMANDS.find((c) => c.name === name);
    if (!cmd && name.startsWith("-")) {
        // an option first: the command's options go after it (gitops-lab simulate --root DIR), or a misspelt --version/--help
        const later = rest.find((a) => COMMANDS.some((c) => c.name === a));
        // -v (as node -v): the version's short option is -V
        const hint = name === "-v" ? "version" : didYouMean(name.replace(/^-+/, ""), ["version", "help"]);
        console.error(
            later
                ? `gitops-lab: ${name} comes before the command: options go after it (gitops-lab ${later} ${[name, ...rest.filter((a) => a !== later)].join(" ")})`
                : `gitops-lab: unknown option "${name}"${hint ? `; did you mean --${hint}${name === "-v" ? " (or -V)" : ""}?` : ""} (a command comes first: one of ${COMMANDS.map((c) => c.name).join(", ")})`,
        );
        return EXIT.USAGE;
    }
    if (!cmd) {
        const hint = didYouMean(
            name,
            COMMANDS.map((c) => c.name),
        );
        const word = WORDS[name.toLowerCase()];
        console.error(
            `gitops-lab: unknown command "${name}"${word ? `; ${word}` : hint ? `; did you mean "${hint}"?` : ""} (one of: ${COMMANDS.map((c) => c.name).join(", ")})`,
        );
        return EXIT.USAGE;
    }
    return runCommand(cmd, rest);
}

if (require.main === module) {
    main(process.argv.slice(2)).then(
        (code) => process.exit(code),
        (e) => {
            console.error(`gitops-lab: ${e?.message ?? e}`);
            process.exit(EXIT.FINDING);
        },
    );
}
