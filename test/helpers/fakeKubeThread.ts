/**
 * A simulated Kubernetes API in a worker thread, for code that reads the cluster synchronously
 * (program/foundInCluster.ts runs kubectl with execFileSync while the program runs): an API served by
 * this thread could not answer while it is blocked. Objects are put before it starts serving.
 */
import * as path from "path";
import { Worker } from "worker_threads";

export interface FakeKubeThread {
    kubeconfig: string;
    stop(): Promise<void>;
}

const BODY = `
const { parentPort, workerData } = require("worker_threads");
require(workerData.register);
const { FakeKube } = require(workerData.fakeApi);
const kube = new FakeKube();
for (const o of workerData.objects) kube.put(o, "setup");
kube.start().then((url) => parentPort.postMessage(kube.kubeconfig(url)));
parentPort.on("message", (m) => m === "stop" && kube.stop().then(() => process.exit(0)));
`;

export function startFakeKubeThread(objects: any[]): Promise<FakeKubeThread> {
    const project = path.resolve(__dirname, "..", "..");
    const worker = new Worker(BODY, {
        eval: true,
        workerData: { objects, register: path.join(project, "loader", "register.js"), fakeApi: path.join(project, "sim", "fakeApi.ts") },
    });
    return new Promise((resolve, reject) => {
        worker.once("error", reject);
        worker.once("message", (kubeconfig: string) =>
            resolve({
                kubeconfig,
                stop: () =>
                    new Promise<void>((r) => {
                        worker.once("exit", () => r());
                        worker.postMessage("stop");
                    }),
            }),
        );
    });
}
