/**
 * The simulated API's HTTP side (what kube-apiserver's handlers do for the paths the lab uses): the
 * REST paths over the store (sim/fakeApi.ts), discovery, watches from a resourceVersion, the Table form
 * kubectl asks for, pods/log, a namespace's finalize, and, for a served lab, TLS and a token every
 * request must carry. Beside it, the node's registry at /v2/ (sim/nodeImages.ts) when not secure.
 */
import { randomBytes, randomUUID } from "crypto";
import * as http from "http";
import * as https from "https";
import { AddressInfo } from "net";
import { parse as parseYaml } from "yaml";
import { BUILT_IN_GROUPS, HttpError, invalid, ResourceType, servedTypes } from "./apiTypes";
import { discovery, openapi } from "./discovery";
import type { Change, FakeKube } from "./fakeApi";
import { patchAs } from "./patch";
import { checkApplyPatch, checkRequired, createNameError, decodeStrictly } from "./crdValidation";
import { refuseImmutableUpdate } from "./builtinValidation";
import { orphanDependents, propagationOf } from "./garbageCollector";
import { dryRunOf, logPart, objectOf, selectorOf } from "./apiQuery";
import { toTable, wantsTable } from "./tables";
import { messageOf } from "../lab/ports/errors";
import { rfc3339 } from "../lab/kit/text";
import type { ObjectMeta } from "../lab/argo/types";
import { GITD_NAME, GITSRV_NAMESPACE } from "../lab/platform/gitDaemon";

let certificate: Promise<{ key: string; cert: string }> | undefined;
/**
 * A self-signed certificate for 127.0.0.1, made once per process (an EC key: milliseconds). By the
 * selfsigned package (WebCrypto and @peculiar/x509): Node makes keys but not certificates.
 */
function servingCertificate(): Promise<{ key: string; cert: string }> {
    certificate ??= (async () => {
        const { generate } = await import("selfsigned");
        const pems = await generate([{ name: "commonName", value: "gitops-lab simulated API" }], {
            keyType: "ec",
            algorithm: "sha256",
            notAfterDate: new Date(Date.now() + 10 * 365 * 86_400_000),
            extensions: [
                { name: "basicConstraints", cA: true },
                { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] },
            ],
        });
        return { key: pems.private, cert: pems.cert };
    })();
    return certificate;
}

export class ApiServer {
    private server?: http.Server;
    /** The served lab's credential (start's `secure`): its token, and the certificate it serves with. */
    private credential?: { token: string; key: string; cert: string };
    /** The Warning headers of the request being answered (set by `store`; requests are answered one at a time). */
    private warnings: string[] = [];
    /** The latest requests seen (at most `requestsKept`), for tests that check what the product did ("PATCH /apis/..."). */
    readonly requests: { method: string; path: string; contentType?: string; body?: unknown }[] = [];
    /** Requests being answered now (a watch aside): a virtual clock stands still while there are any. */
    inFlight = 0;

    constructor(
        private readonly kube: FakeKube,
        private readonly requestsKept = 10_000,
    ) {}

    /**
     * With `secure` (the served lab's, `simulate`): HTTPS with a certificate made for this run, and a
     * token for this run that every request must carry, or it is answered 401 as k3s's API server
     * (anonymous auth off) answers a request without a valid credential. Over plain HTTP kubectl sends
     * no credential at all, so the check needs TLS. Without it (the tests' in-process clusters): plain
     * HTTP on loopback that answers any request.
     */
    async start(opts: { secure?: boolean } = {}): Promise<string> {
        const handler = (req: http.IncomingMessage, res: http.ServerResponse) => this.handle(req, res);
        if (opts.secure) {
            this.credential = { token: randomBytes(24).toString("base64url"), ...(await servingCertificate()) };
            this.server = https.createServer({ key: this.credential.key, cert: this.credential.cert }, handler);
        } else this.server = http.createServer(handler);
        await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", () => r()));
        return `${opts.secure ? "https" : "http"}://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    }

    /** Stops answering: every connection closed. */
    async close(): Promise<void> {
        if (!this.server) return;
        this.server.closeAllConnections?.();
        await new Promise<void>((r) => this.server!.close(() => r()));
    }

    /**
     * A kubeconfig for the product's client: the run's certificate and token when secure; else plain http on loopback
     * (skipTLSVerify). `name`: its cluster's, user's and context's (a served lab's own, so that kubeconfigs merge).
     */
    kubeconfig(url: string, name = "fake"): string {
        const c = this.credential;
        return [
            "apiVersion: v1",
            "kind: Config",
            "clusters:",
            `- name: ${name}`,
            "  cluster:",
            `    server: ${url}`,
            c ? `    certificate-authority-data: ${Buffer.from(c.cert).toString("base64")}` : "    insecure-skip-tls-verify: true",
            "users:",
            `- name: ${name}`,
            "  user:",
            `    token: ${c?.token ?? "fake-token"}`,
            "contexts:",
            `- name: ${name}`,
            "  context:",
            `    cluster: ${name}`,
            `    user: ${name}`,
            `current-context: ${name}`,
            "",
        ].join("\n");
    }

    /**
     * GET ...?watch=true: a stream of `{"type","object"}` lines for the changes of that kind (and
     * namespace, and selectors) after `resourceVersion` (none or "0": from now on; older than the
     * history kept: 410 Expired), until the client goes, `timeoutSeconds` passes, or the server stops.
     */
    private watch(req: http.IncomingMessage, res: http.ServerResponse, url: URL) {
        const { t, ns } = this.route(url.pathname);
        this.kube.materialise(t.kind);
        const match = selectorOf(url);
        res.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
        res.flushHeaders(); // a watcher waits for the headers before it counts the watch as open
        const send = (c: Change) => {
            if (res.writableEnded || c.kind !== t.kind) return;
            if (ns !== undefined && c.obj.metadata?.namespace !== ns) return;
            if (!match(c.obj)) return;
            if (this.kube.saveBeforeAnswer()) return void res.end(); // not saved, not told: the watcher lists again
            res.write(JSON.stringify({ type: c.type, object: c.obj }) + "\n");
        };
        // from a resourceVersion: first what changed since then ("0" or none: from now on)
        const from = Number(url.searchParams.get("resourceVersion") ?? 0);
        if (from > 0) {
            const oldest = this.kube.recentChanges.length
                ? Number(this.kube.recentChanges[0].obj.metadata.resourceVersion)
                : this.kube.resourceVersion + 1;
            if (from < oldest - 1 && from < this.kube.resourceVersion) {
                const gone = {
                    kind: "Status",
                    apiVersion: "v1",
                    metadata: {},
                    status: "Failure",
                    message: `too old resource version: ${from} (${oldest - 1})`,
                    reason: "Expired",
                    code: 410,
                };
                res.end(JSON.stringify({ type: "ERROR", object: gone }) + "\n");
                return;
            }
            for (const c of this.kube.recentChanges) if (Number(c.obj.metadata.resourceVersion) > from) send(c);
        }
        const off = this.kube.onChange(send);
        const end = () => {
            off();
            res.end();
        };
        const timeout = Number(url.searchParams.get("timeoutSeconds") ?? 0);
        const timer = timeout > 0 ? setTimeout(end, timeout * 1000) : undefined;
        // the response's close (the client went away), not the request's (its body was read)
        res.on("close", () => {
            if (timer) clearTimeout(timer);
            off();
        });
    }

    /**
     * An update that names a resourceVersion other than the stored one (a file saved from kubectl get -o yaml, applied
     * after the object moved on): 409 Conflict, as the API server's optimistic concurrency answers (store.go's Update).
     */
    private checkPrecondition(t: ResourceType, current: { metadata: ObjectMeta }, sent: unknown) {
        // ("0" is none too: the API server parses it to 0, an unconditional update)
        if (sent === undefined || sent === null || sent === "" || sent === "0" || sent === current.metadata.resourceVersion) return;
        throw new HttpError(
            409,
            "Conflict",
            `Operation cannot be fulfilled on ${t.plural}${t.group ? `.${t.group}` : ""} "${current.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
        );
    }

    /** The types served now: an operator's kind only while its CRD is in the cluster. */
    private served(): ResourceType[] {
        return servedTypes((name) => !!this.kube.get("CustomResourceDefinition", undefined, name));
    }

    private route(pathname: string): { t: ResourceType; ns?: string; name?: string; sub?: string } {
        const parts = pathname.split("/").filter(Boolean);
        let group: string, version: string, rest: string[];
        if (parts[0] === "api") [group, version, rest] = ["", parts[1], parts.slice(2)];
        else if (parts[0] === "apis") [group, version, rest] = [parts[1], parts[2], parts.slice(3)];
        else throw new HttpError(404, "NotFound", `the server could not find the requested resource (${pathname})`);
        let ns: string | undefined;
        if (rest[0] === "namespaces" && rest.length >= 3) {
            ns = rest[1];
            rest = rest.slice(2);
        }
        const t = this.served().find((x) => x.group === group && x.version === version && x.plural === rest[0]);
        if (!t) throw new HttpError(404, "NotFound", `the server could not find the requested resource (${pathname})`);
        if (
            rest.length > 2 &&
            !(t.kind === "Namespace" && rest[2] === "finalize" && rest.length === 3) &&
            !(t.kind === "Pod" && rest[2] === "log" && rest.length === 3)
        ) {
            throw new HttpError(404, "NotFound", `the server could not find the requested resource (${pathname})`);
        }
        return { t, ns, name: rest[1], sub: rest[2] };
    }

    private handle(req: http.IncomingMessage, res: http.ServerResponse) {
        this.inFlight++;
        let counted = true;
        const done = () => {
            if (counted) this.inFlight--;
            counted = false;
        };
        res.on("close", done);
        res.on("finish", done);
        const chunks: Buffer[] = [];
        req.on("data", (c) => chunks.push(c));
        req.on("end", () => {
            this.warnings = [];
            const send = (code: number, body: unknown) => {
                const unsaved = this.kube.saveBeforeAnswer(); // what a client hears of is saved first
                if (unsaved)
                    [code, body] = [
                        500,
                        {
                            kind: "Status",
                            apiVersion: "v1",
                            metadata: {},
                            status: "Failure",
                            message: unsaved,
                            reason: "InternalError",
                            code: 500,
                        },
                    ];
                // a warning as the API server sends it (warning.AddWarning): code 299, no agent, the text quoted
                const warning = this.warnings.map((w) => `299 - ${JSON.stringify(w)}`);
                res.writeHead(code, { "Content-Type": "application/json", ...(warning.length ? { Warning: warning } : {}) });
                res.end(JSON.stringify(body));
            };
            try {
                const url = new URL(req.url ?? "/", "http://x");
                // the node's registry (sim/nodeImages.ts), beside the API as the real node's is on its address: plain HTTP only
                if (url.pathname.startsWith("/v2") && !this.credential)
                    return this.kube.images.serve(req.method!, url, Buffer.concat(chunks), res);
                const raw = Buffer.concat(chunks).toString("utf8");
                const ctype = String(req.headers["content-type"] ?? "").split(";")[0];
                if (this.credential && req.headers.authorization !== `Bearer ${this.credential.token}`)
                    return send(401, {
                        kind: "Status",
                        apiVersion: "v1",
                        metadata: {},
                        status: "Failure",
                        message: "Unauthorized",
                        reason: "Unauthorized",
                        code: 401,
                    });
                // kubectl's create subcommands (create namespace, configmap, secret ...) send protobuf, which the simulated API does not
                // decode (it has no Kubernetes protobuf schemas): 415, with the way that works, instead of a parse error
                if (ctype === "application/vnd.kubernetes.protobuf")
                    throw new HttpError(
                        415,
                        "UnsupportedMediaType",
                        "the served simulation reads JSON and YAML, not protobuf (kubectl create namespace|configmap|secret sends protobuf): kubectl create ... --dry-run=client -o yaml | kubectl apply -f - makes the same object",
                    );
                let body: unknown;
                try {
                    body = raw ? (ctype === "application/apply-patch+yaml" ? parseYaml(raw) : JSON.parse(raw)) : undefined;
                } catch (e) {
                    throw new HttpError(400, "BadRequest", `the request's body cannot be decoded: ${messageOf(e).split("\n")[0]}`);
                }
                this.requests.push({ method: req.method!, path: url.pathname, contentType: ctype || undefined, body });
                // a served lab runs for days: the oldest go
                const kept = this.requestsKept;
                if (this.requests.length > kept) this.requests.splice(0, this.requests.length - kept);
                if (req.method === "GET") {
                    // a client may escape the service's name:port (client-node's proxy call does: %3A)
                    const proxied = this.kube.proxied.get(url.pathname) ?? this.kube.proxied.get(url.pathname.replace(/%3A/gi, ":"));
                    if (proxied) {
                        res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
                        return res.end(proxied());
                    }
                    if (url.pathname === "/openapi/v2") {
                        // an empty OpenAPI v2 document (protobuf, as kubectl asks): no schema, so kubectl validates nothing
                        res.writeHead(200, { "Content-Type": "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" });
                        return res.end();
                    }
                    const doc = discovery(url.pathname, this.served()) ?? openapi(url.pathname, this.served());
                    if (doc) return send(200, doc);
                    if (["true", "1"].includes(url.searchParams.get("watch") ?? "")) {
                        done(); // a watch lasts: it is not work in flight
                        return this.watch(req, res, url);
                    }
                }
                const answer = this.serve(req.method!, url, ctype, body);
                if (answer && typeof answer === "object" && "__text" in answer && !this.kube.saveBeforeAnswer()) {
                    res.writeHead(200, { "Content-Type": "text/plain" });
                    return res.end(answer.__text);
                }
                // kubectl get asks for the Table form: the columns the real API server prints
                if (req.method === "GET" && wantsTable(req.headers.accept)) {
                    return send(
                        200,
                        toTable(this.route(url.pathname).t.kind, answer, {
                            includeObject: url.searchParams.get("includeObject"),
                            crds: this.kube.crds(),
                        }),
                    );
                }
                send(req.method === "POST" ? 201 : 200, answer);
            } catch (e) {
                const code = e instanceof HttpError ? e.code : 500;
                send(code, {
                    kind: "Status",
                    apiVersion: "v1",
                    metadata: {},
                    status: "Failure",
                    message: messageOf(e),
                    // a plain error (not a Status) carries no reason
                    ...(e instanceof HttpError && !e.reason ? {} : { reason: e instanceof HttpError ? e.reason : "InternalError" }),
                    ...(e instanceof HttpError && e.details ? { details: e.details } : {}),
                    code,
                });
            }
        });
    }

    /**
     * A new object goes only into a namespace that exists and is not being deleted, as the API
     * server's NamespaceLifecycle admission has it (404, or 403 while it terminates).
     */
    private namespaceTakes(t: ResourceType, ns: string | undefined, name: string) {
        if (!ns || t.kind === "Namespace" || !this.kube.namespaceLifecycle) return;
        const namespace = this.kube.get("Namespace", undefined, ns);
        if (!namespace) throw new HttpError(404, "NotFound", `namespaces "${ns}" not found`);
        if (namespace.metadata.deletionTimestamp)
            throw new HttpError(
                403,
                "Forbidden",
                `${t.plural}${t.group ? "." + t.group : ""} "${name}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
            );
    }

    /**
     * A client's object stored, once what its CRD requires is there, its name is one the API server
     * takes and its undeclared fields are pruned or refused as `url`'s fieldValidation asks (crdValidation.ts).
     */
    private store(t: ResourceType, url: URL, sent: { kind: string; metadata: ObjectMeta }, patched = false) {
        const { obj, warnings } = decodeStrictly(this.kube.crds(), t.kind, t.group, sent, url.searchParams.get("fieldValidation"), patched);
        const stored = this.kube.get(t.kind, obj.metadata.namespace, obj.metadata.name);
        checkRequired(this.kube.crds(), t.kind, t.group, obj, !stored, stored);
        const badName = stored ? undefined : createNameError(t.kind, obj.metadata.name);
        if (badName) throw invalid(t.kind, t.group, obj.metadata.name, [badName]);
        refuseImmutableUpdate(t.kind, stored, obj);
        this.warnings = warnings;
        return this.kube.put(obj, "client", dryRunOf(url));
    }

    private serve(method: string, url: URL, ctype: string, body: unknown): unknown {
        const { t, ns, name, sub } = this.route(url.pathname);
        if (sub === "log") {
            const pod = this.kube.get("Pod", ns, name!);
            if (!pod) throw new HttpError(404, "NotFound", `pods "${name}" not found`);
            const started = (pod.status as { containerStatuses?: { state?: Record<string, { startedAt?: string }> }[] } | undefined)
                ?.containerStatuses?.[0]?.state;
            const startedAt = Object.values(started ?? {})[0]?.startedAt ?? String(pod.metadata.creationTimestamp ?? "");
            return { __text: logPart(this.kube.podLogs.get(`${ns}/${name}`) ?? "", url, startedAt) };
        }
        if (sub === "finalize") {
            if (method !== "PUT") throw new HttpError(405, "MethodNotAllowed", method);
            if ((objectOf(body).spec as { finalizers?: string[] } | undefined)?.finalizers?.length)
                throw new HttpError(422, "Invalid", "the simulated API only removes finalizers");
            const ns0 = this.kube.finalizeNamespace(name!);
            if (!ns0) throw new HttpError(404, "NotFound", `namespaces "${name}" not found`);
            return ns0;
        }
        const notFound = () =>
            new HttpError(
                404,
                "NotFound",
                `${t.plural}${t.group ? "." + t.group : ""} "${name}" not found${notServedHere(t.kind, ns, name!)}`,
            );
        if (!name) {
            if (method === "GET") {
                const match = selectorOf(url);
                const all = this.kube.list(t.kind, ns).filter(match);
                // limit / continue: the token is the offset of the next page
                const from = Number(url.searchParams.get("continue") ?? 0);
                const limit = Number(url.searchParams.get("limit") ?? 0);
                const items = limit > 0 ? all.slice(from, from + limit) : all.slice(from);
                const more = limit > 0 && from + limit < all.length;
                return {
                    apiVersion: t.group ? `${t.group}/${t.version}` : t.version,
                    kind: `${t.kind}List`,
                    metadata: { resourceVersion: String(this.kube.resourceVersion), ...(more ? { continue: String(from + limit) } : {}) },
                    items,
                };
            }
            if (method === "POST") {
                const sent = objectOf(body);
                const obj = { ...sent, kind: t.kind, metadata: { ...sent.metadata, namespace: ns ?? sent.metadata?.namespace } };
                if (!obj.metadata?.name && obj.metadata?.generateName)
                    obj.metadata.name = obj.metadata.generateName + randomUUID().slice(0, 5);
                if (!obj.metadata.name)
                    throw new HttpError(
                        422,
                        "Invalid",
                        `${t.kind} "" is invalid: metadata.name: Required value: name or generateName is required`,
                    );
                if (this.kube.get(t.kind, ns, obj.metadata.name))
                    throw new HttpError(409, "AlreadyExists", `${t.plural} "${obj.metadata.name}" already exists`);
                this.namespaceTakes(t, ns, obj.metadata.name);
                return this.store(t, url, { ...obj, metadata: { ...obj.metadata, name: obj.metadata.name } });
            }
            throw new HttpError(405, "MethodNotAllowed", `${method} on a collection`);
        }
        const current = this.kube.get(t.kind, ns, name);
        switch (method) {
            case "GET":
                if (!current) throw notFound();
                return current;
            case "PUT":
                if (!current) throw notFound();
                // a PUT is the whole object: with no body there is none (the API server refuses it as it refuses any body it cannot decode)
                if (body === undefined) throw new HttpError(400, "BadRequest", "the request's body is empty: a PUT sends the whole object");
                this.checkPrecondition(t, current, objectOf(body).metadata?.resourceVersion);
                unconditionalRefused(t, name, objectOf(body).metadata?.resourceVersion);
                return this.store(t, url, {
                    ...objectOf(body),
                    kind: t.kind,
                    metadata: { ...objectOf(body).metadata, name, namespace: ns },
                });
            case "PATCH": {
                if (!current && ctype !== "application/apply-patch+yaml") throw notFound();
                if (!current) this.namespaceTakes(t, ns, name);
                if (ctype === "application/apply-patch+yaml" && t.group) checkApplyPatch(this.kube.crds(), t.kind, t.group, ns, name, body);
                const next = objectOf(patchAs(ctype, current, body, t.group));
                if (current) this.checkPrecondition(t, current, next.metadata?.resourceVersion);
                return this.store(
                    t,
                    url,
                    { ...next, kind: t.kind, metadata: { ...next.metadata, name, namespace: ns } },
                    ctype !== "application/apply-patch+yaml",
                );
            }
            case "DELETE": {
                // kubectl delete sends it in its DeleteOptions body
                if (dryRunOf(url, (body as { dryRun?: unknown } | undefined)?.dryRun)) {
                    if (!current) throw notFound();
                    // what the delete would answer, nothing deleted: an object a finalizer holds, marked; a namespace as its
                    // deletion leaves it (terminateNamespace): Terminating, held by its own finalizer
                    const marked = { ...current.metadata, deletionTimestamp: current.metadata.deletionTimestamp ?? rfc3339(new Date()) };
                    if (t.kind === "Namespace")
                        return { ...current, metadata: marked, spec: { finalizers: ["kubernetes"] }, status: { phase: "Terminating" } };
                    return current.metadata.finalizers?.length
                        ? { ...current, metadata: marked }
                        : { kind: "Status", apiVersion: "v1", status: "Success", details: { name, kind: t.plural } };
                }
                if (current && propagationOf(url, body) === "Orphan") orphanDependents(this.kube, current);
                const old = this.kube.remove(t.kind, ns, name, "client");
                if (!old) throw notFound();
                // an object held by a finalizer is returned with its deletionTimestamp, as the API server does
                return old.metadata.deletionTimestamp
                    ? old
                    : { kind: "Status", apiVersion: "v1", status: "Success", details: { name, kind: t.plural } };
            }
            default:
                throw new HttpError(405, "MethodNotAllowed", method);
        }
    }
}

/**
 * Argo CD's and the git daemon's own workloads (argocd-repo-server, argocd-application-controller, ...) are no
 * objects here: the simulate process is them. Said after the API server's NotFound (docs/simulate.md lists it).
 */
function notServedHere(kind: string, ns: string | undefined, name: string): string {
    if (!["Deployment", "StatefulSet", "Pod"].includes(kind)) return "";
    if (!(ns === "argocd" && name.startsWith("argocd-")) && !(ns === GITSRV_NAMESPACE && name.startsWith(GITD_NAME))) return "";
    return " (the simulated cluster has no Argo CD or git daemon workloads: the simulate process runs them; a refresh is `kubectl -n argocd annotate app NAME argocd.argoproj.io/refresh=normal`, see docs/simulate.md)";
}

/**
 * A PUT with no resourceVersion replaces whatever is stored: Kubernetes' own kinds take it, a custom resource's and a
 * CRD's strategies do not (AllowUnconditionalUpdate false), and the generic store answers 422 (registry/store.go; the
 * value as apimachinery 0.35+ prints a uint64, 0).
 */
function unconditionalRefused(t: ResourceType, name: string, sent: unknown) {
    if (sent !== undefined && sent !== null && sent !== "" && sent !== "0") return;
    if (BUILT_IN_GROUPS.has(t.group) && t.kind !== "CustomResourceDefinition") return;
    throw new HttpError(
        422,
        "Invalid",
        `${t.plural}.${t.group} "${name}" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
    );
}
