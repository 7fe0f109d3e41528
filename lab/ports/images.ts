/**
 * Images the lab makes (the tenants lab's release images) and how a cluster gets them: the cluster's
 * kubelets must find an image under its reference without a public registry.
 */
import { createHash } from "crypto";
import * as tarStream from "tar-stream";

/** A blob of an OCI image: its bytes and their digest (`sha256:<hex>`). */
export interface Blob {
    digest: string;
    bytes: Buffer;
}

/** An OCI image of one uncompressed layer, as the lab makes it. */
export interface OciImage {
    /** The full name the Pods use, e.g. `registry.lab.internal/tenants/site:1.2.0`. */
    reference: string;
    manifest: Blob;
    config: Blob;
    layer: Blob;
}

/**
 * The registry name of the lab's own images. No registry answers to it: a cluster gets them from a
 * registry that mirrors this name (the real node's own), or by an import into its containerd (k3s).
 */
export const LAB_REGISTRY = "registry.lab.internal";

export const MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json";
export const CONFIG_TYPE = "application/vnd.oci.image.config.v1+json";
export const LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar";

export const blob = (bytes: Buffer): Blob => ({ digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}`, bytes });

/** A reference split as a registry names it: `host/repository/path` and the tag. */
export function splitReference(reference: string): { registry: string; repository: string; tag: string } {
    const m = /^([a-z0-9.-]+(?::\d+)?)\/([a-z0-9._/-]+):([\w.-]+)$/.exec(reference);
    if (!m) throw new Error(`${reference}: not an image reference of the form host/repository:tag`);
    return { registry: m[1], repository: m[2], tag: m[3] };
}

/** An entry of a tar the lab writes: no times, owned by root. */
export interface TarEntry {
    name: string;
    mode: number;
    /** A file's bytes; a folder has none. */
    content?: Buffer;
}

/** A tar of these entries, in this order, the same bytes for the same entries (tar-stream: the format is not ours to write). */
export async function tarOf(entries: TarEntry[]): Promise<Buffer> {
    const pack = tarStream.pack();
    for (const e of entries) {
        const header = { name: e.name, mode: e.mode, mtime: new Date(0), uid: 0, gid: 0, uname: "root", gname: "root" };
        if (e.content) pack.entry({ ...header, type: "file", size: e.content.length }, e.content);
        else pack.entry({ ...header, type: "directory" });
    }
    pack.finalize();
    const chunks: Buffer[] = [];
    for await (const c of pack) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
}

/** How the lab makes its images available to the cluster's kubelets. */
export interface ImagePort {
    /** Where the images go, for the log ("the node's registry http://...", "k3s's containerd"). */
    readonly where: string;
    /** Makes the image available under its reference; "present" when it was there already, unchanged. */
    load(image: OciImage): Promise<"loaded" | "present">;
}
