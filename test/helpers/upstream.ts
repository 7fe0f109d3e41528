/** Reference data nobody here wrote: Argo CD v3.5.1 files in test/fixtures/upstream/ (see its README). */
import * as fs from "fs";
import * as path from "path";
import Ajv from "ajv";
import { parseAllDocuments } from "yaml";
import { argoCdInstallDir } from "../../lab/platform/argocd";

export const UPSTREAM = path.resolve(__dirname, "..", "fixtures", "upstream", "argo-cd-v3.5.1");
/** Shipped with the product (components/argocd-install), not a test fixture: the lab applies it. */
export const INSTALL_YAML = path.join(argoCdInstallDir("v3.5.1"), "install.yaml");

let installDocs: any[] | undefined;
export function installObjects(): any[] {
    installDocs ??= parseAllDocuments(fs.readFileSync(INSTALL_YAML, "utf8"))
        .map((d) => d.toJSON())
        .filter(Boolean);
    return installDocs;
}

export function crdSchema(kind: string): any {
    const crd = installObjects().find((o) => o.kind === "CustomResourceDefinition" && o.spec.names.kind === kind);
    if (!crd) throw new Error(`no CRD for ${kind} in install.yaml`);
    return crd.spec.versions.find((v: any) => v.name === "v1alpha1").schema.openAPIV3Schema;
}

/** A validator for a kind, from its CRD's OpenAPI v3 schema (Kubernetes' x- keywords allowed). */
export function crdValidator(kind: string) {
    // code.optimize off: the same checks, compiled in a quarter of the time (these schemas are large)
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, code: { optimize: false } });
    const validate = ajv.compile(crdSchema(kind));
    return (obj: any): string[] => (validate(obj) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`));
}

export function readFixture(name: string): any[] {
    return parseAllDocuments(fs.readFileSync(path.join(UPSTREAM, name), "utf8"))
        .map((d) => d.toJSON())
        .filter(Boolean);
}
