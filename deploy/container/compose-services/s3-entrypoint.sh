#!/bin/sh
# MinIO's `server DIR` command line, served by moto on port 9000 (any keys are accepted).
set -eu
[ "${1:-}" = server ] || exec "$@"
exec /opt/moto/bin/moto_server -H 0.0.0.0 -p 9000
