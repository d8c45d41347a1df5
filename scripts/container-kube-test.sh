# `scripts/container-test.sh --kube` (sourced by it once the images are built): plays
# deploy/kubernetes/ (with the optional icap.yaml) with `podman kube play`, rendered by
# scripts/kube_render.py --podman, which adapts it to what podman 4.3 can run (its header lists
# each change). PostgreSQL, Redis and the S3 server run as pods named `postgres`, `redis` and
# `minio` on the same network, so the ConfigMap's and Secret's host names resolve unchanged.
# Then: migrate (the Job's pod), the API answers /health, the same smoke test through the API
# (a worker cleans files; one is killed mid-batch), ICAP by c-icap-client, `podman kube down`.
# Not exercised (podman has no such objects): Namespace, Services, Ingress, HPA, PDBs, KEDA.
# Uses from container-test.sh: ROOT, KEEP, PODMAN, BUILD, say, quiet.

say "kube: stand-ins for the postgres, redis and MinIO images"
for target in postgres redis s3; do
  quiet "${BUILD[@]}" -q --target "$target" -f deploy/container/Containerfile.compose-services \
    -t "localhost/sanitas-compose-$target:test" deploy/container
done

# `hostUsers: false` (the worker and ICAP pods) is podman's --userns=auto, which takes its uid
# ranges from the `containers` user's entries in /etc/subuid and /etc/subgid.
for file in /etc/subuid /etc/subgid; do
  grep -q '^containers:' "$file" 2>/dev/null || echo "containers:2147483647:2147483648" >> "$file"
done

NET=sanitas-kube
WORK=$(mktemp -d /tmp/sanitas-kube.XXXXXX)
# The nodes' seccomp profile directory: profiles/sanitas.json, as workers.yaml expects.
mkdir -p "$WORK/seccomp/profiles"
cp deploy/container/seccomp.json "$WORK/seccomp/profiles/sanitas.json"
PLAY=("${PODMAN[@]}" kube play --network "$NET" --seccomp-profile-root "$WORK/seccomp/profiles")
PG_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
PODS=(postgres redis minio sanitas-migrate sanitas-api-pod-0 sanitas-scheduler-pod-0
      sanitas-worker-pod-0 sanitas-icap-pod-0)
kube_down() {
  # kube down leaves the volumes: the emptyDirs (named after their workloads by the renderer)
  # and the anonymous ones podman made for the image's VOLUME (/var/lib/sanitas); noted first.
  local pod anonymous=""
  for pod in "${PODS[@]}"; do
    anonymous+=" $("${PODMAN[@]}" ps -aq --filter "pod=$pod" 2>/dev/null |
      xargs -r "${PODMAN[@]}" inspect -f '{{range .Mounts}}{{.Name}} {{end}}' 2>/dev/null)"
  done
  for file in app.yaml migrate.yaml services.yaml; do
    [ ! -f "$WORK/$file" ] || "${PODMAN[@]}" kube down "$WORK/$file" >/dev/null 2>&1 || true
  done
  for pod in "${PODS[@]}"; do  # what a run with --keep, or a half-played file, left
    "${PODMAN[@]}" pod rm -f "$pod" >/dev/null 2>&1 || true
  done
  { echo "$anonymous" | tr ' ' '\n' | grep -E '^[0-9a-f]{64}$'
    "${PODMAN[@]}" volume ls -q | grep -E '^sanitas-(migrate|api|scheduler|worker|icap)-(data|tmp)$'
  } | sort -u | xargs -r "${PODMAN[@]}" volume rm -f >/dev/null 2>&1 || true
  "${PODMAN[@]}" network rm -f "$NET" >/dev/null 2>&1 || true
}
kube_cleanup() {
  if [ "$KEEP" = 1 ]; then say "left running: pods of $WORK/*.yaml"; return; fi
  kube_down
  rm -rf "$WORK"
}
trap kube_cleanup EXIT
kube_down
"${PODMAN[@]}" network create "$NET" >/dev/null
wait_until() {  # wait_until WHAT SECONDS COMMAND...
  local what=$1 seconds=$2; shift 2
  for _ in $(seq 1 "$seconds"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  say "$what: not after ${seconds}s"
  "${PODMAN[@]}" ps -a --format '{{.Names}} {{.Status}}'
  return 1
}
pod_ip() {  # pod_ip POD: its address on the network (the infra container holds it)
  "${PODMAN[@]}" inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' \
    "$("${PODMAN[@]}" pod inspect -f '{{.InfraContainerID}}' "$1")"
}

started=$SECONDS
say "kube: test services as pods postgres, redis, minio"
cat > "$WORK/services.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: postgres}
spec:
  containers:
    - name: postgres
      image: localhost/sanitas-compose-postgres:test
      env:
        - {name: POSTGRES_USER, value: sanitas}
        - {name: POSTGRES_PASSWORD, value: "$PG_PASSWORD"}
        - {name: POSTGRES_DB, value: sanitas}
---
apiVersion: v1
kind: Pod
metadata: {name: redis}
spec:
  containers:
    - {name: redis, image: "localhost/sanitas-compose-redis:test", args: ["redis-server"]}
---
apiVersion: v1
kind: Pod
metadata: {name: minio}
spec:
  containers:
    - {name: minio, image: "localhost/sanitas-compose-s3:test", args: ["server", "/data"]}
EOF
"${PLAY[@]}" "$WORK/services.yaml" >/dev/null
wait_until "postgres ready" 60 "${PODMAN[@]}" exec postgres-postgres pg_isready -U sanitas -d sanitas
wait_until "minio ready" 60 "${PODMAN[@]}" exec minio-minio mc ready local

# The Secret, in secret.example.yaml's shape, with this test's values.
cat > "$WORK/secret.yaml" <<EOF
apiVersion: v1
kind: Secret
metadata: {name: sanitas}
type: Opaque
stringData:
  SANITAS_SECRET_KEY: "$(head -c 48 /dev/urandom | base64 | tr -d '/+=' | head -c 48)"
  SANITAS_DATABASE_URL: "postgresql+psycopg://sanitas:$PG_PASSWORD@postgres:5432/sanitas"
  SANITAS_S3_ACCESS_KEY_ID: test
  SANITAS_S3_SECRET_ACCESS_KEY: test
  SANITAS_METRICS_TOKEN: "$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
  SANITAS_SMTP_PASSWORD: ""
EOF
# The ConfigMap as written, except: a public URL for this test, the bucket created by the app
# (MinIO's would be made by its operator), and short intervals so that the smoke test sees the
# expiry sweep and the recovery of a killed worker's jobs within a minute.
render() {
  backend/.venv/bin/python scripts/kube_render.py --image localhost/sanitas:test \
    --with icap.yaml --secret "$WORK/secret.yaml" --podman \
    --set SANITAS_PUBLIC_URL=http://sanitas.test --set SANITAS_S3_CREATE_BUCKET=1 \
    --set SANITAS_EXPIRY_SWEEP_INTERVAL_SECONDS=3 --set SANITAS_CELERY_RECOVER_INTERVAL_SECONDS=5 \
    --set SANITAS_JOB_HEARTBEAT_TIMEOUT_SECONDS=20 "$@"
}
render --kinds ConfigMap,Pod > "$WORK/migrate.yaml" 2>/dev/null
render --kinds ConfigMap,Deployment > "$WORK/app.yaml" 2>"$WORK/skipped.txt"
say "kube: not played (podman has no such objects): $(sed 's/^skipped //' "$WORK/skipped.txt" |
  grep -v '^Pod/' | tr '\n' ' ')"

# What kube play cannot show (procMount is ignored, see kube_render.py): the workers' own
# security context, as podman flags, lets the sandbox work: a user namespace (hostUsers: false),
# exactly their capabilities, the seccomp profile, an unmasked /proc. `sanitas doctor` checks.
caps=$(backend/.venv/bin/python -c "
import yaml
(worker,) = [d for d in yaml.safe_load_all(open('deploy/kubernetes/workers.yaml'))
             if d['kind'] == 'Deployment' and d['metadata']['name'] == 'sanitas-worker']
pod = worker['spec']['template']['spec']
assert pod['hostUsers'] is False and pod['securityContext']['seccompProfile']['type'] == 'Localhost'
context = pod['containers'][0]['securityContext']
assert context['procMount'] == 'Unmasked' and context['capabilities']['drop'] == ['ALL']
print(','.join(context['capabilities']['add']))")
"${PODMAN[@]}" run --rm --no-healthcheck --network none --userns=auto --cap-drop ALL \
  --cap-add "$caps" --security-opt unmask=ALL \
  --security-opt "seccomp=$WORK/seccomp/profiles/sanitas.json" localhost/sanitas:test \
  doctor --json > "$WORK/doctor.json" 2>/dev/null || true
backend/.venv/bin/python - "$WORK/doctor.json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
checks = json.loads(text[text.index("{"):])["checks"]
(sandbox,) = [c for c in checks if c["name"] == "sandbox"]
print(("ok    " if sandbox["status"] == "ok" else "FAIL  ")
      + f"the workers' security context as flags: sandbox {sandbox['status']} ({sandbox['detail']})")
sys.exit(sandbox["status"] != "ok")
EOF

say "kube: the migrate Job's pod"
"${PLAY[@]}" "$WORK/migrate.yaml" >/dev/null
wait_until "migrate finished" 120 sh -c \
  "${PODMAN[*]} inspect -f '{{.State.Status}}' sanitas-migrate-migrate | grep -qx exited"
code=$("${PODMAN[@]}" inspect -f '{{.State.ExitCode}}' sanitas-migrate-migrate)
[ "$code" = 0 ] || { "${PODMAN[@]}" logs sanitas-migrate-migrate | tail -20; exit 1; }

say "kube: API, scheduler, worker and ICAP Deployments"
"${PLAY[@]}" "$WORK/app.yaml" >/dev/null 2> >(grep -v 'systemd' >&2)
API=$(pod_ip sanitas-api-pod-0) ICAP=$(pod_ip sanitas-icap-pod-0) S3=$(pod_ip minio)
wait_until "API /health at $API:8000" 120 curl -sf "http://$API:8000/health"
wait_until "ICAP at $ICAP:1344" 120 c-icap-client -i "$ICAP" -p 1344 -s sanitize
for pod in sanitas-scheduler-pod-0-worker sanitas-worker-pod-0-worker; do
  state=$("${PODMAN[@]}" inspect -f '{{.State.Status}} restarts={{.RestartCount}}' "$pod")
  [ "$state" = "running restarts=0" ] ||
    { say "$pod: $state"; "${PODMAN[@]}" logs "$pod" 2>&1 | tail -20; exit 1; }
done
say "kube: up after $((SECONDS - started))s"

say "kube: smoke test through the API"
"${PODMAN[@]}" exec sanitas-api-pod-0-api sanitas create-admin ct-admin@example.com \
  --password 'Container-test-1' >/dev/null
backend/.venv/bin/python scripts/container_smoke.py --api "http://$API:8000" \
  --email ct-admin@example.com --password 'Container-test-1' --s3 "http://$S3:9000" \
  --kill-worker "${PODMAN[*]} kill sanitas-worker-pod-0-worker" \
  --expire "${PODMAN[*]} exec postgres-postgres psql -q -U sanitas -d sanitas
            -c \"update files set expires_at = now() - interval '1 minute'\""

say "kube: ICAP with c-icap-client"
backend/.venv/bin/python scripts/container_icap.py --host "$ICAP" --port 1344

trap - EXIT
if [ "$KEEP" = 1 ]; then
  say "kube: passed in $((SECONDS - started))s; left running (podman kube down $WORK/*.yaml)"
  return 0
fi
say "kube: podman kube down"
kube_down
# Only this test's pods count (others may run podman pods on the same machine).
left=$("${PODMAN[@]}" pod ls --format '{{.Name}}' | grep -cE '^(sanitas-.*|postgres|redis|minio)$' || true)
volumes=$("${PODMAN[@]}" volume ls -q | grep -cE '^sanitas-(migrate|api|scheduler|worker|icap)-' || true)
[ "$left" = 0 ] && [ "$volumes" = 0 ] || { say "left behind: $left pods, $volumes volumes"; exit 1; }
rm -rf "$WORK"
say "kube: passed in $((SECONDS - started))s"
