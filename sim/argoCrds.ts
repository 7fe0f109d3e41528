/**
 * The CustomResourceDefinitions of a shipped Argo CD install (components/argocd-install/<version>/install.yaml)
 * as the API server holds them once apiextensions-apiserver has accepted them: its defaults
 * (`conversion: None`) and the status it writes (accepted names, NamesAccepted and Established,
 * the stored version). Parsing them costs most of a second, so it happens once per process and version,
 * and only when something reads them (FakeKube.provide). A release's CRDs differ (v3.6 adds the `oci`
 * generator and `directory.disableExtensionFilter`), so a cluster simulated as v3.5 refuses what v3.6's take.
 */
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { argoCdInstallDir, DEFAULT_ARGOCD_VERSION, type ArgoCdVersion } from "../lab/platform/argocd";
import type { Crd } from "./objects";

/** The CRDs' names, known without parsing them: a read of another CRD needs no parse. */
export const ARGOCD_CRD_NAMES = ["applications.argoproj.io", "applicationsets.argoproj.io", "appprojects.argoproj.io"];

const parsed = new Map<ArgoCdVersion, Crd[]>();

/** A version's install's CRD documents as they stand in its file (parsed once). */
export function installCrds(version: ArgoCdVersion = DEFAULT_ARGOCD_VERSION): Crd[] {
    const known = parsed.get(version);
    if (known) return known;
    const crds = fs
        .readFileSync(path.join(argoCdInstallDir(version), "install.yaml"), "utf8")
        .split(/^---$/m)
        .filter((doc) => /^kind: CustomResourceDefinition$/m.test(doc))
        .map((doc) => parse(doc) as Crd | null)
        .filter((d): d is Crd => d?.kind === "CustomResourceDefinition");
    parsed.set(version, crds);
    return crds;
}

/** A version's CRDs as a real API server answers for them after they were applied at `acceptedAt`. */
export const acceptedCrds =
    (version: ArgoCdVersion = DEFAULT_ARGOCD_VERSION) =>
    (acceptedAt: string): Crd[] =>
        installCrds(version).map((crd) => {
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
