#pragma once
// The node fact sources, in the order their facts are merged.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/source.h"

namespace fabricwatch::facts {

std::vector<std::shared_ptr<core::Source>> makeNodeSources();
// A fresh instance of the named source (null for an unknown name): what the scheduler runs in
// place of one whose run is stuck.
std::shared_ptr<core::Source> makeNodeSource(std::string_view name);
std::vector<std::string> nodeSourceNames();

}  // namespace fabricwatch::facts
