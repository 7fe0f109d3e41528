/**
 * Step 5's checks of drift.json: the values patched in and put back (swapped, or another case, named), and
 * the seconds selfHeal took. Part of the table in checks.ts, which runs them; the live ones are in liveChecks.ts.
 */
import { Check, eqFields } from "../grader/grader";
import { liveCheck } from "../grader/live";
import { isSha } from "../grader/resultFiles";
import { obj, PATCH_AGAIN, ShopWorld } from "./world";

export const DRIFT_CHECKS: Check<ShopWorld>[] = [
    {
        step: 5,
        name: "drift: edited debug, restored warn",
        run: async (w) => {
            const d = obj(w, "drift");
            if (!d) return null;
            // the drift patched in another case (DEBUG): Git's values are lower case, as the lab's patch is
            if (typeof d.edited === "string" && d.edited !== "debug" && d.edited.toLowerCase() === "debug")
                return {
                    ok: false,
                    expected: { edited: "debug" },
                    found: { edited: d.edited },
                    hint: `edited holds ${JSON.stringify(d.edited)}: the lab's drift patches LOG_LEVEL to debug, in lower case as Git writes its values; ${PATCH_AGAIN}, with edited: "debug"`,
                };
            // the two written the wrong way round: said so
            if (d.edited === "warn" && d.restored === "debug")
                return {
                    ok: false,
                    expected: { edited: "debug", restored: "warn" },
                    found: { edited: d.edited, restored: d.restored },
                    hint: `edited and restored are swapped: edited is the LOG_LEVEL you patched in (debug), restored the one selfHeal put back (warn, prod's own from Git)`,
                };
            // another key's values (FEATURE_CHECKOUT_V2's on and off): the drift went to the wrong key
            if (["on", "off"].includes(String(d.edited)) && ["on", "off"].includes(String(d.restored)))
                return {
                    ok: false,
                    expected: { edited: "debug", restored: "warn" },
                    found: { edited: d.edited, restored: d.restored },
                    hint: `edited and restored hold FEATURE_CHECKOUT_V2's values (on, off): the drift is made on LOG_LEVEL: ${PATCH_AGAIN}`,
                };
            // the base's value (info) or dev's (debug) for what selfHeal puts back in prod: prod's own, from envs/prod's patch
            return eqFields(
                { edited: "debug", restored: "warn" },
                { edited: d.edited, restored: d.restored },
                {
                    edited: "the LOG_LEVEL you patched into shop-prod's ConfigMap (debug)",
                    restored:
                        d.restored === d.edited && typeof d.edited === "string"
                            ? `it is the value you patched in (edited): it was read before selfHeal put Git's back; read it again and again (every half second) until it changes, and write that one`
                            : `the LOG_LEVEL selfHeal puts back in shop-prod: prod's own from Git (envs/prod's patch), not the base's info or dev's debug; read it once it changes back`,
                },
            );
        },
    },
    {
        step: 5,
        name: "drift.seconds is from 1 to the lab's age",
        run: async (w) => {
            const s = obj(w, "drift")?.seconds;
            if (typeof s !== "number") return null;
            // no drift was repaired before the lab's first commit: a longer time is not one that was measured
            const first = w.main ? await w.repo.rootOf("main").catch(() => null) : null;
            const age = first ? Math.ceil((Date.now() - (await w.repo.committedAt(first))) / 1000) : Infinity;
            // at least 1: whole seconds rounded up, and selfHeal's repair comes after the patch
            const ok = s >= 1 && s <= age;
            return ok
                ? true
                : {
                      ok,
                      expected: Number.isFinite(age) ? `1 to ${age} (the lab's first commit was made ${age} s ago)` : ">= 1",
                      found: s,
                      ...(s >= 0 && s < 1
                          ? {
                                hint: `drift.seconds holds ${s}: the seconds are rounded up, so a repair that came back within the first second is 1 (selfHeal's repair always comes after your patch)`,
                            }
                          : {}),
                      ...(s < 0
                          ? {
                                hint: `drift.seconds holds ${s}, below 0: the seconds are the repair's time minus your patch's (subtracted the other way round?): ${Math.max(1, Math.ceil(-s))}`,
                            }
                          : {}),
                      ...(s > age
                          ? {
                                hint: `drift.seconds holds ${s}, longer than the lab has existed (${age} s since its first commit): time it from your patch of shop-prod's ConfigMap to selfHeal's repair (kubectl get cm shop-config -n shop-prod -w shows the repair), and write that`,
                            }
                          : {}),
                  };
        },
    },
    // the drift lasted at most from shop-prod's last whole sync (the pin's: the patch came after it) to selfHeal's
    // repair (a sync of the ConfigMap alone, which Argo CD keeps out of the history): a longer one was not measured in seconds
    liveCheck<ShopWorld>(5, "drift.seconds is no longer than from shop-prod's last sync before the repair to the repair", async (c, w) => {
        const s = obj(w, "drift")?.seconds;
        const pinned = obj(w, "pin")?.release_prod_initial;
        if (typeof s !== "number" || obj(w, "promote") || !isSha(pinned) || w.releaseTip !== pinned) return null;
        const app = await c.getApplication("shop-prod");
        const op = app?.status?.operationState;
        const repair = (op?.operation?.sync?.resources ?? []).some((r) => r.kind === "ConfigMap" && r.name === "shop-config");
        const [repaired, since] = [Date.parse(op?.finishedAt ?? ""), Date.parse((app?.status?.history ?? []).at(-1)?.deployedAt ?? "")];
        if (!repair || !(repaired >= since)) return null; // no repair to time it by: the check of the repair says so
        // (2 s more: the repair read back a poll later, and a sync's status seen before its history is written)
        const most = Math.ceil((repaired - since) / 1000) + 2;
        return s <= most
            ? true
            : {
                  ok: false,
                  expected: `at most ${most} (shop-prod's last sync before the repair ended ${most - 2} s before selfHeal's repair, 2 s allowed)`,
                  found: s,
                  hint: `drift.seconds holds ${s}, but the drift cannot have lasted longer than ${most} s: your patch came after shop-prod's last sync (${(app?.status?.history ?? []).at(-1)?.deployedAt}) and selfHeal repaired it at ${op?.finishedAt}${s >= 1000 && Math.ceil(s / 1000) <= most ? `; if ${s} is milliseconds, write whole seconds, rounded up: ${Math.max(1, Math.ceil(s / 1000))}` : ""}`,
              };
    }),
];
