#!/usr/bin/env bash
# Builds the Sanitas image and runs the scaled-out product as containers on this machine:
# PostgreSQL, Redis and an S3 server (one test-services image), `sanitas migrate` once, the API
# and two Celery workers and `sanitas icap`; then a smoke test through the API
# (scripts/container_smoke.py) that also kills a worker container mid-batch, and a RESPMOD of a
# macro document through ICAP with Debian's c-icap-client (scripts/container_icap.py). Tears
# everything down, also on failure.
#
# No registry is needed: the base image is made from Debian's packages with debootstrap
# (docs/deploying.md explains the podman settings in deploy/container/containers.conf).
#
# Usage: scripts/container-test.sh [--compose | --kube] [--keep]
#   (no mode)  the containers started one by one with podman run, on the host's network
#   --compose  deploy/compose.yaml itself with podman-compose (scripts/container-compose-test.sh)
#   --kube     deploy/kubernetes/ with `podman kube play` (scripts/container-kube-test.sh)
#   --keep     leaves the containers running
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KEEP=0 MODE=run
for arg in "$@"; do
  case $arg in
    --keep) KEEP=1 ;;
    --compose) MODE=compose ;;
    --kube) MODE=kube ;;
    *) echo "usage: $0 [--compose | --kube] [--keep]" >&2; exit 2 ;;
  esac
done
export CONTAINERS_CONF="$ROOT/deploy/container/containers.conf"
say() { echo "[container-test] $*"; }

# --- podman and friends, from Debian ---------------------------------------------------------
# podman-compose and CNI's dnsname plugin (containers find each other by name on a compose or
# kube network) for --compose and --kube; catatonit for the pods' infra containers (--kube).
need=()
for pkg in podman runc debootstrap uidmap fuse-overlayfs podman-compose \
           golang-github-containernetworking-plugin-dnsname catatonit; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  say "apt packages: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
scripts/install.sh --with-test-tools  # the host venv runs the smoke test's client

PODMAN=(podman --runtime runc)
BUILD=(podman build --isolation chroot --network host --format docker)  # docker: keeps HEALTHCHECK
# Downloads during the build trust this host's CA bundle (TLS-inspecting proxies); see the
# Containerfile's header. Nothing of it stays in the image.
[ -f /etc/ssl/certs/ca-certificates.crt ] &&
  BUILD+=(-v /etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro)

# --- the base image (Debian 12 from Debian's mirror) -----------------------------------------
if ! podman image exists localhost/debian-base:bookworm; then
  say "base image from Debian packages (debootstrap, about a minute)"
  rootfs=$(mktemp -d /var/tmp/sanitas-rootfs.XXXXXX)
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >/dev/null
  cat > "$rootfs/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  tar -C "$rootfs" -c . | podman import -q - localhost/debian-base:bookworm >/dev/null
  rm -rf "$rootfs"
  trap - EXIT
fi

# --- the images ------------------------------------------------------------------------------
say "building localhost/sanitas:test"
quiet() { "$@" > /dev/null 2> >(grep -v '^debconf: delaying' >&2); }  # apt's one harmless note
quiet "${BUILD[@]}" -q -f Containerfile -t localhost/sanitas:test .
moto=$(awk '/^name = "moto"$/ {getline; print $3}' backend/uv.lock | tr -d '"')
say "building localhost/sanitas-testdeps:test (PostgreSQL, Redis, moto $moto)"
quiet "${BUILD[@]}" -q -f deploy/container/Containerfile.testdeps --build-arg "MOTO_VERSION=$moto" \
  -t localhost/sanitas-testdeps:test deploy/container

[ "$MODE" = compose ] && { . scripts/container-compose-test.sh; exit 0; }
[ "$MODE" = kube ] && { . scripts/container-kube-test.sh; exit 0; }

# --- the services, each its own container on the host's loopback ----------------------------
PG_PORT=55432 REDIS_PORT=56379 S3_PORT=59000 API_PORT=58000 ICAP_PORT=51344
NAMES=(sanitas-ct-pg sanitas-ct-redis sanitas-ct-s3 sanitas-ct-api sanitas-ct-worker1
       sanitas-ct-worker2 sanitas-ct-icap)
cleanup() {
  [ "$KEEP" = 1 ] && { say "left running: ${NAMES[*]}"; return; }
  "${PODMAN[@]}" rm -f -v -t 5 "${NAMES[@]}" >/dev/null 2>&1 || true  # -v: anonymous volumes
}
trap cleanup EXIT
cleanup
# --no-healthcheck: podman schedules the image's check with systemd timers, and there is no
# systemd here; the script polls /health itself.
RUN=("${PODMAN[@]}" run -d --network host --no-healthcheck)
"${RUN[@]}" --name sanitas-ct-pg localhost/sanitas-testdeps:test \
  su postgres -c "/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main \
    -c config_file=/etc/postgresql/15/main/postgresql.conf -c port=$PG_PORT \
    -c listen_addresses=127.0.0.1 -c unix_socket_directories=/tmp" >/dev/null
"${RUN[@]}" --name sanitas-ct-redis localhost/sanitas-testdeps:test \
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" >/dev/null
"${RUN[@]}" --name sanitas-ct-s3 localhost/sanitas-testdeps:test \
  /opt/moto/bin/moto_server -H 127.0.0.1 -p "$S3_PORT" >/dev/null
wait_for() {  # wait_for NAME COMMAND...
  local name=$1; shift
  for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  say "$name did not come up"; "${PODMAN[@]}" logs "$name" | tail -20; return 1
}
wait_for sanitas-ct-pg "${PODMAN[@]}" exec sanitas-ct-pg \
  psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "select 1"
"${PODMAN[@]}" exec sanitas-ct-pg psql -q -h 127.0.0.1 -p "$PG_PORT" -U postgres \
  -c "create database sanitas" >/dev/null
wait_for sanitas-ct-s3 curl -sf "http://127.0.0.1:$S3_PORT/moto-api/" 2>/dev/null \
  || wait_for sanitas-ct-s3 python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$S3_PORT/')"

SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '/+=' | head -c 48)
ENV=(-e SANITAS_ENV=production -e "SANITAS_SECRET_KEY=$SECRET"
     -e "SANITAS_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/sanitas"
     -e SANITAS_EXECUTOR=celery -e "SANITAS_BROKER_URL=redis://127.0.0.1:$REDIS_PORT/0"
     -e SANITAS_STORAGE=s3 -e "SANITAS_S3_ENDPOINT_URL=http://127.0.0.1:$S3_PORT"
     -e SANITAS_S3_BUCKET=sanitas -e SANITAS_S3_CREATE_BUCKET=1
     -e SANITAS_S3_ACCESS_KEY_ID=test -e SANITAS_S3_SECRET_ACCESS_KEY=test
     -e "SANITAS_PORT=$API_PORT" -e "SANITAS_PUBLIC_URL=http://127.0.0.1:$API_PORT"
     -e SANITAS_EXECUTOR_WORKERS=2 -e SANITAS_CELERY_RECOVER_INTERVAL_SECONDS=5
     -e SANITAS_JOB_HEARTBEAT_TIMEOUT_SECONDS=20 -e SANITAS_EXPIRY_SWEEP_INTERVAL_SECONDS=3)

# What the sandbox needs from the container runtime (measured; docs/deploying.md): a seccomp
# profile that also allows sethostname, and /proc without the runtime's masks (bubblewrap
# mounts a fresh proc and limits user namespaces through /proc/sys).
JOBS=(--security-opt unmask=ALL --security-opt "seccomp=$ROOT/deploy/container/seccomp.json")

say "migrate (one-shot container)"
"${PODMAN[@]}" run --rm --network host --no-healthcheck "${ENV[@]}" localhost/sanitas:test \
  migrate >/dev/null
say "API and two workers"
"${RUN[@]}" --name sanitas-ct-api "${ENV[@]}" localhost/sanitas:test serve >/dev/null
# One worker runs the scheduler (expiry sweep, recovery of stale jobs), the other only jobs.
"${RUN[@]}" --name sanitas-ct-worker1 "${JOBS[@]}" "${ENV[@]}" localhost/sanitas:test worker >/dev/null
"${RUN[@]}" --name sanitas-ct-worker2 "${JOBS[@]}" "${ENV[@]}" localhost/sanitas:test worker \
  --no-beat >/dev/null
# ICAP: the same image, the sandbox's runtime options, the same database (policy look-ups).
"${RUN[@]}" --name sanitas-ct-icap "${JOBS[@]}" "${ENV[@]}" localhost/sanitas:test icap \
  --host 127.0.0.1 --port "$ICAP_PORT" --no-migrate >/dev/null
wait_for sanitas-ct-api curl -sf "http://127.0.0.1:$API_PORT/health"
wait_for sanitas-ct-icap c-icap-client -i 127.0.0.1 -p "$ICAP_PORT" -s sanitize

say "smoke test through the API"
"${PODMAN[@]}" exec sanitas-ct-api sanitas create-admin ct-admin@example.com \
  --password 'Container-test-1' >/dev/null
backend/.venv/bin/python scripts/container_smoke.py --api "http://127.0.0.1:$API_PORT" \
  --email ct-admin@example.com --password 'Container-test-1' \
  --s3 "http://127.0.0.1:$S3_PORT" --kill-worker "${PODMAN[*]} kill sanitas-ct-worker2" \
  --expire "${PODMAN[*]} exec sanitas-ct-pg psql -q -h 127.0.0.1 -p $PG_PORT -U postgres -d sanitas
            -c \"update files set expires_at = now() - interval '1 minute'\""
say "ICAP from the host with c-icap-client"
backend/.venv/bin/python scripts/container_icap.py --port "$ICAP_PORT"
say "passed"
