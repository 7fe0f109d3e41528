/**
 * Argo CD v3.5.1's sync windows (pkg/apis/application/v1alpha1, SyncWindows.Matches / Active /
 * CanSync): which windows of an AppProject apply to an Application (any of its applications,
 * namespaces or clusters patterns matches), which are active now (a schedule time within the last
 * `duration`), and whether a manual sync — as RollingSync's are — may run. The cron schedules are
 * read by cron-parser.
 */
import { CronExpressionParser } from "cron-parser";

/** What the application controller writes into a Running operation a window holds. */
export const SYNC_WINDOW_BLOCKED = "blocked by sync window";

/** A Go duration ("1h", "30m", "1h30m", "90s") in milliseconds; NaN when it is none. */
export function goDurationMs(d: string): number {
    const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
    const parts = [...String(d).matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
    if (!parts.length || parts.map((p) => p[0]).join("") !== d) return NaN;
    return parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]], 0);
}

/** filepath.Match's glob, as Argo CD matches window patterns: * and ? within a name. */
function globMatch(pattern: string, value: string): boolean {
    const re = new RegExp(
        `^${pattern
            .replace(/[.+^${}()|[\]\\]/g, "\\$&")
            .replace(/\*/g, ".*")
            .replace(/\?/g, ".")}$`,
    );
    return re.test(value);
}

/** Whether a window applies to an Application (any of its pattern lists matches). */
function applies(w: any, app: any): boolean {
    const dest = app.spec?.destination ?? {};
    return (
        (w.applications ?? []).some((p: string) => globMatch(p, app.metadata?.name ?? "")) ||
        (w.namespaces ?? []).some((p: string) => globMatch(p, dest.namespace ?? "")) ||
        (w.clusters ?? []).some((p: string) => globMatch(p, dest.server ?? "") || globMatch(p, dest.name ?? ""))
    );
}

/** The last schedule time before `now` (Date), or undefined for a schedule that cannot be read. */
function lastStart(w: any, now: Date): Date | undefined {
    try {
        return CronExpressionParser.parse(w.schedule, { currentDate: now, tz: w.timeZone || "UTC" })
            .prev()
            .toDate();
    } catch {
        return undefined;
    }
}

/** The next schedule time after `now`. */
function nextStart(w: any, now: Date): Date | undefined {
    try {
        return CronExpressionParser.parse(w.schedule, { currentDate: now, tz: w.timeZone || "UTC" })
            .next()
            .toDate();
    } catch {
        return undefined;
    }
}

/** A window is active when a schedule time fell within the last `duration`. */
function activeAt(w: any, now: Date): boolean {
    const start = lastStart(w, now);
    const ms = goDurationMs(w.duration);
    return !!start && Number.isFinite(ms) && start.getTime() + ms > now.getTime();
}

export interface BlockingWindows {
    /** The windows that hold a manual sync now, with their index in spec.syncWindows and a line each. */
    windows: { index: number; text: string }[];
    /** When the hold ends, where that can be said (the deny window's end, or the next allow window's start). */
    until?: string;
}

/** The windows of `project` that keep a manual sync of `app` from running at `now` (none: it may run). */
export function windowsBlocking(project: any, app: any, now: Date): BlockingWindows {
    const all: any[] = project.spec?.syncWindows ?? [];
    const mine = all.map((w, index) => ({ w, index })).filter(({ w }) => applies(w, app));
    const text = (w: any) =>
        `${w.kind} ${w.schedule} for ${w.duration}${w.timeZone ? ` (${w.timeZone})` : ""}${w.manualSync ? ", manualSync" : ""}`;
    const active = mine.filter(({ w }) => activeAt(w, now));
    const denies = active.filter(({ w }) => w.kind === "deny");
    if (denies.length) {
        if (denies.every(({ w }) => w.manualSync)) return { windows: [] };
        const ends = denies.map(({ w }) => lastStart(w, now)!.getTime() + goDurationMs(w.duration));
        return { windows: denies.map(({ w, index }) => ({ index, text: text(w) })), until: new Date(Math.max(...ends)).toISOString() };
    }
    if (active.some(({ w }) => w.kind === "allow")) return { windows: [] };
    const allows = mine.filter(({ w }) => w.kind === "allow");
    if (!allows.length || allows.some(({ w }) => w.manualSync)) return { windows: [] };
    const next = allows.map(({ w }) => nextStart(w, now)?.getTime()).filter((t): t is number => t !== undefined);
    return {
        windows: allows.map(({ w, index }) => ({ index, text: text(w) })),
        until: next.length ? new Date(Math.min(...next)).toISOString() : undefined,
    };
}
