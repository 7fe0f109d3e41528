/**
 * The simulation's one clock. Every delay of the simulated Argo CD is a timer on it, and the
 * product's waits can run on it too (lab/ports/clock.ts).
 *
 * - `realSimClock`: the machine's clock (tests, `simulate`, `--serve`).
 * - `VirtualClock`: time jumps to the next timer whenever nothing is in flight — no simulated
 *   controller working, no API request being answered — and the product is waiting on the clock
 *   (asleep between two looks). Argo CD's defaults (a 120 s poll, a 3 min revision cache) then run
 *   in seconds, and a step's time on this clock is what it would take on a host at those defaults,
 *   minus our own overhead (which takes no simulated time). The bench uses it.
 */
import { Clock } from "../lab/ports/clock";

/** A time as Argo CD's controllers write it: whole seconds as metav1.Time, or milliseconds (the fast profile, profiles.ts). */
export function rfc3339(ms: number, wholeSeconds: boolean): string {
    const t = new Date(ms).toISOString();
    return wholeSeconds ? t.replace(/\.\d{3}Z$/, "Z") : t;
}

export interface TimerHandle {
    readonly id: number;
}

export interface SimClock extends Clock {
    setTimeout(fn: () => void, ms: number): TimerHandle;
    clearTimeout(h: TimerHandle | undefined): void;
    /** Marks work in flight until the promise settles (a virtual clock does not move meanwhile). */
    track<T>(p: Promise<T>): Promise<T>;
    /** A deterministic random number in [0, 1) (the poll jitter), so simulated runs repeat. */
    random(): number;
}

/** A seeded generator (mulberry32): the same jitter on every run. */
function seeded(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

export function realSimClock(seed = 1): SimClock {
    let next = 0;
    const handles = new Map<number, NodeJS.Timeout>();
    return {
        now: () => Date.now(),
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
        setTimeout(fn, ms) {
            const id = ++next;
            const t = setTimeout(() => {
                handles.delete(id);
                fn();
            }, ms);
            t.unref?.(); // a pending simulated timer never keeps the process alive
            handles.set(id, t);
            return { id };
        },
        clearTimeout(h) {
            if (!h) return;
            clearTimeout(handles.get(h.id));
            handles.delete(h.id);
        },
        track: (p) => p,
        random: seeded(seed),
    };
}

interface Pending {
    id: number;
    due: number;
    fn: () => void;
}

export class VirtualClock implements SimClock {
    private t: number;
    private seq = 0;
    private readonly timers: Pending[] = [];
    private busy = 0;
    private sleepers = 0;
    private scheduled = false;
    readonly random: () => number;

    /**
     * @param external work in flight that the clock cannot see being tracked (e.g. the fake API's
     *   requests being answered); time stands still while it is above 0
     */
    constructor(external: () => number = () => 0, start = Date.now(), seed = 1) {
        this.externals.push(external);
        this.t = start;
        this.random = seeded(seed);
    }

    private readonly externals: (() => number)[] = [];

    /** More work the clock cannot track itself (e.g. a fake API started after the clock). */
    addExternal(f: () => number): void {
        this.externals.push(f);
    }

    private external(): number {
        return this.externals.reduce((n, f) => n + f(), 0);
    }

    now(): number {
        return this.t;
    }

    sleep(ms: number): Promise<void> {
        this.sleepers++;
        return new Promise((resolve) =>
            this.setTimeout(() => {
                this.sleepers--;
                resolve();
            }, ms),
        );
    }

    setTimeout(fn: () => void, ms: number): TimerHandle {
        const p = { id: ++this.seq, due: this.t + Math.max(0, ms), fn };
        // keep the list ordered by due time, and by creation among equals
        let i = this.timers.length;
        while (i > 0 && this.timers[i - 1].due > p.due) i--;
        this.timers.splice(i, 0, p);
        this.kick();
        return { id: p.id };
    }

    clearTimeout(h: TimerHandle | undefined): void {
        if (!h) return;
        const i = this.timers.findIndex((p) => p.id === h.id);
        if (i >= 0) this.timers.splice(i, 1);
    }

    track<T>(p: Promise<T>): Promise<T> {
        this.busy++;
        const done = () => {
            this.busy--;
            this.kick();
        };
        p.then(done, done);
        return p;
    }

    /** Looks again soon (after the promise callbacks and I/O already due have run). */
    private kick() {
        if (this.scheduled) return;
        this.scheduled = true;
        setImmediate(() => {
            this.scheduled = false;
            this.step();
        });
    }

    private step() {
        // time moves only while everyone who waits waits on the clock
        if (this.sleepers === 0 || this.busy > 0 || this.external() > 0) {
            if (this.busy > 0 || this.external() > 0) setTimeout(() => this.kick(), 1).unref?.();
            return;
        }
        const next = this.timers.shift();
        if (!next) return;
        this.t = Math.max(this.t, next.due);
        next.fn();
        this.kick();
    }
}

/** time.Kitchen, as the retry message prints the next attempt's time. */
export const kitchen = (ms: number) => {
    const d = new Date(ms);
    const h = d.getUTCHours();
    return `${h % 12 === 0 ? 12 : h % 12}:${String(d.getUTCMinutes()).padStart(2, "0")}${h < 12 ? "AM" : "PM"}`;
};
