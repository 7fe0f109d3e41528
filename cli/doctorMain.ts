/**
 * The rollout doctor on its own: the entry point of the one-file bundle that runs in the cluster
 * (components/rolloutDoctor.ts bundles it with esbuild; a pinned Node image runs it). It carries only
 * the doctor, not Pulumi or the simulator. `node doctor.js [doctor] --watch …` takes the doctor's options.
 */
import * as path from "path";
import { EXIT, runCommand } from "./command";
import { doctor } from "./doctor";

/** What its lines are signed with: kubectl's plugin speaks as `kubectl rollout-doctor`. */
const program = () => (path.basename(process.argv[1] ?? "") === "kubectl-rollout_doctor" ? "kubectl rollout-doctor" : "gitops-lab doctor");

export function doctorMain(argv: string[]): Promise<number> {
    return runCommand(doctor, argv[0] === "doctor" ? argv.slice(1) : argv, program());
}

if (require.main === module) {
    doctorMain(process.argv.slice(2)).then(
        (code) => process.exit(code),
        (e) => {
            console.error(`${program()}: ${e?.message ?? e}`);
            process.exit(EXIT.FINDING);
        },
    );
}
