/**
 * Step 4's check of where release/prod starts, before pin.json is written: pushed from main's tip (the incident
 * commit itself), it holds the incident the pin is there to keep out of prod. Part of the table in checks.ts.
 */
import { Check } from "../grader/grader";
import { isSha } from "../grader/resultFiles";
import { obj, ShopWorld } from "./world";

export const RELEASE_NOT_AT_INCIDENT: Check<ShopWorld> = {
    step: 4,
    name: "release/prod does not start at incident.commit (the pin keeps prod at the commit before it)",
    run: async (w) => {
        const incident = obj(w, "incident")?.commit;
        // promoted (step 6), release/prod is at the incident by the lab's own step; pinned, pin.json's checks say it
        if (!w.releaseTip || !isSha(incident) || obj(w, "promote") || obj(w, "pin")) return null;
        if (w.releaseTip !== incident) return true;
        const parent = (await w.repo.parents(incident).catch(() => []))[0];
        return {
            ok: false,
            expected: `release/prod at ${parent ? parent.slice(0, 12) : "the incident commit's parent"}`,
            found: `release/prod at incident.commit ${incident.slice(0, 12)}`,
            hint: `release/prod is at incident.commit itself (pushed from main's tip?), so prod pinned to it would still run the incident: the pin starts at the commit before it; the repository refuses a force push, so delete the branch (git push origin --delete release/prod) and push it again at ${parent ? parent.slice(0, 12) : "the incident commit's parent"} (git push origin ${parent ?? "PARENT"}:refs/heads/release/prod), then go on with the pin`,
        };
    },
};
