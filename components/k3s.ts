import * as fs from "fs";
import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { codeOf, messageOf } from "../lab/ports/errors";

export interface K3sArgs {
    /**
     * The k3s release to install, e.g. `v1.36.4+k3s1` (a tag of k3s-io/k3s). Ignored when
     * `kubeconfigPath` is set.
     */
    version?: string;
    /**
     * Adopt an existing cluster instead: the path of its kubeconfig. Nothing is installed, and
     * nothing is uninstalled on destroy.
     */
    kubeconfigPath?: string;
    /** How long to wait for the API server's /readyz after the install (default 300 s). */
    readyTimeoutSeconds?: number;
}

/** Where the stack notes that it installed k3s, and which version (so destroy uninstalls only what it installed). */
export const INSTALL_MARKER = "/var/lib/gitops-lab/k3s-installed-by-stack";
export const K3S_KUBECONFIG = "/etc/rancher/k3s/k3s.yaml";
export const K3S_INSTALLER_URL = "https://get.k3s.io";

const K3S_VERSION_RE = /^v\d+\.\d+\.\d+\+k3s\d+$/;

/*
 * The scripts take everything from the environment, never from their text: K3S_VERSION, and (for
 * tests of the scripts themselves, which run them in a temporary directory) GITOPS_LAB_K3S_BIN,
 * GITOPS_LAB_MARKER and GITOPS_LAB_K3S_INSTALLER, which default to the real host's paths.
 */
const PATHS = `bin=\${GITOPS_LAB_K3S_BIN:-/usr/local/bin}
marker=\${GITOPS_LAB_MARKER:-${INSTALL_MARKER}}
installer_url=\${GITOPS_LAB_K3S_INSTALLER:-${K3S_INSTALLER_URL}}
`;

/**
 * Installs k3s unless a k3s is already there; prints "installed" or "adopted" last. The marker is
 * written before the installer runs, so a run killed during the install still owns (and destroy
 * still uninstalls) what it half-installed; a failed install on a host that had no k3s is undone
 * and the marker removed. It runs again on every change of its inputs (@pulumi/command re-runs
 * create on update): a changed K3S_VERSION on a k3s this stack installed is refused.
 */
export const INSTALL_SCRIPT = `set -euo pipefail
${PATHS}
# a k3s this stack began to install and never finished (no uninstaller yet): install it again (the installer is idempotent)
if [ -x "$bin/k3s" ] && [ -f "$marker" ] && [ ! -x "$bin/k3s-uninstall.sh" ]; then
  echo "k3s was half-installed by an interrupted run: installing it again" >&2
  rm -f "$bin/k3s"
fi
if [ -x "$bin/k3s" ]; then
  if [ -f "$marker" ]; then
    have=$(head -n 1 "$marker")
    if [ -n "$have" ] && [ "$have" != "$K3S_VERSION" ]; then
      echo "k3s $have was installed by this stack, but k3sVersion is now $K3S_VERSION: the lab does not upgrade k3s in place. Set it back (pulumi config set k3sVersion $have), or reinstall: npm run lab:destroy, then npm run lab:up" >&2
      exit 1
    fi
    echo installed
  else
    echo "k3s is already on this host: adopted, and left in place on destroy" >&2
    echo adopted
  fi
  exit 0
fi
mkdir -p "$(dirname "$marker")"
printf '%s\n' "$K3S_VERSION" > "$marker.tmp" && mv "$marker.tmp" "$marker"
# Kubernetes 1.35+ kubelets refuse a cgroup v1 host unless told (KEP-5573, failCgroupV1); older ones
# do not know the flag: passed only where it is needed, and said
minor=$(printf '%s' "$K3S_VERSION" | cut -d. -f2)
if [ ! -e "\${GITOPS_LAB_CGROUP_ROOT:-/sys/fs/cgroup}/cgroup.controllers" ] && [ "$minor" -ge 35 ]; then
  echo "this host has cgroup v1: k3s $K3S_VERSION's kubelet runs with fail-cgroupv1=false (Kubernetes 1.35+ refuses cgroup v1 otherwise; cgroup v1 is deprecated)" >&2
  export INSTALL_K3S_EXEC="server --kubelet-arg=fail-cgroupv1=false"
fi
installer=$(mktemp)
if ! { curl -sfL "$installer_url" -o "$installer" && INSTALL_K3S_VERSION="$K3S_VERSION" sh "$installer" >&2; }; then
  rm -f "$installer"
  echo "the k3s installer failed (from $installer_url, version $K3S_VERSION); undoing the half install" >&2
  if [ -x "$bin/k3s-uninstall.sh" ]; then "$bin/k3s-uninstall.sh" >&2 || true; fi
  rm -f "$marker"
  exit 1
fi
rm -f "$installer"
echo installed
`;

/** Uninstalls k3s only if this stack installed it. */
export const UNINSTALL_SCRIPT = `set -euo pipefail
${PATHS}
if [ -f "$marker" ] && [ -x "$bin/k3s-uninstall.sh" ]; then
  "$bin/k3s-uninstall.sh"
  rm -f "$marker"
elif [ -f "$marker" ]; then
  echo "k3s-uninstall.sh is missing (an install that never finished, or an uninstall by hand): removing what the installer left"
  for f in k3s kubectl crictl ctr; do
    if [ "$f" = k3s ] || [ "$(readlink "$bin/$f" 2>/dev/null)" = "$bin/k3s" ] || [ "$(readlink "$bin/$f" 2>/dev/null)" = k3s ]; then rm -f "$bin/$f"; fi
  done
  rm -f "$marker"
else
  echo "k3s was not installed by this stack: left in place"
fi
`;

/** Polls the API server's /readyz with a deadline. */
export const READY_SCRIPT = `set -euo pipefail
${PATHS}
deadline=$((SECONDS + READY_TIMEOUT))
until "$bin/k3s" kubectl get --raw /readyz >/dev/null 2>&1; do
  if [ $SECONDS -ge $deadline ]; then echo "k3s API server not ready after $READY_TIMEOUT s" >&2; "$bin/k3s" kubectl get --raw '/readyz?verbose' >&2 || true; exit 1; fi
  sleep 2
done
echo ready
`;

/**
 * A k3s cluster on this host, or an adopted one: exposes the kubeconfig as a secret.
 */
export class K3s extends pulumi.ComponentResource {
    /** The kubeconfig of the cluster (secret). */
    readonly kubeconfig: pulumi.Output<string>;
    /** "installed" (this stack installed k3s), "adopted" (k3s was already there) or "external" (kubeconfigPath). */
    readonly mode: pulumi.Output<string>;

    constructor(name: string, args: K3sArgs, opts?: pulumi.ComponentResourceOptions) {
        super("gitops-lab:index:K3s", name, {}, opts);

        if (args.kubeconfigPath) {
            let text: string;
            try {
                text = fs.readFileSync(args.kubeconfigPath, "utf8");
            } catch (e) {
                throw new Error(
                    `kubeconfigPath ${args.kubeconfigPath} cannot be read (${codeOf(e) ?? messageOf(e)}); point it at the cluster's kubeconfig or unset it to install k3s`,
                );
            }
            this.kubeconfig = pulumi.secret(text);
            this.mode = pulumi.output("external");
        } else {
            const version = args.version ?? "";
            if (!K3S_VERSION_RE.test(version)) {
                throw new Error(
                    `k3sVersion "${version}" is not a k3s release tag like v1.36.4+k3s1; set it with: pulumi config set k3sVersion v1.36.4+k3s1`,
                );
            }
            const install = new command.local.Command(
                `${name}-install`,
                {
                    create: INSTALL_SCRIPT,
                    delete: UNINSTALL_SCRIPT,
                    interpreter: ["/bin/bash", "-c"],
                    environment: { K3S_VERSION: version },
                },
                // a replace must not uninstall the new cluster after installing it
                { parent: this, deleteBeforeReplace: true },
            );
            const ready = new command.local.Command(
                `${name}-ready`,
                {
                    create: READY_SCRIPT,
                    interpreter: ["/bin/bash", "-c"],
                    environment: { READY_TIMEOUT: String(args.readyTimeoutSeconds ?? 300) },
                    triggers: [install.id],
                },
                { parent: this, dependsOn: [install] },
            );
            const kubeconfig = new command.local.Command(
                `${name}-kubeconfig`,
                {
                    create: `cat ${K3S_KUBECONFIG}`,
                    interpreter: ["/bin/bash", "-c"],
                    triggers: [install.id],
                    logging: "none",
                },
                { parent: this, dependsOn: [ready], additionalSecretOutputs: ["stdout"] },
            );
            this.kubeconfig = pulumi.secret(kubeconfig.stdout);
            this.mode = install.stdout.apply((s) => (s ?? "").trim().split("\n").pop() ?? "");
        }
        this.registerOutputs({ kubeconfig: this.kubeconfig, mode: this.mode });
    }
}
