#pragma once
// Kernel facts: release and host name (kernel.*). Later issues add loaded modules and
// memory_peers here.

#include <string>

#include "core/source.h"

namespace fabricwatch::probes::node {

struct KernelFacts {
  std::string release;
  std::string hostname;
};

class KernelSource : public core::Source {
 public:
  std::string_view name() const override { return "kernel"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
};

}  // namespace fabricwatch::probes::node
