#pragma once
// Assembles the snapshot pipeline from a configuration: which sources run, on what schedule,
// and which stages derive from their facts. Shared by `serve`, `facts` and `check`.

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/scheduler.h"
#include "probes/peer/peer_prober.h"

namespace fabricwatch::exporter {

// `prober` (serve, when the mesh is on) feeds the "peer" source; without it that source reports
// node.name and an empty membership.
std::unique_ptr<core::Scheduler> buildScheduler(
    const config::Config& cfg, core::SnapshotStore& store,
    std::shared_ptr<const probes::peer::PeerProber> prober = nullptr);

// Every source name the binary knows, for validating [collect.sources.NAME].
std::vector<std::string> knownSourceNames();

}  // namespace fabricwatch::exporter
