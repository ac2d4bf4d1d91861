#pragma once
// RDMA devices from /sys/class/infiniband (rdma.devices): every device (mlx5, EFA, eRDMA, irdma,
// bnxt_re ...) with its PCI function and PCIe link, and every port with state, rate, GID table,
// net devices and counters. One unreadable file leaves that one fact absent.
//
// Each device is scanned once while its sysfs directory lives (RdmaDevice); a collection then
// reads only what changes, through kept descriptors.

#include <string>

#include "core/source.h"
#include "facts/rdma_device.h"
#include "facts/scanned_dir.h"

namespace fabricwatch::facts {

// Whether a counter is served by default (the rest: extra_metrics, docs/metrics.md). A driver
// counter's default depends on the device's kind (rdma.devices[].kind): EFA's are a known set,
// chosen within the p5 series budget; other drivers' go by what their name says they count.
// Counters that are drawn against each other (tx/rx, xmit/rcv, send/recv, read/write) are on
// or off together.
bool defaultPortCounter(std::string_view name);
bool defaultHwCounter(std::string_view kind, std::string_view name);

class RdmaSource : public core::Source {
 public:
  std::string_view name() const override { return "rdma"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
  std::vector<core::OptionalMetric> optionalMetrics() const override;

 private:
  ScannedDir<RdmaDevice> devices_;
};

}  // namespace fabricwatch::facts
