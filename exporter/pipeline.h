#pragma once
// Assembles the snapshot pipeline from a configuration: which sources run, on what schedule,
// and which stages derive from their facts. Shared by `serve`, `facts` and `check`.

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/scheduler.h"

namespace fabricwatch::exporter {

std::unique_ptr<core::Scheduler> buildScheduler(const config::Config& cfg,
                                                core::SnapshotStore& store);

// Every source name the binary knows, for validating [collect.sources.NAME].
std::vector<std::string> knownSourceNames();

}  // namespace fabricwatch::exporter
