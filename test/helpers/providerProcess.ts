/**
 * Layer 2: a dynamic provider serialized as the engine serializes it, then run in a separate
 * Node process (test/helpers/providerHost.js) that knows only the serialized text.
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

/** Runs `provider[method](...args)` in a fresh Node process, from a neutral working directory. */
export async function callProvider(text: string, method: string, args: any[], timeoutMs = 120_000): Promise<ProviderCall> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "provider-call-"));
    const reqFile = path.join(dir, "request.json");
    const resFile = path.join(dir, "result.json");
    fs.writeFileSync(reqFile, JSON.stringify({ text, method, args }));
    const host = path.join(__dirname, "providerHost.js");
    let output = "";
    const code = await new Promise<number | null>((resolve, reject) => {
        const child = spawn(process.execPath, [host, reqFile, resFile], { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, TS_NODE_PROJECT: "" } });
        child.stdout.on("data", (d) => (output += d));
        child.stderr.on("data", (d) => (output += d));
        const timer = setTimeout(() => {
            child.kill("SIGKILL");
            reject(new Error(`provider ${method} did not finish within ${timeoutMs} ms; output:\n${output}`));
        }, timeoutMs);
        child.on("exit", (c) => {
            clearTimeout(timer);
            resolve(c);
        });
    });
    if (!fs.existsSync(resFile)) throw new Error(`provider process exited with ${code} without a result; output:\n${output}`);
    const res = JSON.parse(fs.readFileSync(resFile, "utf8"));
    fs.rmSync(dir, { recursive: true, force: true });
    return { ...res, output };
}
