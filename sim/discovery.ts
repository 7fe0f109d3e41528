/** What the simulated API server says of itself: /version, the discovery documents, OpenAPI v3. */
import type { ResourceType } from "./apiTypes";
import { REAL_PLANE } from "../realplane/versions";

/** The Kubernetes release the simulated API says it is: the real node's (one pin for both). */
const KUBERNETES = REAL_PLANE.kubernetes;

/** The kinds of the `all` category (`kubectl get all`) among those served, as the real API server lists them. */
const IN_ALL = ["pods", "deployments", "statefulsets", "jobs"];

/** The API's self-description that kubectl reads first: /version and the legacy discovery documents. */
export function discovery(pathname: string, served: readonly ResourceType[]): object | null {
    const p = pathname.replace(/\/+$/, "") || "/";
    if (p === "/version")
        return {
            major: KUBERNETES.split(".")[0].slice(1),
            minor: KUBERNETES.split(".")[1],
            gitVersion: `${KUBERNETES}-gitops-lab-simulated`,
            platform: "linux/amd64",
            goVersion: "simulated",
        };
    if (p === "/api")
        return {
            kind: "APIVersions",
            versions: ["v1"],
            serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "127.0.0.1" }],
        };
    const groups = [...new Set(served.filter((t) => t.group).map((t) => `${t.group}/${t.version}`))];
    if (p === "/apis") {
        return {
            kind: "APIGroupList",
            apiVersion: "v1",
            groups: groups.map((gv) => {
                const [group, version] = gv.split("/");
                return { name: group, versions: [{ groupVersion: gv, version }], preferredVersion: { groupVersion: gv, version } };
            }),
        };
    }
    const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(p);
    if (!m) return null;
    const [group, version] = m[1] ? ["", m[1]] : [m[2], m[3]];
    const types = served.filter((t) => t.group === group && t.version === version);
    if (!types.length) return null;
    const verbs = ["create", "delete", "get", "list", "patch", "update", "watch"];
    return {
        kind: "APIResourceList",
        apiVersion: "v1",
        groupVersion: group ? `${group}/${version}` : version,
        resources: types.flatMap((t) => [
            {
                name: t.plural,
                singularName: t.kind.toLowerCase(),
                namespaced: t.namespaced,
                kind: t.kind,
                verbs,
                ...(t.shortNames ? { shortNames: t.shortNames } : {}),
                ...(IN_ALL.includes(t.plural) ? { categories: ["all"] } : {}),
            },
            ...(t.kind === "Namespace"
                ? [{ name: "namespaces/finalize", singularName: "", namespaced: false, kind: "Namespace", verbs: ["update"] }]
                : []),
        ]),
    };
}

/**
 * OpenAPI v3 as kubectl's client-side validation reads it (`kubectl apply` fetches it): one
 * document per group-version whose schema for each kind accepts any object. The simulated API
 * checks nothing itself; it only lets kubectl through.
 */
export function openapi(pathname: string, served: readonly ResourceType[]): object | null {
    const gvs = [...new Set(served.map((t) => (t.group ? `apis/${t.group}/${t.version}` : `api/${t.version}`)))];
    if (pathname === "/openapi/v3") return { paths: Object.fromEntries(gvs.map((gv) => [gv, { serverRelativeURL: `/openapi/v3/${gv}` }])) };
    const gv = pathname.replace(/^\/openapi\/v3\//, "");
    if (!gvs.includes(gv) || !pathname.startsWith("/openapi/v3/")) return null;
    const types = served.filter((t) => (t.group ? `apis/${t.group}/${t.version}` : `api/${t.version}`) === gv);
    return {
        openapi: "3.0.0",
        info: { title: "gitops-lab simulated API", version: KUBERNETES },
        paths: {},
        components: {
            schemas: Object.fromEntries(
                types.map((t) => [
                    `${t.group || "core"}.${t.version}.${t.kind}`,
                    {
                        type: "object",
                        "x-kubernetes-preserve-unknown-fields": true,
                        "x-kubernetes-group-version-kind": [{ group: t.group, version: t.version, kind: t.kind }],
                    },
                ]),
            ),
        },
    };
}
