#pragma once
// Kernel facts (kernel.*): release, host name, loaded modules (/proc/modules: nvidia_peermem,
// efa, mlx5_ib, erdma ...), the watched modules built into the kernel (/sys/module), the verbs
// devices ib_uverbs made (/sys/class/infiniband_verbs), and whether the peer-memory interface
// that GPUDirect RDMA uses exists (/sys/kernel/mm/memory_peers). With none of it readable the
// source fails rather than report an empty kernel.

#include <string>

#include "core/source.h"

namespace fabricwatch::facts {

class KernelSource : public core::Source {
 public:
  std::string_view name() const override { return "kernel"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
};

// The modules that fabricwatch_kernel_module_loaded reports (bounded; the facts list them all).
const std::vector<std::string_view>& watchedModules();

}  // namespace fabricwatch::facts
