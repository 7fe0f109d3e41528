/**
 * Where an Application goes, as Argo CD's database finds it (`util/argo/argo.go` GetDestinationServer and
 * GetDestinationCluster, `util/db/cluster.go` GetCluster, at v3.5.1 and v3.6.2). The simulated API
 * serves no Secrets, so the one cluster it knows is the one Argo CD runs in (`https://kubernetes.default.svc`,
 * named `in-cluster`); a real install also knows its cluster Secrets.
 */
import { IN_CLUSTER_SERVER } from "../lab/argo/application";

/** `appv1.KubernetesInternalAPIServerAddr` and the in-cluster cluster's name. */
export const IN_CLUSTER = { server: IN_CLUSTER_SERVER, name: "in-cluster" };

interface Destination {
    server?: string;
    name?: string;
}

/** Why Argo CD finds no cluster for this destination, in its words; null when it finds one. */
export function destinationError(destination: Destination | undefined): string | null {
    const { server = "", name = "" } = destination ?? {};
    if (name && server) return `application destination can't have both name and server defined: ${name} ${server}`;
    if (server) {
        const url = server.replace(/\/+$/, "");
        if (url === IN_CLUSTER.server) return null;
        return `error getting cluster by server "${server}": rpc error: code = NotFound desc = cluster "${url}" not found`;
    }
    if (name) return name === IN_CLUSTER.name ? null : `there are no clusters with this name: ${name}`;
    return "Destination server missing from app spec";
}
