#!/usr/bin/env bash
# /metrics under many concurrent scrapers (issue 13, "Load"): `fabricwatch serve` on a fixture
# root, wrk with CONNECTIONS keep-alive connections for SECONDS, the daemon's RSS sampled every
# 5 s. Prints requests/s, latency percentiles, errors of any kind and RSS over time (it should
# stay flat), then the command that reproduces it.
#
#   [WARMUP=20] [CLOSE=1] bench/http_load.sh [BUILD_DIR] [SECONDS] [CONNECTIONS] [FIXTURE] [MODE]
#   e.g. bench/http_load.sh build 60 200 p5_efa
#
# MODE: plain (default); tls (HTTPS, a throw-away self-signed P-256 certificate); auth (basic
# auth over HTTP, a cost-10 bcrypt hash: wrk sends the credentials on every request, so after
# the first bcrypt check they come from the cache); tls-auth (both). CLOSE=1 sends
# "Connection: close", so every scrape is a new connection (and a new TLS handshake), as
# Prometheus' scrapes are when keep-alive is off or the connection was lost: with CONNECTIONS 1
# it gives the cost of one scrape in each mode. wrk's connections all come from 127.0.0.1, so
# the per-address cap is raised to the total cap: 200 scrapers from one address is the bench,
# not a deployment. The daemon's CPU time per request is printed too (utime+stime from
# /proc/PID/stat over the measured run).
set -euo pipefail
BUILD=${1:-build}
SECS=${2:-60}
CONNS=${3:-200}
FIXTURE=${4:-p5_efa}
MODE=${5:-plain}
THREADS=$((CONNS < 2 ? 1 : 2))  # wrk threads
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
case "$MODE" in plain|tls|auth|tls-auth) ;; *) echo "MODE: plain, tls, auth or tls-auth"; exit 2 ;; esac
: > "$tmp/web.yml"
if [ "$MODE" = tls ] || [ "$MODE" = tls-auth ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -keyout "$tmp/tls.key" -out "$tmp/tls.crt" -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost 2>/dev/null
  printf 'tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n' >> "$tmp/web.yml"
  scheme=https
  curl_args+=(-k)
fi
if [ "$MODE" = auth ] || [ "$MODE" = tls-auth ]; then
  hash=$(python3 -c 'import crypt; print(crypt.crypt("bench", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))' 2>/dev/null)
  printf 'basic_auth_users:\n  bench: %s\n' "$hash" >> "$tmp/web.yml"
  wrk_args+=(-H "Authorization: Basic $(printf bench:bench | base64)")
  curl_args+=(-u bench:bench)
fi
[ "$MODE" = plain ] || args+=(--web.config.file="$tmp/web.yml")
[ "${CLOSE:-0}" = 1 ] && wrk_args+=(-H "Connection: close")
URL=$scheme://localhost:$PORT/metrics

"$BUILD/fabricwatch" "${args[@]}" 2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 1 100); do
  # Without the password (401 when auth is on), so the first scrape below is the first check.
  curl -s -o /dev/null -k -w '%{http_code}' "$scheme://localhost:$PORT/readyz" \
    2>/dev/null | grep -qE '200|401' && break
  sleep 0.1
done
# The first scrape pays the bcrypt check (auth modes); the second finds it cached. Both on new
# connections, so TLS modes include a handshake.
first=$(curl -s -o /dev/null -w '%{time_total}' "${curl_args[@]}" "$URL")
second=$(curl -s -o /dev/null -w '%{time_total}' "${curl_args[@]}" "$URL")
bytes=$(curl -s "${curl_args[@]}" "$URL" | wc -c)

# Warm-up, not measured: the allocator's arenas and the first TLS sessions settle (RSS rises
# for about a minute at 200 connections, then stays flat).
WARMUP=${WARMUP:-20}
if [ "$WARMUP" -gt 0 ]; then
  wrk -t"$THREADS" -c"$CONNS" -d"${WARMUP}s" --timeout 10s "${wrk_args[@]}" "$URL" >/dev/null
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
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
cpu0=$(cpu)
wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --timeout 10s --latency "${wrk_args[@]}" "$URL" > "$tmp/wrk.txt"
cpu1=$(cpu)
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
ticks=$(getconf CLK_TCK)
cpu_ms=$(awk -v d=$((cpu1 - cpu0)) -v t="$ticks" -v n="$total" 'BEGIN { if (n > 0) printf "%.3f", d * 1000 / t / n }')
conn="keep-alive"
[ "${CLOSE:-0}" = 1 ] && conn="a new connection per request"
echo "$MODE /metrics ($bytes bytes), $CONNS connections ($conn), ${SECS} s after ${WARMUP} s of warm-up, fixture $FIXTURE:"
echo "  $total requests, $req requests/s; latency p50 $p50, p90 $p90, p99 $p99; daemon CPU $cpu_ms ms/request"
echo "  curl, a new connection each: first scrape ${first} s, second ${second} s"
echo "  non-2xx responses: ${non2xx:-0}; ${sockerr## }; server drops: $dropped"
echo "  served: $codes"
echo "  RSS (KiB) every 5 s: $(awk '{print $2}' "$tmp/rss.txt" | paste -sd' ' -)"
echo "reproduce: WARMUP=$WARMUP CLOSE=${CLOSE:-0} bench/http_load.sh $BUILD $SECS $CONNS $FIXTURE $MODE"
