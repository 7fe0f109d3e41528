/** The few words every lab's progress lines are made of. */

/** A commit's first 12 hex digits, as the labs print them. */
export const short = (sha: string) => sha.slice(0, 12);

/** Milliseconds as seconds with one decimal: "4.2 s". */
export const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A progress line's length at most, prefix included: details stay in --json and the result files. */
export const LINE_MAX = 120;

/** A time as Kubernetes and Argo CD write theirs (metav1.Time: RFC 3339, UTC, whole seconds): one format in every line. */
export const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

/** `text` on one line, cut at a word to fit `max` characters, with "…" where it was cut. */
export function fit(text: string, max: number): string {
    const one = text.replace(/\s+/g, " ").trim();
    if (one.length <= max) return one;
    const cut = one.slice(0, max - 1);
    const at = cut.lastIndexOf(" ");
    return `${(at > max / 2 ? cut.slice(0, at) : cut).replace(/[\s,;:.(—-]+$/, "")}…`;
}
