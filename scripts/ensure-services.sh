#!/usr/bin/env bash
# Starts the local PostgreSQL and Redis the test suites use, if they are down.
set -euo pipefail
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "[services] starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
  for _ in $(seq 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
if ! redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then
  echo "[services] starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 30); do redis-cli ping >/dev/null 2>&1 && break; sleep 1; done
fi
