/**
 * The site's code as the field report ships it: one image per release, its files the release's
 * `code/` folder (gitrepo/tenants/releases/<release>/code), mounted read-only into the setup hook's
 * and the site's Pods as an image volume (`volumes[].image`, Kubernetes' ImageVolume).
 *
 * The image is made here, in the OCI image format, byte for byte the same from the same files (no
 * times, owner root, sorted), so a second run finds it in the cluster as it left it.
 */
import * as fs from "fs";
import * as path from "path";
import { blob, CONFIG_TYPE, ImagePort, LAB_REGISTRY, LAYER_TYPE, MANIFEST_TYPE, OciImage, TarEntry, tarOf } from "../ports/images";
import { RELEASES } from "./layout";
import { PLATFORM_REPO_DIR } from "./repoFiles";

/** The repository of the site's images; each release is a tag. */
export const SITE_IMAGE_REPOSITORY = `${LAB_REGISTRY}/tenants/site`;
export const siteImage = (release: string) => `${SITE_IMAGE_REPOSITORY}:${release}`;

/** Node's name for the machine's architecture, as OCI names it. */
const OCI_ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64", arm: "arm", ppc64: "ppc64le", s390x: "s390x" };

/** The files of a folder, sorted, as tar entries (folders 0755, files 0644 or 0755 as they are executable). */
function entries(dir: string, rel = ""): TarEntry[] {
    const out: TarEntry[] = [];
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        const name = rel ? `${rel}/${e.name}` : e.name;
        const full = path.join(dir, name);
        if (e.isDirectory()) out.push({ name, mode: 0o755 }, ...entries(dir, name));
        else if (e.isFile()) out.push({ name, mode: fs.statSync(full).mode & 0o100 ? 0o755 : 0o644, content: fs.readFileSync(full) });
        else throw new Error(`${full}: only files and folders go into an image`);
    }
    return out;
}

/** The image of a folder under `reference`: its layer, its config (this machine's architecture), its manifest. */
export async function imageOf(reference: string, dir: string, createdBy: string): Promise<OciImage> {
    const layer = blob(await tarOf(entries(dir)));
    const config = blob(
        Buffer.from(
            JSON.stringify({
                architecture: OCI_ARCH[process.arch] ?? process.arch,
                os: "linux",
                config: {},
                rootfs: { type: "layers", diff_ids: [layer.digest] },
                history: [{ created_by: createdBy }],
            }),
        ),
    );
    const manifest = blob(
        Buffer.from(
            JSON.stringify({
                schemaVersion: 2,
                mediaType: MANIFEST_TYPE,
                config: { mediaType: CONFIG_TYPE, digest: config.digest, size: config.bytes.length },
                layers: [{ mediaType: LAYER_TYPE, digest: layer.digest, size: layer.bytes.length }],
            }),
        ),
    );
    return { reference, manifest, config, layer };
}

/** Every release's site image, from the repository's files. */
export async function siteImages(dir = PLATFORM_REPO_DIR): Promise<OciImage[]> {
    const releases = [RELEASES.first, RELEASES.faulty, RELEASES.fixed];
    return Promise.all(releases.map((r) => imageOf(siteImage(r), path.join(dir, "releases", r, "code"), `gitops-lab: releases/${r}/code`)));
}

/** Makes every release's image available to the cluster (step 1 of the tenants lab, at every run: a loaded image is left). */
export async function loadSiteImages(images: ImagePort, log: (line: string) => void = () => {}): Promise<void> {
    const outcome: string[] = [];
    for (const image of await siteImages()) outcome.push(`${image.reference.split(":").pop()} ${await images.load(image)}`);
    log(`site images in ${images.where}: ${outcome.join(", ")}`);
}
