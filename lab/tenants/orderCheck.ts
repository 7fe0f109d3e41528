/**
 * The tenants grader's check of recovery.order: the four tenants by step, each once, and from the blocked
 * step on each Healthy after those of the steps before it. Part of the table in checks.ts, which runs it.
 */
import { Check, eq } from "../grader/grader";
import { TENANTS } from "./layout";
import { obj, racedAhead, TenantsWorld } from "./world";

export const RECOVERY_ORDER: Check<TenantsWorld> = {
    step: 3,
    name: "recovery.order: the four tenants by step (1-4); from the blocked step on, each Healthy after the tenants of the steps before it",
    run: async (w) => {
        const r = obj(w, "recovery");
        if (!r || !Array.isArray(r.order)) return null;
        const apps = r.order.map((o: { step?: unknown; application?: unknown }) => `${o.step}:${o.application}`);
        const want = TENANTS.map((t, i) => `${i + 1}:${t}`);
        if (JSON.stringify(apps) !== JSON.stringify(want)) {
            // the Application's namespace/name (argocd/mandant-a) for its name
            const qualified = r.order.find(
                (o: { application?: unknown }) => typeof o.application === "string" && o.application.includes("/"),
            );
            if (qualified)
                return {
                    ...eq(want, apps),
                    hint: `order[].application holds ${JSON.stringify(qualified.application)}: write the Application's name without its namespace (${String(qualified.application).split("/").pop()})`,
                };
            // a tenant left out (mandant-a, "already done"): the list has the four
            const missing = TENANTS.filter((t) => !r.order.some((o: { application?: unknown }) => o?.application === t));
            if (missing.length && r.order.length < TENANTS.length)
                return {
                    ...eq(want, apps),
                    hint: `order leaves out ${missing.join(", ")}: it lists all four tenants by step, each with when its entry turned Healthy (mandant-a's too, when the fix landed)`,
                };
            // a tenant listed twice (an entry copied, or the list appended to): one entry per tenant
            const twice = TENANTS.filter((t) => r.order.filter((o: { application?: unknown }) => o?.application === t).length > 1);
            if (twice.length)
                return {
                    ...eq(want, apps),
                    hint: `order lists ${twice.join(", ")} more than once (${r.order.length} entries)${missing.length ? ` and leaves out ${missing.join(", ")}` : ""}: it lists each of the four tenants once, by step, with when its entry turned Healthy; take the extra ${twice.length === 1 ? "entry" : "entries"} out${missing.length ? ` and add ${missing.length === 1 ? "the one" : "those"} left out` : ""}`,
                };
            // the right entries in another order (the order they turned Healthy): the list goes by step
            return [...apps].sort().join() === [...want].sort().join()
                ? {
                      ...eq(want, apps),
                      hint: `order holds the four entries in another order (${r.order.map((o: { application?: unknown }) => o.application).join(", ")}): list them by step, step 1 first; the times say the order they turned Healthy in`,
                  }
                : eq(want, apps);
        }
        // The steps before the blocked one are out of it: step 1's Application was Synced at the faulty
        // release, so RollingSync marks its entry Healthy at once when the fix lands and only later, at
        // its own comparison, Waiting again; by then steps 2 and 3 may be under way (getAppsToSync reads
        // the entries alone). The blocked tenant and those after it were OutOfSync when the fix landed,
        // so each is synced only once the ones before it are Healthy (docs/tenants-lab.md). The lab stalls at
        // mandant-b (the step-2 checks hold stall.json to it; not read here, so a changed file cannot loosen this).
        // A tenant that raced ahead at the stall (stall.json; held to the Applications' history live) was Synced
        // at the faulty release too, so its entry can count Healthy early like step 1's: it is out of it as well.
        const blocked = TENANTS.indexOf("mandant-b");
        const raced = racedAhead(w);
        const times = r.order.map((o: { healthy_at?: string }) => Date.parse(o.healthy_at ?? ""));
        const from = TENANTS.slice(blocked).filter((t) => !raced.includes(t));
        const at = from.map((t) => TENANTS.indexOf(t));
        const bad = at.filter((i, k) => k > 0 && times[i] < Math.max(...at.slice(0, k).map((j) => times[j])));
        // the first tenant that turned Healthy before one of an earlier step: both named, with their times
        const first = bad[0];
        const before = first === undefined ? undefined : at.slice(0, at.indexOf(first)).find((j) => times[j] > times[first]);
        const when = (i: number) => `${TENANTS[i]} (step ${i + 1}) at ${r.order[i]?.healthy_at}`;
        return {
            ok: bad.length === 0 && times.every(Number.isFinite),
            expected: `healthy_at in step order for ${from.join(", ")}`,
            found: JSON.stringify(r.order),
            ...(first !== undefined && before !== undefined
                ? {
                      hint: `order has ${when(first)}, before ${when(before)}: from the blocked step on, each tenant turns Healthy only after the one before it; read each time again from the ApplicationSet's status.applicationStatus (lastTransitionTime)`,
                  }
                : {}),
        };
    },
};
