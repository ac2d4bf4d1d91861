#!/usr/bin/env bash
# RDMA facts side by side with the reference tool, in one run: node_exporter's infiniband
# collector (Debian's prometheus-node-exporter) and fabricwatch's rdma source, both running as
# daemons on the same fixture roots (tests/fixtures), scraped once a second for ROUNDS seconds.
#
# For each root it prints, for each tool: the median of the tool's own collection time
# (node_scrape_collector_duration_seconds{collector="infiniband"}, fabricwatch_source_duration_
# seconds{source="rdma"}), whether it succeeded, CPU per round (utime+stime over the run, one
# collection and one scrape per round) and resident memory at the end. fabricwatch reads more
# per device (GID tables, driver hw_counters, the PCIe link) than node_exporter does.
#
#   bench/facts_vs_node_exporter.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-20}
NE=$(command -v prometheus-node-exporter || true)
[ -n "$NE" ] || { echo "prometheus-node-exporter is not installed (apt-get install prometheus-node-exporter)"; exit 1; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

# Only the rdma source, collected every second; no policies.
{
  printf '[collect]\ninterval = "1s"\ntimeout = "1s"\njitter = 0.0\n[policy]\nshipped = false\n'
  for s in kernel net gpu memory software nccl; do
    printf '[collect.sources.%s]\nenabled = false\n' "$s"
  done
} > "$tmp/fw.toml"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
hz=$(getconf CLK_TCK)

# The value of the first sample of metric text (stdin) that starts with $1. It reads to the end:
# an early exit would leave curl writing into a closed pipe (and pipefail would fail the run).
value() { awk -v p="$1" 'index($0, p) == 1 && !found {print $2; found = 1}'; }

# run NAME PID URL PATTERN OK_PATTERN: scrapes URL once a second, ROUNDS times, keeping the value
# of PATTERN, then reads OK_PATTERN once; prints one result line.
run() {
  local name=$1 pid=$2 url=$3 pattern=$4 ok_pattern=$5
  local t0 t1 samples="" ok
  sleep 1.5  # startup and the first collection
  t0=$(ticks "$pid")
  for _ in $(seq "$ROUNDS"); do
    samples+=$(curl -sf "$url" | value "$pattern")$'\n'
    sleep 1
  done
  t1=$(ticks "$pid")
  ok=$(curl -sf "$url" | value "$ok_pattern")
  local med
  med=$(printf '%s' "$samples" | grep . | median)
  printf '  %-14s collection %8.3f ms (median of %d)  success %-2s  CPU/round %6.2f ms  RSS %s MB\n' \
    "$name" "$(awk -v s="$med" 'BEGIN {print s * 1000}')" "$ROUNDS" "${ok:-?}" \
    "$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v n="$ROUNDS" 'BEGIN {print (b - a) * 1000 / hz / n}')" \
    "$(rss_mb "$pid")"
}

echo "node_exporter: $("$NE" --version 2>&1 | head -1)"
echo "fabricwatch:   $("$BUILD/fabricwatch" version | head -1)"
for root in ib_ndr roce_v2 p5_efa; do
  dir=$SRC/tests/fixtures/$root
  echo "$root ($(ls "$dir/sys/class/infiniband" | wc -l) RDMA devices)"
  "$NE" --path.sysfs="$dir/sys" --path.procfs="$dir/proc" --collector.disable-defaults \
    --collector.infiniband --web.listen-address=127.0.0.1:19990 --log.level=error & ne=$!
  pids+=("$ne")
  run node_exporter "$ne" http://127.0.0.1:19990/metrics \
    'node_scrape_collector_duration_seconds{collector="infiniband"}' \
    'node_scrape_collector_success{collector="infiniband"}'
  kill "$ne"; wait "$ne" 2>/dev/null || true

  "$BUILD/fabricwatch" serve --config.file="$tmp/fw.toml" --path.rootfs="$dir" \
    --web.listen-address=127.0.0.1:19991 --log.level=error & fw=$!
  pids+=("$fw")
  run fabricwatch "$fw" http://127.0.0.1:19991/metrics \
    'fabricwatch_source_duration_seconds{source="rdma"}' \
    'fabricwatch_source_success{source="rdma"}'
  kill "$fw"; wait "$fw" 2>/dev/null || true
done
