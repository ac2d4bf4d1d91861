#!/usr/bin/env bash
# /metrics under many concurrent scrapers (issue 13, "Load"): `fabricwatch serve` on a fixture
# root, wrk with CONNECTIONS keep-alive connections for SECONDS, the daemon's RSS sampled every
# 5 s. Prints requests/s, latency percentiles, errors of any kind and RSS over time (it should
# stay flat), then the command that reproduces it.
#
#   [WARMUP=20] bench/http_load.sh [BUILD_DIR] [SECONDS] [CONNECTIONS] [FIXTURE] [plain|tls]
#   e.g. bench/http_load.sh build 60 200 p5_efa
#
# tls: the same over HTTPS with basic auth (a throw-away CA and a cost-10 bcrypt hash; wrk
# sends the credentials on every request, so after the first bcrypt check they come from the
# cache). wrk's connections all come from 127.0.0.1, so the per-address cap is raised to the
# total cap: 200 scrapers from one address is the bench, not a deployment.
set -euo pipefail
BUILD=${1:-build}
SECS=${2:-60}
CONNS=${3:-200}
FIXTURE=${4:-p5_efa}
MODE=${5:-plain}
SRC=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$SRC/tests/fixtures/$FIXTURE
PORT=29936
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)"; exit 1; }
tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

cat > "$tmp/fabricwatch.toml" <<EOF
[web]
max_connections = $((CONNS + 56))
max_connections_per_address = $((CONNS + 56))
EOF
args=(serve --config.file="$tmp/fabricwatch.toml" --path.rootfs="$ROOT"
      --web.listen-address=127.0.0.1:$PORT --log.level=warn)
scheme=http
wrk_args=()
curl_args=()
if [ "$MODE" = tls ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -keyout "$tmp/tls.key" -out "$tmp/tls.crt" -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost 2>/dev/null
  hash=$(python3 -c 'import crypt; print(crypt.crypt("bench", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))' 2>/dev/null)
  printf 'tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  bench: %s\n' \
    "$hash" > "$tmp/web.yml"
  args+=(--web.config.file="$tmp/web.yml")
  scheme=https
  wrk_args=(-H "Authorization: Basic $(printf bench:bench | base64)")
  curl_args=(-k -u bench:bench)
fi
URL=$scheme://localhost:$PORT/metrics

"$BUILD/fabricwatch" "${args[@]}" 2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 1 100); do
  curl -s -o /dev/null "${curl_args[@]}" -w '%{http_code}' "$scheme://localhost:$PORT/readyz" \
    2>/dev/null | grep -q 200 && break
  sleep 0.1
done
bytes=$(curl -s "${curl_args[@]}" "$URL" | wc -c)

# Warm-up, not measured: the allocator's arenas and the first TLS sessions settle (RSS rises
# for about a minute at 200 connections, then stays flat).
WARMUP=${WARMUP:-20}
if [ "$WARMUP" -gt 0 ]; then
  wrk -t2 -c"$CONNS" -d"${WARMUP}s" --timeout 10s "${wrk_args[@]}" "$URL" >/dev/null
  # Its requests still queued for the handlers hold their connections; let them drain, or the
  # measured run starts against a full connection table (refusals then are real, but they
  # measure the switch between two wrk runs, not the load).
  for _ in $(seq 1 300); do
    [ "$(find "/proc/$pid/fd" -lname 'socket:*' 2>/dev/null | wc -l)" -le 3 ] && break
    sleep 0.1
  done
fi

rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
(
  while kill -0 "$pid" 2>/dev/null; do
    echo "$(date +%s) $(rss)"
    sleep 5
  done
) > "$tmp/rss.txt" &
sampler=$!
wrk -t2 -c"$CONNS" -d"${SECS}s" --timeout 10s --latency "${wrk_args[@]}" "$URL" > "$tmp/wrk.txt"
kill "$sampler" 2>/dev/null || true
echo "$(date +%s) $(rss)" >> "$tmp/rss.txt"
dropped=$(curl -s "${curl_args[@]}" "$URL" | awk '/^fabricwatch_http_dropped_total/ && $2 > 0 {
  sub(/^fabricwatch_http_dropped_total/, ""); printf "%s%s", (n++ ? " " : ""), $0 } END { if (!n) print "none" }')
codes=$(curl -s "${curl_args[@]}" "$URL" | grep '^fabricwatch_http_requests_total{.*route="/metrics"' | sed 's/^fabricwatch_http_requests_total//' | paste -sd' ' -)

req=$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.txt")
total=$(awk '/requests in/ {print $1}' "$tmp/wrk.txt")
p50=$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")
p90=$(awk '$1 == "90%" {print $2}' "$tmp/wrk.txt")
p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")
non2xx=$(awk '/Non-2xx/ {print $NF}' "$tmp/wrk.txt")
sockerr=$(grep 'Socket errors' "$tmp/wrk.txt" || echo "Socket errors: none")
echo "$MODE /metrics ($bytes bytes), $CONNS connections, ${SECS} s after ${WARMUP} s of warm-up, fixture $FIXTURE:"
echo "  $total requests, $req requests/s; latency p50 $p50, p90 $p90, p99 $p99"
echo "  non-2xx responses: ${non2xx:-0}; ${sockerr## }; server drops: $dropped"
echo "  served: $codes"
echo "  RSS (KiB) every 5 s: $(awk '{print $2}' "$tmp/rss.txt" | paste -sd' ' -)"
echo "reproduce: WARMUP=$WARMUP bench/http_load.sh $BUILD $SECS $CONNS $FIXTURE $MODE"
