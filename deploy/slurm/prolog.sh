#!/bin/sh
# Slurm prolog: run fabricwatch's pre-flight on the node before a job starts there.
#   slurm.conf:  Prolog=/etc/slurm/prolog.d/*   (install this file there, mode 0755)
# A non-zero exit makes Slurm drain the node ("Prolog error") and requeue the job, so:
#   fabricwatch exit 0 (clean)       -> 0: the job runs;
#   fabricwatch exit 1 (violations)  -> 1: the job does not run on a node that would slow or
#                                       break it; the violations and their remediation are
#                                       in the log;
#   fabricwatch exit 2 (usage or configuration error, e.g. an invalid site pack) and anything
#   else (not installed, killed by the time limit)
#                                    -> FABRICWATCH_ON_ERROR: "pass" (default) logs it and
#                                       lets the job run, since a broken check is no reason
#                                       to drain a fleet; "fail" treats it as exit 1.
# The node's resource group (which packs apply): $FABRICWATCH_RESOURCE_GROUP, else the first
# word of /etc/fabricwatch/resource-group, else fabricwatch derives it from the node's devices.
# Settings (environment, or /etc/default/fabricwatch-prolog): FABRICWATCH, FABRICWATCH_CONFIG,
# FABRICWATCH_ROOTFS, FABRICWATCH_FAIL_ON, FABRICWATCH_TIMEOUT, FABRICWATCH_LOG.

# shellcheck source=/dev/null
[ -r /etc/default/fabricwatch-prolog ] && . /etc/default/fabricwatch-prolog

FABRICWATCH=${FABRICWATCH:-/usr/local/bin/fabricwatch}
FABRICWATCH_CONFIG=${FABRICWATCH_CONFIG:-/etc/fabricwatch/fabricwatch.toml}
FABRICWATCH_ROOTFS=${FABRICWATCH_ROOTFS:-/}
FABRICWATCH_FAIL_ON=${FABRICWATCH_FAIL_ON:-critical}
FABRICWATCH_TIMEOUT=${FABRICWATCH_TIMEOUT:-60}
FABRICWATCH_LOG=${FABRICWATCH_LOG:-/var/log/fabricwatch-prolog.log}
FABRICWATCH_ON_ERROR=${FABRICWATCH_ON_ERROR:-pass}

group=${FABRICWATCH_RESOURCE_GROUP:-}
if [ -z "$group" ] && [ -r /etc/fabricwatch/resource-group ]; then
  read -r group _ < /etc/fabricwatch/resource-group || true
fi

set -- check --path.rootfs="$FABRICWATCH_ROOTFS" --fail-on="$FABRICWATCH_FAIL_ON"
[ -r "$FABRICWATCH_CONFIG" ] && set -- "$@" --config.file="$FABRICWATCH_CONFIG"
[ -n "$group" ] && set -- "$@" --resource-group="$group"

log() {
  printf '%s job=%s node=%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${SLURM_JOB_ID:-?}" \
    "$(hostname)" "$*" >> "$FABRICWATCH_LOG"
}

if [ ! -x "$FABRICWATCH" ]; then
  rc=127
  out="$FABRICWATCH is not installed"
elif command -v timeout > /dev/null; then
  out=$(timeout "$FABRICWATCH_TIMEOUT" "$FABRICWATCH" "$@" 2>&1)
  rc=$?
else
  out=$("$FABRICWATCH" "$@" 2>&1)
  rc=$?
fi

case $rc in
  0)
    exit 0
    ;;
  1)
    log "pre-flight FAILED: the job will not run on this node"
    printf '%s\n' "$out" >> "$FABRICWATCH_LOG"
    echo "fabricwatch: $(hostname) failed the pre-flight check; see $FABRICWATCH_LOG" >&2
    exit 1
    ;;
  *)
    log "pre-flight could not run (fabricwatch exit $rc; on error: $FABRICWATCH_ON_ERROR)"
    printf '%s\n' "$out" >> "$FABRICWATCH_LOG"
    [ "$FABRICWATCH_ON_ERROR" = fail ] && exit 1
    exit 0
    ;;
esac
