/**
 * The simulated node's image store (its containerd's): the images the lab loads, by reference, which
 * the simulated kubelet mounts as image volumes. It is the lab's ImagePort on a simulated cluster in
 * this process, and it is served, as the real node's registry is, at the simulated API's /v2/ (the
 * registry API's few calls a push makes: blob uploads, then the manifest), as a mirror of the lab's
 * registry name: a process of its own (a dynamic provider) pushes there.
 */
import * as fs from "fs";
import * as path from "path";
import * as tarStream from "tar-stream";
import * as http from "http";
import { Blob, blob, ImagePort, LAB_REGISTRY, MANIFEST_TYPE, OciImage } from "../lab/ports/images";

export class NodeImages implements ImagePort {
    readonly where = "the simulated node";
    private readonly images = new Map<string, OciImage>();
    /** Blobs pushed (by digest) and uploads begun (by id), for the served registry. */
    private readonly blobs = new Map<string, Blob>();
    private uploads = 0;

    async load(image: OciImage): Promise<"loaded" | "present"> {
        if (this.images.get(image.reference)?.manifest.digest === image.manifest.digest) return "present";
        this.images.set(image.reference, image);
        return "loaded";
    }

    get(reference: string): OciImage | undefined {
        return this.images.get(reference);
    }

    /** Answers a registry API call (a path under /v2/); the body is the request's bytes. */
    serve(method: string, url: URL, body: Buffer, res: http.ServerResponse): void {
        const end = (code: number, headers: Record<string, string> = {}, text = "") => {
            res.writeHead(code, headers);
            res.end(method === "HEAD" ? undefined : text);
        };
        const error = (code: number, c: string, message: string) =>
            end(code, { "content-type": "application/json" }, JSON.stringify({ errors: [{ code: c, message }] }));
        if (url.pathname === "/v2/" || url.pathname === "/v2") return end(200, { "docker-distribution-api-version": "registry/2.0" }, "{}");
        const m = /^\/v2\/([a-z0-9._/-]+?)\/(blobs\/uploads\/(\d*)|blobs\/(sha256:[0-9a-f]{64})|manifests\/([\w.:-]+))$/.exec(url.pathname);
        if (!m) return error(404, "NAME_UNKNOWN", `${url.pathname}: not a path of this registry`);
        const [, repository, , upload, digest, tag] = m;
        if (digest && ["HEAD", "GET"].includes(method)) {
            const b = this.blobs.get(digest);
            return b
                ? end(200, { "docker-content-digest": digest, "content-length": String(b.bytes.length) })
                : error(404, "BLOB_UNKNOWN", digest);
        }
        if (upload === "" && method === "POST") return end(202, { location: `/v2/${repository}/blobs/uploads/${++this.uploads}` });
        if (upload && method === "PUT") {
            const b = blob(body);
            if (b.digest !== url.searchParams.get("digest")) return error(400, "DIGEST_INVALID", `the upload's digest is ${b.digest}`);
            this.blobs.set(b.digest, b);
            return end(201, { "docker-content-digest": b.digest, location: `/v2/${repository}/blobs/${b.digest}` });
        }
        if (tag) {
            const reference = `${LAB_REGISTRY}/${repository}:${tag}`;
            const have = this.images.get(reference);
            if (["HEAD", "GET"].includes(method))
                return have
                    ? end(
                          200,
                          { "content-type": MANIFEST_TYPE, "docker-content-digest": have.manifest.digest },
                          have.manifest.bytes.toString(),
                      )
                    : error(404, "MANIFEST_UNKNOWN", reference);
            if (method === "PUT") {
                const manifest = blob(body);
                const doc = JSON.parse(body.toString());
                const config = this.blobs.get(doc.config?.digest);
                const layer = this.blobs.get(doc.layers?.[0]?.digest);
                if (!config || !layer || doc.layers.length !== 1)
                    return error(400, "MANIFEST_BLOB_UNKNOWN", "the simulated node takes images of one layer, their blobs pushed first");
                this.images.set(reference, { reference, manifest, config, layer });
                return end(201, { "docker-content-digest": manifest.digest });
            }
        }
        return error(405, "UNSUPPORTED", `${method} ${url.pathname}`);
    }
}

/** Writes an image's layer out under `dir` (its files and folders; nothing else is in the lab's images). */
export async function unpackLayer(image: OciImage, dir: string): Promise<void> {
    const extract = tarStream.extract();
    const done = new Promise<void>((resolve, reject) => {
        extract.on("entry", (header, stream, next) => {
            const target = path.join(dir, header.name);
            if (!target.startsWith(`${dir}${path.sep}`)) return next(new Error(`${image.reference}: ${header.name} is outside the image`));
            const chunks: Buffer[] = [];
            stream.on("data", (c) => chunks.push(c as Buffer));
            stream.on("end", () => {
                if (header.type === "directory") fs.mkdirSync(target, { recursive: true });
                else if (header.type === "file") {
                    fs.mkdirSync(path.dirname(target), { recursive: true });
                    fs.writeFileSync(target, Buffer.concat(chunks), { mode: header.mode ?? 0o644 });
                }
                next();
            });
        });
        extract.on("finish", () => resolve());
        extract.on("error", reject);
    });
    extract.end(image.layer.bytes);
    await done;
}
