#pragma once
// The part of Prometheus's HTTP API that `fabricwatch diagnose` reads: instant queries
// (/api/v1/query) and the loaded rule groups (/api/v1/rules). An answer is hostile until
// checked: bounded in size (http_get.h) and nesting, parsed as JSON, every label cut to a
// bounded length and made printable before it reaches a terminal or our own JSON.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "fleet/http_get.h"

namespace fabricwatch::fleet {

struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

inline constexpr size_t kMaxSamples = 100000;  // per query
inline constexpr size_t kMaxLabelBytes = 512;  // per label name or value, after which "..."
inline constexpr size_t kMaxJsonNesting = 64;

// A /api/v1/query answer of result type vector -> its samples. An "error" answer gives its
// errorType and error.
core::Result<std::vector<Sample>> parseVectorAnswer(std::string_view body);
// A /api/v1/rules answer -> the names of its rule groups.
core::Result<std::vector<std::string>> parseRuleGroups(std::string_view body);

class PrometheusApi {
 public:
  PrometheusApi(std::string base_url, HttpGetOptions options);
  core::Result<std::vector<Sample>> query(const std::string& promql) const;
  core::Result<std::vector<std::string>> ruleGroups() const;
  const std::string& url() const { return base_; }

 private:
  core::Result<std::string> get(const std::string& path) const;
  std::string base_;  // without a trailing '/'
  HttpGetOptions options_;
};

}  // namespace fabricwatch::fleet
