#pragma once
// Fabric software found on the host (software.*): the EFA installer and driver, libfabric,
// NCCL, aws-ofi-nccl, rdma-core and the eRDMA driver, from directories, versioned library file
// names, /sys/module/*/version, the EFA installer's package list and dpkg's status database.
// Nothing is executed or loaded. The dpkg database and the library directories are read again
// only when they change (StampedCache): on a real host they are megabytes and thousands of names.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/source.h"
#include "facts/fact_reader.h"
#include "facts/software_parse.h"
#include "facts/stamped_cache.h"

namespace fabricwatch::facts {

class SoftwareSource : public core::Source {
 public:
  std::string_view name() const override { return "software"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;

 private:
  // A directory's names, sorted; empty when it is missing.
  const std::vector<std::string>& list(FactReader& r, const char* dir);
  // The first library whose file name carries a full version ("libnccl.so.2.21.5"): version
  // and path.
  std::optional<std::pair<std::string, std::string>> findVersionedLib(FactReader& r,
                                                                      std::string_view prefix);

  StampedCache<DpkgVersions> dpkg_;
  StampedCache<std::vector<std::string>> listings_;
};

}  // namespace fabricwatch::facts
