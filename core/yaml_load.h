#pragma once
// Every YAML input fabricwatch reads (policy packs, policy test files and their facts files,
// and any other YAML configuration) is parsed here, with bounds.
//
// yaml-cpp keeps an alias as a reference to its anchor's node, so nine levels of aliases (a
// "billion laughs") parse in microseconds into a handful of nodes; the explosion comes when
// something walks the tree, expanding every alias: turning a policy test's `facts:` into a
// facts document took 25 s and 8 GB before std::bad_alloc (issue 13). So after parsing, each
// document is walked once the way a reader would walk it, aliases expanded, counting nodes and
// depth, and refused as soon as it goes past a bound: the walk stops at the bound, so checking
// costs at most that many steps, however large the expansion would be.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::core {

struct YamlLimits {
  size_t max_nodes = 500000;  // per document, aliases expanded (keys and values count)
  size_t max_depth = 64;      // nesting of sequences and mappings
};

struct YamlError {
  int line = 0;    // 1-based
  int column = 0;  // 1-based
  std::string message;
};

struct YamlDocuments {
  std::vector<YAML::Node> docs;
  std::optional<YamlError> error;  // a syntax error, or a document over the limits
};

// Where a text comes from. yaml-cpp 0.7's LoadAll can loop forever on malformed input, so
// untrusted text gets a first pass over its events that refuses such a document with its
// position; that pass costs as much as the parse itself. Text compiled into this binary (the
// shipped packs) skips it: a test gives every shipped file the first pass.
enum class YamlOrigin { kUntrusted, kCompiledIn };

// Every document of `text` ("---"-separated).
YamlDocuments loadYamlDocuments(std::string_view text, const YamlLimits& limits = {},
                                YamlOrigin origin = YamlOrigin::kUntrusted);

// A single document (an empty text is a null node).
struct YamlDocument {
  YAML::Node doc;
  std::optional<YamlError> error;
};
YamlDocument loadYamlDocument(std::string_view text, const YamlLimits& limits = {});

// nullopt when the node, walked with its aliases expanded, stays within the limits.
std::optional<YamlError> checkYamlLimits(const YAML::Node& node, const YamlLimits& limits = {});

}  // namespace fabricwatch::core
