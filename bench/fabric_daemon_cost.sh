#!/usr/bin/env bash
# The fabric probe's cost per round: `fabricwatch serve` with the fabric probe on (tcp provider,
# default latency settings: 10 warm-up + 200 timed ping-pongs of 64 bytes per peer) probes 64
# peers served by the fabric_pingpong harness on loopback (64 listeners, each with its own
# endpoints). Four configurations, ROUNDS rounds each, INTERVAL seconds apart:
#   tcp only            the fabric probe off (what bench/peer_daemon_cost.sh measures)
#   fabric, latency     the fabric probe on, bandwidth off
#   fabric, bandwidth   bandwidth in every round (default sizes: 16 x 1 MiB windows, 32 MiB per
#                       peer, 64 MiB per round: 2 peers); by default it runs one round in
#                       bandwidth_interval / probe.interval (5 min / 10 s = 30)
# each with k = 8 (the default peers per round) and k = 64 (every peer every round). It reports
# the daemon's CPU per round (utime+stime from /proc), the responders' CPU per round (the
# harness: what the probed peers spend), and the payload bytes the probe put on the fabric per
# round (fabricwatch_probe_fabric_wire_bytes_total; the provider's own headers come on top).
#
#   bench/fabric_daemon_cost.sh [BUILD_DIR] [ROUNDS] [INTERVAL_S]
set -euo pipefail
BUILD=${1:-build-bench}
ROUNDS=${2:-15}
INTERVAL_S=${3:-2}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$tmp/secret"
BASE=19700
hz=$(getconf CLK_TCK)
"$BUILD/bench/fabric_pingpong" serve "127.0.0.1:$BASE" "$tmp/secret" --count=64 --provider=tcp \
  2>"$tmp/serve.log" & harness=$!
pids+=($harness)
for _ in $(seq 300); do grep -q serving "$tmp/serve.log" 2>/dev/null && break; sleep 0.1; done
peers=$(seq $BASE $((BASE + 63)) | sed 's/^/127.0.0.1:/' | paste -sd, -)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
metric() { curl -s 127.0.0.1:19799/metrics | awk -v m="$1" '$1 == m {print $2}'; }

run() {  # NAME K FABRIC(true|false) BANDWIDTH_INTERVAL
  cat > "$tmp/fw.toml" <<TOML
[probes.dns]
enabled = false
[probes.fabric]
enabled = $3
provider = "tcp"
bandwidth_interval = "$4"
[collect.sources.kernel]
enabled = false
TOML
  "$BUILD/fabricwatch" serve --config.file="$tmp/fw.toml" --web.listen-address=127.0.0.1:19799 \
    --node.name=cost --peer.listen-address=127.0.0.1:19798 --peer.secret-file="$tmp/secret" \
    --peers="$peers" --probe.interval="${INTERVAL_S}s" --probe.peers-per-round="$2" \
    --log.level=warn & local fw=$!
  sleep $((2 * INTERVAL_S + 2))   # start-up, knocks and the first rounds
  local t0 h0 r0 b0 t1 h1 r1 b1
  t0=$(ticks $fw); h0=$(ticks $harness); r0=$(metric fabricwatch_peer_rounds_total)
  b0=$(metric fabricwatch_probe_fabric_wire_bytes_total); b0=${b0:-0}
  sleep $((ROUNDS * INTERVAL_S))
  t1=$(ticks $fw); h1=$(ticks $harness); r1=$(metric fabricwatch_peer_rounds_total)
  b1=$(metric fabricwatch_probe_fabric_wire_bytes_total); b1=${b1:-0}
  local ok fail dur
  ok=$(curl -s 127.0.0.1:19799/metrics | awk '$1 ~ /fabric_probes_total/ && /latency/ && /result="ok"/ {print $2}')
  fail=$(curl -s 127.0.0.1:19799/metrics | awk '$1 ~ /fabric_probes_total/ && /latency/ && /result="failed"/ {print $2}')
  dur=$(metric fabricwatch_peer_round_duration_seconds)
  kill "$fw"; wait "$fw" 2>/dev/null || true
  awk -v n="$1" -v k="$2" -v t=$((t1 - t0)) -v h=$((h1 - h0)) -v hz="$hz" -v r="$((r1 - r0))" \
      -v b="$(awk -v x="$b0" -v y="$b1" 'BEGIN{print y-x}')" -v ok="${ok:-0}" -v fail="${fail:-0}" -v d="$dur" \
    'BEGIN {printf "%-18s k=%-3d daemon CPU %7.1f ms/round  responders CPU %7.1f ms/round  fabric payload %8.2f MB/round  (%d rounds; latency probes ok %d failed %d; last round %.2f s)\n",
            n, k, 1000*t/hz/r, 1000*h/hz/r, b/r/1e6, r, ok, fail, d}'
}

for k in 8 64; do
  run "tcp only" "$k" false 0s
  run "fabric, latency" "$k" true 0s
  run "fabric, bandwidth" "$k" true "${INTERVAL_S}s"
done
echo "reproduce: $0 $BUILD $ROUNDS $INTERVAL_S"
