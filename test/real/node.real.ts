/**
 * The real node (`gitops-lab node`, realnode/): a real single-node cluster on this machine whose Pods
 * are containers (containerd v2.1.4, runc), their images pulled from the node's registry through
 * containerd's mirror configuration. Each test starts the command as a user does, in its own process,
 * and reads what it printed; what the node left on the host is counted before and after, its
 * processes found by its cgroup and its namespaces, never by a binary's path.
 */
import * as assert from "assert";
import { ChildProcess, execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { procStat } from "../../lab/ports/proc";
import { NODE } from "../../realnode/config";
import { cgroupHierarchies, KUBELET_SYSCTLS, NODE_LEDGER } from "../../realnode/ledger";
import { NODE_LOCK } from "../../realnode/node";
import { REAL_NODE, REAL_PLANE } from "../../realplane/versions";
import { nodeBinPath } from "../../realnode/build";
import { k3sImages, registryImages } from "../../lab/platform/images";
import { RELEASES } from "../../lab/tenants/layout";
import { PLATFORM_REPO_DIR } from "../../lab/tenants/repoFiles";
import { imageOf, siteImage, siteImages } from "../../lab/tenants/siteImages";
import { FakeKube, ROOT_CA_CONFIGMAP } from "../../sim/fakeApi";
import { BIN } from "../helpers/cli";
import { expect, holds } from "../helpers/expect";

const PROJECT = path.resolve(__dirname, "..", "..");

/** What a node may change on the host, as one comparable object. */
function hostState() {
    const sysctl = (k: string) => fs.readFileSync(path.join("/proc/sys", ...k.split(".")), "utf8").trim();
    return {
        links: fs.readdirSync("/sys/class/net").sort(),
        mounts: fs
            .readFileSync("/proc/self/mountinfo", "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => l.split(" ")[4])
            .sort(),
        // the rules, without their packet counters
        iptables: execFileSync("iptables-save", { encoding: "utf8" })
            .split("\n")
            .filter((l) => l && !l.startsWith("#"))
            .map((l) => l.replace(/\[\d+:\d+\]/g, "")),
        routes: execFileSync("ip", ["route", "show", "table", "all"], { encoding: "utf8" }),
        sysctls: Object.fromEntries(
            [...KUBELET_SYSCTLS, "net.ipv4.ip_forward", "net.bridge.bridge-nf-call-iptables"]
                .filter((k) => fs.existsSync(path.join("/proc/sys", ...k.split("."))))
                .map((k) => [k, sysctl(k)]),
        ),
        cgroups: cgroupHierarchies().filter((h) => fs.existsSync(path.join(h, NODE.name))),
        files: [NODE_LEDGER, NODE_LOCK].filter((f) => fs.existsSync(f)),
    };
}

/** The processes in a network or mount namespace (by its inode, as /proc/<pid>/ns/* names it). */
function processesIn(nsInodes: string[]): number[] {
    const out: number[] = [];
    for (const e of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(e)) continue;
        try {
            if (["net", "mnt"].some((ns) => nsInodes.includes(fs.readlinkSync(`/proc/${e}/ns/${ns}`)))) out.push(Number(e));
        } catch {
            /* gone meanwhile */
        }
    }
    return out;
}

interface Served {
    child: ChildProcess;
    out: () => string;
    kubeconfig: string;
    holderPid: number;
    /** The node's namespaces, while it runs. */
    namespaces: string[];
}

/** `gitops-lab node --root DIR` in its own process, until its SERVING block. */
async function serveNode(root: string): Promise<Served> {
    const child = spawn(process.execPath, [BIN, "node", "--root", root], { cwd: PROJECT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const onData = (d: Buffer) => {
        out += d;
        for (const l of String(d).split("\n")) if (l.trim()) console.log(`    | ${l}`);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    await expect(
        () => {
            if (child.exitCode !== null) return { state: "failed", message: `gitops-lab node ended (exit ${child.exitCode}):\n${out}` };
            return out.includes("SERVING the real node")
                ? { state: "succeeded", message: "serving" }
                : { state: "pending", message: `not serving yet:\n${out.slice(-2000)}` };
        },
        { timeoutMs: 600_000, intervalMs: 200 },
    );
    const holderPid = Number(/nsenter -t (\d+) -m -n/.exec(out)![1]);
    const namespaces = ["net", "mnt"].map((ns) => fs.readlinkSync(`/proc/${holderPid}/ns/${ns}`));
    return { child, out: () => out, kubeconfig: /export KUBECONFIG=(\S+)/.exec(out)![1], holderPid, namespaces };
}

/** A process by its PID and start time (a PID alone may be a later process's, as a namespace's inode may be a later namespace's). */
const identity = (pid: number) => `${pid}@${procStat(pid)?.startTime}`;
/** Those of `identities` that still run (a zombie, ended but not yet reaped by its parent, does not). */
const stillRunning = (identities: string[]) =>
    identities.filter((id) => identity(Number(id.split("@")[0])) === id && procStat(Number(id.split("@")[0]))?.state !== "Z");

const exited = (child: ChildProcess) =>
    new Promise<number | null>((r) => (child.exitCode !== null ? r(child.exitCode) : child.on("exit", (code) => r(code))));

describe("the real node (gitops-lab node): a real cluster whose Pods are containers", function () {
    this.timeout(1_800_000);
    let root: string;
    let initial: ReturnType<typeof hostState>;
    let node: Served;
    const kubectl = (...args: string[]) => execFileSync("kubectl", ["--kubeconfig", node.kubeconfig, ...args], { encoding: "utf8" });
    const podJson = (ns: string, name: string) => {
        try {
            return JSON.parse(kubectl("get", "pod", name, "-n", ns, "-o", "json"));
        } catch {
            return undefined;
        }
    };
    /** Runs a Pod to its end and gives its log. */
    const runPod = async (name: string, spec: any): Promise<string> => {
        const file = path.join(root, `${name}.json`);
        fs.writeFileSync(
            file,
            JSON.stringify({
                apiVersion: "v1",
                kind: "Pod",
                metadata: { name, namespace: "default" },
                spec: { restartPolicy: "Never", ...spec },
            }),
        );
        kubectl("apply", "-f", file);
        await expect(
            holds(
                `Pod ${name} ended`,
                () => ["Succeeded", "Failed"].includes(podJson("default", name)?.status?.phase),
                () => podJson("default", name)?.status,
            ),
            { timeoutMs: 120_000, intervalMs: 500 },
        );
        return kubectl("logs", "-n", "default", name);
    };

    before(async () => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "real-node-"));
        initial = hostState();
        assert.deepStrictEqual(initial.cgroups, [], "no node runs before the test");
        node = await serveNode(root);
    });
    after(async () => {
        if (node?.child.exitCode === null) {
            node.child.kill("SIGTERM");
            await exited(node.child);
        }
    });

    it("is Ready on the pinned containerd and Kubernetes, CoreDNS from the mirror", () => {
        const n = JSON.parse(kubectl("get", "node", NODE.name, "-o", "json"));
        assert.ok(n.status.conditions.some((c: any) => c.type === "Ready" && c.status === "True"));
        assert.strictEqual(n.status.nodeInfo.containerRuntimeVersion, `containerd://${REAL_NODE.containerd.slice(1)}`);
        assert.strictEqual(n.status.nodeInfo.kubeletVersion, REAL_PLANE.kubernetes);
        const events = kubectl("get", "events", "-n", "kube-system", "-o", 'jsonpath={range .items[*]}{.reason} {.message}{"\\n"}{end}');
        assert.ok(events.includes(`Pulled Successfully pulled image "registry.k8s.io/coredns/coredns:${REAL_NODE.coredns}"`), events);
        // the kubelet's message: "Started container coredns" up to 1.35, "Container started" from 1.36 (the
        // container is named in the event's involvedObject.fieldPath)
        assert.match(events, /^Started (Started container coredns|Container started)$/m);
    });

    it("given a new namespace, then kube-controller-manager publishes kube-root-ca.crt in it, as the simulated API server does (its name, annotation and key), and puts it back when it is deleted or changed", async () => {
        const rootCa = () => {
            try {
                return JSON.parse(kubectl("get", "configmap", ROOT_CA_CONFIGMAP, "-n", "root-ca-check", "-o", "json"));
            } catch {
                return undefined;
            }
        };
        kubectl("create", "namespace", "root-ca-check");
        const published = `${ROOT_CA_CONFIGMAP} published in root-ca-check`;
        await expect(
            holds(
                published,
                () => !!rootCa(),
                () => kubectl("get", "configmaps", "-n", "root-ca-check"),
            ),
            { timeoutMs: 60_000, intervalMs: 500 },
        );
        const real = rootCa();
        const sim = new FakeKube();
        sim.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "root-ca-check" } }, "test");
        const simulated = sim.get("ConfigMap", "root-ca-check", ROOT_CA_CONFIGMAP);
        assert.deepStrictEqual(real.metadata.annotations, simulated!.metadata.annotations);
        assert.deepStrictEqual(Object.keys(real.data), Object.keys(simulated!.data!));
        assert.match(real.data["ca.crt"], /^-----BEGIN CERTIFICATE-----/);
        const uid = real.metadata.uid;
        kubectl("delete", "configmap", ROOT_CA_CONFIGMAP, "-n", "root-ca-check");
        await expect(
            holds(
                `${ROOT_CA_CONFIGMAP} put back`,
                () => !!rootCa() && rootCa().metadata.uid !== uid,
                () => rootCa()?.metadata,
            ),
            { timeoutMs: 60_000, intervalMs: 500 },
        );
        // its data changed (a drift made on it by mistake): put back, the same object, as the simulated publisher does
        const again = rootCa().metadata.uid;
        kubectl("-n", "root-ca-check", "patch", "configmap", ROOT_CA_CONFIGMAP, "--type", "merge", "-p", '{"data":{"LOG_LEVEL":"debug"}}');
        await expect(
            holds(
                `${ROOT_CA_CONFIGMAP}'s data put back`,
                () => JSON.stringify(Object.keys(rootCa()?.data ?? {})) === '["ca.crt"]' && rootCa().metadata.uid === again,
                () => rootCa()?.data,
            ),
            { timeoutMs: 60_000, intervalMs: 500 },
        );
        kubectl("delete", "namespace", "root-ca-check", "--wait=false");
    });

    it("given a Pod, then it resolves a Service through CoreDNS and kube-proxy, and reaches nothing outside the machine", async () => {
        const log = await runPod("reach", {
            containers: [
                {
                    name: "c",
                    image: "busybox:1.37.0",
                    command: [
                        "sh",
                        "-c",
                        "nslookup kubernetes.default.svc.cluster.local; wget -q -T 5 -O- http://192.0.2.1/ 2>&1; echo wget=$?",
                    ],
                },
            ],
        });
        assert.match(log, /Address: 10\.43\.0\.1\b/, log);
        assert.match(log, /Network is unreachable/, log);
        assert.match(log, /wget=1/, log);
    });

    it("given an image the mirror does not have, then its pull fails as a real pull fails: ErrImagePull, not found", async () => {
        kubectl("run", "missing", "-n", "default", "--restart=Never", "--image=quay.io/argoproj/argocd:v0.0.0-not-there");
        await expect(
            holds(
                "the Pod waits in ErrImagePull or ImagePullBackOff, the image not found",
                () => {
                    const w = podJson("default", "missing")?.status?.containerStatuses?.[0]?.state?.waiting;
                    return /ErrImagePull|ImagePullBackOff/.test(w?.reason ?? "") && /not found/.test(w?.message ?? "");
                },
                () => podJson("default", "missing")?.status?.containerStatuses,
            ),
            { timeoutMs: 120_000, intervalMs: 500 },
        );
    });

    it("given an image volume (Kubernetes' ImageVolume, containerd 2.1), then the Pod sees the image's files, read-only", async () => {
        const log = await runPod("image-volume", {
            containers: [
                {
                    name: "c",
                    image: "busybox:1.37.0",
                    command: ["sh", "-c", "ls /img/usr/bin/busybox; touch /img/x 2>&1; echo touch=$?"],
                    volumeMounts: [{ name: "img", mountPath: "/img" }],
                },
            ],
            volumes: [{ name: "img", image: { reference: "docker.io/library/busybox:1.37.0", pullPolicy: "IfNotPresent" } }],
        });
        assert.match(log, /^\/img\/usr\/bin\/busybox$/m, log);
        assert.match(log, /Read-only file system/, log);
        assert.match(log, /touch=1/, log);
    });

    const codeMount = (reference: string) => ({
        containers: [
            {
                name: "c",
                image: "busybox:1.37.0",
                command: ["sh", "-c", "cat /app/VERSION; touch /app/x 2>&1; echo touch=$?"],
                volumeMounts: [{ name: "code", mountPath: "/app", readOnly: true }],
            },
        ],
        volumes: [{ name: "code", image: { reference, pullPolicy: "IfNotPresent" } }],
    });

    it("given a release image pushed to the node's registry, then a Pod mounts registry.lab.internal's image read-only", async () => {
        const image = (await siteImages()).find((i) => i.reference === siteImage(RELEASES.faulty))!;
        // the registry's storage is kept between nodes: pushed by an earlier run, it is there already
        assert.match(await registryImages(`http://${NODE.nodeIp}:${NODE.registryPort}`).load(image), /^(loaded|present)$/);
        const log = await runPod("site-image", codeMount(image.reference));
        assert.match(log, new RegExp(`^${RELEASES.faulty.replace(/\./g, "\\.")}$`, "m"), log);
        assert.match(log, /Read-only file system/, log);
        assert.match(log, /touch=1/, log);
    });

    it("given a release image imported by ctr, as k3s ctr imports it, then a Pod mounts it with no registry", async () => {
        const reference = "import.lab.invalid/tenants/site:1.2.1";
        const image = await imageOf(reference, path.join(PLATFORM_REPO_DIR, "releases", RELEASES.fixed, "code"), "node.real.ts");
        // a stand-in `k3s` whose `ctr` is containerd's own, run in the node's namespaces on its socket, as k3s's is
        const k3s = path.join(root, "k3s");
        fs.writeFileSync(
            k3s,
            `#!/bin/sh\nshift\nexec nsenter -t ${node.holderPid} -m -n ${nodeBinPath("ctr")} --address /run/containerd/containerd.sock "$@"\n`,
            { mode: 0o755 },
        );
        assert.strictEqual(await k3sImages(k3s).load(image), "loaded");
        assert.strictEqual(await k3sImages(k3s).load(image), "present");
        const log = await runPod("imported-image", codeMount(reference));
        assert.match(log, /^1\.2\.1$/m, log);
        assert.match(log, /Read-only file system/, log);
    });

    it("when it is stopped (SIGTERM), then nothing of it is left on the host: processes, mounts, links, iptables rules, cgroups, kernel settings", async () => {
        const running = processesIn(node.namespaces).map(identity);
        assert.ok(running.length > 5, "the node's processes are found by its namespaces while it runs");
        node.child.kill("SIGTERM");
        assert.strictEqual(await exited(node.child), 143);
        assert.match(node.out(), /processes ended, cgroups removed, kernel settings restored/);
        assert.deepStrictEqual(stillRunning(running), []);
        assert.deepStrictEqual(hostState(), initial);
    });

    it("when a node is killed outright (SIGKILL), then the next start takes down what it left, and its stop leaves the host as it was", async () => {
        node = await serveNode(root);
        node.child.kill("SIGKILL");
        await exited(node.child);
        // the shims and the containers outlive it (they are not its children), and with them its namespaces
        const left = processesIn(node.namespaces).map(identity);
        assert.ok(stillRunning(left).length > 0, "something of the killed node is left to take down");
        assert.notDeepStrictEqual(hostState(), initial);
        node = await serveNode(root);
        assert.match(node.out(), /taking down what the real node of PID \d+ left \(its process is gone\)/);
        assert.deepStrictEqual(stillRunning(left), [], "the killed node's processes are gone");
        node.child.kill("SIGTERM");
        await exited(node.child);
        assert.deepStrictEqual(hostState(), initial);
    });

    it("when simulate --cluster real is stopped while its node starts, then nothing of the node is left", async () => {
        fs.chmodSync(root, 0o711); // the lab's git daemon serves as nobody, through this folder
        const child = spawn(process.execPath, [BIN, "simulate", "--root", path.join(root, "stopped-while-starting"), "--cluster", "real"], {
            cwd: PROJECT,
            stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        const onData = (d: Buffer) => (out += d);
        child.stdout!.on("data", onData);
        child.stderr!.on("data", onData);
        // the node's daemons run (containerd, the kubelet), its cluster DNS not yet deployed: the lab is not started
        await expect(
            () => {
                if (child.exitCode !== null) return { state: "failed", message: `simulate ended (exit ${child.exitCode}):\n${out}` };
                return /Ready after .*; deploying CoreDNS/.test(out)
                    ? { state: "succeeded", message: "the node is starting" }
                    : { state: "pending", message: `not that far yet:\n${out.slice(-1000)}` };
            },
            { timeoutMs: 600_000, intervalMs: 200 },
        );
        child.kill("SIGTERM");
        assert.strictEqual(await exited(child), 143, out);
        assert.match(out, /processes ended, cgroups removed/);
        assert.deepStrictEqual(hostState(), initial);
    });

    it("given a node running, then a second one is refused in one line naming it", async () => {
        node = await serveNode(root);
        const second = spawn(process.execPath, [BIN, "node", "--root", fs.mkdtempSync(path.join(os.tmpdir(), "real-node-2-"))], {
            cwd: PROJECT,
        });
        let err = "";
        second.stderr!.on("data", (d) => (err += d));
        assert.strictEqual(await exited(second), 1);
        assert.match(
            err.trim(),
            new RegExp(
                `^gitops-lab node: a real node already runs on this host \\(PID ${node.child.pid}: .*\\); one node per host: stop it, then run again$`,
            ),
        );
        node.child.kill("SIGTERM");
        await exited(node.child);
        assert.deepStrictEqual(hostState(), initial);
    });
});
