/**
 * The stack's configuration as the command line sees it before Pulumi runs: the defaults in
 * Pulumi.yaml, overridden by the plain values in Pulumi.<stack>.yaml (the preflight needs root,
 * kubeconfigPath and k3sVersion before anything is installed).
 */
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";

export const PROJECT_DIR = path.resolve(__dirname, "..");
export const STACK = "dev";

export interface LabConfig {
    root: string;
    kubeconfigPath: string;
    k3sVersion: string;
    solveThrough: number;
    /** Part 2 on (its repository's paths are then checked too). */
    tenantsLab: boolean;
}

/** `configFile` stands in for Pulumi.<stack>.yaml, as Pulumi's own `--config-file` does. */
export function readStackConfig(projectDir = PROJECT_DIR, stack = STACK, configFile?: string): LabConfig {
    const project = parse(fs.readFileSync(path.join(projectDir, "Pulumi.yaml"), "utf8"));
    const values: Record<string, unknown> = {};
    for (const [k, v] of Object.entries<any>(project.config ?? {})) values[k] = v?.default;
    const stackFile = configFile ?? path.join(projectDir, `Pulumi.${stack}.yaml`);
    if (fs.existsSync(stackFile)) {
        for (const [k, v] of Object.entries<any>(parse(fs.readFileSync(stackFile, "utf8"))?.config ?? {})) {
            const key = k.replace(/^gitops-lab:/, "");
            if (v !== null && typeof v !== "object") values[key] = v; // secrets stay with Pulumi
        }
    }
    return { root: String(values.root ?? "/"), kubeconfigPath: String(values.kubeconfigPath ?? ""), k3sVersion: String(values.k3sVersion ?? ""), solveThrough: Number(values.solveThrough ?? 8), tenantsLab: values.tenantsLab === true || values.tenantsLab === "true" };
}
