/**
 * The ApplicationSet controller's generators and templates, as the simulation has them: the list
 * generator and the git files generator's parameters (`applicationset/generators/list.go`, `git.go`),
 * fasttemplate `{{key}}` and Go templates' field references (`applicationset/utils/utils.go`), one
 * Application per parameter set, owned by its ApplicationSet. The controller that runs them is
 * appsetController.ts.
 */
import { parse as parseYaml } from "yaml";
import { messageOf } from "../lab/ports/errors";
import type { Application, ApplicationSet } from "../lab/argo/types";
import { RenderError } from "./repoServer";

/** A generator's parameters: strings (fasttemplate), or any YAML value (goTemplate). */
export type Params = Record<string, unknown>;

/**
 * Renders every string of a template: `{{key}}` (fasttemplate; an unknown key is left as it is), or
 * with `goTemplate` (text/template) `{{.key}}` and `{{.a.b}}`, `<no value>` for a key the
 * parameters lack (Argo CD's default template options). Of Go templates the simulation renders field
 * references only, and refuses any other action rather than leave it unrendered.
 */
export function renderTemplate<T>(value: T, params: Params, goTemplate = false): T {
    if (typeof value === "string") return (goTemplate ? renderGo(value, params) : renderFast(value, params)) as T;
    if (Array.isArray(value)) return value.map((v) => renderTemplate(v, params, goTemplate)) as T;
    if (value && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderTemplate(v, params, goTemplate)])) as T;
    }
    return value;
}

const renderFast = (s: string, params: Params) =>
    s.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (all, k) => (k in params ? String(params[k]) : all));

function renderGo(s: string, params: Params): string {
    return s.replace(/\{\{([\s\S]*?)\}\}/g, (all, expr: string) => {
        const field = /^\s*\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*$/.exec(expr);
        if (!field)
            throw new RenderError(
                `the simulated ApplicationSet controller renders field references ({{.key}}) of Go templates only, not ${all}`,
            );
        const v = field[1].split(".").reduce<unknown>((o, k) => (o == null ? undefined : (o as Params)[k]), params);
        return v === undefined ? "<no value>" : String(v);
    });
}

/** The finalizer that makes Argo CD delete an Application's resources before the Application goes. */
export const RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io";

/** One Application per parameter set, from the template (applicationset/utils/utils.go). */
export function generateFromParams(appset: ApplicationSet, paramSets: Params[]): Application[] {
    return paramSets.map((el) => {
        const t = renderTemplate(appset.spec!.template!, el, !!appset.spec!.goTemplate);
        return {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Application",
            metadata: {
                name: t.metadata?.name ?? "",
                namespace: appset.metadata.namespace,
                labels: t.metadata?.labels,
                annotations: t.metadata?.annotations,
                // every generated Application gets the resources finalizer unless the template sets finalizers or preserveResourcesOnDeletion
                finalizers:
                    t.metadata?.finalizers ?? (appset.spec?.syncPolicy?.preserveResourcesOnDeletion ? undefined : [RESOURCES_FINALIZER]),
                ownerReferences: [
                    {
                        apiVersion: "argoproj.io/v1alpha1",
                        kind: "ApplicationSet",
                        name: appset.metadata.name,
                        uid: appset.metadata.uid,
                        controller: true,
                        blockOwnerDeletion: true,
                    },
                ],
            },
            spec: t.spec,
        };
    });
}

/** The Applications an ApplicationSet with a list generator generates (metadata and spec only). */
export function generateApplications(appset: ApplicationSet): Application[] {
    const elements: Params[] = appset.spec?.generators?.[0]?.list?.elements ?? [];
    // generators/list.go: without goTemplate every value must be a string (a generation error, ErrorOccurred)
    if (!appset.spec?.goTemplate) {
        for (const el of elements) {
            for (const [k, v] of Object.entries(el)) {
                if (typeof v !== "string")
                    throw new RenderError(`error parsing element: value for key ${k} must be a string, got ${typeof v}`);
            }
        }
    }
    return generateFromParams(appset, elements);
}

/** `flatten.Flatten(obj, "", DotStyle)` (jeremywohl/flatten: lists by index, `key.0`), every value printed as Go's `%v` would. */
function flatten(obj: unknown, prefix = "", out: Record<string, string> = {}): Record<string, string> {
    for (const [k, v] of Object.entries(obj ?? {})) {
        const key = prefix ? `${prefix}.${k}` : k;
        if (v && typeof v === "object" && !Array.isArray(v)) flatten(v, key, out);
        else if (Array.isArray(v))
            v.forEach((x, i) => (x && typeof x === "object" ? flatten(x, `${key}.${i}`, out) : (out[`${key}.${i}`] = String(x))));
        else out[key] = String(v);
    }
    return out;
}

/** A name as `utils.SanitizeName` makes it (lower case, runs of other characters to "-"). */
const sanitize = (s: string) =>
    s
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, "-")
        .replace(/^-+|-+$/g, "")
        .slice(0, 63);

/**
 * The parameters of one file of a git files generator (generators/git.go): flattened, with
 * `path`, `path.basename`, … as keys; with goTemplate the file's values as they are and `path` an
 * object (`.path.path`, `.path.basename`, `.path.filename`, their normalized forms, `.path.segments`).
 */
export function gitFileParams(filePath: string, content: string, goTemplate = false): Params[] {
    let parsed: unknown;
    try {
        // a key given twice is read, the last one holding (sigs.k8s.io/yaml's Unmarshal, which the git generator uses,
        // ignores duplicate fields; only its UnmarshalStrict refuses them)
        parsed = parseYaml(content, { uniqueKeys: false });
    } catch (e) {
        throw new RenderError(`unable to process file '${filePath}': unable to parse file: ${messageOf(e)}`);
    }
    const objects: unknown[] = Array.isArray(parsed) ? parsed : [parsed ?? {}];
    const dir = filePath.includes("/") ? filePath.slice(0, filePath.lastIndexOf("/")) : ".";
    const base = (p: string) => p.slice(p.lastIndexOf("/") + 1);
    return objects.map((o) => {
        if (goTemplate) {
            const path = {
                path: dir,
                basename: base(dir),
                filename: base(filePath),
                basenameNormalized: sanitize(base(dir)),
                filenameNormalized: sanitize(base(filePath)),
                segments: dir.split("/"),
            };
            return { ...((o ?? {}) as Params), path };
        }
        const params = flatten(o);
        params["path"] = dir;
        params["path.basename"] = base(dir);
        params["path.filename"] = base(filePath);
        params["path.basenameNormalized"] = sanitize(base(dir));
        params["path.filenameNormalized"] = sanitize(base(filePath));
        dir.split("/").forEach((seg, i) => (params[`path[${i}]`] = seg));
        return params;
    });
}
