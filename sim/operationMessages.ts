/**
 * The operation state's messages as Argo CD's application controller writes them when an attempt has
 * failed (controller/appcontroller.go, processRequestedAppOperation): the retry's line, whose time
 * v3.5 writes as Go's time.Kitchen (3:04PM) and v3.6 as RFC 3339 in UTC; the last attempt's, which
 * names the retries only when there were some.
 */
import { kitchen } from "./clock";
import type { ArgoMinor } from "./rollingSync";

/** "<failure>. Retrying attempt #N at <time>." */
export function retryingMessage(minor: ArgoMinor, failure: string, attempt: number, atMs: number): string {
    const at = minor === "3.5" ? kitchen(atMs) : new Date(Math.floor(atMs / 1000) * 1000).toISOString().replace(".000Z", "Z");
    return `${failure}. Retrying attempt #${attempt} at ${at}.`;
}

/** "<failure> (retried N times)." after retries; the failure alone without. */
export function gaveUpMessage(failure: string, retries: number): string {
    return retries > 0 ? `${failure} (retried ${retries} times).` : failure;
}
