#!/bin/sh
# The real node's dex image has no dex: the Go module proxy serves no dex version that builds (its
# tags are v2.x of a module without /v2, and its api/v2 module only at a version older than its code).
# Argo CD's argocd-dex-server looks for dex on PATH when it starts and runs it only when SSO is
# configured; the labs configure none. If it ever runs, it says so and fails.
echo "dex is not in the gitops-lab real node's image ghcr.io/dexidp/dex:v2.45.0 (no buildable dex from the Go module proxy): SSO is not available on this node" >&2
exit 1
