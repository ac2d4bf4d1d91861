#include "facts/sources.h"

#include "facts/gpu_source.h"
#include "facts/kernel_source.h"
#include "facts/memory_source.h"
#include "facts/nccl_source.h"
#include "facts/net_source.h"
#include "facts/rdma_source.h"
#include "facts/software_source.h"
#include "facts/verbs_source.h"
#include "facts/workload_source.h"

namespace fabricwatch::facts {

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

std::shared_ptr<core::Source> makeNodeSource(std::string_view name) {
  for (auto& s : makeNodeSources())
    if (s->name() == name) return s;
  return nullptr;
}

std::vector<std::string> nodeSourceNames() {
  std::vector<std::string> names;
  for (const auto& s : makeNodeSources()) names.emplace_back(s->name());
  return names;
}

}  // namespace fabricwatch::facts
