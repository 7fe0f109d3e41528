/**
 * How the dynamic providers reach the lab's code. A dynamic provider is serialized into the
 * state and revived in a separate process where only the serialized text exists; module-scope
 * imports of functions would be copied by value and break. So each provider method calls
 * `labModule(PROJECT_DIR, "scenario")`, which requires the real file at run time (registering
 * the project's TypeScript loader, loader/register.js, first, since that process runs plain Node). PROJECT_DIR is captured as a string; the
 * module table below is plain data and is captured by value too. The types come from
 * type-only imports, which vanish from the serialized text. Its first call also makes the process
 * leave when the engine that started it is gone (providerProcess.ts).
 */
import * as path from "path";

/** Absolute path of this project, captured by value when a provider is serialized. */
export const PROJECT_DIR = path.resolve(__dirname, "..");

export interface LabModules {
    cluster: typeof import("../lab/ports/cluster");
    git: typeof import("../lab/ports/git");
    readiness: typeof import("../lab/platform/readiness");
    layout: typeof import("../lab/shop/layout");
    shopRepo: typeof import("../lab/shop/repo");
    shopAppSet: typeof import("../lab/shop/appset");
    scenario: typeof import("../lab/shop/scenario");
    results: typeof import("../lab/shop/results");
    teardown: typeof import("../lab/shop/teardown");
    tenantsLayout: typeof import("../lab/tenants/layout");
    tenantsSolve: typeof import("../lab/tenants/solve");
    tenantsScenario: typeof import("../lab/tenants/scenario");
    tenantsTeardown: typeof import("../lab/tenants/teardown");
    images: typeof import("../lab/platform/images");
    reset: typeof import("../lab/argo/reset");
}

export function labModule<K extends keyof LabModules>(projectDir: string, name: K): LabModules[K] {
    require(`${projectDir}/loader/register.js`); // the project's TypeScript loader (registers once; not if ts-node already has)
    require(`${projectDir}/program/providerProcess`).leaveWithEngine(); // once per process: leave when the engine is gone
    const table: Record<keyof LabModules, string> = {
        cluster: "lab/ports/cluster",
        git: "lab/ports/git",
        readiness: "lab/platform/readiness",
        layout: "lab/shop/layout",
        shopRepo: "lab/shop/repo",
        shopAppSet: "lab/shop/appset",
        scenario: "lab/shop/scenario",
        results: "lab/shop/results",
        teardown: "lab/shop/teardown",
        tenantsLayout: "lab/tenants/layout",
        tenantsSolve: "lab/tenants/solve",
        tenantsScenario: "lab/tenants/scenario",
        tenantsTeardown: "lab/tenants/teardown",
        images: "lab/platform/images",
        reset: "lab/argo/reset",
    };
    return require(`${projectDir}/${table[name]}`);
}
