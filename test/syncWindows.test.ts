/**
 * Sync windows as v3.5.1 decides them (lab/argo/syncWindows.ts), at the edges: a window is active
 * strictly after its schedule time and strictly before its end (`schedule.Next(t - duration).Before(t)`,
 * pkg/apis/application/v1alpha1/types.go), and a zone's offset is the one it has now.
 */
import * as assert from "assert";
import { windowsBlocking } from "../lab/argo/syncWindows";

const project = (w: object) => ({ metadata: { name: "default" }, spec: { syncWindows: [{ applications: ["*"], ...w }] } });
const app = { metadata: { name: "mandant-b" }, spec: { destination: { namespace: "mandant-b" } } };
const held = (w: object, at: string) => windowsBlocking(project(w), app, new Date(at)).windows.length > 0;

describe("sync windows at their edges, as v3.5.1's SyncWindow.active", () => {
    const deny = { kind: "deny", schedule: "0 10 * * *", duration: "1h" };

    it("given a deny window from 10:00 for 1h, then it holds from just after 10:00 to just before 11:00, not at either instant", () => {
        assert.deepStrictEqual(
            [
                "2026-06-01T09:59:59.999Z",
                "2026-06-01T10:00:00.000Z",
                "2026-06-01T10:00:00.001Z",
                "2026-06-01T10:59:59.999Z",
                "2026-06-01T11:00:00.000Z",
            ].map((t) => held(deny, t)),
            [false, false, true, true, false],
        );
    });

    it("given the window's time zone, then its schedule is read there, with the offset the zone has at the diagnosis's time", () => {
        const berlin = { ...deny, timeZone: "Europe/Berlin" };
        // summer: Berlin is UTC+2, so 10:00 there is 08:00 UTC
        assert.deepStrictEqual(
            ["2026-06-01T08:30:00Z", "2026-06-01T10:30:00Z"].map((t) => held(berlin, t)),
            [true, false],
        );
        // winter: UTC+1
        assert.deepStrictEqual(
            ["2026-01-15T09:30:00Z", "2026-01-15T08:30:00Z"].map((t) => held(berlin, t)),
            [true, false],
        );
    });
});
