#!/bin/sh
# As the upstream redis image: reachable from other containers without a password.
set -eu
[ "${1:-}" = redis-server ] || exec "$@"
shift
exec redis-server --protected-mode no --bind '* -::*' --dir /data "$@"
