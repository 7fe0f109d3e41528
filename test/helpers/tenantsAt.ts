/**
 * "Given the tenants lab at step N": a simulated host with the tenants lab solved through step N
 * by the product's own code, built once per test run and kept as a snapshot; every `tenantsAt`
 * restores a fresh copy of it (as labAt does for the shop lab).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as assert from "assert";
import { expect, holds } from "./expect";
import { LINE_MAX } from "../../lab/kit/text";
import { snapshotCache } from "./snapshots";
import { KubeCluster } from "../../lab/ports/cluster";
import { tenantsLayout, TenantsLayout } from "../../lab/tenants/layout";
import { TenantsResults } from "../../lab/tenants/results";
import { TenantsTimeouts } from "../../lab/tenants/scenario";
import { clusterStateFile, restoreLab, SimulatedLab, solveSimulatedTenants } from "../../sim/simulatedLab";

export interface TenantsAt {
    lab: SimulatedLab;
    layout: TenantsLayout;
    lines: string[];
    cluster: KubeCluster;
    solve(through: number, timeouts?: Partial<TenantsTimeouts>): Promise<TenantsResults>;
    /** At the stall: waits until mandant-b's sync has given up (a restored stall goes on retrying, and a retry's hook Job runs for a while). The simulation may still start one more sync after it (a Pending entry synced again), so a reader of the hook's Job polls. */
    givenUp(): Promise<void>;
    stop(): Promise<void>;
}

/** The snapshot of a lab solved through `step`, built from the nearest smaller one. */
const snapshotAt = snapshotCache("tenants", (lab, step) => solveSimulatedTenants(lab, step), 1);

/** The tenants lab at step N (1-3) on a fresh simulated host. */
export async function tenantsAt(step: number): Promise<TenantsAt> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "tenants-at-"));
    const lab = await restoreLab(await snapshotAt(step), root);
    const layout = tenantsLayout(root);
    const lines: string[] = [];
    const cluster = new KubeCluster(lab.kubeconfig);
    return {
        lab,
        layout,
        lines,
        cluster,
        solve: (through, timeouts) => solveSimulatedTenants(lab, through, { log: (l) => lines.push(l), timeouts }),
        givenUp: () =>
            expect(
                holds(
                    "mandant-b's sync given up and no hook Job of it running",
                    () =>
                        lab.kube.get("Application", "argocd", "mandant-b")?.status?.operationState?.phase === "Failed" &&
                        lab.kube
                            .list("Job", "mandant-b")
                            .every((j) =>
                                (j.status?.conditions ?? []).some(
                                    (c: any) => ["Failed", "Complete"].includes(c.type) && c.status === "True",
                                ),
                            ),
                    () => lab.kube.list("Job", "mandant-b").map((j) => j.status),
                ),
                { timeoutMs: 60_000 },
            ),
        stop: async () => {
            await lab.stop();
            fs.rmSync(root, { recursive: true, force: true });
        },
    };
}

/** A root as `gitops-lab simulate --lab tenants --root DIR --tenants-through N` leaves it (the files and the saved cluster, nothing running), from the snapshot at step N. */
export async function tenantsRootAt(step: number): Promise<string> {
    const at = await tenantsAt(step);
    fs.writeFileSync(clusterStateFile(at.layout.root), at.lab.kube.dump());
    await at.lab.stop();
    return at.layout.root;
}

export { git } from "./git";
export const app = (at: TenantsAt, name: string) => at.lab.kube.get("Application", "argocd", name);
export const appset = (at: TenantsAt) => at.lab.kube.get("ApplicationSet", "argocd", "tenants");

/** The tenants lab's progress lines read like the shop lab's: one event a line, at most 120 characters, no artefacts of joined texts. */
export function assertProgressLines(lines: string[], root: string): void {
    // measured as a lab host prints them: its paths start at / (the tests' roots are long temporary folders)
    const long = lines.map((l) => l.split(root).join("")).filter((l) => l.length > LINE_MAX);
    assert.deepStrictEqual(long, [], "lines over 120 characters");
    const artefacts = lines.filter((l) => /\.;|\?\/\?|for 0 min|Application moved to Pending status|Retrying attempt/.test(l));
    assert.deepStrictEqual(artefacts, [], "lines with artefacts");
}
