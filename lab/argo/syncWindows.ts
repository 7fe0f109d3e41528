/**
 * Argo CD v3.5.1's sync windows (pkg/apis/application/v1alpha1/types.go: SyncWindows.Matches,
 * SyncWindow.active, SyncWindows.CanSync; controller/sync.go: syncWindowPreventsSync): which windows
 * of an AppProject apply to an Application, which are active at a time, and whether its operation may
 * run. RollingSync's syncs are automated ones (InitiatedBy.Automated: true), so `manualSync` never lets
 * them through. Schedules are read by cron-parser, held to the five fields Argo CD's parser accepts.
 */
import { CronExpressionParser } from "cron-parser";
import { messageOf } from "../ports/errors";
import type { Application, AppProject, SyncWindow } from "./types";

/** What the application controller writes into a Running operation a window holds. */
export const SYNC_WINDOW_BLOCKED = "blocked by sync window";

const GO_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (time.ParseDuration: "1h", "1h30m", ".5h", "90s", "0") in milliseconds; NaN when it is none. */
export function goDurationMs(d: string | undefined): number {
    const text = String(d);
    if (text === "0" || text === "+0" || text === "-0") return 0;
    const m = /^([+-]?)((?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|ms|s|m|h))+)$/.exec(text);
    if (!m) return NaN;
    const sum = [...m[2].matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|ms|s|m|h)/g)].reduce((t, p) => t + Number(p[1]) * GO_UNITS[p[2]], 0);
    return m[1] === "-" ? -sum : sum;
}

/** gobwas/glob without separators, as Argo CD's globMatch: * ? [abc] [!abc] [a-z] {a,b} and \ escapes. */
function globRegExp(pattern: string): RegExp {
    let re = "";
    for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i];
        if (c === "\\" && i + 1 < pattern.length) re += `\\${pattern[++i]}`;
        else if (c === "*") re += "[\\s\\S]*";
        else if (c === "?") re += "[\\s\\S]";
        else if (c === "[") {
            const end = pattern.indexOf("]", i + 1);
            if (end < 0) re += "\\[";
            else {
                const body = pattern.slice(i + 1, end);
                re += body.startsWith("!") ? `[^${body.slice(1)}]` : `[${body}]`;
                i = end;
            }
        } else if (c === "{") {
            const end = pattern.indexOf("}", i + 1);
            if (end < 0) re += "\\{";
            else {
                re += `(?:${pattern
                    .slice(i + 1, end)
                    .split(",")
                    .map((alt) => globRegExp(alt).source.slice(1, -1))
                    .join("|")})`;
                i = end;
            }
        } else re += c.replace(/[.+^${}()|\]\\/]/g, "\\$&");
    }
    return new RegExp(`^${re}$`);
}
const globMatch = (pattern: string, value: string) => {
    try {
        return globRegExp(pattern).test(value);
    } catch {
        return false;
    }
};

/** SyncWindows.Matches: a window applies when any set list matches (all of them with andOperator). */
function applies(w: SyncWindow, app: Application): boolean {
    const dest = app.spec?.destination ?? {};
    const lists: boolean[] = [];
    if (w.applications?.length) lists.push(w.applications.some((p: string) => globMatch(p, app.metadata?.name ?? "")));
    if (w.clusters?.length)
        lists.push(
            w.clusters.some((p: string) => (!!dest.name && globMatch(p, dest.name)) || (!!dest.server && globMatch(p, dest.server))),
        );
    if (w.namespaces?.length) lists.push(w.namespaces.some((p: string) => globMatch(p, dest.namespace ?? "")));
    return lists.length > 0 && (w.andOperator ? lists.every(Boolean) : lists.some(Boolean));
}

/** The zone's offset from UTC at `at`, in ms, as Argo CD applies it (an unknown zone is UTC). */
function zoneOffsetMs(timeZone: string | undefined, at: Date): number {
    if (!timeZone) return 0;
    try {
        const parts = new Intl.DateTimeFormat("en-US", {
            timeZone,
            hourCycle: "h23",
            year: "numeric",
            month: "2-digit",
            day: "2-digit",
            hour: "2-digit",
            minute: "2-digit",
            second: "2-digit",
        }).formatToParts(at);
        const v = (t: string) => Number(parts.find((p) => p.type === t)?.value);
        const wall = Date.UTC(v("year"), v("month") - 1, v("day"), v("hour"), v("minute"), v("second"));
        return wall - Math.floor(at.getTime() / 1000) * 1000;
    } catch {
        return 0;
    }
}

export class SyncWindowError extends Error {}

/**
 * SyncWindow.active at `at`: a schedule time in (at - duration, at), both ends open as v3.5.1's
 * `schedule.Next(at + offset - duration).Before(at + offset)` has them, the schedule read in the
 * window's zone. The zone's offset is the one it has at `now` (v3.5.1's scheduleOffsetByTimeZone takes
 * time.Now()'s), not at `at`: across a change to or from daylight saving time Argo CD reads the
 * schedule an hour off, and so does this.
 */
function activeAt(w: SyncWindow, at: Date, now: Date): boolean {
    const schedule = String(w.schedule ?? "");
    if (schedule.trim().split(/\s+/).length !== 5 || schedule.trim().startsWith("@"))
        throw new SyncWindowError(`cannot parse schedule '${schedule}': expected exactly 5 fields`);
    const ms = goDurationMs(w.duration);
    if (!Number.isFinite(ms)) throw new SyncWindowError(`cannot parse duration '${w.duration}'`);
    const shifted = at.getTime() + zoneOffsetMs(w.timeZone, now);
    let prev: number;
    try {
        // the last schedule time strictly before `shifted` (cron-parser's prev is strictly before its date)
        prev = CronExpressionParser.parse(schedule, { currentDate: new Date(shifted), tz: "UTC" })
            .prev()
            .getTime();
    } catch (e) {
        throw new SyncWindowError(`cannot parse schedule '${schedule}': ${messageOf(e)}`);
    }
    return prev > shifted - ms;
}

/** The next schedule time after `now`, in the window's zone (for "until"). */
function nextStart(w: SyncWindow, now: Date): number | undefined {
    try {
        const off = zoneOffsetMs(w.timeZone, now);
        return (
            CronExpressionParser.parse(w.schedule ?? "", { currentDate: new Date(now.getTime() + off), tz: "UTC" })
                .next()
                .getTime() - off
        );
    } catch {
        return undefined;
    }
}

const allManual = (ws: SyncWindow[]) => ws.length > 0 && ws.every((w) => w.manualSync);

/** SyncWindows.CanSync at a time (without the overrun): whether an operation may run then. */
function canSyncAt(ws: SyncWindow[], isManual: boolean, at: Date, now: Date): boolean {
    const active = ws.filter((w) => activeAt(w, at, now));
    const denies = active.filter((w) => w.kind === "deny");
    if (denies.length) return isManual && allManual(denies);
    if (active.some((w) => w.kind === "allow")) return true;
    const inactiveAllows = ws.filter((w) => w.kind === "allow" && !active.includes(w));
    if (inactiveAllows.length) return isManual && allManual(inactiveAllows);
    return true;
}

export interface BlockingWindows {
    /** The windows that hold the operation now, with their index in spec.syncWindows and a line each; none: it may run. */
    windows: { index: number; text: string }[];
    /** When the hold ends, where that can be said (the deny windows' end, or the next allow window's start). */
    until?: string;
    /** A window Argo CD cannot read, which holds every operation it applies to. */
    invalid?: string;
}

/** The windows of `project` that keep `app`'s operation from running at `now`, as syncWindowPreventsSync decides. */
export function windowsBlocking(project: AppProject, app: Application, now: Date): BlockingWindows {
    const all = project.spec?.syncWindows ?? [];
    const mine = all.map((w, index) => ({ w, index })).filter(({ w }) => applies(w, app));
    if (!mine.length) return { windows: [] };
    const op = app.status?.operationState;
    const isManual = op ? !op.operation?.initiatedBy?.automated : false;
    const startedAt = op?.startedAt ? new Date(op.startedAt) : undefined;
    const ws = mine.map(({ w }) => w);
    const text = (w: SyncWindow) =>
        `${w.kind} ${w.schedule} for ${w.duration}${w.timeZone ? ` (${w.timeZone})` : ""}${w.manualSync ? ", manualSync" : ""}${w.syncOverrun ? ", syncOverrun" : ""}`;
    const listed = (pick: (w: SyncWindow) => boolean) => mine.filter(({ w }) => pick(w)).map(({ w, index }) => ({ index, text: text(w) }));
    try {
        const active = ws.filter((w) => activeAt(w, now, now));
        const denies = active.filter((w) => w.kind === "deny");
        if (denies.length) {
            if (isManual && allManual(denies)) return { windows: [] };
            // syncOverrun: an operation started while it was allowed runs on into the deny window
            if (startedAt && denies.every((w) => w.syncOverrun) && canSyncAt(ws, isManual, startedAt, now)) return { windows: [] };
            const ends = denies.map((w) => {
                const off = zoneOffsetMs(w.timeZone, now);
                const prev = CronExpressionParser.parse(w.schedule ?? "", { currentDate: new Date(now.getTime() + off), tz: "UTC" })
                    .prev()
                    .getTime();
                return prev - off + goDurationMs(w.duration);
            });
            return { windows: listed((w) => denies.includes(w)), until: new Date(Math.max(...ends)).toISOString() };
        }
        if (active.some((w) => w.kind === "allow")) return { windows: [] };
        const allows = ws.filter((w) => w.kind === "allow");
        if (!allows.length) return { windows: [] };
        if (isManual && allManual(allows)) return { windows: [] };
        if (startedAt && allows.every((w) => w.syncOverrun) && canSyncAt(ws, isManual, startedAt, now)) return { windows: [] };
        const next = allows.map((w) => nextStart(w, now)).filter((t): t is number => t !== undefined);
        return { windows: listed((w) => allows.includes(w)), until: next.length ? new Date(Math.min(...next)).toISOString() : undefined };
    } catch (e) {
        if (!(e instanceof SyncWindowError)) throw e;
        return { windows: listed(() => true), invalid: e.message };
    }
}
