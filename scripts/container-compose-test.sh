# `scripts/container-test.sh --compose` (sourced by it once the images are built): runs
# deploy/compose.yaml itself with Debian's podman-compose, on the compose network (bridge, with
# CNI's dnsname plugin so services find each other by name), with local stand-ins for the
# upstream postgres, redis and MinIO images (deploy/container/Containerfile.compose-services).
# Then: wait for every health check, the same smoke test through the API, a second job worker
# (--scale), ICAP from the host with c-icap-client, and `down -v`.
# Uses from container-test.sh: ROOT, KEEP, PODMAN, BUILD, say, quiet.

say "compose: stand-ins for the postgres, redis and MinIO images"
for target in postgres redis s3; do
  quiet "${BUILD[@]}" -q --target "$target" -f deploy/container/Containerfile.compose-services \
    -t "localhost/sanitas-compose-$target:test" deploy/container
done

# What deploy/.env would hold; podman-compose 1.0 has no --env-file (it reads deploy/.env, which
# the process environment overrides), so the test passes it all by environment.
export SANITAS_IMAGE=localhost/sanitas:test \
  POSTGRES_IMAGE=localhost/sanitas-compose-postgres:test \
  REDIS_IMAGE=localhost/sanitas-compose-redis:test \
  S3_IMAGE=localhost/sanitas-compose-s3:test \
  SANITAS_SECRET_KEY="$(head -c 48 /dev/urandom | base64 | tr -d '/+=' | head -c 48)" \
  POSTGRES_PASSWORD="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')" \
  S3_ACCESS_KEY=test S3_SECRET_KEY=test \
  SANITAS_HTTP_PORT=58000 ICAP_PORT=51344 SANITAS_PUBLIC_URL=http://127.0.0.1:58000 \
  SANITAS_SMTP_HOST=
PROJECT=sanitas-ct
# From deploy/: the compose file names its seccomp profile relative to itself, and podman-compose
# hands that path to podman as it is (relative to the working directory).
compose() {
  (cd "$ROOT/deploy" && podman-compose -p "$PROJECT" -f compose.yaml -f container/compose.test.yaml "$@")
}
LOG=$(mktemp /tmp/sanitas-compose.XXXXXX.log)
compose_down() {  # after a failure: containers with their anonymous volumes, then the rest
  "${PODMAN[@]}" rm -f -v -t 5 \
    $("${PODMAN[@]}" ps -aq --filter "label=io.podman.compose.project=$PROJECT") \
    >/dev/null 2>&1 || true
  WORKER_JOBS_REPLICAS=2 compose down -v >>"$LOG" 2>&1 || true
  "${PODMAN[@]}" network rm -f "${PROJECT}_default" >/dev/null 2>&1 || true
}
compose_cleanup() {
  if [ "$KEEP" = 1 ]; then say "left running: project $PROJECT (log $LOG)"; return; fi
  compose_down
}
trap compose_cleanup EXIT
compose_down
: > "$LOG"
healthy() {  # healthy SERVICE: podman runs the compose file's own health check once
  "${PODMAN[@]}" healthcheck run "${PROJECT}_$1_1" >/dev/null 2>&1
}
wait_until() {  # wait_until WHAT SECONDS COMMAND...
  local what=$1 seconds=$2; shift 2
  for _ in $(seq 1 "$seconds"); do "$@" && return 0; sleep 1; done
  say "$what: not after ${seconds}s"; tail -40 "$LOG"
  "${PODMAN[@]}" ps -a --filter "label=io.podman.compose.project=$PROJECT" \
    --format '{{.Names}} {{.Status}}'
  return 1
}

started=$SECONDS
say "compose: up -d"
compose up -d >>"$LOG" 2>&1 || { tail -40 "$LOG"; exit 1; }
for service in postgres redis s3; do
  wait_until "$service healthy" 60 healthy "$service"
done
# podman-compose 1.0 starts services in dependency order but does not wait for the conditions
# (service_healthy, service_completed_successfully), so the one-shot migration may have run
# before PostgreSQL accepted connections: run it again now when it did not succeed.
state=$("${PODMAN[@]}" inspect -f '{{.State.Status}} {{.State.ExitCode}}' "${PROJECT}_migrate_1")
if [ "$state" != "exited 0" ]; then
  say "compose: migrate had ended '$state' (PostgreSQL not ready yet); running it again"
  "${PODMAN[@]}" start -a "${PROJECT}_migrate_1" >>"$LOG" 2>&1
fi
wait_until "api healthy" 120 healthy api
wait_until "API on the published port" 30 curl -sf -o /dev/null http://127.0.0.1:58000/health
wait_until "icap healthy" 60 healthy icap
say "compose: healthy after $((SECONDS - started))s"

# podman-compose 1.0 ignores --scale; it reads deploy.replicas (WORKER_JOBS_REPLICAS), and a
# second `up -d` keeps the running containers and adds what is missing.
say "compose: a second job worker (WORKER_JOBS_REPLICAS=2 up -d)"
WORKER_JOBS_REPLICAS=2 compose up -d >>"$LOG" 2>&1
wait_until "second job worker running" 30 sh -c \
  "${PODMAN[*]} ps --format '{{.Names}}' | grep -qx ${PROJECT}_worker-jobs_2"

say "compose: smoke test through the API"
"${PODMAN[@]}" exec "${PROJECT}_api_1" sanitas create-admin ct-admin@example.com \
  --password 'Container-test-1' >/dev/null
# The S3 server is not published on the host: the smoke test reaches it on the compose network.
s3_ip=$("${PODMAN[@]}" inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' \
  "${PROJECT}_s3_1")
backend/.venv/bin/python scripts/container_smoke.py --api http://127.0.0.1:58000 \
  --email ct-admin@example.com --password 'Container-test-1' --s3 "http://$s3_ip:9000" \
  --kill-worker "${PODMAN[*]} kill ${PROJECT}_worker-jobs_2" \
  --expire "${PODMAN[*]} exec ${PROJECT}_postgres_1 psql -q -U sanitas -d sanitas
            -c \"update files set expires_at = now() - interval '1 minute'\""

say "compose: ICAP from the host with c-icap-client"
backend/.venv/bin/python scripts/container_icap.py --port 51344

trap - EXIT
if [ "$KEEP" = 1 ]; then
  say "compose: passed in $((SECONDS - started))s; left running: project $PROJECT (log $LOG)"
  return 0
fi
say "compose: down -v"
# podman-compose 1.0's down -v removes the compose file's named volumes but not the anonymous
# ones podman made for the image's VOLUME (/var/lib/sanitas, empty here): noted, removed after.
anonymous=$("${PODMAN[@]}" inspect -f '{{range .Mounts}}{{.Name}} {{end}}' \
  $("${PODMAN[@]}" ps -aq --filter "label=io.podman.compose.project=$PROJECT") | tr ' ' '\n' |
  grep -E '^[0-9a-f]{64}$' | sort -u || true)
# podman-compose 1.0 counts the replicas to remove from the file too: the same variable again.
WORKER_JOBS_REPLICAS=2 compose down -v >>"$LOG" 2>&1
[ -z "$anonymous" ] || "${PODMAN[@]}" volume rm $anonymous >/dev/null
"${PODMAN[@]}" network rm "${PROJECT}_default" >/dev/null  # nor does it remove the network
left=$("${PODMAN[@]}" ps -aq --filter "label=io.podman.compose.project=$PROJECT" | wc -l)
volumes=$("${PODMAN[@]}" volume ls -q | grep -c "^${PROJECT}_" || true)
if [ "$left" != 0 ] || [ "$volumes" != 0 ]; then
  say "down -v left $left containers and $volumes named volumes"
  compose_down
  exit 1
fi
say "compose: passed in $((SECONDS - started))s (log $LOG)"
