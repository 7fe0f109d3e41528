/**
 * Runs the Pulumi program (index.ts) under `pulumi.runtime.setMocks` and records every resource
 * it registers: type, name, inputs, and the options it was given (through a stack transformation).
 */
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";

export interface Registered {
    type: string;
    name: string;
    inputs: any;
    opts: pulumi.CustomResourceOptions & pulumi.ComponentResourceOptions;
    parent?: string;
}

/** A resource as the SDK sent it to the engine: its URN and every URN it waits for. */
export interface SentToEngine {
    urn: string;
    type: string;
    name: string;
    custom: boolean;
    /** dependsOn (components expanded to their resources), the URNs behind its inputs, and its provider. */
    waitsFor: string[];
}

export interface ProgramRun {
    resources: Registered[];
    /** What the engine was asked to register, with the dependencies it would order by. */
    sent: SentToEngine[];
    outputs: Record<string, pulumi.Output<any> | any>;
    byName(name: string): Registered;
}

/** Resolves an Output's value (under mocks). */
export function valueOf<T>(o: pulumi.Output<T> | T): Promise<T> {
    if (!pulumi.Output.isInstance(o)) return Promise.resolve(o as T);
    return new Promise((resolve) =>
        (o as pulumi.Output<T>).apply((v) => {
            resolve(v);
            return v;
        }),
    );
}

/** Is an input secret: a secret Output, or already serialized with Pulumi's secret signature. */
export async function isSecretInput(v: any): Promise<boolean> {
    if (pulumi.Output.isInstance(v)) return pulumi.isSecret(v);
    return !!v && typeof v === "object" && v[pulumi.runtime.specialSigKey] === pulumi.runtime.specialSecretSig;
}

/** Fails fast instead of hanging when the program or a serialization rejects in the background. */
let lastRejection: unknown;
process.on("unhandledRejection", (e) => {
    lastRejection = e; // runProgram rethrows it
});

export async function runProgram(
    config: Record<string, string>,
    mockState: (args: pulumi.runtime.MockResourceArgs) => Record<string, any> = () => ({}),
): Promise<ProgramRun> {
    const resources: Registered[] = [];
    const byUrn = new Map<string, Registered>();
    await pulumi.runtime.setMocks(
        {
            newResource(args) {
                const rec = byUrn.get(`${args.type}::${args.name}`);
                if (rec) rec.inputs = args.inputs;
                return { id: `${args.name}-id`, state: { ...args.inputs, ...mockState(args) } };
            },
            call(args) {
                return args.inputs;
            },
        },
        "gitops-lab",
        "dev",
        false,
    );
    // record the dependencies of every registration as the engine receives them
    const sent: SentToEngine[] = [];
    const monitor: any = pulumi.runtime.getMonitor();
    const register = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req: any, callback: (err: any, res: any) => void) =>
        register(req, (err: any, res: any) => {
            if (!err) {
                const propDeps: string[] = [];
                req.getPropertydependenciesMap().forEach((v: any) => propDeps.push(...v.getUrnsList()));
                const provider = req.getProvider() ? [String(req.getProvider()).split("::").slice(0, -1).join("::")] : [];
                sent.push({
                    urn: res.getUrn(),
                    type: req.getType(),
                    name: req.getName(),
                    custom: req.getCustom(),
                    waitsFor: [...new Set([...req.getDependenciesList(), ...propDeps, ...provider])],
                });
            }
            callback(err, res);
        });
    pulumi.runtime.setAllConfig(Object.fromEntries(Object.entries(config).map(([k, v]) => [`gitops-lab:${k}`, v])));
    const indexPath = path.join(__dirname, "..", "..", "index.ts");
    delete require.cache[require.resolve(indexPath)];
    lastRejection = undefined;
    let outputs: any;
    // the root stack resource exists only inside runInPulumiStack; transformations need it
    const stackDone = pulumi.runtime.runInPulumiStack(async () => {
        pulumi.runtime.registerStackTransformation((args) => {
            const rec: Registered = {
                type: args.type,
                name: args.name,
                inputs: args.props,
                opts: args.opts as any,
                parent: (args.opts.parent as any)?.__name,
            };
            resources.push(rec);
            byUrn.set(`${args.type}::${args.name}`, rec);
            return undefined;
        });
        outputs = require(indexPath);
        return outputs;
    });
    await Promise.race([
        stackDone,
        new Promise((_, reject) =>
            setTimeout(() => reject(new Error("the program did not finish under mocks within 60 s")), 60_000).unref(),
        ),
    ]);
    // let every registration settle; a rejection in the background fails the run at once
    for (let i = 0; i < 50; i++) {
        await new Promise((r) => setImmediate(r));
        if (lastRejection) throw lastRejection;
    }
    return {
        resources,
        sent,
        outputs,
        byName(name: string) {
            const r = resources.find((x) => x.name === name);
            if (!r) throw new Error(`no resource named ${name}; registered: ${resources.map((x) => x.name).join(", ")}`);
            return r;
        },
    };
}
