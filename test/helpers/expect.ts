/**
 * Expectations in the style of Argo CD's e2e fixture (test/e2e/fixture/app/expectation.go): an
 * expectation looks at the world once and says succeeded, pending (look again) or failed (it can
 * never become true: stop at once). `expect` polls one to a deadline; `expectConsistently` checks
 * that one keeps holding for a while ("nothing happens").
 */
export type State = "succeeded" | "pending" | "failed";
export interface Verdict {
    state: State;
    message: string;
}
export type Expectation = () => Verdict | Promise<Verdict>;

export const succeeded = (message = "ok"): Verdict => ({ state: "succeeded", message });
export const pending = (message: string): Verdict => ({ state: "pending", message });
export const failed = (message: string): Verdict => ({ state: "failed", message });

/** A check as an expectation: succeeded when it holds, pending otherwise. */
export const holds =
    (what: string, look: () => boolean | Promise<boolean>, seen?: () => unknown): Expectation =>
    async () =>
        (await look()) ? succeeded(what) : pending(`${what}: not yet${seen ? `; seen ${JSON.stringify(seen())}` : ""}`);

/** Polls until the expectation succeeds; fails at once when it fails, or with its last message at the deadline. */
export async function expect(e: Expectation, opts: { timeoutMs?: number; intervalMs?: number } = {}): Promise<void> {
    const timeoutMs = opts.timeoutMs ?? 15_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const v = await e();
        if (v.state === "succeeded") return;
        if (v.state === "failed") throw new Error(`expectation failed: ${v.message}`);
        if (Date.now() >= deadline) throw new Error(`expectation still pending after ${timeoutMs} ms: ${v.message}`);
        await new Promise((r) => setTimeout(r, opts.intervalMs ?? 25));
    }
}

/** Checks the expectation every interval for `forMs`: it must succeed every time. */
export async function expectConsistently(e: Expectation, opts: { forMs: number; intervalMs?: number }): Promise<void> {
    const end = Date.now() + opts.forMs;
    for (;;) {
        const v = await e();
        if (v.state !== "succeeded") throw new Error(`expected to hold throughout ${opts.forMs} ms, but: ${v.message}`);
        if (Date.now() >= end) return;
        await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
    }
}
