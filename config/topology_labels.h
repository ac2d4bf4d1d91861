#pragma once
// The operator's topology labels (rack, pod, leaf, network_node_layer_1 ...): what names and
// values they may have. They become label names and values of fabricwatch_topology_info, so a
// name is a Prometheus label name that no scrape configuration adds itself, and a value is short,
// valid UTF-8 without control characters. The same rules hold for the configuration
// ([topology.labels]) and the environment (FABRICWATCH_TOPOLOGY_<NAME>).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fabricwatch::config {

inline constexpr size_t kMaxTopologyLabels = 16;
inline constexpr size_t kMaxTopologyLabelNameBytes = 64;
inline constexpr size_t kMaxTopologyLabelValueBytes = 128;
// The environment variables that set a label: the prefix and the label's name in capitals.
inline constexpr std::string_view kTopologyEnvPrefix = "FABRICWATCH_TOPOLOGY_";

// Why `name` cannot be a topology label's name, or nullopt: [a-z_][a-z0-9_]* up to 64 bytes, not
// starting with "__" (Prometheus keeps those), and none of the labels a scrape adds (node,
// instance, job) or fabricwatch_topology_info's own.
std::optional<std::string> topologyLabelNameProblem(std::string_view name);
// Why `value` cannot be a label's value, or nullopt: at most 128 bytes of valid UTF-8 without
// control characters. Empty is allowed (it unsets the label).
std::optional<std::string> topologyLabelValueProblem(std::string_view value);

}  // namespace fabricwatch::config
