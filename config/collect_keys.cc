// [collect] and [collect.sources.<name>]: when the fact sources run. And `extra_metrics`, the
// series budget's switch, wherever a table has it (docs/metrics.md, "Series budget").
#include "config/keys.h"

namespace fabricwatch::config {
namespace {

// extra_metrics under `owner` (the table's path; "collect.sources.*" gets the source's name).
KeyDef extraMetricsKey(const std::string& owner) {
  KeyDef d;
  d.path = owner + ".extra_metrics";
  d.type = KeyType::kStringList;
  d.set = [owner](Config& c, const KeyValue& v,
                  const KeyContext& ctx) -> std::optional<std::string> {
    for (const auto& s : v.list) {
      std::string error;
      if (s != "*" && !core::parseSelector(s, &error)) return error;
    }
    std::string key = owner;
    if (auto star = key.find('*'); star != std::string::npos) key.replace(star, 1, ctx.wild);
    if (v.list.empty())
      c.metrics.extra.erase(key);
    else
      c.metrics.extra[key] = v.list;
    return std::nullopt;
  };
  return d;
}

void validateCollect(const Config::Collect& c, const Config&, const ReportProblem& report) {
  if (c.timeout > c.interval)
    report({"collect.timeout", "collect.interval"},
           "collect.timeout (" + formatDuration(c.timeout) +
               ") must not exceed collect.interval (" + formatDuration(c.interval) + ")");
  for (const auto& [name, sc] : c.sources) {
    // A source that sets neither inherits both, and the check above covers it.
    if (!sc.interval.count() && !sc.timeout.count()) continue;
    auto interval = sc.interval.count() ? sc.interval : c.interval;
    auto timeout = sc.timeout.count() ? sc.timeout : c.timeout;
    std::string key = "collect.sources." + name;
    if (timeout > interval)
      report({key + ".timeout", key + ".interval", "collect.timeout", "collect.interval"},
             key + ": timeout (" + formatDuration(timeout) + ") must not exceed its interval (" +
                 formatDuration(interval) + ")");
  }
}

}  // namespace

TableDef collectTable() {
  using std::chrono::hours;
  using std::chrono::milliseconds;
  using C = Config::Collect;
  TableDef t = TableKeys<C>("collect", [](Config& c) -> C& { return c.collect; })
                   .duration("interval", milliseconds(100), hours(24), &C::interval)
                   .duration("timeout", milliseconds(10), hours(1), &C::timeout)
                   .number("jitter", 0.0, 0.5, &C::jitter)
                   .custom("sources.*.enabled", KeyType::kBoolean,
                           [](C& c, const KeyValue& v, const KeyContext& ctx) {
                             c.sources[ctx.wild].enabled = v.boolean;
                             return std::optional<std::string>();
                           })
                   .custom("sources.*.interval", KeyType::kString,
                           [](C& c, const KeyValue& v, const KeyContext& ctx) {
                             auto d = parseDurationIn(v.text, milliseconds(100), hours(24));
                             if (d.first) c.sources[ctx.wild].interval = *d.first;
                             return d.second;
                           })
                   .custom("sources.*.timeout", KeyType::kString,
                           [](C& c, const KeyValue& v, const KeyContext& ctx) {
                             auto d = parseDurationIn(v.text, milliseconds(10), hours(1));
                             if (d.first) c.sources[ctx.wild].timeout = *d.first;
                             return d.second;
                           })
                   .validate(validateCollect)
                   .build();
  t.keys.push_back(extraMetricsKey("collect"));
  t.keys.push_back(extraMetricsKey("collect.sources.*"));
  return t;
}

TableDef probesTable() {
  using P = Config::Probes;
  TableDef t = TableKeys<P>("probes", [](Config& c) -> P& { return c.probes; })
                   .custom("*.enabled", KeyType::kBoolean,
                           [](P& p, const KeyValue& v, const KeyContext& ctx) {
                             p.kinds[ctx.wild].enabled = v.boolean;
                             return std::optional<std::string>();
                           })
                   .flag("Run the * probe kind: true or false.", "probe.*.enabled")
                   .build();
  t.keys.push_back(extraMetricsKey("probes.*"));
  return t;
}

KeyDef policyExtraMetricsKey() { return extraMetricsKey("policy"); }

}  // namespace fabricwatch::config
