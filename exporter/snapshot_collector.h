#pragma once
// Turns the current snapshot into metric families on each scrape: per-source health, then the
// families each source and stage renders from the facts. Never waits on a probe.

#include <prometheus/collectable.h>

#include "core/snapshot.h"

namespace fabricwatch::exporter {

class SnapshotCollector : public prometheus::Collectable {
 public:
  explicit SnapshotCollector(const core::SnapshotStore& store) : store_(store) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const core::SnapshotStore& store_;
};

// The same, for one given snapshot (used by Collect and by tests).
core::MetricFamilies renderSnapshot(const core::Snapshot& snapshot);

}  // namespace fabricwatch::exporter
