#pragma once
// NVIDIA GPUs from PCI sysfs alone, no NVML (gpu.*): addresses, ids, NUMA node, PCIe link, and
// the RDMA NICs closest to each GPU (same PCIe switch, else same root port, else same NUMA
// node). Also renders the PCIe link metrics of GPUs and RDMA NICs.

#include "core/source.h"

namespace fabricwatch::probes::node {

class GpuSource : public core::Source {
 public:
  std::string_view name() const override { return "gpu"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
};

}  // namespace fabricwatch::probes::node
