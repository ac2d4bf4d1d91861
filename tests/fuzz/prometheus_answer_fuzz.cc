// Fuzzes what `fabricwatch diagnose` reads from a Prometheus (fleet/prometheus_api.h): any bytes
// give either an error or samples within the bounds (kMaxSamples, kMaxLabelBytes), every label
// valid UTF-8 without control bytes; the diagnosis built from them renders as JSON that parses
// back, and as text.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/utf8.h"
#include "fleet/diagnosis.h"
#include "fleet/prometheus_api.h"

namespace {

namespace fleet = fabricwatch::fleet;

void mustBePrintable(const std::string& s) {
  if (s.size() > fleet::kMaxLabelBytes || !fabricwatch::core::isValidUtf8(s)) std::abort();
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (auto groups = fleet::parseRuleGroups(in))
    for (const auto& g : *groups) mustBePrintable(g);
  auto samples = fleet::parseVectorAnswer(in);
  if (!samples) return 0;
  if (samples->size() > fleet::kMaxSamples) std::abort();
  for (const auto& s : *samples)
    for (const auto& [k, v] : s.labels) mustBePrintable(k), mustBePrintable(v);
  // The same answer for every question: each level reads what it can from it.
  std::vector<std::pair<std::string, std::vector<fleet::Sample>>> answers;
  for (const auto& q : fleet::diagnosisQueries("")) answers.emplace_back(q.name, *samples);
  fleet::Diagnosis d;
  d.prometheus = "http://prometheus:9090";
  d.nodes = samples->size();
  d.suspects = fleet::suspectsFrom(answers);
  auto doc = nlohmann::json::parse(fleet::renderJson(d), nullptr, false);
  if (doc.is_discarded() || doc["suspects"].size() != d.suspects.size()) std::abort();
  (void)fleet::renderText(d);
  return 0;
}
