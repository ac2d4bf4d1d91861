#include "probes/node/sources.h"

#include "probes/node/kernel_source.h"

namespace fabricwatch::probes::node {

std::vector<std::shared_ptr<core::Source>> makeNodeSources() {
  std::vector<std::shared_ptr<core::Source>> out;
  out.push_back(std::make_shared<KernelSource>());
  return out;
}

std::vector<std::string> nodeSourceNames() {
  std::vector<std::string> names;
  for (const auto& s : makeNodeSources()) names.emplace_back(s->name());
  return names;
}

}  // namespace fabricwatch::probes::node
