#!/usr/bin/env bash
# The fabric daemon's peak RSS by rail count: NODES `fabricwatch serve` processes (default 3),
# each in a network namespace with the peer channel on eth0 and rails eth1..eth8 beside it, one
# veth per rail and each rail its own bridge in a hub namespace (as a rail-optimised cluster
# cables one leaf switch per rail); the fabric probe on the tcp provider (tcp;ofi_rxm), one
# libfabric domain (interface) per rail, latency every round (probe.interval 2 s) and bandwidth
# every other round (bandwidth_interval 4 s, default sizes: 16 x 1 MiB windows, 32 MiB per peer
# and rail). For 1, 2, 4 and 8 rails it runs SECONDS, then reads each daemon's VmHWM (peak RSS)
# and VmRSS from /proc/PID/status, the fabric series it serves, and its probe results.
#
# RAILS_LIST="8" measures only the rail counts it names (default "1 2 4 8"). BUSY=N starts N
# busy loops (`yes > /dev/null`) beside the daemons for the whole run: a loaded node, where the
# probe's sessions time out and their endpoints are retired while their operations are still in
# the provider, and rxm's pools grow (docs/performance.md, "Under load").
#
# PROVIDER_DEFAULTS=1 runs the daemons with rxm's own defaults in the environment
# (FI_OFI_RXM_BUFFER_SIZE=16384, FI_OFI_RXM_MSG_TX_SIZE=128, FI_OFI_RXM_MSG_RX_SIZE=128), which
# the daemon leaves as the operator set them (probes/kinds/fabric/queue_sizes.h): the cost of
# rxm's job-sized buffers. With PINGPONG=1 it then runs bench/fabric_vs_fi_pingpong.sh (tcp,
# 64 bytes; the probe's engine against fi_pingpong, same sizes as above in the engine's process).
#
#   sudo bench/fabric_rails_rss.sh [BUILD_DIR] [SECONDS] [NODES]     defaults: build 60 3
# Needs root (ip netns), iproute2, curl, and libfabric's tcp provider.
set -euo pipefail
BUILD=${1:-build}
SECS=${2:-60}
NODES=${3:-3}
MAX_RAILS=8
[ -x "$BUILD/fabricwatch" ] || { echo "no $BUILD/fabricwatch: build it first"; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root (ip netns)"; exit 2; }
tag="fwrss$$"
hub="${tag}h"
tmp=$(mktemp -d)
pids=()
busy=()
cleanup() {
  for p in "${pids[@]}" "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for h in $(seq "$NODES"); do ip netns del "${tag}n$h" 2>/dev/null || true; done
  ip netns del "$hub" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# The lab: bridge brR in the hub per rail R (0: the peer channel), node H's ethR at 10.(210+R).0.H.
ip netns add "$hub"
for r in $(seq 0 $MAX_RAILS); do
  ip -n "$hub" link add "br$r" type bridge
  ip -n "$hub" link set "br$r" up
done
for h in $(seq "$NODES"); do
  ns="${tag}n$h"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  for r in $(seq 0 $MAX_RAILS); do
    ip -n "$hub" link add "v${h}r$r" type veth peer name "eth$r" netns "$ns"
    ip -n "$hub" link set "v${h}r$r" master "br$r" up
    ip -n "$ns" addr add "10.$((210 + r)).0.$h/24" dev "eth$r"
    ip -n "$ns" link set "eth$r" up
  done
done
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$tmp/secret"
members=$(for h in $(seq "$NODES"); do printf '10.210.0.%d:19650\n' "$h"; done | paste -sd, -)
envx=()
[ "${PROVIDER_DEFAULTS:-0}" = 1 ] &&
  envx=(FI_OFI_RXM_BUFFER_SIZE=16384 FI_OFI_RXM_MSG_TX_SIZE=128 FI_OFI_RXM_MSG_RX_SIZE=128)

kib_of() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
metric_sum() {  # NODE REGEX: the sum of the samples whose line matches
  ip netns exec "${tag}n$1" curl -s 127.0.0.1:19660/metrics | awk -v re="$2" '$0 ~ re {s += $NF} END {print s + 0}'
}

for _ in $(seq "${BUSY:-0}"); do
  yes > /dev/null &
  busy+=($!)
done

printf '%-5s %-22s %-22s %-8s %-28s %s\n' rails "peak RSS MiB (max)" "RSS MiB (max)" series \
  "latency ok/failed" "bandwidth ok/failed"
for rails in ${RAILS_LIST:-1 2 4 8}; do
  list=$(seq "$rails" | sed 's/^/"eth/; s/$/"/' | paste -sd, -)
  cat > "$tmp/fw.toml" <<TOML
[probes.dns]
enabled = false
[collect.sources.kernel]
enabled = false
[probes.fabric]
enabled = true
provider = "tcp"
bandwidth_when_gpus_held = true
bandwidth_interval = "4s"
rails = [$list]
TOML
  pids=()
  for h in $(seq "$NODES"); do
    ip netns exec "${tag}n$h" env "${envx[@]}" "$BUILD/fabricwatch" serve \
      --config.file="$tmp/fw.toml" --web.listen-address=127.0.0.1:19660 --node.name="node-$h" \
      --peer.listen-address="10.210.0.$h:19650" --peer.secret-file="$tmp/secret" \
      --peers="$members" --probe.interval=2s --log.level=warn 2>"$tmp/node$h.log" &
    pids+=($!)
  done
  sleep "$SECS"
  hwm=0 rss=0 series=0 lok=0 lfail=0 bok=0 bfail=0
  for i in "${!pids[@]}"; do
    p=${pids[$i]} h=$((i + 1))
    [ -r "/proc/$p/status" ] || { echo "node $h exited:"; cat "$tmp/node$h.log"; exit 1; }
    w=$(kib_of "$p" VmHWM) r=$(kib_of "$p" VmRSS)
    [ "$w" -gt "$hwm" ] && hwm=$w
    [ "$r" -gt "$rss" ] && rss=$r
    s=$(ip netns exec "${tag}n$h" curl -s 127.0.0.1:19660/metrics | grep -c '^fabricwatch_probe_fabric_' || true)
    [ "$s" -gt "$series" ] && series=$s
    lok=$((lok + $(metric_sum "$h" 'fabric_probes_total.*latency.*result="ok"')))
    lfail=$((lfail + $(metric_sum "$h" 'fabric_probes_total.*latency.*result="failed"')))
    bok=$((bok + $(metric_sum "$h" 'fabric_probes_total.*bandwidth.*result="ok"')))
    bfail=$((bfail + $(metric_sum "$h" 'fabric_probes_total.*bandwidth.*result="failed"')))
  done
  printf '%-5s %-22s %-22s %-8s %-28s %s\n' "$rails" "$(awk -v k="$hwm" 'BEGIN {printf "%.1f", k / 1024}')" \
    "$(awk -v k="$rss" 'BEGIN {printf "%.1f", k / 1024}')" "$series" "$lok/$lfail" "$bok/$bfail"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
done
echo "($NODES nodes, ${SECS}s per row; peak RSS and RSS: the largest of the nodes' VmHWM and VmRSS;"
echo " series: fabricwatch_probe_fabric_* samples one node serves; probe results: all nodes)"
echo "targets (issue 20): <= 64 MiB at 8 rails, < 32 MiB at 1 rail"
[ "${PROVIDER_DEFAULTS:-0}" = 1 ] && echo "environment: ${envx[*]}"
[ "${BUSY:-0}" -gt 0 ] && echo "busy loops beside the daemons: $BUSY"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "reproduce: ${PROVIDER_DEFAULTS:+PROVIDER_DEFAULTS=$PROVIDER_DEFAULTS }${RAILS_LIST:+RAILS_LIST=\"$RAILS_LIST\" }${BUSY:+BUSY=$BUSY }$0 $BUILD $SECS $NODES"
if [ "${PINGPONG:-0}" = 1 ]; then
  "$(dirname "$0")/fabric_vs_fi_pingpong.sh" "$BUILD" tcp 64 10000 5
fi
