// [policy]: which packs run and how the node's resource group is chosen (docs/policies.md).
#include "config/keys.h"

namespace fabricwatch::config {

TableDef policyTable() {
  using std::chrono::hours;
  using std::chrono::milliseconds;
  using P = Config::Policy;
  TableDef t =
      TableKeys<P>("policy", [](Config& c) -> P& { return c.policy; })
          .stringList("paths", &P::paths,
                      [](const std::string& p) -> std::optional<std::string> {
                        if (p.empty()) return "policy paths must not be empty strings";
                        return std::nullopt;
                      })
          .flag(
              "Policy pack files or directories, comma-separated, loaded after the shipped "
              "packs.",
              "policy.path")
          .boolean("shipped", &P::shipped)
          .custom("resource_group", KeyType::kString,
                  [](P& p, const KeyValue& v, const KeyContext& ctx) -> std::optional<std::string> {
                    if (v.text.find_first_of(" \t\n\"") != std::string::npos)
                      return "resource group \"" + v.text + "\" must not contain spaces or quotes";
                    p.resource_group = v.text;
                    // The flag wins over FABRICWATCH_RESOURCE_GROUP; the file does not.
                    if (ctx.origin == KeyOrigin::kFlag) p.resource_group_from_flag = true;
                    return std::nullopt;
                  })
          .flag(
              "The node's resource group (selects the packs); also overrides "
              "FABRICWATCH_RESOURCE_GROUP.",
              "resource-group")
          .string("resource_group_file", &P::resource_group_file,
                  [](const std::string& v) -> std::optional<std::string> {
                    if (!v.empty() && v[0] != '/')
                      return "resource_group_file \"" + v + "\" must be an absolute path";
                    return std::nullopt;
                  })
          .duration("reload_interval", milliseconds(0), hours(24), &P::reload_interval)
          .integer("max_workload_subjects", 1, 1000, &P::max_workload_subjects)
          .duration("violation_hold", milliseconds(0), hours(24), &P::violation_hold)
          .duration("counter_window", milliseconds(10000), hours(24), &P::counter_window)
          .build();
  t.keys.push_back(policyExtraMetricsKey());
  return t;
}

}  // namespace fabricwatch::config
