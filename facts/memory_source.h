#pragma once
// Memory facts: hugepages per size from /sys/kernel/mm/hugepages (falling back to /proc/meminfo
// for the default size), total memory (memory.*), and the memlock limit of this service
// (limits.memlock, from /proc/self/limits: RDMA memory registration fails past it).

#include "core/source.h"

namespace fabricwatch::facts {

class MemorySource : public core::Source {
 public:
  std::string_view name() const override { return "memory"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
};

}  // namespace fabricwatch::facts
