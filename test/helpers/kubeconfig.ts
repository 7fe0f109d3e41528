/**
 * Kubeconfigs of clusters that are not there, for tests of what a command says when nothing answers.
 */
import * as fs from "fs";
import * as path from "path";

/** Writes DIR/kubeconfig whose one cluster's server is `server`, with a token user; returns its path. */
export function kubeconfigFor(dir: string, server: string): string {
    const file = path.join(dir, "kubeconfig");
    fs.writeFileSync(
        file,
        [
            "apiVersion: v1",
            "kind: Config",
            `clusters: [{name: c, cluster: {server: "${server}"}}]`,
            "users: [{name: u, user: {token: x}}]",
            "contexts: [{name: c, context: {cluster: c, user: u}}]",
            "current-context: c",
        ].join("\n"),
    );
    return file;
}

/** A loopback port that was just free: nothing listens on it (the simulation's own, for its git daemon). */
export { freePort } from "../../sim/gitDaemon";
