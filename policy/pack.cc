#include "policy/pack.h"

#include <fnmatch.h>

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

const std::vector<std::string>& factRoots() {
  static const std::vector<std::string> kRoots = {
      "node",      "kernel", "rdma",           "verbs",    "net",
      "gpu",       "memory", "limits",         "software", "nccl",
      "workloads", "probes", "resource_group", "variables"};
  return kRoots;
}

}  // namespace fabricwatch::policy
