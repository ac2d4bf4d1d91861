#!/bin/sh
# run_fuzzer.sh FUZZER CORPUS SECONDS WORKDIR: fuzzes for SECONDS, starting from the checked-in
# CORPUS. New inputs go to WORKDIR/corpus (never into the source tree); a crash, leak or
# timeout leaves its input in WORKDIR (crash-*, leak-*, timeout-*) and fails the test. Add
# such an input to CORPUS to keep it fixed (docs/security.md).
set -eu
fuzzer=$1 corpus=$2 seconds=$3 work=$4
rm -rf "$work"
mkdir -p "$work/corpus"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="$work/" -print_final_stats=1 "$work/corpus" "$corpus"
