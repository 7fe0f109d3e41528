/**
 * The real node's ledger: what a node changes on the host (the veth's host end, its cgroups, the
 * kernel settings the kubelet sets), written before each change, and the teardown that undoes it —
 * at a node's stop, or at the next start after a node was killed (reapNode).
 */
import * as fs from "fs";
import * as path from "path";
import { writeFileAtomic } from "../lab/ports/files";
import { run } from "../lab/ports/exec";
import { pollUntil, sleep } from "../lab/ports/wait";
import { isAlive } from "../lab/ports/proc";
import { codeOf, messageOf } from "../lab/ports/errors";

export const NODE_LEDGER = process.env.GITOPS_LAB_NODE_LEDGER ?? "/run/gitops-lab-node.json";
export const CGROUP_ROOT = "/sys/fs/cgroup";
/** The hierarchy the node's processes are counted and killed by. */
export const TRACKING_HIERARCHY = "pids";
/** The kernel settings the kubelet changes (its setupKernelTunables), restored at stop. */
export const KUBELET_SYSCTLS = [
    "vm.overcommit_memory",
    "vm.panic_on_oom",
    "kernel.panic",
    "kernel.panic_on_oops",
    "kernel.keys.root_maxkeys",
    "kernel.keys.root_maxbytes",
] as const;

/** What a node changed on the host, written before each change. */
export interface Ledger {
    pid: number;
    root: string;
    /** The holder of the node's namespaces. */
    holderPid?: number;
    /** The cgroup (in every hierarchy) the node made. */
    cgroup?: string;
    /** The host end of the veth pair, once made. */
    hostVeth?: string;
    /** The kernel settings as they were before the kubelet started. */
    sysctls?: Record<string, string>;
}

export function readLedger(file = NODE_LEDGER): Ledger | undefined {
    try {
        return JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (e) {
        if (codeOf(e) === "ENOENT") return undefined;
        throw new Error(
            `${file} cannot be read (${messageOf(e)}): it is the real node's record of what it changed; remove it only if no node ran`,
        );
    }
}

export const writeLedger = (l: Ledger, file = NODE_LEDGER) => writeFileAtomic(file, JSON.stringify(l, null, 2) + "\n");

/** The cgroup v1 hierarchies mounted under /sys/fs/cgroup (not the cgroup2 one), by folder. */
export function cgroupHierarchies(root = CGROUP_ROOT): string[] {
    return fs
        .readFileSync("/proc/self/mountinfo", "utf8")
        .split("\n")
        .map((l) => l.split(" "))
        .filter((f) => f.length > 9 && f[4].startsWith(`${root}/`) && f[f.indexOf("-") + 1] === "cgroup")
        .map((f) => f[4]);
}

/** Every process in a cgroup folder and below it. */
export function cgroupProcs(dir: string): number[] {
    if (!fs.existsSync(dir)) return [];
    const out: number[] = [];
    const walk = (d: string) => {
        try {
            out.push(...fs.readFileSync(path.join(d, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number));
        } catch {
            return; // removed while we read
        }
        for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
    };
    walk(dir);
    return out;
}

/** Removes a cgroup folder and everything below it, deepest first (a cgroup folder is removed with rmdir). */
export function removeCgroup(dir: string): void {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeCgroup(path.join(dir, e.name));
    fs.rmdirSync(dir);
}

export const sysctlFile = (key: string) => path.join("/proc/sys", ...key.split("."));

/** Whether an interface of that name is on the host. */
export const hostLinkExists = (name: string) => fs.existsSync(path.join("/sys/class/net", name));

/**
 * Undoes what a node recorded in its ledger: kills every process in its cgroup (daemons, shims,
 * containers) and its namespaces' holder, waits until they are gone (their namespaces, mounts,
 * veths and iptables rules go with them), removes its cgroups and the veth's host end if left,
 * restores the kernel settings, and removes the ledger. Says what it did.
 */
export async function teardownNode(ledger: Ledger, log: (line: string) => void = () => {}, ledgerFile = NODE_LEDGER): Promise<void> {
    const tracked = ledger.cgroup ? path.join(CGROUP_ROOT, TRACKING_HIERARCHY, ledger.cgroup) : undefined;
    const victims = () =>
        [
            ...new Set([
                ...(tracked ? cgroupProcs(tracked) : []),
                ...(ledger.holderPid && isAlive(ledger.holderPid) ? [ledger.holderPid] : []),
            ]),
        ].filter((p) => p !== process.pid);
    const first = victims();
    for (let round = 0; round < 60 && victims().length; round++) {
        for (const pid of victims()) {
            try {
                process.kill(pid, "SIGKILL");
            } catch {
                /* gone already */
            }
        }
        await sleep(250);
    }
    const left = victims();
    if (left.length)
        throw new Error(`the real node's processes ${left.join(", ")} did not end after SIGKILL; stop them by hand, then run again`);
    if (ledger.cgroup) {
        for (const h of cgroupHierarchies()) {
            const dir = path.join(h, ledger.cgroup);
            // a cgroup emptied a moment ago can be busy for a moment
            await pollUntil(
                async () => {
                    try {
                        removeCgroup(dir);
                        return true;
                    } catch (e) {
                        if (codeOf(e) === "EBUSY") return undefined;
                        throw e;
                    }
                },
                {
                    timeoutMs: 10_000,
                    intervalMs: 100,
                    describe: () => `the cgroup ${dir} stayed busy for 10 s after the node's processes ended`,
                },
            );
        }
    }
    if (ledger.hostVeth && hostLinkExists(ledger.hostVeth)) await run("ip", ["link", "del", ledger.hostVeth]).catch(() => undefined);
    for (const [key, value] of Object.entries(ledger.sysctls ?? {})) {
        try {
            if (fs.readFileSync(sysctlFile(key), "utf8").trim() !== value) fs.writeFileSync(sysctlFile(key), value);
        } catch (e) {
            log(`could not restore ${key} to ${value} (${codeOf(e) ?? messageOf(e)})`);
        }
    }
    fs.rmSync(ledgerFile, { force: true });
    log(
        `real node (PID ${ledger.pid}): ${first.length} processes ended, cgroups removed${ledger.sysctls ? ", kernel settings restored" : ""}`,
    );
}

/** Takes down what a node whose process is gone left on the host, and says so. */
export async function reapNode(log: (line: string) => void = () => {}, ledgerFile = NODE_LEDGER): Promise<void> {
    const ledger = readLedger(ledgerFile);
    if (!ledger) return;
    if (ledger.pid !== process.pid && isAlive(ledger.pid))
        throw new Error(
            `a real node runs on this host (PID ${ledger.pid}, root ${ledger.root}); one node per host: stop it, then run again`,
        );
    log(`taking down what the real node of PID ${ledger.pid} left (its process is gone) ...`);
    await teardownNode(ledger, log, ledgerFile);
}
