/**
 * How the dynamic providers reach the lab's code. A dynamic provider is serialized into the
 * state and revived in a separate process where only the serialized text exists; module-scope
 * imports of functions would be copied by value and break. So each provider method calls
 * `labModule(PROJECT_DIR, "scenario")`, which requires the real file at run time (registering
 * ts-node first, since that process runs plain Node). PROJECT_DIR is captured as a string.
 */
import * as path from "path";

/** Absolute path of this project, captured by value when a provider is serialized. */
export const PROJECT_DIR = path.resolve(__dirname, "..");

export function labModule(projectDir: string, name: string): any {
    if (!require.extensions[".ts"]) {
        const tsnode = require(require.resolve("ts-node", { paths: [projectDir] }));
        tsnode.register({ transpileOnly: true, project: `${projectDir}/tsconfig.json` });
    }
    return require(`${projectDir}/lab/${name}`);
}
