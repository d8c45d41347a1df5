#!/bin/sh
# `mc ready local`, the health check deploy/compose.yaml gives the S3 service: succeeds once the
# server on port 9000 answers. (Only this one use of MinIO's client is provided.)
[ "$*" = "ready local" ] || { echo "mc: only 'mc ready local' is provided here" >&2; exit 2; }
exec python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9000/', timeout=4)"
