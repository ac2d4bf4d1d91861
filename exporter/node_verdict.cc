#include "exporter/node_verdict.h"

#include <string_view>
#include <vector>

namespace fabricwatch::exporter {
namespace {

using core::Value;

std::string plural(size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

}  // namespace

bool isTroubleCounter(std::string_view k) {
  return k == "unreachable" || k == "failures" || k == "errors" || k == "failed";
}

NodeVerdict nodeVerdict(const core::Snapshot& s) {
  size_t critical = 0, warning = 0, info = 0;
  for (const auto& v : s.violations) {
    if (v.severity == "critical")
      ++critical;
    else if (v.severity == "warning")
      ++warning;
    else
      ++info;
  }
  std::vector<std::string> issues;
  size_t failed_sources = 0, healthy_sources = 0;
  std::string first_failed;
  for (const auto& src : s.sources) {
    if (src.ran && !src.success) {
      if (failed_sources++ == 0) first_failed = src.name;
    } else if (src.ran) {
      ++healthy_sources;
    }
  }
  if (failed_sources == 1) issues.push_back("source " + first_failed + " failed");
  if (failed_sources > 1) issues.push_back(plural(failed_sources, "source", "sources") + " failed");
  std::vector<std::string> good;
  if (const Value* probes = s.facts.find("probes"); probes && probes->isMap()) {
    for (const auto& [kind, v] : probes->asMap()) {
      if (!v.isMap()) continue;
      for (const auto& [k, c] : v.asMap()) {
        if (isTroubleCounter(k) && c.isInt() && c.asInt() > 0)
          issues.push_back(kind + " " + k + ": " + std::to_string(c.asInt()));
      }
      const Value* reachable = v.find("reachable");
      if (reachable && reachable->isInt() && reachable->asInt() > 0)
        good.push_back(plural(static_cast<size_t>(reachable->asInt()), "peer", "peers") +
                       " reachable over " + kind);
    }
  }
  if (const Value* policy = s.status.find("policy")) {
    const Value* ok = policy->find("last_reload_successful");
    if (ok && ok->isBool() && !ok->asBool()) issues.push_back("policy reload failed");
    const Value* errors = policy->find("errors");
    if (errors && errors->isList() && !errors->asList().empty())
      issues.push_back(plural(errors->asList().size(), "rule", "rules") +
                       " could not be evaluated");
    const Value* unknown = policy->find("unknown");
    if (unknown && unknown->isList() && !unknown->asList().empty())
      issues.push_back(plural(unknown->asList().size(), "rule", "rules") +
                       " cannot judge for missing facts");
  }

  NodeVerdict v;
  std::vector<std::string> parts;
  if (critical || warning) {
    std::string p = critical ? plural(critical, "critical", "critical") : "";
    if (warning) p += std::string(critical ? " and " : "") + plural(warning, "warning", "warning");
    parts.push_back(p + (critical + warning == 1 ? " violation" : " violations"));
  }
  parts.insert(parts.end(), issues.begin(), issues.end());
  if (critical) {
    v.level = "fail";
    v.word = "FAIL";
  } else if (warning || !issues.empty()) {
    v.level = "warn";
    v.word = "WARN";
  } else if (!s.complete) {
    v.level = "pending";
    v.word = "STARTING";
    parts.push_back("the first collection has not finished");
  } else {
    v.level = "ok";
    v.word = "OK";
    parts.push_back(info ? plural(info, "info notice", "info notices") : "no violations");
    parts.push_back(plural(healthy_sources, "source", "sources") + " healthy");
    parts.insert(parts.end(), good.begin(), good.end());
  }
  v.text = v.word;
  for (const auto& p : parts) v.text += " · " + p;
  return v;
}

}  // namespace fabricwatch::exporter
