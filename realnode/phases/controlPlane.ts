/** Phase: the control plane: kubeadm's certificates and kubeconfigs, etcd, kube-apiserver (until ready), the controller manager and the scheduler. */
import * as fs from "fs";
import * as path from "path";
import { run } from "../../lab/ports/exec";
import { pollUntil } from "../../lab/ports/wait";
import { binPath } from "../../realplane/build";
import { REAL_NODE, REAL_PLANE } from "../../realplane/versions";
import { IMAGE_VOLUME_GATE, kubeadmConfig, NODE } from "../config";
import { NodeContext } from "./context";

export async function controlPlane(ctx: NodeContext): Promise<void> {
    const p = ctx.p;
    ctx.log(`starting Kubernetes ${REAL_PLANE.kubernetes}: etcd, kube-apiserver, kube-controller-manager, kube-scheduler ...`);
    fs.writeFileSync(path.join(p.config, "kubeadm.yaml"), kubeadmConfig(p));
    const kubeadm = (args: string[]) => run(binPath("kubeadm"), args, { timeoutMs: 120_000 });
    await kubeadm(["init", "phase", "certs", "all", "--config", path.join(p.config, "kubeadm.yaml")]);
    await kubeadm([
        "init",
        "phase",
        "kubeconfig",
        "all",
        "--config",
        path.join(p.config, "kubeadm.yaml"),
        "--kubeconfig-dir",
        p.kubeconfigs,
    ]);
    const proxyConf = (
        await kubeadm(["kubeconfig", "user", "--config", path.join(p.config, "kubeadm.yaml"), "--client-name", "system:kube-proxy"])
    ).stdout;
    fs.writeFileSync(path.join(p.kubeconfigs, "kube-proxy.conf"), proxyConf, { mode: 0o600 });
    const pki = (f: string) => path.join(p.pki, f);
    const etcd = ctx.daemon("etcd", binPath("etcd"), [
        "--name",
        NODE.name,
        "--data-dir",
        path.join(p.dir, "etcd"),
        "--listen-client-urls",
        "http://127.0.0.1:2379",
        "--advertise-client-urls",
        "http://127.0.0.1:2379",
        "--listen-peer-urls",
        "http://127.0.0.1:2380",
        "--initial-advertise-peer-urls",
        "http://127.0.0.1:2380",
        "--initial-cluster",
        `${NODE.name}=http://127.0.0.1:2380`,
        "--listen-metrics-urls",
        "http://127.0.0.1:2381",
        "--log-level",
        "warn",
    ]);
    const apiserver = ctx.daemon("kube-apiserver", binPath("kube-apiserver"), [
        `--advertise-address=${NODE.nodeIp}`,
        "--bind-address=0.0.0.0",
        `--secure-port=${NODE.apiPort}`,
        "--etcd-servers=http://127.0.0.1:2379",
        `--service-cluster-ip-range=${NODE.serviceCidr}`,
        `--client-ca-file=${pki("ca.crt")}`,
        `--tls-cert-file=${pki("apiserver.crt")}`,
        `--tls-private-key-file=${pki("apiserver.key")}`,
        `--kubelet-client-certificate=${pki("apiserver-kubelet-client.crt")}`,
        `--kubelet-client-key=${pki("apiserver-kubelet-client.key")}`,
        "--kubelet-preferred-address-types=InternalIP",
        `--service-account-issuer=https://kubernetes.default.svc.${NODE.clusterDomain}`,
        `--service-account-key-file=${pki("sa.pub")}`,
        `--service-account-signing-key-file=${pki("sa.key")}`,
        `--proxy-client-cert-file=${pki("front-proxy-client.crt")}`,
        `--proxy-client-key-file=${pki("front-proxy-client.key")}`,
        `--requestheader-client-ca-file=${pki("front-proxy-ca.crt")}`,
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-username-headers=X-Remote-User",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",
        "--allow-privileged=true",
        "--profiling=false",
        ...(IMAGE_VOLUME_GATE ? ["--feature-gates=ImageVolume=true"] : []),
    ]);
    ctx.kubeconfigFile = path.join(ctx.root, "kubeconfig");
    fs.copyFileSync(path.join(p.kubeconfigs, "super-admin.conf"), ctx.kubeconfigFile);
    fs.chmodSync(ctx.kubeconfigFile, 0o600);
    await pollUntil(
        async () => {
            ctx.alive("etcd", etcd);
            ctx.alive("kube-apiserver", apiserver);
            return (
                (await ctx
                    .kubectl(["get", "--raw", "/readyz"], 10_000)
                    .then(() => true)
                    .catch(() => false)) || undefined
            );
        },
        {
            timeoutMs: 120_000,
            intervalMs: 500,
            describe: () => `the node's API server was not ready within 120 s; its log: ${ctx.logOf("kube-apiserver")}`,
        },
    );
    const kc = (f: string) => path.join(p.kubeconfigs, f);
    ctx.daemon("kube-controller-manager", binPath("kube-controller-manager"), [
        `--kubeconfig=${kc("controller-manager.conf")}`,
        `--authentication-kubeconfig=${kc("controller-manager.conf")}`,
        `--authorization-kubeconfig=${kc("controller-manager.conf")}`,
        "--bind-address=127.0.0.1",
        `--cluster-signing-cert-file=${pki("ca.crt")}`,
        `--cluster-signing-key-file=${pki("ca.key")}`,
        `--root-ca-file=${pki("ca.crt")}`,
        `--service-account-private-key-file=${pki("sa.key")}`,
        "--use-service-account-credentials=true",
        "--controllers=*,bootstrapsigner,tokencleaner",
        "--allocate-node-cidrs=true",
        `--cluster-cidr=${NODE.clusterCidr}`,
        "--node-cidr-mask-size=24",
        `--service-cluster-ip-range=${NODE.serviceCidr}`,
        "--leader-elect=false",
        "--profiling=false",
    ]);
    ctx.daemon("kube-scheduler", binPath("kube-scheduler"), [
        `--kubeconfig=${kc("scheduler.conf")}`,
        `--authentication-kubeconfig=${kc("scheduler.conf")}`,
        `--authorization-kubeconfig=${kc("scheduler.conf")}`,
        "--bind-address=127.0.0.1",
        "--leader-elect=false",
        "--profiling=false",
    ]);
    ctx.log(`Kubernetes API up after ${ctx.since()}; starting containerd ${REAL_NODE.containerd}, the kubelet and kube-proxy ...`);
}
