#include "policy/pack.h"

#include <fnmatch.h>

#include <algorithm>

namespace fabricwatch::policy {

std::optional<Severity> parseSeverity(std::string_view s) {
  if (s == "critical") return Severity::kCritical;
  if (s == "warning") return Severity::kWarning;
  if (s == "info") return Severity::kInfo;
  return std::nullopt;
}

const char* severityName(Severity s) {
  switch (s) {
    case Severity::kCritical:
      return "critical";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "info";
}

const char* subjectName(Subject s) { return s == Subject::kNode ? "node" : "workload"; }

bool globMatch(std::string_view pattern, std::string_view s) {
  return ::fnmatch(std::string(pattern).c_str(), std::string(s).c_str(), 0) == 0;
}

bool matchesGroup(const Pack& pack, std::string_view resource_group) {
  if (pack.resource_groups.empty()) return true;
  for (const auto& g : pack.resource_groups)
    if (globMatch(g, resource_group)) return true;
  return false;
}

FactRoots withEngineRoots(const FactRoots& source_roots) {
  FactRoots out = source_roots;
  for (const char* own : {"resource_group", "variables"})
    if (std::find(out.begin(), out.end(), own) == out.end()) out.push_back(own);
  return out;
}

}  // namespace fabricwatch::policy
