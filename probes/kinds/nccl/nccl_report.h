#pragma once
// The nccl kind's renderings, pure functions of its view: probes.nccl.peers[] (the runs this
// node started, with both sides' outcomes and NCCL's verdict on the transport between the two
// nodes), probes.nccl.served[] (the runs it served for peers), the fabricwatch_probe_nccl_*
// metric families, and its part of /api/v1/peers.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/value.h"
#include "probes/kinds/nccl/nccl_responder.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes::nccl {

core::Value ncclPeerEntry(const PeerProbe& p);
core::Value ncclFacts(const std::vector<PeerProbe>& results, const NcclServedState* served);
void ncclMetrics(const std::vector<PeerProbe>& results, const std::map<std::string, uint64_t>& runs,
                 int64_t last_run_seconds, const NcclServedState* served,
                 core::MetricFamilies& out);

}  // namespace fabricwatch::probes::nccl
