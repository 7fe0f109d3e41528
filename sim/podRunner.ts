/**
 * The simulated kubelet's container: a Pod's (single) container run for real with `/bin/sh`, as
 * nobody (uid 65534, when we are root), over a directory laid out like the Pod's volume mounts.
 * Each ConfigMap volume is written out as files (its keys, or its `items` paths), each image volume
 * as its image's files (the simulated node's image store, sim/nodeImages.ts), read-only as both are on
 * a real node: the files 0444, the directories 0555, owned by root, so a write into them fails from
 * the script itself, with the script's own error text.
 *
 * The container's image is not run: its command is, by the machine's /bin/sh (busybox's sh in the
 * lab's Pods; the hook script is POSIX sh). Command arguments and env values that name a mount path
 * (e.g. `/app/setup.sh`) are mapped to where that mount is laid out.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { run, RunError } from "../lab/ports/exec";
import { OciImage } from "../lab/ports/images";
import { unpackLayer } from "./nodeImages";
import { PodRun, PodRunner } from "./workloads";
import { codeOf, messageOf } from "../lab/ports/errors";
import type { Container, SimPod } from "./objects";

/** A ConfigMap by namespace and name (the simulated API's, or the real plane's). */
export type ConfigMapLookup = (namespace: string, name: string) => Promise<{ data?: Record<string, string> } | undefined | null>;

/** Where a Pod's volumes come from: ConfigMaps by name, images by reference (the node's image store). */
export interface VolumeSources {
    configMap: ConfigMapLookup;
    image?: (reference: string) => OciImage | undefined;
}

/** How long one container may run before the simulated kubelet kills it. */
const RUN_DEADLINE_MS = 60_000;

async function layOut(pod: SimPod, sources: VolumeSources, dir: string): Promise<Map<string, string>> {
    const container: Partial<Container> = pod.spec?.containers?.[0] ?? {};
    const mounts = new Map<string, string>();
    for (const m of container.volumeMounts ?? []) {
        const vol = (pod.spec?.volumes ?? []).find((v) => v.name === m.name);
        // the service account token a real API server mounts into every Pod: the lab's scripts never read it
        if (vol?.projected && m.mountPath === "/var/run/secrets/kubernetes.io/serviceaccount") continue;
        const target = path.join(dir, "mounts", m.mountPath);
        if (vol?.image) {
            // the kubelet pulls it unless it is there (the lab's images are never in a public registry)
            const image = sources.image?.(vol.image.reference);
            if (!image || vol.image.pullPolicy === "Always")
                throw new Error(`Failed to pull image "${vol.image.reference}": not found (the simulated node pulls from no registry)`);
            fs.mkdirSync(target, { recursive: true });
            await unpackLayer(image, target);
            mounts.set(m.mountPath, target);
            continue;
        }
        if (!vol?.configMap) throw new Error(`volume ${m.name}: the simulation lays out ConfigMap and image volumes only`);
        const cm = await sources.configMap(pod.metadata.namespace!, vol.configMap.name);
        if (!cm) throw new Error(`MountVolume.SetUp failed for volume "${m.name}" : configmap "${vol.configMap.name}" not found`);
        fs.mkdirSync(target, { recursive: true });
        const items: { key: string; path: string }[] = vol.configMap.items ?? Object.keys(cm.data ?? {}).map((k) => ({ key: k, path: k }));
        for (const it of items) {
            const file = path.join(target, it.path);
            fs.mkdirSync(path.dirname(file), { recursive: true });
            fs.writeFileSync(file, cm.data?.[it.key] ?? "", { mode: 0o444 });
        }
        mounts.set(m.mountPath, target);
    }
    // read-only, as ConfigMap and image volumes are: nothing under a mount can be written, nor created
    const seal = (p: string) => {
        for (const e of fs.readdirSync(p, { withFileTypes: true })) {
            const child = path.join(p, e.name);
            if (e.isDirectory()) seal(child);
            else fs.chmodSync(child, 0o444);
        }
        fs.chmodSync(p, 0o555);
    };
    for (const target of mounts.values()) seal(target);
    return mounts;
}

/** A path inside a mount, mapped to the laid-out directory; anything else as it is. */
function mapPath(value: string, mounts: Map<string, string>): string {
    for (const [mountPath, dir] of mounts) {
        if (value === mountPath) return dir;
        if (value.startsWith(mountPath.endsWith("/") ? mountPath : `${mountPath}/`)) return path.join(dir, value.slice(mountPath.length));
    }
    return value;
}

/** A PodRunner that runs the container's command with /bin/sh under `workDir` (which nobody must be able to traverse). */
export function shellPodRunner(workDir?: string): PodRunner {
    const sources = (kube: Parameters<PodRunner>[1]): VolumeSources => ({
        configMap: async (ns, name) => kube.get("ConfigMap", ns, name),
        image: (r) => kube.images.get(r),
    });
    return Object.assign((pod: SimPod, kube: Parameters<PodRunner>[1]) => runPodContainer(pod, sources(kube), workDir), {
        volumeProblem: (pod: SimPod, kube: Parameters<PodRunner>[1]) => volumeProblem(pod, sources(kube)),
    });
}

/**
 * Why the kubelet cannot set up a Pod's volumes yet, in its own words (a ConfigMap volume whose ConfigMap is
 * not there, not optional): the Pod then waits, ContainerCreating, and the kubelet tries again.
 */
export async function volumeProblem(pod: SimPod, sources: VolumeSources): Promise<string | undefined> {
    const mounted = new Set((pod.spec?.containers?.[0]?.volumeMounts ?? []).map((m) => m.name));
    for (const vol of pod.spec?.volumes ?? []) {
        if (!mounted.has(vol.name) || !vol.configMap || vol.configMap.optional) continue;
        if (!(await sources.configMap(pod.metadata.namespace!, vol.configMap.name)))
            return `MountVolume.SetUp failed for volume "${vol.name}" : configmap "${vol.configMap.name}" not found`;
    }
    return undefined;
}

/**
 * Runs a Pod's container as described above, its volumes read from `sources`: the simulated kubelet's run.
 */
export async function runPodContainer(
    pod: SimPod,
    sources: VolumeSources,
    workDir?: string,
    deadlineMs = RUN_DEADLINE_MS,
): Promise<PodRun> {
    const base = workDir ?? os.tmpdir();
    fs.mkdirSync(base, { recursive: true });
    const dir = fs.mkdtempSync(path.join(base, "pod-"));
    fs.chmodSync(dir, 0o755);
    try {
        let mounts: Map<string, string>;
        try {
            mounts = await layOut(pod, sources, dir);
        } catch (e) {
            return { exitCode: 128, log: `${messageOf(e)}\n` };
        }
        const c: Partial<Container> = pod.spec?.containers?.[0] ?? {};
        const argv: string[] = [...(c.command ?? []), ...(c.args ?? [])].map((a: string) => mapPath(a, mounts));
        if (!argv.length)
            return { exitCode: 128, log: "simulation: the container has no command (its image's entrypoint is not run here)\n" };
        if (!["/bin/sh", "sh"].includes(argv[0]))
            return { exitCode: 128, log: `simulation: only /bin/sh commands run here, not ${argv[0]}\n` };
        const env: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/" };
        for (const e of c.env ?? []) if (typeof e.value === "string") env[e.name] = mapPath(e.value, mounts);
        const asNobody = process.getuid?.() === 0;
        const cmd = asNobody ? "setpriv" : "/bin/sh";
        const args = asNobody ? ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", ...argv.slice(1)] : argv.slice(1);
        // through run()'s small helper process (a fork of this large one costs more); a shell first
        // joins stderr to stdout, so the log is one stream in the order written, as a container's is,
        // and gives it no stdin (a container without `stdin: true` reads end-of-file)
        try {
            const r = await run("/bin/sh", ["-c", 'exec </dev/null 2>&1; exec "$@"', "sh", cmd, ...args], {
                cwd: dir,
                env,
                timeoutMs: deadlineMs,
                killSignal: "SIGKILL",
            });
            return { exitCode: 0, log: r.stdout };
        } catch (e) {
            if (codeOf(e) === "ENOENT") return { exitCode: 128, log: `simulation: ${messageOf(e)}\n` };
            const out = e instanceof RunError ? e.stdout : "";
            if (e instanceof RunError && typeof e.exitCode === "number") return { exitCode: e.exitCode, log: out };
            if (e instanceof RunError && e.signal) return { exitCode: 137, log: out }; // killed at the deadline
            return { exitCode: 128, log: `${out}simulation: ${messageOf(e)}\n` }; // it could not be run or followed
        }
    } finally {
        // make the read-only layout removable again
        const open = (p: string) => {
            fs.chmodSync(p, 0o755);
            for (const e of fs.readdirSync(p, { withFileTypes: true })) if (e.isDirectory()) open(path.join(p, e.name));
        };
        try {
            open(dir);
        } catch {
            /* already gone */
        }
        fs.rmSync(dir, { recursive: true, force: true });
    }
}
