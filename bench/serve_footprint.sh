#!/usr/bin/env bash
# What one `fabricwatch serve` costs, for sizing the DaemonSet's requests and limits: two
# daemons on a fixture root probe each other (a two-node mesh on loopback), /metrics and the
# status page are fetched every 5 s, and after SECONDS it prints the measured daemon's peak and
# current RSS and threads (/proc/PID/status) and its CPU time (/usr/bin/time -v).
#
#   bench/serve_footprint.sh [BUILD_DIR] [FIXTURE] [SECONDS] [CONFIG]
#   e.g. bench/serve_footprint.sh build p5_efa 120
set -euo pipefail
BUILD=${1:-build}
FIXTURE=${2:-p5_efa}
SECS=${3:-120}
CONFIG=${4:-}
SRC=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$SRC/tests/fixtures/$FIXTURE
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)"; exit 1; }
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
head -c 32 /dev/urandom | base64 > "$tmp/secret"
extra=()
[ -n "$CONFIG" ] && extra+=(--config.file="$CONFIG")

/usr/bin/time -v -o "$tmp/time.txt" "$BUILD/fabricwatch" serve --path.rootfs="$ROOT" \
  --web.listen-address=127.0.0.1:29836 --peer.listen-address=127.0.0.1:29837 \
  --peer.secret-file="$tmp/secret" --peers=127.0.0.1:29847 --node.name=a --log.level=warn \
  "${extra[@]}" 2>"$tmp/a.log" & timer=$!
pids+=("$timer")
"$BUILD/fabricwatch" serve --path.rootfs="$ROOT" --web.listen-address=127.0.0.1:29846 \
  --peer.listen-address=127.0.0.1:29847 --peer.secret-file="$tmp/secret" \
  --peers=127.0.0.1:29837 --node.name=b --log.level=warn "${extra[@]}" 2>"$tmp/b.log" &
pids+=($!)
sleep 1
fw=$(pgrep -P "$timer")
for _ in $(seq 1 $((SECS / 5))); do
  curl -s -o /dev/null http://127.0.0.1:29836/metrics
  curl -s -o /dev/null http://127.0.0.1:29836/
  sleep 5
done
status=$(grep -E 'VmHWM|VmRSS|Threads' "/proc/$fw/status" | tr -s ' \t' ' ' | paste -sd' ' -)
kill -TERM "$fw"
wait "$timer" || true
cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.2f", u + s}' "$tmp/time.txt")
echo "fixture $FIXTURE, ${SECS} s${CONFIG:+, config $CONFIG}: $status; CPU ${cpu} s" \
  "($(awk -v c="$cpu" -v s="$SECS" 'BEGIN {printf "%.1f", c / s * 1000}') millicores)"
echo "reproduce: bench/serve_footprint.sh $BUILD $FIXTURE $SECS${CONFIG:+ $CONFIG}"
