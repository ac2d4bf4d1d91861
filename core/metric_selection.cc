#include "core/metric_selection.h"

#include <cctype>

#include "core/snapshot.h"

namespace fabricwatch::core {
namespace {

bool isNameChar(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

bool isName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (!isNameChar(s[i], i == 0)) return false;
  return true;
}

}  // namespace

std::optional<Selector> parseSelector(std::string_view text, std::string* error) {
  auto fail = [&](std::string msg) -> std::optional<Selector> {
    if (error) *error = std::move(msg);
    return std::nullopt;
  };
  Selector s;
  size_t brace = text.find('{');
  s.family = std::string(text.substr(0, brace));
  if (!isName(s.family))
    return fail("\"" + std::string(text) +
                "\" is not a metric family name (or family{label=\"value\"})");
  if (brace == std::string_view::npos) return s;
  std::string_view rest = text.substr(brace + 1);
  size_t eq = rest.find('=');
  if (eq == std::string_view::npos || rest.size() < eq + 3 || rest[eq + 1] != '"' ||
      rest.substr(rest.size() - 2) != "\"}")
    return fail("\"" + std::string(text) + "\": expected family{label=\"value\"}");
  s.label = std::string(rest.substr(0, eq));
  s.value = std::string(rest.substr(eq + 2, rest.size() - eq - 4));
  if (!isName(s.label) || s.value.empty() || s.value.find('"') != std::string::npos)
    return fail("\"" + std::string(text) + "\": expected family{label=\"value\"}");
  return s;
}

void MetricSelection::add(const Selector& s) {
  if (s.label.empty())
    families_.insert(s.family);
  else
    values_[s.family].insert(s.value);
}

bool MetricSelection::value(std::string_view family_name, std::string_view v) const {
  if (family(family_name)) return true;
  auto it = values_.find(family_name);
  return it != values_.end() && it->second.count(v) > 0;
}

bool wantsFamily(const Snapshot& snapshot, std::string_view family) {
  return snapshot.metric_selection && snapshot.metric_selection->family(family);
}

bool wantsValue(const Snapshot& snapshot, std::string_view family, std::string_view value) {
  return snapshot.metric_selection && snapshot.metric_selection->value(family, value);
}

}  // namespace fabricwatch::core
