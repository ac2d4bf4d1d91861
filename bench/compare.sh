#!/usr/bin/env bash
# Every whole-process comparison of issue 14, side by side in one run, written to
# docs/performance.md (a benchmark, never a test: nothing here decides a CI result):
#
#   1. scrape: fabricwatch (default configuration) and node_exporter 1.5 (infiniband collector
#      only) as daemons on the same fixture roots; RUNS fresh starts each, 200 sequential scrapes
#      per start (bench/scrape_load), plain and gzip: time per scrape, bytes, series, peak RSS;
#   2. `fabricwatch check` on the p5 root, end to end (hyperfine);
#   3. the daemon with the default configuration on the p5 root, 64 peers (bench/peer_echo_rtt
#      listeners) and the light probe kinds on (tcp, dns), scraped every 15 s: CPU in windows of
#      CPU_WINDOW_S seconds, peak RSS, and the resident memory by cause (/proc/PID/smaps);
#   4. growth: 8/32/128 RDMA ports (generated from the ib_ndr root) and 16/64/256 peers: bytes and
#      time per scrape, time per collection (the rdma source's duration; the probe round's wall
#      time and CPU);
#   5. the probe comparisons with their reference tools, by the existing scripts:
#      bench/tcp_rtt_vs_qperf.sh, and bench/fabric_vs_fi_pingpong.sh (tcp and shm) where it
#      exists (it needs BUILD_DIR/bench/fabric_pingpong);
#   6. the fabric daemon's peak RSS at 1, 2, 4 and 8 rails (bench/fabric_rails_rss.sh: three
#      daemons in network namespaces, tcp provider), as root.
#
#   bench/compare.sh [BUILD_DIR] [RUNS] [OUT]
#   e.g. bench/compare.sh build-bench 5 docs/performance.md
#
# BUILD_DIR needs fabricwatch, bench/scrape_load and bench/peer_echo_rtt:
#   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DFW_BUILD_BENCH=ON -DFW_BUILD_TESTS=OFF
#   cmake --build build-bench -j2 --target fabricwatch scrape_load peer_echo_rtt fabric_pingpong
# Needs prometheus-node-exporter, hyperfine, qperf (Debian packages). About 6 minutes.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-build-bench}" && pwd)
RUNS=${2:-5}
OUT=${3:-$SRC/docs/performance.md}
CPU_WINDOW_S=${CPU_WINDOW_S:-30}
CPU_WINDOWS=${CPU_WINDOWS:-3}
FW=$BUILD/fabricwatch
LOAD=$BUILD/bench/scrape_load
ECHO=$BUILD/bench/peer_echo_rtt
NE=$(command -v prometheus-node-exporter || true)
for t in "$FW" "$LOAD" "$ECHO"; do [ -x "$t" ] || { echo "$t missing (see the header)"; exit 2; }; done
for t in prometheus-node-exporter hyperfine; do
  command -v "$t" >/dev/null || { echo "$t is not installed (apt-get install $t)"; exit 2; }
done

tmp=$(mktemp -d)
pids=()
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
R=$tmp/results.tsv   # KEY<TAB>VALUE, one line per sample; the report takes medians
: > "$R"
rec() { printf '%s\t%s\n' "$1" "$2" >> "$R"; }
secret=$tmp/secret
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$secret"
hz=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
# Polls URL until it answers 200 (a daemon's readiness), at most 20 s.
wait_url() { for _ in $(seq 200); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; echo "no answer from $1"; exit 1; }
# The value of the first sample of metric text (stdin) that starts with $1.
value() { awk -v p="$1" 'index($0, p) == 1 && !found {print $2; found = 1}'; }
load_avg() { cut -d' ' -f1-3 /proc/loadavg; }
rec load_start "$(load_avg)"

# Only the rdma source every second, no packs: the growth and collection runs.
rdma_only=$tmp/rdma_only.toml
{
  printf '[collect]\ninterval = "1s"\ntimeout = "1s"\njitter = 0.0\n[policy]\nshipped = false\n'
  for s in kernel net gpu memory software nccl; do printf '[collect.sources.%s]\nenabled = false\n' "$s"; done
} > "$rdma_only"

# scrape_batch KEY PORT FLOOR_PATH: one batch of 200 scrapes, plain and gzip, and 200 requests of
# a path with a tiny answer (the cost of a request on a new connection, whatever it serves).
scrape_batch() {
  local key=$1 port=$2 line
  for enc in plain gzip; do
    line=$("$LOAD" "127.0.0.1:$port" /metrics 200 $([ $enc = gzip ] && echo --gzip))
    rec "$key.$enc.us" "$(sed 's/.*median_us=\([0-9.]*\).*/\1/' <<<"$line")"
    rec "$key.$enc.bytes" "$(sed 's/.*bytes=\([0-9]*\).*/\1/' <<<"$line")"
  done
  rec "$key.series" "$(curl -s "127.0.0.1:$port/metrics" | grep -vc '^#')"
  # After the series count: a route requested adds its own request series.
  line=$("$LOAD" "127.0.0.1:$port" "$3" 200)
  rec "$key.floor.us" "$(sed 's/.*median_us=\([0-9.]*\).*/\1/' <<<"$line")"
}

echo "== 1. scrape: fabricwatch vs node_exporter ($RUNS runs per root)"
for root in ib_ndr p5_efa; do
  dir=$SRC/tests/fixtures/$root
  for run in $(seq "$RUNS"); do
    "$NE" --path.sysfs="$dir/sys" --path.procfs="$dir/proc" --collector.disable-defaults \
      --collector.infiniband --web.listen-address=127.0.0.1:19990 --log.level=error & ne=$!
    pids+=("$ne")
    wait_url http://127.0.0.1:19990/metrics
    scrape_batch "scrape.$root.ne" 19990 /
    rec "scrape.$root.ne.hwm_kb" "$(status_kb "$ne" VmHWM)"
    rec "scrape.$root.ne.pss_kb" "$(awk '$1 == "Pss:" {print $2}' "/proc/$ne/smaps_rollup")"
    stop "$ne"
    "$FW" serve --path.rootfs="$dir" --web.listen-address=127.0.0.1:19991 --log.level=error & fw=$!
    pids+=("$fw")
    wait_url http://127.0.0.1:19991/readyz
    scrape_batch "scrape.$root.fw" 19991 /healthz
    rec "scrape.$root.fw.hwm_kb" "$(status_kb "$fw" VmHWM)"
    rec "scrape.$root.fw.pss_kb" "$(awk '$1 == "Pss:" {print $2}' "/proc/$fw/smaps_rollup")"
    python3 "$SRC/bench/rss_by_cause.py" "$fw" "$FW" "scrape.$root.fw" >> "$R"
    stop "$fw"
    echo "  $root run $run done"
  done
done

echo "== 2. fabricwatch check on p5_efa"
check_cmd="$FW check --path.rootfs=$SRC/tests/fixtures/p5_efa"
hyperfine -N --style none --warmup 3 --runs $((RUNS * 10)) --export-json "$tmp/check.json" \
  "$check_cmd" >/dev/null
python3 - "$tmp/check.json" >> "$R" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["results"][0]["times"]:
    print(f"check.p5.ms\t{t * 1000:.3f}")
r = json.load(open(sys.argv[1]))["results"][0]
print(f"check.p5.cpu_ms\t{(r['user'] + r['system']) * 1000:.3f}")
PY

echo "== 3. the daemon: default configuration, p5 root, 64 peers, light probes"
BASE=19800
"$ECHO" serve "127.0.0.1:$BASE" "$secret" 64 2>/dev/null & pids+=($!)
peers=$(seq $BASE $((BASE + 63)) | sed 's/^/127.0.0.1:/' | paste -sd, -)
"$FW" serve --path.rootfs="$SRC/tests/fixtures/p5_efa" --web.listen-address=127.0.0.1:19899 \
  --node.name=bench --peer.listen-address=127.0.0.1:19898 --peer.secret-file="$secret" \
  --peers="$peers" --log.level=warn & fw=$!
pids+=("$fw")
wait_url http://127.0.0.1:19899/readyz
sleep 12   # the first probe round and the first scrape's buffers
for w in $(seq "$CPU_WINDOWS"); do
  t0=$(ticks "$fw"); s0=$(date +%s.%N)
  for _ in $(seq $((CPU_WINDOW_S / 15))); do curl -s -o /dev/null http://127.0.0.1:19899/metrics; sleep 15; done
  t1=$(ticks "$fw"); s1=$(date +%s.%N)
  rec daemon.cpu_pct "$(awk -v a="$t0" -v b="$t1" -v s="$s0" -v e="$s1" -v hz="$hz" 'BEGIN {printf "%.3f", 100 * (b - a) / hz / (e - s)}')"
  echo "  CPU window $w done"
done
rec daemon.hwm_kb "$(status_kb "$fw" VmHWM)"
rec daemon.rss_kb "$(status_kb "$fw" VmRSS)"
rec daemon.pss_kb "$(awk '$1 == "Pss:" {print $2}' "/proc/$fw/smaps_rollup")"
rec daemon.threads "$(status_kb "$fw" Threads)"
rec daemon.fds "$(ls "/proc/$fw/fd" | wc -l)"
rec daemon.peers_active "$(curl -s http://127.0.0.1:19899/metrics | value 'fabricwatch_peer_members{state="active"}')"
# Resident memory by cause (bench/rss_by_cause.py).
python3 "$SRC/bench/rss_by_cause.py" "$fw" "$FW" daemon >> "$R"
stop "$fw"

echo "== 4. growth"
for ports in 8 32 128; do
  root=$tmp/root_$ports
  cp -a "$SRC/tests/fixtures/ib_ndr" "$root"
  cls=$root/sys/class/infiniband
  first=$(readlink "$cls/mlx5_0")   # ../../devices/.../infiniband/mlx5_0
  rm -f "$cls"/*
  devdir=$root/sys/${first#../../}
  for i in $(seq 0 $((ports - 1))); do
    [ "$i" = 0 ] || cp -a "$devdir" "$(dirname "$devdir")/mlx5_g$i"
    ln -s "$(dirname "$first")/$([ "$i" = 0 ] && echo mlx5_0 || echo "mlx5_g$i")" "$cls/$([ "$i" = 0 ] && echo mlx5_0 || echo "mlx5_g$i")"
  done
  "$FW" serve --config.file="$rdma_only" --path.rootfs="$root" \
    --web.listen-address=127.0.0.1:19991 --log.level=error & fw=$!
  pids+=("$fw")
  wait_url http://127.0.0.1:19991/readyz
  for run in $(seq "$RUNS"); do
    sleep 1
    line=$("$LOAD" 127.0.0.1:19991 /metrics 100)
    rec "growth.ports$ports.scrape_us" "$(sed 's/.*median_us=\([0-9.]*\).*/\1/' <<<"$line")"
    rec "growth.ports$ports.bytes" "$(sed 's/.*bytes=\([0-9]*\).*/\1/' <<<"$line")"
    rec "growth.ports$ports.collect_us" "$(curl -s 127.0.0.1:19991/metrics | value 'fabricwatch_source_duration_seconds{source="rdma"}' | awk '{print $1 * 1e6}')"
  done
  rec "growth.ports$ports.ports" "$(curl -s 127.0.0.1:19991/metrics | grep -c '^fabricwatch_rdma_port_state{')"
  stop "$fw"
done
for n in 16 64 256; do
  BASE=20000
  "$ECHO" serve "127.0.0.1:$BASE" "$secret" "$n" 2>/dev/null & echo_pid=$!
  pids+=("$echo_pid")
  peers=$(seq $BASE $((BASE + n - 1)) | sed 's/^/127.0.0.1:/' | paste -sd, -)
  "$FW" serve --path.rootfs="$SRC/tests/fixtures/p5_efa" --peer.secret-file="$secret" --peers="$peers" \
    --web.listen-address=127.0.0.1:19899 --node.name=bench --peer.listen-address=127.0.0.1:19898 \
    --probe.interval=1s --probe.peers-per-round="$n" --log.level=error & fw=$!
  pids+=("$fw")
  wait_url http://127.0.0.1:19899/readyz
  sleep 3
  # CPU per round over a quiet window (no scrapes): the rounds' own work.
  t0=$(ticks "$fw"); r0=$(curl -s 127.0.0.1:19899/metrics | value fabricwatch_peer_rounds_total)
  sleep $((RUNS * 3))
  t1=$(ticks "$fw"); r1=$(curl -s 127.0.0.1:19899/metrics | value fabricwatch_peer_rounds_total)
  for run in $(seq "$RUNS"); do
    line=$("$LOAD" 127.0.0.1:19899 /metrics 100)
    rec "growth.peers$n.scrape_us" "$(sed 's/.*median_us=\([0-9.]*\).*/\1/' <<<"$line")"
    rec "growth.peers$n.bytes" "$(sed 's/.*bytes=\([0-9]*\).*/\1/' <<<"$line")"
    rec "growth.peers$n.round_us" "$(curl -s 127.0.0.1:19899/metrics | value fabricwatch_peer_round_duration_seconds | awk '{print $1 * 1e6}')"
    sleep 1
  done
  rec "growth.peers$n.round_cpu_us" "$(awk -v a="$t0" -v b="$t1" -v r0="$r0" -v r1="$r1" -v hz="$hz" 'BEGIN {printf "%.0f", (r1 > r0) ? 1e6 * (b - a) / hz / (r1 - r0) : 0}')"
  rec "growth.peers$n.active" "$(curl -s 127.0.0.1:19899/metrics | value 'fabricwatch_peer_members{state="active"}')"
  stop "$fw"; stop "$echo_pid"
done

echo "== 5. probes against their reference tools"
if command -v qperf >/dev/null; then
  "$SRC/bench/tcp_rtt_vs_qperf.sh" "$BUILD" loopback > "$tmp/qperf.txt" 2>&1 || echo "(exit $?)" >> "$tmp/qperf.txt"
else
  echo "qperf is not installed" > "$tmp/qperf.txt"
fi
if [ -x "$SRC/bench/fabric_vs_fi_pingpong.sh" ]; then
  for prov in tcp shm; do
    echo "-- provider $prov"
    "$SRC/bench/fabric_vs_fi_pingpong.sh" "$BUILD" "$prov" || echo "(exit $?)"
  done > "$tmp/fi.txt" 2>&1
else
  echo "bench/fabric_vs_fi_pingpong.sh is not on this branch" > "$tmp/fi.txt"
fi
# The fabric daemon by rail count: network namespaces, so root only.
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null; then
  "$SRC/bench/fabric_rails_rss.sh" "$BUILD" 60 3 > "$tmp/rails.txt" 2>&1 || echo "(exit $?)" >> "$tmp/rails.txt"
else
  echo "not run: bench/fabric_rails_rss.sh needs root (ip netns)" > "$tmp/rails.txt"
fi
rec load_end "$(load_avg)"

versions=$tmp/versions.txt
{
  echo "fabricwatch: $("$FW" version | tr '\n' ' ')"
  echo "node_exporter: $("$NE" --version 2>&1 | head -1)"
  echo "hyperfine: $(hyperfine --version)"
  echo "qperf: $(dpkg-query -W -f='${Version}' qperf 2>/dev/null || echo none)"
  echo "libfabric (fi_pingpong): $(dpkg-query -W -f='${Version}' libfabric-bin 2>/dev/null || echo none)"
  echo "kernel: $(uname -r)"
  echo "cpu: $(nproc) x $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
} > "$versions"

python3 "$SRC/bench/compare_report.py" "$R" "$versions" "$tmp/qperf.txt" "$tmp/fi.txt" \
  "bench/compare.sh ${1:-build-bench} $RUNS" "$check_cmd" "$tmp/rails.txt" > "$OUT"
echo "wrote $OUT"
