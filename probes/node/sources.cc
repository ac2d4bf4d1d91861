#include "probes/node/sources.h"

#include "probes/node/gpu_source.h"
#include "probes/node/kernel_source.h"
#include "probes/node/memory_source.h"
#include "probes/node/nccl_source.h"
#include "probes/node/net_source.h"
#include "probes/node/rdma_source.h"
#include "probes/node/software_source.h"
#include "probes/node/verbs_source.h"
#include "probes/node/workload_source.h"

namespace fabricwatch::probes::node {

std::vector<std::shared_ptr<core::Source>> makeNodeSources() {
  std::vector<std::shared_ptr<core::Source>> out;
  out.push_back(std::make_shared<KernelSource>());
  out.push_back(std::make_shared<RdmaSource>());
  out.push_back(std::make_shared<VerbsSource>());
  out.push_back(std::make_shared<NetSource>());
  out.push_back(std::make_shared<GpuSource>());
  out.push_back(std::make_shared<MemorySource>());
  out.push_back(std::make_shared<SoftwareSource>());
  out.push_back(std::make_shared<NcclSource>());
  out.push_back(std::make_shared<WorkloadSource>());
  return out;
}

std::vector<std::string> nodeSourceNames() {
  std::vector<std::string> names;
  for (const auto& s : makeNodeSources()) names.emplace_back(s->name());
  return names;
}

}  // namespace fabricwatch::probes::node
