/**
 * The real node's start as ordered phases over one context (kind's `create` runs its actions so):
 * each phase a small file, each change to the host recorded in the ledger before it is made, so that
 * a start killed in any phase is undone by the next one (ledger.ts, reapNode).
 */
import { builds } from "./builds";
import { cgroups } from "./cgroups";
import { clusterDns } from "./clusterDns";
import { NodeContext } from "./context";
import { controlPlane } from "./controlPlane";
import { folders } from "./folders";
import { link } from "./link";
import { namespaces } from "./namespaces";
import { registry } from "./registry";
import { runtime } from "./runtime";

export const PHASES: readonly { name: string; run: (ctx: NodeContext) => Promise<void> }[] = [
    { name: "folders and host checks", run: folders },
    { name: "builds", run: builds },
    { name: "cgroups", run: cgroups },
    { name: "namespaces", run: namespaces },
    { name: "link", run: link },
    { name: "registry", run: registry },
    { name: "control plane", run: controlPlane },
    { name: "runtime and agents", run: runtime },
    { name: "cluster DNS", run: clusterDns },
];
