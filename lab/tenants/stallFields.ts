/** What each of stall.json's keys is, for a hint that names a wrong one (docs/tenants-lab.md has the whole text). */
export const STALL_FIELDS: Record<string, string> = {
    appset: "the ApplicationSet as namespace/name",
    release: "the release the stalled rollout brings",
    step: "the step the rollout is stuck at (1-based, as the RolloutProgressing condition says)",
    steps: "how many steps the rollout has",
    blocking: "the blocked Application's name (metadata.name, no namespace)",
    hook_job: "its failed hook Job as namespace/name",
    passed: "the Applications of the steps before the stuck one, by step",
    waiting: "the Applications of the steps after it that still wait, in step order",
    auto_sync_disabled_by_rollingsync: "whether RollingSync wrote automated.enabled: false into the Applications",
};
