#pragma once
// The series budget. Every metric family a renderer serves is on by default except the long
// tails it declares optional (every driver counter, identity labels that never change, details
// that only some dashboards draw): an operator turns those on by name with `extra_metrics` in
// the renderer's own configuration table ([collect.sources.rdma], [policy], [probes.<kind>]
// ...). docs/metrics.md ("Series budget") lists each with the series it adds.
//
// A selector is a family name (all of its optional series), or family{label="value"} for
// families whose series are chosen by the value of one label (the `stat` of a counter
// family): one more counter, say.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::core {

struct Snapshot;

// An optional family a renderer declares.
struct OptionalMetric {
  std::string family;
  // Empty: the whole family is off by default. Else the label whose values select series: the
  // renderer serves a default set of them, and family{label="value"} adds one more.
  std::string label;
  std::string adds;  // the series it adds, for docs/metrics.md ("+1 per RDMA port")
};

struct Selector {
  std::string family;
  std::string label;  // empty for a whole family
  std::string value;
};

// Parses `family` or `family{label="value"}`; nullopt and *error when malformed.
std::optional<Selector> parseSelector(std::string_view text, std::string* error);

class MetricSelection {
 public:
  MetricSelection() = default;
  void add(const Selector& s);

  // The whole family is turned on.
  bool family(std::string_view name) const { return families_.count(name) > 0; }
  // That value of the family's selection label is turned on (or the whole family).
  bool value(std::string_view family_name, std::string_view v) const;

 private:
  std::set<std::string, std::less<>> families_;
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> values_;
};

// What a renderer asks of the snapshot it renders: the selection the snapshot was published
// with (none: the defaults).
bool wantsFamily(const Snapshot& snapshot, std::string_view family);
bool wantsValue(const Snapshot& snapshot, std::string_view family, std::string_view value);

}  // namespace fabricwatch::core
