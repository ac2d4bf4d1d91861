#pragma once
// RDMA devices as libibverbs (rdma-core) sees them (verbs.*), cross-checked against sysfs: a
// node-level source beside rdma. Each collection queries libibverbs and reads the rdma
// source's view of /sys/class/infiniband at the same moment, and reports every field on which
// they disagree (verbs.disagreements). Where libibverbs lists no device (no RDMA in the
// kernel, as on a CPU machine) verbs.devices is empty and nothing else happens.
//
// libibverbs reads this machine's /sys and /dev/infiniband, not the host root: the source
// compares only when the root's /sys/class/infiniband is the one libibverbs reads (the same
// sysfs, as in the DaemonSet with /host and hostNetwork, or rootfs "/"), and otherwise says why
// not (verbs.compared = false), without querying.

#include <string>

#include "core/source.h"
#include "facts/rdma_source.h"

namespace fabricwatch::facts {

class VerbsSource : public core::Source {
 public:
  std::string_view name() const override { return "verbs"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;

 private:
  RdmaSource sysfs_;  // its own reader, so both views are taken together
};

// nullopt when `rootfs`/sys/class/infiniband is the directory libibverbs reads (or neither
// exists); otherwise why not.
std::optional<std::string> differentSysfs(const std::string& rootfs);

}  // namespace fabricwatch::facts
