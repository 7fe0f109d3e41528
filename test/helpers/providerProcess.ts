/**
 * Layer 2: a dynamic provider serialized as the engine serializes it, then run in a separate
 * Node process (test/helpers/providerHost.js) that knows only the serialized text: one process per
 * test file's "update", serving its calls in turn as the engine's dynamic provider plugin does.
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";

export async function serializeProvider(provider: pulumi.dynamic.ResourceProvider): Promise<string> {
    const sf = await Promise.race([
        pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true }),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("serializing the provider took over 30 s")), 30_000).unref()),
    ]);
    return sf.text;
}

export interface ProviderCall {
    ok: boolean;
    result?: any;
    error?: string;
    /** What the provider printed (console.log reaches `pulumi up`'s output). */
    output: string;
}

/** The engine's dynamic provider plugin: one Node process (test/helpers/providerHost.js) that serves an update's calls in turn. */
export interface ProviderPlugin {
    /** Runs `provider[method](...args)` in the plugin process, the provider revived from its serialized text. */
    call(text: string, method: string, args: any[], timeoutMs?: number): Promise<ProviderCall>;
    /** Ends the process (as the engine does at the end of an update). */
    stop(): Promise<void>;
}

/** Starts the plugin process from a neutral working directory, with no TypeScript loader (the provider registers the project's: program/labModule.ts). */
export function startProviderPlugin(): ProviderPlugin {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "provider-plugin-"));
    const child = spawn(process.execPath, [path.join(__dirname, "providerHost.js")], {
        cwd: dir,
        stdio: ["pipe", "pipe", "pipe", "pipe"],
        env: { ...process.env, TS_NODE_PROJECT: "" },
    });
    let stray = ""; // anything printed outside a call (nothing should be)
    child.stdout!.on("data", (d) => (stray += d));
    child.stderr!.on("data", (d) => (stray += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    let buffered = "";
    const waiting: ((line: string) => void)[] = [];
    (child.stdio[3] as NodeJS.ReadableStream).on("data", (d) => {
        buffered += d;
        for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
            const line = buffered.slice(0, i);
            buffered = buffered.slice(i + 1);
            waiting.shift()?.(line);
        }
    });
    return {
        call: (text, method, args, timeoutMs = 120_000) =>
            new Promise<ProviderCall>((resolve, reject) => {
                const timer = setTimeout(
                    () => reject(new Error(`provider ${method} did not finish within ${timeoutMs} ms; output:\n${stray}`)),
                    timeoutMs,
                );
                exited.then((code) => reject(new Error(`the provider process exited with ${code} during ${method}; output:\n${stray}`)));
                waiting.push((line) => {
                    clearTimeout(timer);
                    resolve(JSON.parse(line));
                });
                child.stdin!.write(JSON.stringify({ text, method, args }) + "\n");
            }),
        stop: async () => {
            child.stdin!.end();
            const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
            await exited;
            clearTimeout(timer);
            fs.rmSync(dir, { recursive: true, force: true });
        },
    };
}
