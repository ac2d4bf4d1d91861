#pragma once
// What the binary registers (probes/registry.h), for tests: the fact roots its sources declare
// (what packs compile against, as in the daemon), and load options whose schema has every probe
// kind's table (what `fabricwatch config validate` loads with).

#include "config/loader.h"
#include "policy/pack.h"
#include "probes/registry.h"

namespace fabricwatch::testing {

inline const policy::FactRoots& factRoots() {
  static const policy::FactRoots kRoots = probes::factRoots();
  return kRoots;
}

inline config::LoadOptions kindLoadOptions() {
  config::LoadOptions o;
  o.schema = probes::configSchema();
  o.known_probe_kinds = probes::probeKindNames();
  o.optional_metrics = probes::optionalMetricsByTable();
  return o;
}

// The one problem a text produces under kindLoadOptions(), as "line:col: message".
inline std::string configProblem(const std::string& text) {
  auto r = config::loadConfig(text, "t.toml", kindLoadOptions());
  if (r.problems.size() != 1)
    return "expected 1 problem, got " + std::to_string(r.problems.size()) + "\n" +
           core::formatAll(r.problems);
  const auto& d = r.problems[0];
  return std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message;
}

}  // namespace fabricwatch::testing
