#pragma once
// The status page at `/`: what an on-call engineer opens first. A one-line verdict, the node and
// its resource group (and how it was chosen), violations by severity with their remediation,
// the peer probes' latest results, and the health of every source, probe and policy pack.
//
// It renders one snapshot and nothing else, server-side, with no external assets and every
// value escaped. Probe kinds are rendered generically from the snapshot's `probes.*` facts, so a
// new kind (fabric, NCCL ...) appears without a change here: a kind's scalars become a summary,
// its `peers` list a table, and integer counters named unreachable, failures, errors or failed
// above zero count against the verdict.

#include "core/snapshot.h"
#include "http/http_server.h"

namespace fabricwatch::exporter {

http::HttpResponse statusPage(const core::Snapshot* snap);

}  // namespace fabricwatch::exporter
