/**
 * The CustomResourceDefinitions of the shipped Argo CD install (components/argocd-install/<default version>/install.yaml)
 * as the API server holds them once apiextensions-apiserver has accepted them: its defaults
 * (`conversion: None`) and the status it writes (accepted names, NamesAccepted and Established,
 * the stored version). Parsing them costs most of a second, so it happens once per process and
 * only when something reads them (FakeKube.provide).
 */
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { argoCdInstallDir } from "../lab/platform/argocd";
import type { Crd } from "./objects";

// the three CRDs as the default version's install has them (the simulation serves one set for every version it simulates)
const INSTALL = path.join(argoCdInstallDir(), "install.yaml");

/** The CRDs' names, known without parsing them: a read of another CRD needs no parse. */
export const ARGOCD_CRD_NAMES = ["applications.argoproj.io", "applicationsets.argoproj.io", "appprojects.argoproj.io"];

let parsed: Crd[] | undefined;

/** The install's CRD documents as they stand in the file (parsed once). */
export function installCrds(): Crd[] {
    parsed ??= fs
        .readFileSync(INSTALL, "utf8")
        .split(/^---$/m)
        .filter((doc) => /^kind: CustomResourceDefinition$/m.test(doc))
        .map((doc) => parse(doc) as Crd | null)
        .filter((d): d is Crd => d?.kind === "CustomResourceDefinition");
    return parsed;
}

/** The CRDs as a real API server answers for them after they were applied at `acceptedAt`. */
export function acceptedCrds(acceptedAt: string): Crd[] {
    return installCrds().map((crd) => {
        const c = structuredClone(crd);
        c.spec.conversion ??= { strategy: "None" };
        const stored = (c.spec.versions ?? []).filter((v) => v.storage).map((v) => v.name);
        c.status = {
            acceptedNames: c.spec.names,
            conditions: [
                {
                    type: "NamesAccepted",
                    status: "True",
                    reason: "NoConflicts",
                    message: "no conflicts found",
                    lastTransitionTime: acceptedAt,
                },
                {
                    type: "Established",
                    status: "True",
                    reason: "InitialNamesAccepted",
                    message: "the initial names have been accepted",
                    lastTransitionTime: acceptedAt,
                },
            ],
            storedVersions: stored,
        };
        return c;
    });
}
