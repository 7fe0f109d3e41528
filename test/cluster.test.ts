/** The cluster port's own promises: not found is null, errors say what was asked, no call hangs. */
import * as assert from "assert";
import * as net from "net";
import { KubeCluster } from "../lab/ports/cluster";
import { FakeKube } from "../sim/fakeApi";

describe("KubeCluster (the cluster port over @kubernetes/client-node)", function () {
    this.timeout(30_000);
    let kube: FakeKube;
    let cluster: KubeCluster;
    before(async () => {
        kube = new FakeKube();
        cluster = new KubeCluster(kube.kubeconfig(await kube.start()));
    });
    after(async () => kube.stop());

    it("the simulated API keeps only its latest requests (a served lab runs for days)", async () => {
        const small = new FakeKube({ requestsKept: 3 });
        const c = new KubeCluster(small.kubeconfig(await small.start()));
        try {
            for (const name of ["a", "b", "c", "d", "e"]) await c.getConfigMap("default", name);
            assert.deepStrictEqual(
                small.requests.map((r) => r.path),
                ["c", "d", "e"].map((n) => `/api/v1/namespaces/default/configmaps/${n}`),
            );
        } finally {
            await small.stop();
        }
    });

    it("answers null for an object that does not exist", async () => {
        assert.strictEqual(await cluster.getApplication("nope"), null);
        assert.strictEqual(await cluster.getConfigMap("shop-prod", "nope"), null);
    });

    it("turns an API error into one line that names the request and the server's message", async () => {
        kube.put(
            {
                apiVersion: "argoproj.io/v1alpha1",
                kind: "ApplicationSet",
                metadata: { name: "shop", namespace: "argocd" },
                spec: { generators: [{ list: { elements: [{ env: "dev", revision: "main" }] } }] },
            },
            "setup",
        );
        await assert.rejects(
            cluster.jsonPatchApplicationSet("shop", [{ op: "test", path: "/spec/generators/0/list/elements/0/env", value: "prod" }]),
            /^Error: patch applicationsets\/shop: HTTP 422 .*test failed/,
        );
    });

    it("refuses a kubeconfig it cannot read, saying so", () => {
        assert.throws(() => new KubeCluster("clusters: ["), /the kubeconfig could not be read/);
    });

    it("gives up on an API server that accepts the connection and never answers", async () => {
        const silent = net.createServer(() => {
            /* accept and say nothing */
        });
        await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
        try {
            const port = (silent.address() as net.AddressInfo).port;
            const hung = new KubeCluster(kube.kubeconfig(`http://127.0.0.1:${port}`), { callTimeoutMs: 300 });
            await assert.rejects(
                hung.getApplication("shop-dev"),
                /get applications\/shop-dev: no answer from the Kubernetes API within 0\.3 s/,
            );
        } finally {
            silent.close();
        }
    });
});
