#!/usr/bin/env bash
# What the fabric probe puts on the wire next to a job (docs/peers.md, "What a probe costs a
# job"): two `fabricwatch serve` daemons probing each other on loopback, in a network namespace
# of their own (unshare -rn: nothing else sends on its lo), with the fabric probe's default
# sizes on the tcp provider. Four runs of ROUNDS rounds, INTERVAL seconds apart:
#   tcp only            the fabric probe off: the peer channel's echoes (the baseline)
#   fabric, latency     the fabric probe on, bandwidth off
#   fabric, bandwidth   bandwidth in every round (bandwidth_interval = probe.interval)
#   ... GPUs held       the same, with a job (python3, pid 4242) holding /dev/nvidia3 under node
#                       a's host root: a skips its bandwidth sessions and declines b's
# Each run reports what changed over its ROUNDS rounds: a's rounds, the latency and bandwidth
# sessions both daemons measured, their failures, a's gpus_held and b's peer_gpus_held skips
# (fabricwatch_probe_fabric_bandwidth_skipped_total), the bytes lo carried (every byte sent:
# TCP/IP and the provider's headers and the peer channel's frames included; each round is two
# probes, a->b and b->a), the fabric payload both counted
# (fabricwatch_probe_fabric_wire_bytes_total), and lo's bytes per round.
#
#   bench/fabric_job_cost.sh [BUILD_DIR] [ROUNDS] [INTERVAL_S]
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
ROUNDS=${2:-10}
INTERVAL_S=${3:-2}
if [ "${FW_IN_NETNS:-}" != 1 ]; then
  exec env FW_IN_NETNS=1 unshare -rn "$0" "$BUILD" "$ROUNDS" "$INTERVAL_S"
fi
ip link set lo up
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$tmp/secret"
mkdir -p "$tmp/idle" "$tmp/job/proc/4242/fd"
echo python3 > "$tmp/job/proc/4242/comm"
ln -s /dev/nvidia3 "$tmp/job/proc/4242/fd/18"
# /proc/net/dev is this network namespace's (the /sys mounted outside it is not).
lo_bytes() { awk -F'[: ]+' '$2 == "lo" {print $11}' /proc/net/dev; }
metric() {  # PORT NAME [LABEL_FILTER]
  curl -s "127.0.0.1:$1/metrics" | awk -v m="$2" -v f="${3:-}" \
    'index($1, m) == 1 && (substr($1, length(m) + 1, 1) == "{" || $1 == m) && index($1, f) {s += $2} END {print s + 0}'
}

# Both daemons' counters: rounds (a's), fabric payload, latency and bandwidth sessions ok,
# failures, a's gpus_held and b's peer_gpus_held skips.
counters() {
  local ok='result="ok"'
  echo "$(metric 19801 fabricwatch_peer_rounds_total)" \
    $(( $(metric 19801 fabricwatch_probe_fabric_wire_bytes_total) + $(metric 19802 fabricwatch_probe_fabric_wire_bytes_total) )) \
    $(( $(metric 19801 fabricwatch_probe_fabric_probes_total "measurement=\"latency\",$ok") + $(metric 19802 fabricwatch_probe_fabric_probes_total "measurement=\"latency\",$ok") )) \
    $(( $(metric 19801 fabricwatch_probe_fabric_probes_total "measurement=\"bandwidth\",$ok") + $(metric 19802 fabricwatch_probe_fabric_probes_total "measurement=\"bandwidth\",$ok") )) \
    $(( $(metric 19801 fabricwatch_probe_fabric_failures_total) + $(metric 19802 fabricwatch_probe_fabric_failures_total) )) \
    "$(metric 19801 fabricwatch_probe_fabric_bandwidth_skipped_total 'reason="gpus_held"')" \
    "$(metric 19802 fabricwatch_probe_fabric_bandwidth_skipped_total 'reason="peer_gpus_held"')"
}

run() {  # NAME FABRIC(true|false) BANDWIDTH_INTERVAL ROOTFS_OF_A
  local name=$1 i
  for i in a b; do
    cat > "$tmp/$i.toml" <<TOML
[probes.dns]
enabled = false
[probes.fabric]
enabled = $2
provider = "tcp"
bandwidth_interval = "$3"
[collect.sources.kernel]
enabled = false
TOML
  done
  "$BUILD/fabricwatch" serve --config.file="$tmp/a.toml" --web.listen-address=127.0.0.1:19801 \
    --node.name=a --peer.listen-address=127.0.0.1:19811 --peer.secret-file="$tmp/secret" \
    --peers=127.0.0.1:19812 --probe.interval="${INTERVAL_S}s" --path.rootfs="$4" \
    --log.level=warn & local fa=$!
  "$BUILD/fabricwatch" serve --config.file="$tmp/b.toml" --web.listen-address=127.0.0.1:19802 \
    --node.name=b --peer.listen-address=127.0.0.1:19812 --peer.secret-file="$tmp/secret" \
    --peers=127.0.0.1:19811 --probe.interval="${INTERVAL_S}s" --path.rootfs="$tmp/idle" \
    --log.level=warn & local fb=$!
  pids+=("$fa" "$fb")
  sleep $((2 * INTERVAL_S + 2))  # start-up, knocks and the first rounds
  local -a c0 c1
  # lo's count outside the scrapes: after the first ones, before the last ones.
  read -r -a c0 <<< "$(counters) $(lo_bytes)"
  sleep $((ROUNDS * INTERVAL_S))
  local l1
  l1=$(lo_bytes)
  read -r -a c1 <<< "$(counters) $l1"
  local d=() i
  for i in "${!c0[@]}"; do d+=($(( c1[i] - c0[i] ))); done
  local rounds=${d[0]}
  [ "$rounds" -gt 0 ] || rounds=1
  printf '%-24s %6d %8d %8d %8d %7d %7d %12d %12d %12d\n' "$name" "${d[0]}" "${d[2]}" "${d[3]}" \
    "${d[4]}" "${d[5]}" "${d[6]}" "${d[7]}" "${d[1]}" $(( d[7] / rounds ))
  kill "$fa" "$fb"; wait "$fa" "$fb" 2>/dev/null || true
  pids=()
}

echo "two daemons, probe.interval ${INTERVAL_S}s, $ROUNDS rounds each (per round: a->b and b->a)"
printf '%-24s %6s %8s %8s %8s %7s %7s %12s %12s %12s\n' run rounds lat_ok bw_ok failed skip_a \
  skip_b lo_bytes payload lo_per_round
run "tcp only" false "0s" "$tmp/idle"
run "fabric, latency" true "0s" "$tmp/idle"
run "fabric, bandwidth" true "${INTERVAL_S}s" "$tmp/idle"
run "fabric, bandwidth, held" true "${INTERVAL_S}s" "$tmp/job"
