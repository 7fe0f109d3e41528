import type { KubeObject } from "../lab/argo/types";

/**
 * A watch on the real plane's API kept open (client-node's Watch): the first one is connected before
 * this returns; when the server ends it (its timeout) another is started, and when starting one fails
 * (the API server busy or restarting) it is tried again a second later, until stopped. A new watch
 * lists again: its callback sees every object once more as ADDED.
 */
export interface KeptWatch {
    stop(): void;
}

export async function keepWatching<T extends object = KubeObject>(
    kubeconfig: string,
    path: string,
    query: Record<string, string>,
    onEvent: (type: string, obj: T) => void,
): Promise<KeptWatch> {
    const k8s: typeof import("@kubernetes/client-node") = require("@kubernetes/client-node");
    const kc = new k8s.KubeConfig();
    kc.loadFromString(kubeconfig);
    let stopped = false;
    let req: AbortController | undefined;
    let timer: NodeJS.Timeout | undefined;
    const again = (delayMs: number) => {
        if (!stopped) timer = setTimeout(() => start().catch(() => again(1_000)), delayMs);
    };
    const start = async (): Promise<void> => {
        req = await new k8s.Watch(kc).watch(path, query, onEvent, () => again(100));
        if (stopped) req?.abort?.();
    };
    await start();
    return {
        stop: () => {
            stopped = true;
            clearTimeout(timer);
            req?.abort?.();
        },
    };
}
