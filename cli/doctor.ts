/**
 * npm run doctor -- [--from FILE] [--appset NAME] [--json] [--watch [--interval S]] [--stuck-after S]
 *                   [--metrics-port P] [--kubeconfig FILE]
 *
 * Names the step at which a RollingSync rollout is stuck, and why. Input: the live cluster, or a
 * dump (`kubectl get applicationsets.argoproj.io,applications.argoproj.io,jobs,pods -A -o json`).
 * Exit 0 when nothing is stuck, 2 when something is, 1 when the input cannot be read.
 */
import * as fs from "fs";
import { KubeCluster } from "../lab/ports/cluster";
import { automatedDisabledNote, diagnose, dumpFromList, Diagnosis, Dump, toJson } from "../lab/doctor/diagnose";
import { readLive, RolloutWatcher, serveMetrics } from "../lab/doctor/watch";
import { findKubeconfig } from "./kubeconfig";
import { sleep } from "../lab/ports/wait";

const USAGE = "usage: npm run doctor -- [--from FILE] [--appset NAME] [--json] [--watch [--interval S]] [--stuck-after S] [--metrics-port P] [--kubeconfig FILE]";

class InputError extends Error {}

function parseArgs(argv: string[]) {
    const o = { from: undefined as string | undefined, appset: undefined as string | undefined, json: false, watch: false, interval: 30, stuckAfter: 600, metricsPort: undefined as number | undefined, kubeconfig: undefined as string | undefined };
    const num = (flag: string, v: string | undefined, min: number) => {
        const n = Number(v);
        if (v === undefined || !Number.isFinite(n) || n < min) throw new InputError(`${flag} takes a number >= ${min}, got "${v ?? ""}"`);
        return n;
    };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const value = () => {
            const v = argv[++i];
            if (v === undefined) throw new InputError(`${a} needs a value\n${USAGE}`);
            return v;
        };
        if (a === "--from") o.from = value();
        else if (a === "--appset") o.appset = value();
        else if (a === "--json") o.json = true;
        else if (a === "--watch") o.watch = true;
        else if (a === "--interval") o.interval = num(a, argv[++i], 0.05);
        else if (a === "--stuck-after") o.stuckAfter = num(a, argv[++i], 0);
        else if (a === "--metrics-port") o.metricsPort = num(a, argv[++i], 0);
        else if (a === "--kubeconfig") o.kubeconfig = value();
        else throw new InputError(`unknown argument "${a}"\n${USAGE}`);
    }
    return o;
}

function print(ds: Diagnosis[], dump: Dump, json: boolean) {
    if (json) {
        console.log(JSON.stringify(toJson(ds), null, 2));
        return;
    }
    if (!ds.length) console.log("no ApplicationSets found");
    for (const d of ds) {
        console.log(d.summary);
        const note = automatedDisabledNote(dump, d);
        if (note && d.state !== "complete") console.log(note);
        console.log("");
    }
}

async function main(): Promise<number> {
    const args = parseArgs(process.argv.slice(2));
    let read: () => Promise<Dump>;
    let cluster: KubeCluster | null = null;
    if (args.from) {
        const file = args.from;
        read = async () => {
            let text: string;
            try {
                text = fs.readFileSync(file, "utf8");
            } catch (e: any) {
                throw new InputError(`cannot read ${file}: ${e.code ?? e.message}`);
            }
            let list: unknown;
            try {
                list = JSON.parse(text);
            } catch (e: any) {
                throw new InputError(`${file} is not JSON (${e.message}); make it with kubectl get applicationsets.argoproj.io,applications.argoproj.io,jobs,pods -A -o json`);
            }
            try {
                return dumpFromList(list);
            } catch (e: any) {
                throw new InputError(`${file}: ${e.message}`);
            }
        };
    } else {
        try {
            cluster = new KubeCluster(findKubeconfig(args.kubeconfig).text);
        } catch (e: any) {
            throw new InputError(e.message);
        }
        const c = cluster;
        read = () => readLive(c).catch((e) => Promise.reject(new InputError(`cannot read the cluster: ${e.message}`)));
    }
    const opts = { stuckAfterSeconds: args.stuckAfter, appset: args.appset };

    if (!args.watch) {
        const dump = await read();
        const ds = diagnose(dump, { ...opts, now: new Date() });
        print(ds, dump, args.json);
        return ds.some((d) => d.state === "stuck") ? 2 : 0;
    }

    const watcher = new RolloutWatcher(read, cluster, opts, (l) => console.log(`${new Date().toISOString()} ${l}`));
    if (args.metricsPort !== undefined) {
        const server = await serveMetrics(watcher, args.metricsPort);
        const addr = server.address();
        console.log(`serving metrics on :${typeof addr === "object" && addr ? addr.port : args.metricsPort}/metrics`);
    }
    let stop = false;
    for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => (stop = true));
    console.log(`watching every ${args.interval} s (${args.from ? args.from : "live cluster"}); Events go to the ApplicationSet's namespace${cluster ? "" : " (not posted: reading a file)"}`);
    while (!stop) {
        try {
            const ds = await watcher.tick();
            if (args.json) console.log(JSON.stringify(toJson(ds)));
        } catch (e: any) {
            console.error(`doctor: ${e.message} (will try again)`);
        }
        const until = Date.now() + args.interval * 1000;
        while (!stop && Date.now() < until) await sleep(Math.min(200, until - Date.now()));
    }
    return 0;
}

main().then(
    (code) => process.exit(code),
    (e) => {
        console.error(`doctor: ${e?.message ?? e}`);
        process.exit(1);
    },
);
