#pragma once
// The node's health in one line, as the status page heads itself with it: FAIL on a critical
// violation; WARN on a warning, a failed source, a probe kind's failures, a policy reload that
// failed or rules that could not be evaluated or cannot judge; STARTING until the first
// collection has finished; else OK with what is healthy. From one snapshot, nothing else.

#include <string>
#include <string_view>

#include "core/snapshot.h"

namespace fabricwatch::exporter {

struct NodeVerdict {
  std::string level;  // fail | warn | ok | pending (the page's CSS class)
  std::string word;   // FAIL | WARN | OK | STARTING
  std::string text;   // the word, then " · " and each reason
};

NodeVerdict nodeVerdict(const core::Snapshot& snapshot);

// A probe kind's integer fact that means "something is wrong" when above zero (unreachable,
// failures, errors, failed): the verdict counts it, the page marks it.
bool isTroubleCounter(std::string_view key);

}  // namespace fabricwatch::exporter
