/**
 * The shop grader's check that shop-dev and shop-prod are still the Applications step 3 synced: one
 * made anew since (the ApplicationSet deleted and applied again to pin prod, or an Application deleted
 * for the ApplicationSet to make it again) took, through its finalizer, what it deployed with it (both
 * environments down), and its history, which the later steps read, starts over. Part of the table in
 * checks.ts, which runs it.
 */
import { liveCheck } from "../grader/live";
import { isSha } from "../grader/resultFiles";
import { startAgainAt } from "../kit/layout";
import { obj, ShopWorld } from "./world";

/** Argo CD's default revisionHistoryLimit: a history this long may have let the incident's entry go. */
const HISTORY_LIMIT = 10;

export const NOT_MADE_ANEW = liveCheck<ShopWorld>(
    4,
    "live shop-dev and shop-prod are the Applications step 3 synced (shop-dev's history holds a commit before incident.commit, shop-prod's incident.commit)",
    async (c, w) => {
        const incident = obj(w, "incident")?.commit;
        // told while the pin and the drift are the lab's steps: once promoted (the incident synced again) the history
        // holds it anew, and an Application deleted after the lab is done is the learner's own business
        if (obj(w, "promote") || !isSha(incident) || !(await w.repo.isCommit(incident))) return null;
        // shop-dev synced a commit before the incident at step 2 (made anew at step 4, it begins at the incident, main's
        // tip); shop-prod the incident commit itself at step 3 (made anew, it begins at release/prod, the incident's parent)
        const before = async (sha: unknown) =>
            isSha(sha) && sha !== incident && (await w.repo.isAncestor(sha, incident).catch(() => false));
        const remade: string[] = [];
        for (const [app, synced] of [
            ["shop-dev", async (revisions: unknown[]) => (await Promise.all(revisions.map(before))).some(Boolean)],
            // (the incident, or a later commit of main pushed together with it, which prod synced in its place)
            [
                "shop-prod",
                async (revisions: unknown[]) =>
                    (
                        await Promise.all(revisions.map(async (r) => isSha(r) && (await w.repo.isAncestor(incident, r).catch(() => false))))
                    ).some(Boolean),
            ],
        ] as const) {
            const live = await c.getApplication(app);
            const history = live?.status?.history ?? [];
            // gone (other checks say so), or a history full enough to have let the entry go (its own revisionHistoryLimit,
            // a template's 1 among them, else Argo CD's 10): nothing to tell from it
            if (!history.length || history.length >= Number(live?.spec?.revisionHistoryLimit ?? HISTORY_LIMIT)) continue;
            // made before the incident commit was: the same Application (a history may lack the incident: a commit rendering
            // for prod as the one it synced is Synced with no sync of its own)
            // (to the second: a commit's date has no finer one)
            const created = Math.floor(Date.parse(String(live?.metadata?.creationTimestamp ?? "")) / 1000) * 1000;
            if (created <= (await w.repo.committedAt(incident).catch(() => NaN))) continue;
            if (!(await synced(history.map((h) => h?.revision))))
                remade.push(`${app} (its history begins at ${String(history[0]?.revision ?? "").slice(0, 12)}, after step 3)`);
        }
        if (!remade.length) return true;
        return {
            ok: false,
            expected: "a commit before the incident in shop-dev's history, the incident commit in shop-prod's (status.history)",
            found: remade.join("; "),
            hint: `${remade.join(" and ")} ${remade.length === 1 ? "was" : "were"} made anew after step 3: deleting the ApplicationSet (kubectl delete -f appset.yaml) or an Application deletes, through Argo CD's finalizer, what it deployed, so the environment went down and its history started over; a pin is an edit of the ApplicationSet in place (edit appset.yaml, then kubectl apply -f it). Nothing brings that history back: the step is done over on a new lab (${startAgainAt(w.layout.root, { lab: "shop", through: 3 })})`,
        };
    },
);
