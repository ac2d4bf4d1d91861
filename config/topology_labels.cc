#include "config/topology_labels.h"

#include <algorithm>
#include <array>

#include "core/utf8.h"

namespace fabricwatch::config {

std::optional<std::string> topologyLabelNameProblem(std::string_view name) {
  std::string shown = core::quoteForDisplay(name, 80);
  if (name.empty()) return "a topology label needs a name";
  if (name.size() > kMaxTopologyLabelNameBytes)
    return "topology label name " + shown + " is longer than " +
           std::to_string(kMaxTopologyLabelNameBytes) + " bytes";
  bool first = true;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || c == '_' || (!first && c >= '0' && c <= '9');
    if (!ok)
      return "topology label name " + shown +
             " must be lower-case letters, digits and underscores, not starting with a digit";
    first = false;
  }
  if (name.rfind("__", 0) == 0)
    return "topology label name " + shown + " must not start with \"__\" (Prometheus keeps those)";
  static constexpr std::array<std::string_view, 4> kTaken = {"node", "instance", "job", "le"};
  if (std::find(kTaken.begin(), kTaken.end(), name) != kTaken.end())
    return "topology label name " + shown +
           " is a label the scrape adds itself (node, instance, job): choose another";
  return std::nullopt;
}

std::optional<std::string> topologyLabelValueProblem(std::string_view value) {
  if (value.size() > kMaxTopologyLabelValueBytes)
    return "topology label value " + core::quoteForDisplay(value, 40) + " is longer than " +
           std::to_string(kMaxTopologyLabelValueBytes) + " bytes";
  if (!core::isValidUtf8(value))
    return "topology label value " + core::quoteForDisplay(value, 40) + " is not valid UTF-8";
  for (unsigned char c : value)
    if (c < 0x20 || c == 0x7f)
      return "topology label value " + core::quoteForDisplay(value, 40) +
             " holds a control character";
  return std::nullopt;
}

}  // namespace fabricwatch::config
