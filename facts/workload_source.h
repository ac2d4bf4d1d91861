#pragma once
// Training processes as they actually run (workloads[*]): every process with libnccl or
// libfabric mapped, with its fabric environment (NCCL_*, FI_* ...; nothing else), the glibc of
// its own root file system, its memlock limit, the NCCL/libfabric/net-plugin/CUDA runtime
// libraries it loaded and the versions they say (facts/workload_versions.h), its pod/container
// identity, and its effective NCCL settings. Needs hostPID in the
// DaemonSet; disabled by default ([collect.sources.workloads] enabled = false).

#include "core/source.h"
#include "facts/workload_versions.h"

namespace fabricwatch::facts {

class WorkloadSource : public core::Source {
 public:
  std::string_view name() const override { return "workloads"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;

  // Processes reported at most (the lowest PIDs); a data-loader fork maps the same libraries.
  static constexpr size_t kMaxWorkloads = 64;

 private:
  WorkloadVersions versions_;  // library scans, kept while the files are unchanged
};

}  // namespace fabricwatch::facts
