/**
 * The two ways the lab's images reach a cluster with no public registry:
 * - a registry the cluster's containerd mirrors the images' registry from (the real node's own, or a
 *   lab platform's): pushed over the registry API (OCI distribution: blob uploads, then the manifest);
 * - k3s's own containerd, when the stack installed or adopted k3s on this host: `k3s ctr images import`
 *   of an OCI archive into the namespace the kubelet reads (k8s.io). No registry to run or to expose,
 *   and no change to k3s's registries.yaml (which k3s reads only when it starts); the Pods' pull
 *   policy IfNotPresent finds the image there.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { run } from "../ports/exec";
import { Blob, ImagePort, LAB_REGISTRY, MANIFEST_TYPE, OciImage, splitReference, TarEntry, tarOf } from "../ports/images";
import { messageOf } from "../ports/errors";

/** Each request to the registry ends by this deadline. */
const REQUEST_MS = 30_000;

/** A registry URL as configured: http(s)://host[:port], nothing after it. */
export function registryUrlProblem(url: string): string | null {
    // a user, token or password in the configuration would be stored and printed in the clear: the registry the lab
    // pushes to takes none (looked for before parsing: user:secret@host parses as a scheme "user:")
    if (url.includes("@"))
        return `${redactedUrl(url)}: no user, token or password in the registry's URL (the lab pushes without credentials): give http://host:port`;
    let u: URL;
    try {
        u = new URL(url);
    } catch {
        return `${JSON.stringify(url)} is not a URL: give the registry as http://host:port (or https://)`;
    }
    if (!["http:", "https:"].includes(u.protocol)) return `${url}: a registry is reached over http:// or https://`;
    if (u.pathname !== "/" || u.search || u.hash) return `${url}: give the registry's address alone (http://host:port), no path`;
    // the images' own registry name, which the cluster mirrors: no registry answers at it, the mirror's address is wanted
    if (u.hostname === LAB_REGISTRY)
        return `${url}: ${LAB_REGISTRY} is the name the lab's images carry, which the cluster mirrors from a registry of its own: give that registry's address (the mirror's endpoint in the cluster's registries.yaml, http://host:port)`;
    return null;
}

/** A URL with whatever stands before its last @ (a user, a token, a password) as ***: never printed. */
export const redactedUrl = (url: string) => url.replace(/^([a-z][\w+.-]*:\/\/)?[^\s]*@/i, "$1***@");

/**
 * Pushes to the registry at `url` under the image's repository (`tenants/site` of
 * `registry.lab.internal/tenants/site:1.2.0`), as a mirror of the image's registry serves it.
 */
export function registryImages(url: string): ImagePort {
    const problem = registryUrlProblem(url);
    if (problem) throw new Error(problem);
    const base = url.replace(/\/$/, "");
    const call = async (method: string, target: string, init: { body?: Buffer; headers?: Record<string, string> } = {}) => {
        try {
            return await fetch(new URL(target, `${base}/`), {
                method,
                headers: init.headers,
                body: init.body && new Uint8Array(init.body),
                redirect: "follow",
                signal: AbortSignal.timeout(REQUEST_MS),
            });
        } catch (e) {
            throw new Error(`the registry ${base} did not answer ${method} ${target}: ${messageOf((e as { cause?: unknown }).cause ?? e)}`);
        }
    };
    const fail = async (r: Response, what: string) => {
        const text = (await r.text().catch(() => "")).trim().slice(0, 300);
        return new Error(`the registry ${base} refused ${what}: HTTP ${r.status}${text ? ` ${text}` : ""}`);
    };
    const pushBlob = async (repository: string, b: Blob) => {
        if ((await call("HEAD", `/v2/${repository}/blobs/${b.digest}`)).ok) return;
        const start = await call("POST", `/v2/${repository}/blobs/uploads/`);
        const location = start.headers.get("location");
        if (start.status !== 202 || !location) throw await fail(start, `an upload to ${repository}`);
        const put = new URL(location, `${base}/`);
        put.searchParams.set("digest", b.digest);
        const done = await call("PUT", put.toString(), { body: b.bytes, headers: { "content-type": "application/octet-stream" } });
        if (done.status !== 201) throw await fail(done, `the blob ${b.digest} of ${repository}`);
    };
    return {
        where: `the registry ${base}`,
        async load(image: OciImage) {
            const { repository, tag } = splitReference(image.reference);
            const have = await call("HEAD", `/v2/${repository}/manifests/${tag}`, { headers: { accept: MANIFEST_TYPE } });
            if (have.ok && have.headers.get("docker-content-digest") === image.manifest.digest) return "present";
            await pushBlob(repository, image.layer);
            await pushBlob(repository, image.config);
            const put = await call("PUT", `/v2/${repository}/manifests/${tag}`, {
                body: image.manifest.bytes,
                headers: { "content-type": MANIFEST_TYPE },
            });
            if (put.status !== 201) throw await fail(put, `the manifest of ${image.reference}`);
            return "loaded";
        },
    };
}

/**
 * An image as an OCI archive (oci-layout, index.json, blobs/sha256/...), named in the index both
 * ways containerd's import reads a name: the full reference and the tag.
 */
export async function ociArchive(image: OciImage): Promise<Buffer> {
    const { tag } = splitReference(image.reference);
    const index = {
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.index.v1+json",
        manifests: [
            {
                mediaType: MANIFEST_TYPE,
                digest: image.manifest.digest,
                size: image.manifest.bytes.length,
                annotations: { "io.containerd.image.name": image.reference, "org.opencontainers.image.ref.name": tag },
            },
        ],
    };
    const file = (name: string, content: Buffer): TarEntry => ({ name, mode: 0o644, content });
    return tarOf([
        file("oci-layout", Buffer.from(JSON.stringify({ imageLayoutVersion: "1.0.0" }))),
        file("index.json", Buffer.from(JSON.stringify(index))),
        { name: "blobs", mode: 0o755 },
        { name: "blobs/sha256", mode: 0o755 },
        ...[image.manifest, image.config, image.layer].map((b) => file(`blobs/sha256/${b.digest.slice("sha256:".length)}`, b.bytes)),
    ]);
}

/**
 * Imports into k3s's containerd (`<k3s> ctr -n k8s.io images import`), unless an image of that name
 * and manifest digest is there. `k3s` is the k3s binary (the installer puts it in /usr/local/bin).
 */
export function k3sImages(k3s = "/usr/local/bin/k3s"): ImagePort {
    return {
        where: "k3s's containerd",
        async load(image: OciImage) {
            const listed = await run(k3s, ["ctr", "-n", "k8s.io", "images", "ls", "-q", `name==${image.reference}`], {
                timeoutMs: REQUEST_MS,
            }).catch((e: unknown) => {
                throw new Error(`${k3s} ctr images ls failed: ${messageOf(e)}: is k3s running?`);
            });
            if (listed.stdout.split("\n").includes(image.reference)) {
                const check = await run(k3s, ["ctr", "-n", "k8s.io", "images", "check", `name==${image.reference}`], {
                    timeoutMs: REQUEST_MS,
                });
                if (check.stdout.includes(image.manifest.digest)) return "present";
            }
            // a file of its own, removed after (an interrupted import leaves only a temporary file)
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gitops-lab-image-"));
            try {
                const file = path.join(dir, "image.tar");
                fs.writeFileSync(file, await ociArchive(image));
                await run(k3s, ["ctr", "-n", "k8s.io", "images", "import", file], { timeoutMs: 120_000 }).catch((e: unknown) => {
                    throw new Error(`${k3s} ctr images import of ${image.reference} failed: ${messageOf(e)}`);
                });
            } finally {
                fs.rmSync(dir, { recursive: true, force: true });
            }
            return "loaded";
        },
    };
}

/** Where the stack installs (or finds) k3s: the installer's folder, or the tests' stand-in. */
export const k3sBinary = () => path.join(process.env.GITOPS_LAB_K3S_BIN || "/usr/local/bin", "k3s");

/**
 * The stack's way for its images: the configured registry, else k3s's containerd; with neither (a
 * cluster adopted through kubeconfigPath on a host without k3s), one line saying what to set.
 */
export function labImages(imageRegistry: string, k3s = k3sBinary()): ImagePort {
    if (imageRegistry) return registryImages(imageRegistry);
    if (fs.existsSync(k3s)) return k3sImages(k3s);
    throw new Error(imagesNeedAWay(k3s));
}

export const imagesNeedAWay = (k3s = k3sBinary()) =>
    `the tenants lab's release images (${LAB_REGISTRY}) need a way into the cluster and this host has no k3s (${k3s}): set imageRegistry to a registry the cluster mirrors ${LAB_REGISTRY} from (pulumi config set imageRegistry http://host:port)`;
