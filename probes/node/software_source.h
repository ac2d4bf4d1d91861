#pragma once
// Fabric software found on the host (software.*): the EFA installer and driver, libfabric,
// NCCL, aws-ofi-nccl, rdma-core and the eRDMA driver, from directories, versioned library file
// names, /sys/module/*/version, the EFA installer's package list and dpkg's status database.
// Nothing is executed or loaded.

#include "core/source.h"

namespace fabricwatch::probes::node {

class SoftwareSource : public core::Source {
 public:
  std::string_view name() const override { return "software"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
};

}  // namespace fabricwatch::probes::node
