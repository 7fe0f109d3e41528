/**
 * gitops-lab bench [--json]: the simulated lab at Argo CD v3.5.1's defaults, on the simulation's
 * virtual clock, and per step: the wall time here, the part of it spent waiting, our own overhead,
 * and the estimated real-host time (the step's time on the simulation's clock). Then the same
 * scenario with poll-only waits (no refresh annotations, as a naive script would wait), for the
 * estimate beside it. Not a test: it prints figures for the README.
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { StepTiming } from "../lab/shop/scenario";
import { VirtualClock } from "../sim/clock";
import { V351_DEFAULTS } from "../sim/profiles";
// the simulation (the Kubernetes client) and the doctor's bench (the Pulumi SDK, for the bundle) are loaded when a
// bench runs: `gitops-lab` loads every command's module, and these would cost any command, --help included, a second
import { checkRootReachableByNobody, Command, EXIT, intOption, oneOf, onlyWith, stringOption, UsageError, Values } from "./command";

export const BENCH_PROFILE = "v3.5.1-defaults";

/** The simulated labs a bench runs now, by their temporary folders: taken down on Ctrl-C, so none is left in $TMPDIR. */
const running = new Map<string, { stop(): Promise<void> } | undefined>();
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;
function removedOnStop(): () => void {
    const handlers = (Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[]).map((sig) => {
        const h = () => {
            console.error(`bench: ${sig}: stopping; its temporary labs are removed, no figure is printed`);
            void Promise.all(
                [...running].map(async ([root, lab]) => {
                    await lab?.stop().catch(() => undefined);
                    fs.rmSync(root, { recursive: true, force: true });
                }),
            ).finally(() => process.exit(SIGNAL_EXIT[sig]));
        };
        process.once(sig, h);
        return [sig, h] as const;
    });
    return () => handlers.forEach(([sig, h]) => process.off(sig, h));
}

/** The poll-only run's deadlines: long enough for Argo CD's poll, revision cache and error grace. */
const POLL_ONLY_TIMEOUTS = { syncMs: 1_800_000, errorMs: 1_800_000, driftMs: 600_000 };

async function runOnce(opts: { refresh: boolean }): Promise<StepTiming[]> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "bench-"));
    running.set(root, undefined); // (a stop while the lab starts removes its folder too)
    const { startSimulatedLab, solveSimulatedLab } = await import("../sim/simulatedLab");
    const lab = await startSimulatedLab(root, { timings: V351_DEFAULTS, clock: new VirtualClock(), argocdVersion: "v3.5.1" });
    running.set(root, lab);
    try {
        const run = await solveSimulatedLab(lab, 8, {
            productDefaults: true,
            refresh: opts.refresh,
            timeouts: opts.refresh ? {} : POLL_ONLY_TIMEOUTS,
        });
        return [...run.setup, ...run.timings];
    } finally {
        running.delete(root);
        await lab.stop();
        fs.rmSync(root, { recursive: true, force: true });
    }
}

const s = (ms: number) => Math.round(ms) / 1000;

/** Each step's figures (wall, waiting, overhead, the real host's estimate as `estimate` reads it), and their totals. */
function stepFigures(rows: StepTiming[], estimate: (r: StepTiming) => number) {
    const steps = rows.map((r) => ({
        step: r.step,
        name: r.name,
        wall_s: s(r.ms),
        wait_s: s(r.waitMs),
        overhead_s: s(r.ms - r.waitMs),
        estimated_real_s: s(estimate(r)),
    }));
    const sum = (k: keyof (typeof steps)[number]) => Math.round(steps.reduce((a, r) => a + (r[k] as number), 0) * 1000) / 1000;
    const total = {
        wall_s: sum("wall_s"),
        wait_s: sum("wait_s"),
        overhead_s: sum("overhead_s"),
        estimated_real_s: sum("estimated_real_s"),
    };
    return { steps, total };
}

/** The tenants lab at v3.5.1's defaults on the virtual clock: each wait's simulated time, and the results' own figures. */
async function benchTenants(json: boolean): Promise<number> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "bench-tenants-"));
    running.set(root, undefined);
    const clock = new VirtualClock();
    const { startSimulatedLab, solveSimulatedTenants } = await import("../sim/simulatedLab");
    const lab = await startSimulatedLab(root, { timings: V351_DEFAULTS, clock, argocdVersion: "v3.5.1" });
    running.set(root, lab);
    const waits: { wait: string; estimated_real_s: number }[] = [];
    const t0 = Date.now();
    try {
        const r = await solveSimulatedTenants(lab, 3, {
            productDefaults: true,
            log: (l) => {
                const m = /^\[tenants \d \w+\] (.*): after ([\d.]+) s$/.exec(l);
                if (m) waits.push({ wait: m[1], estimated_real_s: Number(m[2]) });
            },
        });
        const total = Math.round(waits.reduce((a, w) => a + w.estimated_real_s, 0));
        const out = {
            profile: BENCH_PROFILE,
            waits,
            total_estimated_real_s: total,
            detected_after_seconds: r.stall?.detected_after_seconds,
            recovery_seconds: r.recovery?.seconds,
            wall_s: s(Date.now() - t0),
        };
        if (json) console.log(JSON.stringify(out));
        else {
            for (const w of waits) console.log(`${w.estimated_real_s.toFixed(0).padStart(6)} s  ${w.wait}`);
            console.log(`${String(total).padStart(6)} s  in all (estimated for a real host at v3.5.1's defaults; ${out.wall_s} s here)`);
        }
        return EXIT.OK;
    } finally {
        running.delete(root);
        await lab.stop();
        fs.rmSync(root, { recursive: true, force: true });
    }
}

export const bench: Command = {
    name: "bench",
    summary: "time each step of the lab against the simulated Argo CD at its defaults, and estimate the real host's time",
    usage: "bench [--json] [--cluster sim|real [--build] [--pulumi]] | bench --tenants [--json] | bench --doctor [--json] [--rounds N]",
    details: [
        "--tenants           the tenants lab instead: each wait's time on the simulation's clock at Argo CD v3.5.1's and Kubernetes' defaults (the estimate for a real host)",
        "--doctor            the rollout doctor at scale instead: 10,000 Applications in 50 ApplicationSets and 100,000 Pods on the simulated API, live rounds timed with the doctor's peak memory, then --from on 20,000 Applications",
        "--rounds N          with --doctor: live rounds to time (default 3)",
        "--json              one JSON object: profile, steps, total, poll_only",
        "--cluster real      measure on the real node (gitops-lab node: real containers, Argo CD v3.5.1 installed at its defaults); no poll-only run",
        "--build             with --cluster real: build the plane's binaries first if they are not (about 40 minutes, with progress)",
        "--pulumi            with --cluster real: time gitops-lab up, a second up and destroy through the real Pulumi engine, beside the same steps without it",
    ],
    // simulate's and the stack's choices given to bench, which fixes its own
    misread: {
        "--argocd-version":
            "bench always measures Argo CD v3.5.1 at its defaults (the estimate for a real host), in a folder of its own: it takes no version",
        "--root":
            "bench builds its lab in a temporary folder of its own and removes it: it takes no --root (simulate --root DIR builds one to keep)",
        "--lab": "bench times the shop lab, or the tenants lab with --tenants",
    },
    options: {
        pulumi: { type: "boolean" },
        build: { type: "boolean" },
        json: { type: "boolean" },
        cluster: { type: "string" },
        doctor: { type: "boolean" },
        rounds: { type: "string" },
        tenants: { type: "boolean" },
    },
    async run(values) {
        oneOf("bench", values, ["tenants", "doctor", "cluster"]);
        const dispose = removedOnStop();
        try {
            return await benchRun(values);
        } finally {
            dispose();
        }
    },
};

/** What bench was asked for, run (its labs removed on a stop signal by the caller). */
async function benchRun(values: Values): Promise<number> {
    onlyWith("bench", values, "rounds", "doctor");
    onlyWith("bench", values, "build", "cluster");
    onlyWith("bench", values, "pulumi", "cluster");
    // its labs go in $TMPDIR: one that does not exist said as such, not as mkdtemp's ENOENT
    if (!values.doctor && values.cluster === undefined && !fs.existsSync(os.tmpdir()))
        throw new UsageError(`TMPDIR ${os.tmpdir()} does not exist, and bench makes its labs there: create it, or unset TMPDIR`);
    // its labs go in $TMPDIR, whose repositories the git daemon serves as nobody (a private TMPDIR: said, not exit 128)
    if (!values.doctor && values.cluster === undefined && process.getuid?.() === 0)
        checkRootReachableByNobody(path.join(os.tmpdir(), "bench"), os.tmpdir(), "TMPDIR");
    if (values.tenants) return benchTenants(!!values.json);
    if (values.doctor) {
        const rounds = intOption(values, "rounds", { min: 1, max: 100, default: 3 });
        const { benchDoctor, DEFAULT_SCALE } = await import("./benchDoctor");
        const r = await benchDoctor(DEFAULT_SCALE, rounds, values.json ? () => {} : (l) => console.log(l));
        if (values.json) console.log(JSON.stringify(r));
        return EXIT.OK;
    }
    const kind = stringOption(values, "cluster") ?? "sim";
    if (kind !== "sim" && kind !== "real") throw new UsageError(`--cluster takes sim or real, got "${kind}"`);
    if (kind !== "real")
        for (const o of ["build", "pulumi"])
            if (values[o]) throw new UsageError(`--${o} goes with --cluster real (see gitops-lab bench --help)`);
    if (kind === "real") {
        const { planeBuilt } = await import("../realplane/tools");
        if (!planeBuilt() && !values.build) {
            throw new UsageError(
                "--cluster real needs the real plane's binaries, which are not built here: building them from Go modules takes about 40 minutes on 2 cores. Run gitops-lab build-real-plane first, or add --build to build them now",
            );
        }
        return values.pulumi ? benchPulumi(!!values.json) : benchReal(!!values.json);
    }
    const rows = await runOnce({ refresh: true });
    const pollOnly = await runOnce({ refresh: false });
    const { steps, total } = stepFigures(rows, (r) => r.clockMs);
    const pollOnlyS = s(pollOnly.reduce((a, r) => a + r.clockMs, 0));
    if (values.json) {
        console.log(JSON.stringify({ profile: BENCH_PROFILE, steps, total, poll_only: { estimated_real_s: pollOnlyS } }));
        return EXIT.OK;
    }
    const f = (n: number) => n.toFixed(2).padStart(8);
    console.log("step            wall s  waiting s overhead s  est. real s");
    for (const r of steps)
        console.log(`${`${r.step} ${r.name}`.padEnd(13)} ${f(r.wall_s)}   ${f(r.wait_s)}   ${f(r.overhead_s)}   ${f(r.estimated_real_s)}`);
    console.log(`${"total".padEnd(13)} ${f(total.wall_s)}   ${f(total.wait_s)}   ${f(total.overhead_s)}   ${f(total.estimated_real_s)}`);
    console.log(
        `poll-only waits (no refresh annotations): estimated real ${pollOnlyS.toFixed(0)} s (${(pollOnlyS / Math.max(total.estimated_real_s, 0.001)).toFixed(0)}x)`,
    );
    console.log(
        `(an estimate from the simulation: profile ${BENCH_PROFILE}, virtual clock; node ${process.version}, ${os.cpus().length} cores)`,
    );
    return EXIT.OK;
}

/** One `gitops-lab` command in a child process (as a user runs it), its output kept; resolves with its exit code and wall time. */
function timedCli(
    args: string[],
    env: NodeJS.ProcessEnv,
    say: (l: string) => void,
): Promise<{ code: number | null; s: number; out: string }> {
    const t0 = Date.now();
    return new Promise((resolve) => {
        const child = spawn(process.execPath, [path.join(__dirname, "..", "bin", "gitops-lab"), ...args], {
            env,
            stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (out += d));
        child.on("exit", (code) => {
            say(`gitops-lab ${args[0]}: exit ${code} after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
            resolve({ code, s: s(Date.now() - t0), out });
        });
    });
}

/**
 * The Pulumi engine's own cost on the real node: `gitops-lab up` on a bare node (Argo CD and the git
 * daemon installed by the stack, the shop lab, steps 1-8), a second `up` (no changes) and `destroy`,
 * each as a user runs it, beside the same install and steps without Pulumi on the same node.
 */
async function benchPulumi(json: boolean): Promise<number> {
    const { startRealNode } = await import("../realnode/node");
    const { installPlatform } = await import("../realnode/lab");
    const { shopLayout } = await import("../lab/shop/layout");
    const { buildPulumi } = await import("../realplane/pulumiBuild");
    const { KubeCluster } = await import("../lab/ports/cluster");
    const { solveShopLab } = await import("../lab/shop/solve");
    const say = json ? () => {} : (l: string) => console.log(`[bench] ${l}`);
    await buildPulumi(say);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "bench-pulumi-"));
    fs.chmodSync(root, 0o755);
    const state = fs.mkdtempSync(path.join(os.tmpdir(), "bench-pulumi-state-"));
    const nodeRoot = fs.mkdtempSync(path.join(os.tmpdir(), "bench-pulumi-node-"));
    const benchStack = `test-bench-${process.pid}`;
    let node: Awaited<ReturnType<typeof startRealNode>> | undefined;
    try {
        // a bare node, as k3s is after its installer: the stack installs Argo CD and the git daemon itself
        node = await startRealNode({ root: nodeRoot, log: say });
        const configFile = path.join(state, "Pulumi.bench.yaml");
        fs.writeFileSync(
            configFile,
            `config:\n  gitops-lab:root: ${root}\n  gitops-lab:kubeconfigPath: ${node.kubeconfigFile}\n  gitops-lab:solveThrough: 8\n`,
        );
        // a stack of its own (Pulumi writes Pulumi.<stack>.yaml when it creates one; removed after)
        const env = { ...process.env, PULUMI_BACKEND_URL: `file://${state}`, PULUMI_CONFIG_PASSPHRASE: "", GITOPS_LAB_STACK: benchStack };
        const rows: { what: string; s: number }[] = [];
        for (const [what, args] of [
            ["pulumi up (Argo CD and the git daemon installed, the shop lab, steps 1-8)", ["up", "--config-file", configFile]],
            ["a second up (no changes)", ["up", "--config-file", configFile, "--expect-no-changes"]],
            ["destroy (the lab, Argo CD and the git daemon)", ["destroy", "--config-file", configFile]],
        ] as const) {
            const r = await timedCli([...args], env, say);
            if (r.code !== 0) throw new Error(`gitops-lab ${args.join(" ")} failed (exit ${r.code}): ${r.out.trim().split("\n").pop()}`);
            rows.push({ what, s: r.s });
        }
        let t0 = Date.now();
        const layout = shopLayout(root);
        await installPlatform(node.kubeconfigFile, layout, say);
        rows.push({
            what: "the same install without Pulumi (kubectl apply --server-side, the same readiness waits)",
            s: s(Date.now() - t0),
        });
        t0 = Date.now();
        const run = await solveShopLab({ layout, cluster: new KubeCluster(node.kubeconfig) }, 8);
        rows.push({ what: "the same steps without Pulumi (solveShopLab)", s: s(Date.now() - t0) });
        const overhead = Math.round((rows[0].s - rows[3].s - rows[4].s) * 10) / 10;
        if (json)
            console.log(JSON.stringify({ profile: "real-node", pulumi: rows, engine_overhead_s: overhead, steps: run.timings.length }));
        else {
            for (const r of rows) console.log(`${r.s.toFixed(1).padStart(8)} s  ${r.what}`);
            console.log(
                `${overhead.toFixed(1).padStart(8)} s  what the stack adds to an up beyond the install and the steps: the engine, its providers and their diffs, and the images' first pulls, which the rows after the first find on the node (the first row less the last two)`,
            );
            console.log(
                `(measured: the real node on this machine, real Argo CD v3.5.1, Pulumi CLI built from Go modules; node ${process.version}, ${os.cpus().length} cores)`,
            );
        }
        return EXIT.OK;
    } finally {
        await node?.stop();
        fs.rmSync(nodeRoot, { recursive: true, force: true });
        fs.rmSync(state, { recursive: true, force: true });
        fs.rmSync(root, { recursive: true, force: true });
        fs.rmSync(path.join(__dirname, "..", `Pulumi.${benchStack}.yaml`), { force: true });
    }
}

/** The same table on the real node: wall time is the real time there. */
async function benchReal(json: boolean): Promise<number> {
    const { startNodeLab } = await import("../realnode/lab");
    const { KubeCluster } = await import("../lab/ports/cluster");
    const { solveShopLab } = await import("../lab/shop/solve");
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "bench-real-"));
    fs.chmodSync(root, 0o755);
    const lab = await startNodeLab(root, { log: json ? () => {} : (l) => console.log(`[real-node] ${l}`) });
    let rows: StepTiming[];
    try {
        const run = await solveShopLab({ layout: lab.layout, cluster: new KubeCluster(lab.kubeconfig) }, 8);
        rows = [...run.setup, ...run.timings];
    } finally {
        await lab.stop();
        fs.rmSync(root, { recursive: true, force: true });
    }
    const { steps, total } = stepFigures(rows, (r) => r.ms);
    if (json) {
        console.log(JSON.stringify({ profile: "real-node", steps, total, poll_only: null }));
        return EXIT.OK;
    }
    const f = (n: number) => n.toFixed(2).padStart(8);
    console.log("step            wall s  waiting s overhead s");
    for (const r of steps) console.log(`${`${r.step} ${r.name}`.padEnd(13)} ${f(r.wall_s)}   ${f(r.wait_s)}   ${f(r.overhead_s)}`);
    console.log(`${"total".padEnd(13)} ${f(total.wall_s)}   ${f(total.wait_s)}   ${f(total.overhead_s)}`);
    console.log(
        `(measured: the real node on this machine, real Argo CD v3.5.1 installed at its defaults; node ${process.version}, ${os.cpus().length} cores)`,
    );
    return EXIT.OK;
}
