/**
 * gitops-lab doctor [--from FILE] [--appset NAME] [--json] [--watch [--interval S]] [--stuck-after S]
 *                   [--metrics-port P] [--kubeconfig FILE]
 *
 * Names the step at which a RollingSync rollout is stuck, and why. Input: the live cluster, or a
 * dump (`kubectl get applicationsets.argoproj.io,applications.argoproj.io,appprojects.argoproj.io,jobs,pods -A -o json`).
 * Exit 0 when nothing is stuck, 1 when something is (or the input cannot be read), 2 on bad usage.
 */
import * as fs from "fs";
import { automatedDisabledNote, diagnose, Diagnosis, Dump, Finding, namesAppSet, toJson } from "../lab/doctor/diagnose";
import { newestTime } from "../lab/doctor/dump";
import { LiveReader, MIN_ROUND_GAP_MS, readLive, RolloutWatcher, serveMetrics, watchRounds } from "../lab/doctor/watch";
import { realClock } from "../lab/ports/clock";
import { ClusterPort, KubeCluster } from "../lab/ports/cluster";
import { launcherRuns, npmLauncherOf } from "../lab/ports/proc";
import { rfc3339 } from "../lab/kit/text";
import { Command, EXIT, intOption, numberOption, onlyWith, stringOption, UsageError } from "./command";
import { clusterOf, findKubeconfig } from "./kubeconfig";
import { servedLabSilent } from "./servedLab";
import { isServedKubeconfig } from "../sim/servedFiles";
import { DUMP_HINT, DUMP_HINT_COMMAND, dumpProblem, readDump } from "./dumpFile";
import { messageOf } from "../lab/ports/errors";

/** What the simulated lab takes for the argocd commands the findings name: it has no argocd command or API server. */
export const SERVED_SYNC_NOTE =
    '(the simulated lab has no argocd command: a sync by hand there is kubectl -n argocd patch application NAME --type merge -p \'{"operation":{"sync":{}}}\')';

function print(ds: Diagnosis[], dump: Dump, json: boolean, served = false) {
    if (json) {
        console.log(JSON.stringify(toJson(ds), null, 2));
        return;
    }
    if (!ds.length) console.log("no ApplicationSets found");
    for (const d of ds) {
        console.log(d.summary);
        const note = automatedDisabledNote(dump, d);
        if (note && d.state !== "complete") console.log(note);
        for (const f of d.findings) console.log(findingLines(f));
        if (served && d.findings.some((f) => findingLines(f).includes("argocd app sync"))) console.log(SERVED_SYNC_NOTE);
        console.log("");
    }
}

/** A finding as text: its kind and message, what to do, then its evidence one per line. */
export function findingLines(f: Finding): string {
    const evidence = f.evidence.map((e) => `    ${e.object} ${e.field}: ${e.value}${e.time ? ` (${e.time})` : ""}`);
    return [`- ${f.kind}: ${f.message}`, `  what to do: ${f.todo}`, ...evidence].join("\n");
}

/**
 * A dump with Applications not Synced and Healthy but no ApplicationSet: the rollout cannot be
 * placed, and saying "no ApplicationSets found" with success would hide them. The line, or null.
 */
export function applicationsWithoutAppSet(dump: Dump): string | null {
    const unwell = dump.applications.filter((a) => a.status?.sync?.status !== "Synced" || a.status?.health?.status !== "Healthy");
    if (!unwell.length) return null;
    const names =
        unwell
            .slice(0, 5)
            .map((a) => `${a.metadata?.name} (${a.status?.sync?.status ?? "?"}/${a.status?.health?.status ?? "?"})`)
            .join(", ") + (unwell.length > 5 ? ` and ${unwell.length - 5} more` : "");
    return `no ApplicationSet in the dump, but ${unwell.length} Application${unwell.length === 1 ? " is" : "s are"} not Synced and Healthy: ${names}; dump the ApplicationSets too (${DUMP_HINT_COMMAND}) to see which rollout step they are in`;
}

/** An --appset that names nothing is a failure, not "nothing stuck". */
function checkAppSetExists(dump: Dump, name: string | undefined) {
    if (!name || dump.applicationSets.some((a) => namesAppSet(name, a))) return;
    const found = dump.applicationSets.map((a) => `${a.metadata?.namespace}/${a.metadata?.name}`);
    // an Application's name for its ApplicationSet's: the one that owns it
    const app = dump.applications.find((a) => a.metadata?.name === name.split("/").pop());
    const owner = app?.metadata?.ownerReferences?.find((o) => o.kind === "ApplicationSet")?.name;
    if (owner)
        throw new Error(
            `"${name}" is an Application of ApplicationSet ${app?.metadata?.namespace}/${owner}: --appset ${owner} (the doctor names the Application in its line)`,
        );
    throw new Error(`no ApplicationSet named "${name}" (found: ${found.length ? found.join(", ") : "none"})`);
}

/**
 * --watch's live reader over a kubeconfig file: when a round cannot read the cluster and the file has
 * changed since it was read (a served lab started again: a new port and token), the cluster is read
 * through the file as it is now; the change listeners and the Events' cluster follow.
 */
class ReloadingLive {
    private live: LiveReader;
    private readonly listeners = new Map<() => void, () => void>();
    /** The cluster the Events go to: always the current one. */
    readonly events: ClusterPort;

    constructor(
        private kc: { file: string; text: string },
        private cluster: KubeCluster,
    ) {
        this.live = new LiveReader(cluster);
        // a stand-in that forwards each call to the cluster of now (a reload replaces it)
        this.events = new Proxy({} as ClusterPort, {
            get: (_target, key) => {
                const v: unknown = Reflect.get(this.cluster, key);
                return typeof v === "function" ? v.bind(this.cluster) : v;
            },
        });
    }

    async read(): Promise<Dump> {
        try {
            return await this.live.read();
        } catch (e) {
            if (!(await this.reload())) throw new Error(`cannot read the cluster: ${messageOf(e)}`);
            return this.live.read().catch((again) => Promise.reject(new Error(`cannot read the cluster: ${messageOf(again)}`)));
        }
    }

    onChange(listener: () => void): () => void {
        this.listeners.set(listener, this.live.onChange(listener));
        return () => {
            this.listeners.get(listener)?.();
            this.listeners.delete(listener);
        };
    }

    stop(): Promise<void> {
        return this.live.stop();
    }

    /** Whether the kubeconfig file changed and is read again. */
    private async reload(): Promise<boolean> {
        let text: string;
        try {
            text = fs.readFileSync(this.kc.file, "utf8");
        } catch {
            return false; // gone for now (a served lab between its stop and its start): the next round looks again
        }
        if (text === this.kc.text) return false;
        const next = clusterOf({ file: this.kc.file, text });
        await this.live.stop().catch(() => undefined);
        this.kc = { file: this.kc.file, text };
        this.cluster = next;
        this.live = new LiveReader(next);
        for (const l of [...this.listeners.keys()]) this.listeners.set(l, this.live.onChange(l));
        console.error(`${rfc3339(new Date())} doctor: ${this.kc.file} changed: reading the cluster it names now`);
        return true;
    }
}

/**
 * What --watch says (on stderr) of rounds that fail: a failure once, not at every round (a cluster down for an
 * hour at a round a second is one line, not 3,600), again only when it changes, and the first round
 * that works again.
 */
export function roundTrouble(warn: (line: string) => void, intervalSeconds: number) {
    let last: string | undefined;
    return {
        failed(e: unknown) {
            const message = e instanceof Error ? e.message : String(e);
            if (message !== last) warn(`${message} (trying again every ${intervalSeconds} s; said again only if it changes)`);
            last = message;
        },
        ok() {
            if (last !== undefined) warn("a round works again");
            last = undefined;
        },
    };
}

export const doctor: Command = {
    name: "doctor",
    summary: "name the step at which a RollingSync rollout is stuck, and why (live, or from a dump)",
    usage: "doctor [--from FILE] [--appset NAME] [--json] [--watch [--interval S]] [--stuck-after S] [--metrics-port P] [--kubeconfig FILE]",
    details: [
        "--from FILE         a dump instead of the live cluster (" +
            DUMP_HINT.replace("make it with ", "") +
            "); - reads it from standard input",
        "--appset NAME       only this ApplicationSet (it must exist); NAME or NAMESPACE/NAME",
        "--json              the diagnosis as JSON",
        "--stuck-after S     a step with no progress for longer than S seconds is stuck (default 600); a failed sync or hook makes it stuck at once",
        "--watch             diagnose when a rollout or an Application changes, and every --interval seconds;",
        "                    post RolloutStuck/RolloutResumed Events",
        "--interval S        the most seconds between two rounds of --watch (default 30)",
        "--metrics-port P    with --watch, serve Prometheus metrics on :P/metrics",
        "--kubeconfig FILE   the cluster (default: $KUBECONFIG, /etc/rancher/k3s/k3s.yaml, ~/.kube/config)",
    ],
    options: {
        from: { type: "string" },
        appset: { type: "string" },
        json: { type: "boolean" },
        watch: { type: "boolean" },
        interval: { type: "string" },
        "stuck-after": { type: "string" },
        "metrics-port": { type: "string" },
        kubeconfig: { type: "string" },
    },
    // two dumps (one of Argo CD's objects, one of Jobs and Pods): one dump holds them all
    once: { from: `the doctor reads one dump, which holds every kind it needs: ${DUMP_HINT_COMMAND} > dump.json` },
    misread: {
        "-n": "the doctor reads every namespace; to look at one ApplicationSet, --appset NAMESPACE/NAME",
        "--namespace": "the doctor reads every namespace; to look at one ApplicationSet, --appset NAMESPACE/NAME",
        "-A": "the doctor reads every namespace already: leave it out",
        "--all-namespaces": "the doctor reads every namespace already: leave it out",
        "--context": "the doctor reads the kubeconfig's current context: kubectl config use-context NAME first, or --kubeconfig FILE",
        "-o": "the doctor prints its findings as JSON with --json (as kubectl's -o json)",
        "--root": "the doctor reads a cluster, not a lab's folder: a served simulated lab's is --kubeconfig DIR/kubeconfig",
        // verify's and simulate's habit: the doctor reads ApplicationSets, whichever lab made them
        "--lab":
            "the doctor reads every ApplicationSet in the cluster, whichever lab made it: leave it out; to look at one, --appset NAME (the tenants lab's is tenants)",
        "--step": "the doctor finds the stuck step itself: leave it out (verify --step N grades a lab's step)",
        "--output": "the doctor prints its findings as JSON with --json (as kubectl's -o json)",
        "--argocd-version":
            "the doctor reads whichever Argo CD the cluster runs (3.5 or 3.6, from what its controllers write): leave it out; it is simulate's, for the version a simulated lab is built as",
    },
    async run(values) {
        onlyWith("doctor", values, "interval", "watch");
        onlyWith("doctor", values, "metrics-port", "watch");
        // --from reads the dump alone: a kubeconfig beside it would be read by nothing, without a word
        if (values.from !== undefined && values.kubeconfig !== undefined)
            throw new UsageError(
                "--from and --kubeconfig do not go together: --from reads only the dump; for a live read give --kubeconfig alone (see gitops-lab doctor --help)",
            );
        const interval = numberOption(values, "interval", { min: 0.05, default: 30, unit: "seconds" });
        const stuckAfterSeconds = numberOption(values, "stuck-after", { min: 0, default: 600, unit: "seconds" });
        const metricsPort =
            values["metrics-port"] === undefined ? undefined : intOption(values, "metrics-port", { min: 0, max: 65535, default: 0 });
        const from = stringOption(values, "from");
        const appset = stringOption(values, "appset");
        let read: () => Promise<Dump>;
        let cluster: ClusterPort | null = null;
        let served = false; // a served simulated lab: it has no argocd command
        let stopReader: () => Promise<void> = async () => {};
        let changes: ((listener: () => void) => () => void) | undefined;
        let source = from;
        if (from) {
            if (from === "-" && values.watch)
                throw new UsageError("--from - (standard input) is read once: --watch needs a file (or the live cluster)");
            // a file missing or unreadable at the start is a mistake, not a round to try again
            if (values.watch) {
                // a dump of some kinds only is refused as the one look refuses it: its rounds would blame what it lacks (an
                // empty one is not: a file written as the cluster fills, read again each round)
                const first = readDump(from);
                const partial = first.applicationSets.length || first.applications.length ? dumpProblem(first, from) : undefined;
                if (partial) throw new Error(partial);
            }
            read = async () => readDump(from);
        } else {
            const kc = findKubeconfig(stringOption(values, "kubeconfig"));
            // a served lab's kubeconfig while its simulate --serve is stopped or suspended: said at once, not after a timeout
            const silent = servedLabSilent(kc.file, "the doctor");
            if (silent) throw new Error(silent);
            served = isServedKubeconfig(kc.file);
            source = `the cluster of ${kc.file}`;
            const c = clusterOf(kc);
            cluster = c;
            if (values.watch) {
                // rounds read ApplicationSets and Applications from watches, not full lists; a round that cannot read
                // the cluster reads the kubeconfig again: a served lab started again has a new address and token
                const live = new ReloadingLive(kc, c);
                read = () => live.read();
                stopReader = () => live.stop();
                changes = (l) => live.onChange(l);
                cluster = live.events;
            } else {
                read = () => readLive(c).catch((e) => Promise.reject(new Error(`cannot read the cluster: ${e.message}`)));
            }
        }
        const opts = { stuckAfterSeconds, appset };

        if (!values.watch) {
            const dump = await read();
            const partial = from ? dumpProblem(dump, from) : undefined;
            if (partial) throw new Error(partial);
            if (!from && !dump.applicationSets.length && !dump.applications.length)
                throw new Error(
                    `${source} has no ApplicationSets and no Applications (another context, or no Argo CD there?): give the lab's kubeconfig with --kubeconfig`,
                );
            checkAppSetExists(dump, appset);
            // a dump's durations run to when it was taken (its newest time), not to whenever it is read
            const taken = from ? newestTime(dump) : undefined;
            const ds = diagnose(dump, { ...opts, now: taken ?? new Date(), asOfDump: !!taken });
            const orphans = ds.length ? null : applicationsWithoutAppSet(dump);
            if (orphans) {
                // Applications that are not at rest and no ApplicationSet to place them in a rollout: a finding, not "nothing found"
                if (values.json) console.log(JSON.stringify({ ...toJson(ds), finding: orphans }, null, 2));
                else console.log(orphans);
                return EXIT.FINDING;
            }
            print(ds, dump, !!values.json, served);
            return ds.some((d) => d.state === "stuck" || d.skipped.length || d.findings.length) ? EXIT.FINDING : EXIT.OK;
        }

        // a log: every line begins with its time, in the one format of the findings' times; with --json on stderr
        // (stdout is the rounds' JSON lines alone, for a program)
        const say = (l: string) => (values.json ? console.error : console.log)(`${rfc3339(new Date())} ${l}`);
        const watcher = new RolloutWatcher(read, cluster, opts, say);
        if (metricsPort !== undefined) {
            const server = await serveMetrics(watcher, metricsPort);
            const addr = server.address();
            say(`serving metrics on :${typeof addr === "object" && addr ? addr.port : metricsPort}/metrics`);
        }
        let stop = false;
        for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => (stop = true));
        // started through npm or npx: a kill of that launcher signals nothing here, and a watch with its metrics port
        // would run on unseen; it ends with it, as a served lab does
        const launcher = npmLauncherOf(process.pid);
        const orphaned = launcher
            ? setInterval(() => {
                  if (launcherRuns(launcher) || stop) return;
                  say("the npm or npx that started it is gone: stopping");
                  stop = true;
              }, 1_000)
            : undefined;
        orphaned?.unref();
        say(
            `watching ${changes ? "for changes and " : ""}every ${interval} s (${from ?? "live cluster"}); Events go to the ApplicationSet's namespace${cluster ? "" : " (not posted: reading a file)"}`,
        );
        // on stderr, both: stdout carries --json's lines
        const trouble = roundTrouble((l) => console.error(`${rfc3339(new Date())} doctor: ${l}`), interval);
        // --appset naming nothing (yet): said once, on stderr, and again once it is there, so a misspelt name is not silence
        let absent = false;
        // ApplicationSets with no rollout strategy alone (the shop lab's): no step to stall, so the watch is quiet; said once
        let unrolled = false;
        await watchRounds(
            async () => {
                const ds = await watcher.tick();
                trouble.ok();
                if (appset && !ds.length !== absent) {
                    absent = !ds.length;
                    console.error(
                        `${rfc3339(new Date())} doctor: ${absent ? `no ApplicationSet named "${appset}": watching for it, and nothing else is alerted (a misspelt name? gitops-lab doctor without --watch lists the ones there)` : `ApplicationSet "${appset}" is there: watching it`}`,
                    );
                }
                const none = ds.length > 0 && ds.every((d) => d.strategy === "none");
                if (none && !unrolled)
                    console.error(
                        `${rfc3339(new Date())} doctor: ${ds.map((d) => `${d.namespace}/${d.name}`).join(", ")} ${ds.length === 1 ? "has" : "have"} no rollout strategy: ${ds.length === 1 ? "its" : "their"} Applications sync on their own, with no step to stall; watched for failing syncs alone (a RollingSync ApplicationSet, as the tenants lab's, is watched step by step)`,
                    );
                unrolled = none;
                if (values.json) console.log(JSON.stringify(toJson(ds))); // JSON lines, for a program: no prefix
            },
            { intervalMs: interval * 1000, minGapMs: MIN_ROUND_GAP_MS, clock: realClock, stopped: () => stop, changes },
            (e) => trouble.failed(e),
        );
        if (orphaned) clearInterval(orphaned);
        await stopReader();
        return EXIT.OK;
    },
};
