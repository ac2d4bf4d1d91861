#!/usr/bin/env bash
# The daemon's cost with 64 peers: `fabricwatch serve` probes 64 peer listeners (served by the
# peer_echo_rtt harness on loopback) every round, all 64 each round (peers-per-round=64,
# 5 samples each); reports CPU seconds per round (utime+stime from /proc over ROUNDS rounds)
# and resident memory.
#
#   bench/peer_daemon_cost.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-30}
INTERVAL_S=1
tmp=$(mktemp -d)
secret=$tmp/secret
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$secret"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

BASE=19800
"$BUILD/bench/peer_echo_rtt" serve "127.0.0.1:$BASE" "$secret" 64 2>/dev/null & pids+=($!)
peers=$(seq $BASE $((BASE + 63)) | sed 's/^/127.0.0.1:/' | paste -sd, -)
cat > "$tmp/fw.toml" <<TOML
[probes.dns]
enabled = false
[collect.sources.kernel]
enabled = false
TOML
"$BUILD/fabricwatch" serve --config.file="$tmp/fw.toml" --web.listen-address=127.0.0.1:19899 \
  --node.name=cost --peer.listen-address=127.0.0.1:19898 --peer.secret-file="$secret" \
  --peers="$peers" --probe.interval=${INTERVAL_S}s --probe.peers-per-round=64 \
  --log.level=warn & fw=$!
pids+=($fw)
sleep 3   # startup and the first knock round
ticks() { awk '{print $14 + $15}' "/proc/$fw/stat"; }
hz=$(getconf CLK_TCK)
t0=$(ticks); r0=$(curl -s 127.0.0.1:19899/metrics | awk '/^fabricwatch_peer_rounds_total/ {print $2}')
sleep $((ROUNDS * INTERVAL_S))
t1=$(ticks); r1=$(curl -s 127.0.0.1:19899/metrics | awk '/^fabricwatch_peer_rounds_total/ {print $2}')
rss=$(awk '/VmRSS/ {print $2, $3}' "/proc/$fw/status")
metrics=$(curl -s 127.0.0.1:19899/metrics)
active=$(echo "$metrics" | awk '/^fabricwatch_peer_members\{state="active"\}/ {print $2}')
series=$(echo "$metrics" | grep -c '^fabricwatch_probe_tcp_peer_' || true)
dur=$(echo "$metrics" | awk '/^fabricwatch_peer_round_duration_seconds/ {print $2}')
rounds=$(awk -v a="$r0" -v b="$r1" 'BEGIN{print b-a}')
echo "peers active: $active, rounds measured: $rounds, per-peer series: $series"
awk -v t=$((t1 - t0)) -v hz="$hz" -v r="$rounds" \
  'BEGIN{printf "CPU per round: %.2f ms (64 peers x 5 echo samples, plus knocks and scrapes)\n", 1000*t/hz/r}'
echo "last round wall time: $dur s"
echo "RSS: $rss"
