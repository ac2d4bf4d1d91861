#pragma once
// The node fact sources, in the order their facts are merged.

#include <memory>
#include <string>
#include <vector>

#include "core/source.h"

namespace fabricwatch::probes::node {

std::vector<std::shared_ptr<core::Source>> makeNodeSources();
std::vector<std::string> nodeSourceNames();

}  // namespace fabricwatch::probes::node
