/**
 * The cluster port's errors: one readable line for what the API answered (or why nothing answered),
 * with the status code kept (ClusterError); a 404 read as "not there" (orNull).
 */
/** What client-node's errors (and Node's network errors) carry, as far as the port reads them. */
interface ApiError {
    code?: number | string;
    statusCode?: number;
    response?: { statusCode?: number };
    body?: unknown;
    message?: string;
    cause?: { code?: string };
}

export const apiError = (e: unknown): ApiError => (e && typeof e === "object" ? (e as ApiError) : { message: String(e) });

/** An error of the port: one line, with the API's status code where there was an answer. */
export class ClusterError extends Error {
    constructor(
        message: string,
        readonly code?: number | string,
    ) {
        super(message);
    }
}

function isNotFound(err: unknown): boolean {
    const e = apiError(err);
    return e?.code === 404 || e?.statusCode === 404 || e?.response?.statusCode === 404;
}

export async function orNull<T>(p: Promise<T>): Promise<T | null> {
    try {
        return await p;
    } catch (e) {
        if (isNotFound(e)) return null;
        throw e;
    }
}

/** Turns an API error into one readable line: what was asked, the status, the server's message. */
export function explain(what: string, err: unknown): Error {
    const e = apiError(err);
    const body = e.body;
    let msg: unknown = typeof body === "string" ? body : (body as { message?: unknown } | undefined)?.message;
    try {
        if (typeof body === "string") msg = JSON.parse(body).message ?? body;
    } catch {
        /* keep the raw body */
    }
    const unreachable = unreachableLine(e);
    // client-node's own message is several lines (HTTP-Code, Message, Body, Headers): its Message line is the one to say
    const said =
        String(msg ?? "").split("\n")[0] ||
        /^Message: (.*)$/m.exec(String(e?.message ?? ""))?.[1] ||
        String(e?.message ?? e).split("\n")[0];
    return new ClusterError(
        unreachable
            ? `${what}: ${unreachable}`
            : e?.code === 401
              ? `${what}: the API server refused the kubeconfig's credentials (401 ${said}): is it this cluster's kubeconfig, with its current token? (--kubeconfig FILE)`
              : `${what}: ${e?.code ? `HTTP ${e.code} ` : ""}${said}`,
        e?.code,
    );
}

/** What to do when no answer came at all: the network errors Node names, each as one line; undefined for an answer. */
const UNREACHABLE: Record<string, (server: string) => string> = {
    ECONNREFUSED: (s) =>
        `nothing answers at ${s} (connection refused): is the cluster running, and is this its kubeconfig? (--kubeconfig FILE, or $KUBECONFIG)`,
    ENOTFOUND: (s) => `the API server's host in ${s} does not resolve: check the server: line of the kubeconfig (--kubeconfig FILE)`,
    EAI_AGAIN: (s) => `the API server's host in ${s} could not be resolved now (DNS): try again, or check the kubeconfig's server: line`,
    ETIMEDOUT: (s) => `${s} did not answer in time: is the cluster up and reachable from here?`,
    ECONNRESET: (s) => `${s} closed the connection: is it a Kubernetes API server, and is the cluster still starting?`,
    EHOSTUNREACH: (s) => `no route to ${s}: is the cluster reachable from this host?`,
    // the server's certificate is not the one the kubeconfig trusts: another cluster's (or an earlier run's) kubeconfig
    DEPTH_ZERO_SELF_SIGNED_CERT: (s) => notTrusted(s),
    SELF_SIGNED_CERT_IN_CHAIN: (s) => notTrusted(s),
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: (s) => notTrusted(s),
    ERR_TLS_CERT_ALTNAME_INVALID: (s) =>
        `${s}'s certificate does not name that address (a server reached by an address its certificate was not made for: k3s's --tls-san): use an address the certificate names in the kubeconfig's server: line`,
    CERT_SIGNATURE_FAILURE: (s) => notTrusted(s),
};

const notTrusted = (s: string) =>
    `${s} answers with a certificate the kubeconfig's certificate-authority-data does not vouch for: the kubeconfig is another cluster's, or an earlier run's of this one (a served lab writes a new one each start: DIR/kubeconfig); give the cluster's current kubeconfig (--kubeconfig FILE), never skip the TLS check`;

function unreachableLine(err: unknown): string | undefined {
    const e = apiError(err);
    const text = String(e?.message ?? "");
    // @kubernetes/client-node refuses a plain-http server before asking it (its message names no server)
    if (text.includes("HTTP protocol is not allowed"))
        return "the kubeconfig's server: line is http://, which the client refuses unless the cluster entry has insecure-skip-tls-verify: true: give the cluster's https:// address";
    const code = Object.keys(UNREACHABLE).find((c) => e?.code === c || e?.cause?.code === c || text.includes(c));
    if (!code) return undefined;
    const server = /request to (https?:\/\/[^/\s]+)/.exec(text)?.[1] ?? "the API server";
    return UNREACHABLE[code](server);
}
