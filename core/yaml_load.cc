#include "core/yaml_load.h"

namespace fabricwatch::core {
namespace {

class Walk {
 public:
  explicit Walk(const YamlLimits& limits) : limits_(limits) {}

  // False (with error_ set) as soon as the walk passes a bound.
  bool visit(const YAML::Node& n, size_t depth) {
    if (++nodes_ > limits_.max_nodes) {
      return fail(n, "YAML document expands to more than " + std::to_string(limits_.max_nodes) +
                         " nodes (aliases counted as often as they are used)");
    }
    if (depth > limits_.max_depth)
      return fail(n, "YAML nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    if (n.IsSequence()) {
      for (const auto& item : n)
        if (!visit(item, depth + 1)) return false;
    } else if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (!visit(it->first, depth + 1) || !visit(it->second, depth + 1)) return false;
      }
    }
    return true;
  }

  std::optional<YamlError> error() const { return error_; }

 private:
  bool fail(const YAML::Node& n, std::string message) {
    YAML::Mark m = n.Mark();
    error_ =
        YamlError{m.is_null() ? 1 : m.line + 1, m.is_null() ? 1 : m.column + 1, std::move(message)};
    return false;
  }

  const YamlLimits& limits_;
  size_t nodes_ = 0;
  std::optional<YamlError> error_;
};

YamlError syntaxError(const YAML::Exception& e) {
  return YamlError{e.mark.is_null() ? 1 : e.mark.line + 1, e.mark.is_null() ? 1 : e.mark.column + 1,
                   "YAML syntax error: " + e.msg};
}

}  // namespace

std::optional<YamlError> checkYamlLimits(const YAML::Node& node, const YamlLimits& limits) {
  Walk w(limits);
  w.visit(node, 0);
  return w.error();
}

YamlDocuments loadYamlDocuments(std::string_view text, const YamlLimits& limits) {
  YamlDocuments out;
  try {
    out.docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    out.error = syntaxError(e);
    return out;
  }
  for (const auto& d : out.docs) {
    if (auto e = checkYamlLimits(d, limits)) {
      out.docs.clear();
      out.error = std::move(e);
      break;
    }
  }
  return out;
}

YamlDocument loadYamlDocument(std::string_view text, const YamlLimits& limits) {
  YamlDocument out;
  try {
    out.doc = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    out.error = syntaxError(e);
    return out;
  }
  if (auto e = checkYamlLimits(out.doc, limits)) {
    out.doc = YAML::Node();
    out.error = std::move(e);
  }
  return out;
}

}  // namespace fabricwatch::core
