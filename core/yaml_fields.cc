#include "core/yaml_fields.h"

#include <algorithm>

namespace fabricwatch::core {

std::optional<YamlFields> yamlFields(const YAML::Node& n, const std::string& what,
                                     std::initializer_list<std::string_view> known,
                                     std::initializer_list<std::string_view> required,
                                     const YamlReport& report) {
  if (!n.IsMap()) {
    report(n, what + " must be a mapping");
    return std::nullopt;
  }
  YamlFields out;
  for (auto it = n.begin(); it != n.end(); ++it) {
    // A copy: yaml-cpp's iterator yields a temporary pair, so a reference would dangle.
    const YAML::Node key = it->first;
    std::string k = key.IsScalar() ? key.Scalar() : "";
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      std::string list;
      for (auto kn : known) list += (list.empty() ? "" : ", ") + std::string(kn);
      report(key, "unknown field \"" + k + "\" in " + what + " (known: " + list + ")");
      continue;
    }
    if (!out.emplace(k, it->second).second) {
      report(key, "duplicate field \"" + k + "\" in " + what);
    }
  }
  for (auto r : required) {
    if (!out.count(r)) report(n, what + " is missing required field \"" + std::string(r) + "\"");
  }
  return out;
}

}  // namespace fabricwatch::core
