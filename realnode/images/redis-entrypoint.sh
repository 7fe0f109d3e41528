#!/bin/sh
# The Redis image's entry point, as upstream's docker-entrypoint.sh treats its arguments: when the first
# one is an option (Argo CD's install passes --save "" --appendonly no ...), they are redis-server's.
set -e
case "$1" in
  -*) set -- redis-server "$@" ;;
esac
exec "$@"
