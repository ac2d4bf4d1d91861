// [topology]: where the node sits, as the operator knows it (labels), and how the topology
// source asks the host's lldpd for the switches its NICs are cabled to (docs/topology.md).
#include "config/keys.h"
#include "config/topology_labels.h"

namespace fabricwatch::config {

TableDef topologyTable() {
  using std::chrono::milliseconds;
  using T = Config::Topology;
  return TableKeys<T>("topology", [](Config& c) -> T& { return c.topology; })
      .custom("labels.*", KeyType::kString,
              [](T& t, const KeyValue& v, const KeyContext& ctx) -> std::optional<std::string> {
                if (auto err = topologyLabelNameProblem(ctx.wild)) return err;
                if (auto err = topologyLabelValueProblem(v.text)) return err;
                if (!t.labels.count(ctx.wild) && t.labels.size() >= kMaxTopologyLabels)
                  return "at most " + std::to_string(kMaxTopologyLabels) + " topology labels";
                t.labels[ctx.wild] = v.text;
                return std::nullopt;
              })
      .string("labels_file", &T::labels_file,
              [](const std::string& v) -> std::optional<std::string> {
                if (!v.empty() && v[0] != '/')
                  return "labels_file \"" + v + "\" must be an absolute path";
                return std::nullopt;
              })
      .stringList("file_label_prefixes", &T::file_label_prefixes,
                  [](const std::string& v) -> std::optional<std::string> {
                    if (v.empty() || v.back() != '/')
                      return "file_label_prefixes item \"" + v + "\" must end in '/'";
                    return std::nullopt;
                  })
      .string("lldpd_socket", &T::lldpd_socket,
              [](const std::string& v) -> std::optional<std::string> {
                if (!v.empty() && v[0] != '/')
                  return "lldpd_socket \"" + v + "\" must be an absolute path (or \"\": no lldpd)";
                if (v.size() > 80) return "lldpd_socket is longer than 80 bytes";
                return std::nullopt;
              })
      .duration("lldp_timeout", milliseconds(10), milliseconds(30000), &T::lldp_timeout)
      .build();
}

}  // namespace fabricwatch::config
