import { startRealPlane } from "./realplane/plane";
(async () => {
  const p = await startRealPlane({ log: (l) => console.log(l) });
  console.log("kubeconfig", p.kubeconfigFile);
  require("fs").writeFileSync("/tmp/rp-kubeconfig", p.kubeconfigFile);
  await new Promise((r) => setTimeout(r, 15000));
  await p.stop();
  console.log("stopped");
})().catch((e) => { console.error("ERR", e.message); process.exit(1); });
