#!/usr/bin/env bash
# Compares the TCP echo RTT fabricwatch reports with qperf's tcp_lat on the same path.
# qperf prints one-way latency (RTT/2 of 1-byte ping-pong); fabricwatch measures the full RTT of
# an authenticated echo (a 60-90 byte frame each way plus two HMAC-SHA256), so the script prints
# qperf's figure doubled next to ours, and their ratio.
#
#   bench/tcp_rtt_vs_qperf.sh [BUILD_DIR] [loopback|veth]
#
# "veth" runs both servers in a network namespace behind a veth pair (needs root and iproute2).
set -euo pipefail
BUILD=${1:-build}
MODE=${2:-loopback}
ECHO=$BUILD/bench/peer_echo_rtt
SAMPLES=${SAMPLES:-20000}
command -v qperf >/dev/null || { echo "qperf not installed (apt-get install qperf)"; exit 2; }
[ -x "$ECHO" ] || { echo "$ECHO missing: cmake -DFW_BUILD_BENCH=ON and make peer_echo_rtt"; exit 2; }

tmp=$(mktemp -d)
secret=$tmp/secret
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$secret"
pids=()
NS=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$NS" ] && ip netns del "$NS" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$MODE" = veth ]; then
  NS=fwqperf$$
  ip netns add "$NS"
  ip link add fwq$$a type veth peer name eth0 netns "$NS"
  ip addr add 192.168.251.1/30 dev fwq$$a && ip link set fwq$$a up
  ip -n "$NS" addr add 192.168.251.2/30 dev eth0
  ip -n "$NS" link set eth0 up && ip -n "$NS" link set lo up
  RUN="ip netns exec $NS"
  HOST=192.168.251.2
else
  RUN=""
  HOST=127.0.0.1
fi

$RUN qperf >/dev/null 2>&1 & pids+=($!)
$RUN "$ECHO" serve "$HOST:19799" "$secret" 2>/dev/null & pids+=($!)
sleep 0.5

q=$(qperf -t 5 "$HOST" tcp_lat | awk '/latency/ {print $3, $4}')
qval=${q% *}; qunit=${q#* }
case "$qunit" in
  ns) q_us=$(awk -v v="$qval" 'BEGIN{print v/1000}') ;;
  us) q_us=$qval ;;
  ms) q_us=$(awk -v v="$qval" 'BEGIN{print v*1000}') ;;
  *) echo "unexpected qperf output: $q"; exit 1 ;;
esac
fw=$("$ECHO" probe "$HOST:19799" "$secret" "$SAMPLES")
fw_p50=$(echo "$fw" | sed -n 's/.*p50=\([0-9.]*\).*/\1/p')
fw_avg=$(echo "$fw" | sed -n 's/.*avg=\([0-9.]*\).*/\1/p')
echo "path: $MODE ($HOST)"
echo "qperf tcp_lat one-way: $q_us us  => RTT $(awk -v v="$q_us" 'BEGIN{printf "%.1f", 2*v}') us"
echo "fabricwatch echo:      $fw"
awk -v f="$fw_avg" -v p="$fw_p50" -v q="$q_us" \
  'BEGIN{printf "ratio fabricwatch/qperf RTT: avg %.2f, p50 %.2f\n", f/(2*q), p/(2*q)}'
