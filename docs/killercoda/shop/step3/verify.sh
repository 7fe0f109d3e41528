#!/usr/bin/env bash
# Killercoda runs this when the learner presses Check: exit 0 lets them go on, else it shows the output.
[ -e "${GITOPS_LAB_READY:-/tmp/gitops-lab-ready}" ] || { echo "the host is still being set up (setup.sh); press Check again in a minute"; exit 1; }
exec "${GITOPS_LAB:-gitops-lab}" verify --step 3 --root "${GITOPS_LAB_ROOT:-/}"
