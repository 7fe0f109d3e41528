/**
 * `gitops-lab <command>`: the one entry point (package.json "bin"; `npm run <command>` are aliases).
 * With `npm run`, npm prints a banner on stdout: use `npm run -s` (or `npx gitops-lab`) when
 * stdout must be JSON only.
 */
import { bench } from "./bench";
import { buildRealPlaneCommand } from "./buildRealPlane";
import { Command, EXIT, runCommand } from "./command";
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

function overview(): string {
    const width = Math.max(...COMMANDS.map((c) => c.name.length));
    return [
        "usage: gitops-lab <command> [options]   (gitops-lab <command> --help for its options)",
        "",
        ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
        "",
        "exit status: 0 all good, 1 a finding or a failure, 2 a usage error",
    ].join("\n");
}

export async function main(argv: string[]): Promise<number> {
    const [name, ...rest] = argv;
    if (name === undefined || name === "--help" || name === "-h" || name === "help") {
        console.log(overview());
        return name === undefined ? EXIT.USAGE : EXIT.OK;
    }
    const cmd = COMMANDS.find((c) => c.name === name);
    if (!cmd) {
        console.error(`gitops-lab: unknown command "${name}"; one of: ${COMMANDS.map((c) => c.name).join(", ")}`);
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
