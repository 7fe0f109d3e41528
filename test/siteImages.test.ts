/**
 * The tenants lab's release images: made the same from the same files, and brought to a cluster by
 * the registry API (the simulated node's registry, as the real node's) or by k3s's ctr (a stand-in
 * k3s that records its calls and keeps the archive); the simulated kubelet mounts them read-only.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { k3sImages, labImages, ociArchive, registryImages } from "../lab/platform/images";
import { RELEASES } from "../lab/tenants/layout";
import { PLATFORM_REPO_DIR } from "../lab/tenants/repoFiles";
import { siteImage, siteImages } from "../lab/tenants/siteImages";
import { FakeKube } from "../sim/fakeApi";
import { runPodContainer } from "../sim/podRunner";
import { layerFiles, tarEntries } from "./helpers/tar";

describe("the release images", () => {
    it("given the same files, then the same image bytes, one per release, each its release's code", async () => {
        const [a, b] = [await siteImages(), await siteImages()];
        assert.deepStrictEqual(
            a.map((i) => i.reference),
            Object.values(RELEASES).map(siteImage),
        );
        assert.deepStrictEqual(
            a.map((i) => i.manifest.digest),
            b.map((i) => i.manifest.digest),
        );
        const files = await layerFiles(a[1].layer.bytes);
        assert.strictEqual(
            files["setup.sh"],
            fs.readFileSync(path.join(PLATFORM_REPO_DIR, "releases", RELEASES.faulty, "code", "setup.sh"), "utf8"),
        );
        const entries = await tarEntries(a[1].layer.bytes);
        assert.ok(
            entries.every((e) => e.mode === (e.type === "directory" ? 0o755 : 0o644) || e.mode === 0o755),
            JSON.stringify(entries),
        );
    });

    describe("pushed to a registry (the simulated node's, served at /v2/)", () => {
        let kube: FakeKube;
        let url: string;
        beforeEach(async () => {
            kube = new FakeKube();
            url = await kube.start();
        });
        afterEach(() => kube.stop());

        it("when pushed, then the node has each image; pushed again, then each is present, nothing sent", async () => {
            const images = await siteImages();
            const port = registryImages(url);
            assert.deepStrictEqual(await Promise.all(images.map((i) => port.load(i))), ["loaded", "loaded", "loaded"]);
            for (const i of images) assert.strictEqual(kube.images.get(i.reference)?.manifest.digest, i.manifest.digest);
            const seen: string[] = [];
            const serve = kube.images.serve.bind(kube.images);
            kube.images.serve = (method, u, body, res) => (seen.push(`${method} ${u.pathname}`), serve(method, u, body, res));
            assert.deepStrictEqual(await Promise.all(images.map((i) => port.load(i))), ["present", "present", "present"]);
            assert.deepStrictEqual(
                seen,
                images.map((i) => `HEAD /v2/tenants/site/manifests/${i.reference.split(":").pop()}`),
            );
        });

        it("given a registry address with a path or of another scheme, then one line saying how to write it", () => {
            assert.throws(() => registryImages(`${url}/v2`), /give the registry's address alone \(http:\/\/host:port\), no path/);
            assert.throws(() => registryImages("ftp://x:1"), /a registry is reached over http:\/\/ or https:\/\//);
            assert.throws(() => registryImages("localhost:5000"), /a registry is reached over http/);
        });

        it("given a registry that does not answer, then the error names it", async () => {
            await kube.stop();
            await assert.rejects(registryImages(url).load((await siteImages())[0]), new RegExp(`the registry ${url} did not answer HEAD`));
        });
    });

    describe("imported into k3s's containerd (a stand-in k3s)", () => {
        let dir: string;
        let k3s: string;
        beforeEach(() => {
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "k3s-"));
            k3s = path.join(dir, "k3s");
            // records each call; `images import` keeps the archive; ls/check answer from what was imported
            fs.writeFileSync(
                k3s,
                `#!/bin/sh
echo "$*" >> "${dir}/calls"
case "$5" in
  import) cp "$6" "${dir}/archive.tar"; cat "${dir}/imported" 2>/dev/null; echo "$IMAGE_NAME" > "${dir}/imported" ;;
  ls) cat "${dir}/imported" 2>/dev/null; true ;;
  check) if [ -f "${dir}/imported" ]; then echo "$(cat "${dir}/imported") application/vnd.oci.image.manifest.v1+json $DIGEST complete (3/3)"; fi ;;
esac
`,
                { mode: 0o755 },
            );
        });
        afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

        it("when loaded, then ctr imports an OCI archive naming the image; loaded again, then present", async () => {
            const image = (await siteImages())[1];
            process.env.IMAGE_NAME = image.reference;
            process.env.DIGEST = image.manifest.digest;
            try {
                assert.strictEqual(await k3sImages(k3s).load(image), "loaded");
                const calls = fs.readFileSync(path.join(dir, "calls"), "utf8").trim().split("\n");
                assert.deepStrictEqual(calls[0], `ctr -n k8s.io images ls -q name==${image.reference}`);
                assert.match(calls[1], /^ctr -n k8s.io images import \/.*\/image\.tar$/);
                assert.ok(!fs.existsSync(calls[1].split(" ").pop()!), "the archive's temporary file is removed");
                const archive = await tarEntries(fs.readFileSync(path.join(dir, "archive.tar")));
                const index = JSON.parse(archive.find((e) => e.name === "index.json")!.text!);
                assert.deepStrictEqual(index.manifests[0].annotations, {
                    "io.containerd.image.name": image.reference,
                    "org.opencontainers.image.ref.name": RELEASES.faulty,
                });
                for (const b of [image.manifest, image.config, image.layer])
                    assert.ok(archive.some((e) => e.name === `blobs/sha256/${b.digest.slice(7)}`, b.digest));
                assert.deepStrictEqual(
                    (await tarEntries(await ociArchive(image))).map((e) => e.name),
                    archive.map((e) => e.name),
                );
                assert.strictEqual(await k3sImages(k3s).load(image), "present");
            } finally {
                delete process.env.IMAGE_NAME;
                delete process.env.DIGEST;
            }
        });

        it("given neither a registry nor k3s, then one line saying to set imageRegistry", () => {
            assert.throws(
                () => labImages("", path.join(dir, "no-k3s")),
                /no k3s \(.*no-k3s\): set imageRegistry .*pulumi config set imageRegistry/,
            );
            assert.strictEqual(labImages("", k3s).where, "k3s's containerd");
            assert.match(labImages("http://127.0.0.1:5000", k3s).where, /the registry http:\/\/127\.0\.0\.1:5000/);
        });
    });

    describe("mounted by the simulated kubelet", () => {
        const pod = (reference: string, pullPolicy = "IfNotPresent") => ({
            metadata: { name: "p", namespace: "t" },
            spec: {
                containers: [
                    {
                        name: "c",
                        // the simulated kubelet maps a mount's path in an argument or an env value, as the hook's are written
                        command: ["/bin/sh", "-c", 'cat "$CODE/VERSION"; touch "$CODE/x" 2>/dev/null; echo touch=$?'],
                        env: [{ name: "CODE", value: "/app" }],
                        volumeMounts: [{ name: "code", mountPath: "/app", readOnly: true }],
                    },
                ],
                volumes: [{ name: "code", image: { reference, pullPolicy } }],
            },
        });
        let dir: string;
        beforeEach(() => {
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "pods-"));
            fs.chmodSync(dir, 0o755);
        });
        afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

        it("given the image on the node, then the container reads its files, writes none", async () => {
            const kube = new FakeKube();
            for (const i of await siteImages()) await kube.images.load(i);
            const r = await runPodContainer(
                pod(siteImage(RELEASES.fixed)),
                { configMap: async () => undefined, image: (x) => kube.images.get(x) },
                dir,
            );
            assert.deepStrictEqual(r, { exitCode: 0, log: `${RELEASES.fixed}\ntouch=1\n` });
        });

        it("given no such image on the node, then the Pod fails to pull it", async () => {
            const r = await runPodContainer(pod(siteImage("9.9.9")), { configMap: async () => undefined, image: () => undefined }, dir);
            assert.strictEqual(r.exitCode, 128);
            assert.match(r.log, /Failed to pull image "registry\.lab\.internal\/tenants\/site:9\.9\.9": not found/);
        });
    });
});
