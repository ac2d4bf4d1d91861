#include "policy/yaml_value.h"

#include <cerrno>
#include <cstdlib>
#include <string>

namespace fabricwatch::policy {
namespace {

core::Value resolvePlain(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return core::Value();
  if (s == "true" || s == "True" || s == "TRUE") return core::Value(true);
  if (s == "false" || s == "False" || s == "FALSE") return core::Value(false);
  const char* b = s.c_str();
  char* end = nullptr;
  errno = 0;
  bool intish = s.find_first_not_of("+-0123456789") == std::string::npos || s.rfind("0x", 0) == 0 ||
                s.rfind("0o", 0) == 0;
  if (intish) {
    long long v = 0;
    if (s.rfind("0o", 0) == 0)
      v = std::strtoll(b + 2, &end, 8);
    else
      v = std::strtoll(b, &end, 0);
    if (errno == 0 && end && *end == '\0' && end != b) return core::Value(v);
  }
  if (s.find_first_not_of("+-0123456789.eE") == std::string::npos &&
      s.find_first_of("0123456789") != std::string::npos) {
    errno = 0;
    double d = std::strtod(b, &end);
    if (errno == 0 && end && *end == '\0') return core::Value(d);
  }
  return core::Value(s);
}

}  // namespace

core::Value yamlToValue(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return core::Value();
    case YAML::NodeType::Scalar:
      // Quoted and block scalars carry the non-specific tag "!": never resolved.
      if (node.Tag() == "!") return core::Value(node.Scalar());
      return resolvePlain(node.Scalar());
    case YAML::NodeType::Sequence: {
      core::Value out = core::Value::list();
      for (const auto& item : node) out.push(yamlToValue(item));
      return out;
    }
    case YAML::NodeType::Map: {
      core::Value out = core::Value::map();
      for (auto it = node.begin(); it != node.end(); ++it)
        out[it->first.Scalar()] = yamlToValue(it->second);
      return out;
    }
  }
  return core::Value();
}

}  // namespace fabricwatch::policy
