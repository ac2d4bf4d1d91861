#pragma once
// Network interfaces from /sys/class/net and /proc/net/if_inet6 (net.interfaces): operstate,
// MTU, speed, MAC, IPv6 addresses and, for hardware interfaces, the PCI function.

#include "core/source.h"

namespace fabricwatch::probes::node {

class NetSource : public core::Source {
 public:
  std::string_view name() const override { return "net"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  // Metrics cover interfaces backed by a PCI function only, so that per-pod veth interfaces
  // never multiply series; the facts keep every interface.
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
};

}  // namespace fabricwatch::probes::node
