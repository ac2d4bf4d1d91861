#pragma once
// RDMA devices from /sys/class/infiniband (rdma.devices): every device (mlx5, EFA, eRDMA, irdma,
// bnxt_re ...) with its PCI function and PCIe link, and every port with state, rate, GID table,
// net devices and counters. One unreadable file leaves that one fact absent.
//
// Each device is scanned once while its sysfs directory lives (RdmaDevice); a collection then
// reads only what changes, through kept descriptors.

#include <string>

#include "core/source.h"
#include "probes/node/rdma_device.h"
#include "probes/node/scanned_dir.h"

namespace fabricwatch::probes::node {

class RdmaSource : public core::Source {
 public:
  std::string_view name() const override { return "rdma"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;

 private:
  ScannedDir<RdmaDevice> devices_;
};

}  // namespace fabricwatch::probes::node
