#!/bin/sh
# The holder of the real node's namespaces (realnode/node.ts), run in a new mount and network namespace:
# the node's own /run (containerd's sockets, the shims', the Pods' network namespaces), /var/lib (CNI's
# state) and /var/log (the Pods' logs, in the node's log folder, $1), its loopback up, and the Pods'
# bridge (cni0, which the CNI bridge plugin takes as it finds it) with a route to the Service range ($2),
# so the node's own processes reach Services through kube-proxy's rules (a packet nothing translated
# ends on the bridge, never on the link to the host); then it holds
# the namespaces until it is killed. Every mount here, and every one the node's daemons make, lives and
# dies with this namespace: none reaches the host's.
set -eu
logs="$1"
services="$2"
mount -t tmpfs -o mode=0755 gitops-lab-node-run /run
mount -t tmpfs -o mode=0755 gitops-lab-node-var-lib /var/lib
mount --bind "$logs" /var/log
ip link set lo up
ip link add cni0 type bridge
ip link set cni0 up
ip route add "$services" dev cni0
echo ready
exec sleep infinity
