#include "fleet/prometheus_api.h"

#include <nlohmann/json.hpp>

#include "core/utf8.h"

namespace fabricwatch::fleet {
namespace {

using nlohmann::json;

// nlohmann's parser recurses once per nesting level: an answer of a million '[' would take the
// stack. Counted first, outside strings.
bool nestingWithin(std::string_view s, size_t max) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

// A string member of an object, "" when absent or of another type. (json::value() throws when the
// member is there with another type: `"resultType": []` ended diagnose with an uncaught
// type_error, found by prometheus_answer_fuzz.)
std::string stringAt(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

core::Result<json> parseAnswer(std::string_view body) {
  if (!nestingWithin(body, kMaxJsonNesting))
    return core::Error{"the answer nests deeper than " + std::to_string(kMaxJsonNesting)};
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return core::Error{"the answer is not JSON"};
  auto status = doc.find("status");
  if (status == doc.end() || !status->is_string())
    return core::Error{"the answer has no status: is this Prometheus's HTTP API?"};
  if (*status != "success") {
    std::string type = stringAt(doc, "errorType"), error = stringAt(doc, "error");
    return core::Error{"Prometheus: " + core::sanitizeUtf8(type, 64) + ": " +
                       core::sanitizeUtf8(error, 400)};
  }
  auto data = doc.find("data");
  if (data == doc.end() || !data->is_object()) return core::Error{"the answer has no data"};
  return std::move(*data);
}

std::string label(const std::string& s) { return core::sanitizeUtf8(s, kMaxLabelBytes); }

}  // namespace

core::Result<std::vector<Sample>> parseVectorAnswer(std::string_view body) {
  auto data = parseAnswer(body);
  if (!data) return data.error();
  if (stringAt(*data, "resultType") != "vector")
    return core::Error{"the answer is no instant vector"};
  auto result = data->find("result");
  if (result == data->end() || !result->is_array()) return core::Error{"the answer has no result"};
  if (result->size() > kMaxSamples)
    return core::Error{"the answer has " + std::to_string(result->size()) + " series, over " +
                       std::to_string(kMaxSamples)};
  std::vector<Sample> out;
  for (const auto& r : *result) {
    if (!r.is_object()) return core::Error{"a series of the answer is not an object"};
    auto metric = r.find("metric");
    auto value = r.find("value");
    if (metric == r.end() || !metric->is_object() || value == r.end() || !value->is_array() ||
        value->size() != 2 || !(*value)[1].is_string())
      return core::Error{"a series of the answer has no metric or value"};
    Sample s;
    for (const auto& [k, v] : metric->items())
      if (v.is_string()) s.labels[label(k)] = label(v.get<std::string>());
    const std::string& text = (*value)[1].get_ref<const std::string&>();
    char* end = nullptr;
    s.value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') return core::Error{"a value of the answer is no number"};
    out.push_back(std::move(s));
  }
  return out;
}

core::Result<std::vector<std::string>> parseRuleGroups(std::string_view body) {
  auto data = parseAnswer(body);
  if (!data) return data.error();
  auto groups = data->find("groups");
  if (groups == data->end() || !groups->is_array()) return core::Error{"the answer has no groups"};
  std::vector<std::string> out;
  for (const auto& g : *groups)
    if (g.is_object() && g.contains("name") && g["name"].is_string())
      out.push_back(label(g["name"].get<std::string>()));
  return out;
}

PrometheusApi::PrometheusApi(std::string base_url, HttpGetOptions options)
    : base_(std::move(base_url)), options_(std::move(options)) {
  while (!base_.empty() && base_.back() == '/') base_.pop_back();
}

core::Result<std::string> PrometheusApi::get(const std::string& path) const {
  auto reply = httpGet(base_ + path, options_);
  if (!reply) return core::Error{base_ + ": " + reply.error().message};
  // Prometheus answers an API error (a bad query) with 400 or 422 and a JSON body that says why.
  if (reply->status != 200 && reply->status != 400 && reply->status != 422)
    return core::Error{base_ + path.substr(0, path.find('?')) + ": HTTP " +
                       std::to_string(reply->status) +
                       (reply->status == 401 ? " (credentials refused)" : "")};
  return std::move(reply->body);
}

core::Result<std::vector<Sample>> PrometheusApi::query(const std::string& promql) const {
  auto body = get("/api/v1/query?query=" + urlEncode(promql));
  if (!body) return body.error();
  return parseVectorAnswer(*body);
}

core::Result<std::vector<std::string>> PrometheusApi::ruleGroups() const {
  auto body = get("/api/v1/rules?type=record");
  if (!body) return body.error();
  return parseRuleGroups(*body);
}

}  // namespace fabricwatch::fleet
