#pragma once
// The fields of a YAML mapping checked against a schema's names: unknown, duplicate and missing
// fields are reported at their position. Shared by the pack loader and the test-file reader.

#include <yaml-cpp/yaml.h>

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace fabricwatch::core {

using YamlFields = std::map<std::string, YAML::Node, std::less<>>;
using YamlReport = std::function<void(const YAML::Node& at, std::string message)>;

// nullopt when `n` is not a mapping (reported); otherwise its known fields by name, after
// reporting each unknown or duplicate field and each missing required one.
std::optional<YamlFields> yamlFields(const YAML::Node& n, const std::string& what,
                                     std::initializer_list<std::string_view> known,
                                     std::initializer_list<std::string_view> required,
                                     const YamlReport& report);

}  // namespace fabricwatch::core
