/**
 * Named expectations on an Application, in the words of Argo CD's e2e fixture
 * (test/e2e/fixture/app/expectation.go: SyncStatusIs, HealthIs, OperationPhaseIs, Condition…): each
 * looks at the Application once (`look` reads it) and says what it saw when it is not so yet.
 */
import { Expectation, pending, succeeded } from "./expect";

export type AppLook = () => any;

const seen = (app: any) =>
    `sync ${app?.status?.sync?.status}@${String(app?.status?.sync?.revision ?? "").slice(0, 12)}, health ${app?.status?.health?.status}, operation ${app?.status?.operationState?.phase ?? "-"}`;

/** The Application exists. */
export const appExists =
    (look: AppLook, name: string): Expectation =>
    () =>
        look() ? succeeded(`${name} exists`) : pending(`${name} not there yet`);

/** Synced at `revision` (any revision when not given). */
export const appSyncedTo =
    (look: AppLook, revision?: string): Expectation =>
    () => {
        const app = look();
        const sync = app?.status?.sync;
        return sync?.status === "Synced" && (revision === undefined || sync.revision === revision)
            ? succeeded(`Synced${revision ? ` at ${revision}` : ""}`)
            : pending(`not Synced${revision ? ` at ${revision}` : ""} yet: ${seen(app)}`);
    };

/** At `revision` in its comparison (Synced or not). */
export const appAtRevision =
    (look: AppLook, revision: string): Expectation =>
    () => {
        const app = look();
        return app?.status?.sync?.revision === revision ? succeeded(`at ${revision}`) : pending(`not at ${revision} yet: ${seen(app)}`);
    };

/** Its operation's phase is `phase` (a later operation may still bring it: never failed). */
export const operationPhaseIs =
    (look: AppLook, phase: string): Expectation =>
    () => {
        const app = look();
        return app?.status?.operationState?.phase === phase
            ? succeeded(`operation ${phase}`)
            : pending(`operation not ${phase} yet: ${seen(app)}`);
    };

/** It has a condition of `type` (whose message matches `message`, when given). */
export const appHasCondition =
    (look: AppLook, type: string, message?: RegExp): Expectation =>
    () => {
        const c = (look()?.status?.conditions ?? []).find((x: any) => x.type === type);
        return c && (!message || message.test(c.message))
            ? succeeded(`condition ${type}`)
            : pending(`no condition ${type}${message ? ` matching ${message}` : ""} yet${c ? `: ${c.message}` : ""}`);
    };

/** It has no condition at all. */
export const appHasNoConditions =
    (look: AppLook): Expectation =>
    () => {
        const cs = look()?.status?.conditions ?? [];
        return cs.length ? pending(`conditions still there: ${cs.map((c: any) => c.type).join(", ")}`) : succeeded("no conditions");
    };

/** Every expectation at once. */
export const all =
    (...es: Expectation[]): Expectation =>
    async () => {
        for (const e of es) {
            const v = await e();
            if (v.state !== "succeeded") return v;
        }
        return succeeded("all");
    };
