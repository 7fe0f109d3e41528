#!/usr/bin/env bash
# Killercoda runs this in the background while the learner reads the intro (root, internet): the kit's
# `pulumi up` with the environment only (solveThrough 0: k3s, Argo CD v3.5.1, the git daemon Pod), so
# every step of the lab is the learner's; then gitops-lab on PATH for the steps' checks.
set -euo pipefail
# Where the kit comes from is the scenario author's: the git URL of this project.
KIT_REPO="https://git.example.org/gitops-lab.git"
# Node 20 and npm (the kit's pins need Node 20; Ubuntu's own nodejs package can be older)
if ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null; then
  curl -fsSL https://deb.nodesource.com/setup_20.x | bash -
  apt-get install -y nodejs
fi
git clone --depth 1 "$KIT_REPO" /opt/gitops-lab
cd /opt/gitops-lab
npm ci --no-audit --no-fund
printf 'config:\n  gitops-lab:solveThrough: 0\n' > Pulumi.killercoda.yaml
node bin/gitops-lab up --config-file Pulumi.killercoda.yaml
ln -sf /opt/gitops-lab/bin/gitops-lab /usr/local/bin/gitops-lab
touch /tmp/gitops-lab-ready
