#pragma once
// RDMA devices from /sys/class/infiniband (rdma.devices): every device (mlx5, EFA, eRDMA, irdma,
// bnxt_re ...) with its PCI function and PCIe link, and every port with state, rate, GID table,
// net devices and counters. One unreadable file leaves that one fact absent.

#include "core/source.h"

namespace fabricwatch::probes::node {

class RdmaSource : public core::Source {
 public:
  std::string_view name() const override { return "rdma"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
};

}  // namespace fabricwatch::probes::node
