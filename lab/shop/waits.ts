/**
 * The shop scenario's waits on Argo CD: one poll to a deadline said as it goes (lab/kit/wait.ts),
 * the refresh annotation asked for and asked again while Argo CD has not moved, and "synced to
 * commit X" as docs/argocd-v3.5.1.md defines it.
 */
import { cannotSyncBecause, describeApp, errorConditions, notSyncedBecause, REFRESH_ANNOTATION } from "../argo/application";
import type { Application } from "../argo/types";
import { codeOf } from "../ports/errors";
import { secs, short } from "../kit/text";
import { waitSaid } from "../kit/wait";
import { CM, Ctx, say } from "./context";

/** A wait's deadline, its poll, what it says when the deadline passes, and what runs between two looks. */
interface WaitOptions {
    timeoutMs: number;
    intervalMs: number;
    describe: () => string;
    between?: (elapsed: number) => Promise<void>;
}

/** Polls with a deadline and counts the time as waiting on Argo CD. */
export async function waitFor<T>(c: Ctx, what: string, look: () => Promise<T | undefined>, opts: WaitOptions): Promise<T> {
    const start = Date.now();
    try {
        return await waitSaid({ say: (l) => say(c, l), clock: c.clock }, what, look, opts);
    } finally {
        c.waitMs += Date.now() - start;
    }
}

/** Asks Argo CD to look at Git now. False when the Application does not exist (yet). */
async function refresh(c: Ctx, app: string, kind: "normal" | "hard"): Promise<boolean> {
    if (!c.refresh) return false; // poll-only: wait for Argo CD's own look at Git
    try {
        await c.cluster.annotateApplication(app, { [REFRESH_ANNOTATION]: kind }, c.appset.namespace);
        return true;
    } catch (e) {
        // the ApplicationSet controller may not have generated it yet: the wait polls until it exists
        if (codeOf(e) === 404) return false;
        throw e;
    }
}

/** A refresh kept going while a wait lasts. */
interface Refresher {
    /** Call between two looks: refreshes again once Argo CD has handled the last refresh and nothing moved for `refreshEveryMs`, or at once when `urgent`. */
    again(last: Application | null, urgent?: boolean): Promise<void>;
    /** How many of our refreshes Argo CD has handled (removed) since the wait began. */
    handled(): number;
}

/**
 * Refreshes an Application now, and again between looks (see Refresher). A comparison already
 * running when a refresh was asked for can remove the annotation without having seen it, so only a
 * refresh asked for after another one was handled is sure to have been compared afresh.
 */
export async function keepRefreshing(c: Ctx, app: string, kind: "normal" | "hard"): Promise<Refresher> {
    let lastRefresh = c.clock.now();
    let ours = await refresh(c, app, kind); // our annotation is on the Application, not yet seen handled
    let missed = !ours; // the last try found no Application (not generated yet)
    let handled = 0;
    return {
        handled: () => handled,
        async again(last, urgent = false) {
            if (!c.refresh || !last) return;
            if (last.metadata?.annotations?.[REFRESH_ANNOTATION]) return; // not handled yet
            if (ours) {
                handled++;
                ours = false;
            }
            if (missed || urgent || c.clock.now() - lastRefresh >= c.t.refreshEveryMs) {
                lastRefresh = c.clock.now();
                ours = await refresh(c, app, kind);
                missed = !ours;
            }
        },
    };
}

/**
 * Waits until the Application is synced to `sha` (the full definition in docs/argocd-v3.5.1.md), tracks
 * `targetRevision`, and `check` (if given) holds. Triggers a refresh first instead of sitting out
 * Argo CD's 3-minute poll, and again whenever the last one was handled and nothing moved.
 */
export async function waitSynced(
    c: Ctx,
    app: string,
    sha: string,
    opts: {
        targetRevision?: string;
        refresh?: "normal" | "hard";
        noOpAllowed?: boolean;
        check?: (app: Application) => Promise<string | null>;
    } = {},
): Promise<Application> {
    let last: Application | null = null;
    let lastWhy = "";
    const refresher = await keepRefreshing(c, app, opts.refresh ?? "normal");
    return waitFor(
        c,
        `${app} synced to ${short(sha)}${opts.targetRevision ? ` tracking ${opts.targetRevision}` : ""}`,
        async () => {
            last = await c.cluster.getApplication(app, c.appset.namespace);
            let why = notSyncedBecause(last, sha, { noOpAllowed: opts.noOpAllowed });
            if (!why && opts.targetRevision && last?.spec?.source?.targetRevision !== opts.targetRevision) {
                why = `targetRevision is ${last?.spec?.source?.targetRevision}`;
            }
            if (!why && opts.check && last) why = await opts.check(last);
            lastWhy = why ?? "";
            if (!why) return last ?? undefined;
            // a state that can never turn into "synced" ends the wait now, not at the deadline; a
            // ComparisonError counts only once a refresh asked for after another was handled saw it
            const afresh = c.refresh && refresher.handled() >= 2; // poll-only: no way to know it is afresh
            const hopeless = cannotSyncBecause(last, sha, {
                refreshPending: !afresh || !!last?.metadata?.annotations?.[REFRESH_ANNOTATION],
            });
            if (hopeless)
                throw new Error(`Application ${app} cannot become synced to ${sha}: ${hopeless}. Last status: ${describeApp(last)}`);
            return undefined;
        },
        {
            timeoutMs: c.t.syncMs,
            intervalMs: c.t.pollMs,
            describe: () =>
                `timed out after ${secs(c.t.syncMs)} waiting for Application ${app} to be synced to ${sha}: ${lastWhy}. Last status: ${describeApp(last)}`,
            // an error condition is worth a second look at once
            between: () => refresher.again(last, errorConditions(last).length > 0),
        },
    );
}

/** A key of shop-config as the cluster has it now; undefined where the ConfigMap lacks the key. */
async function liveValue(c: Ctx, namespace: string, key: string): Promise<string | undefined> {
    const cm = await c.cluster.getConfigMap(namespace, CM);
    if (!cm) throw new Error(`ConfigMap ${namespace}/${CM} does not exist`);
    return cm.data?.[key];
}

/** A key of shop-config for a result file: one the ConfigMap lacks is an error, never an empty value. */
export async function configValue(c: Ctx, namespace: string, key: string): Promise<string> {
    const value = await liveValue(c, namespace, key);
    if (value === undefined) throw new Error(`ConfigMap ${namespace}/${CM} has no ${key}; nothing was written`);
    return value;
}

export const valueIs = (c: Ctx, namespace: string, key: string, want: string) => async () => {
    const value = await liveValue(c, namespace, key);
    return value === want ? null : `ConfigMap ${namespace}/${CM} has ${key}=${value}, want ${want}`;
};
