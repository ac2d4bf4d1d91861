#pragma once
// The seams of the snapshot pipeline. A Source gathers one kind of facts (RDMA devices, hugepages,
// TCP probe results ...); a Stage derives more from a finished document (policy violations).
// Both may turn the published snapshot into metric families at scrape time, from the snapshot
// alone: a renderer never reads live state.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric_selection.h"
#include "core/metrics.h"
#include "core/value.h"

namespace fabricwatch::core {

struct Snapshot;

struct CollectContext {
  std::string rootfs = "/";  // every file read goes through this host root
};

// What one run of a source produced. `facts` is a map deep-merged into the document's top level.
struct Collection {
  Value facts = Value::map();
  // Files that exist but could not be read or parsed; the facts they hold stay absent.
  uint64_t read_errors = 0;
  std::vector<std::string> errors;  // the first few, for logs and the API
  // Set when the source failed as a whole (nothing usable); its previous facts are dropped.
  bool failed = false;
  // Metric families of state that is not in the facts (the counters and histograms of a
  // component that runs on its own, such as the peer mesh), captured with the facts. They are
  // published with the snapshot and rendered from it, so that a scrape never reads a live
  // object and every series of one scrape comes from one snapshot.
  std::shared_ptr<const MetricFamilies> metrics;
  // A document the API serves for this source beyond its facts (the mesh's /api/v1/peers),
  // captured with the facts for the same reason; null when the source has none.
  std::shared_ptr<const Value> api;

  // What was cut short at a bound (a directory with more entries than are read, a collection
  // over its memory budget): host paths, the first few. The scheduler publishes them as the
  // fact collection.truncated.<source>.
  std::vector<std::string> truncated;

  void addError(std::string msg) {
    ++read_errors;
    if (errors.size() < 16) errors.push_back(std::move(msg));
  }
  // A cut: counted as a read error (the facts past the bound are absent) and recorded.
  void addTruncated(std::string path, std::string why) {
    addError(path + ": " + why);
    if (truncated.size() < 16) truncated.push_back(std::move(path));
  }
  // The read errors and cuts of a part of this run that was read apart (on another thread),
  // after this run's own.
  void addErrorsOf(Collection&& part) {
    read_errors += part.read_errors;
    for (auto& e : part.errors)
      if (errors.size() < 16) errors.push_back(std::move(e));
    for (auto& t : part.truncated)
      if (truncated.size() < 16) truncated.push_back(std::move(t));
  }
};

class MetricRenderer {
 public:
  virtual ~MetricRenderer() = default;
  // Appends metric families derived from the snapshot. Called on every scrape: keep it cheap,
  // never block, never do I/O.
  virtual void renderMetrics(const Snapshot& snapshot, MetricFamilies& out) const {}
  // The long tails it serves only when a configuration turns them on (metric_selection.h).
  virtual std::vector<OptionalMetric> optionalMetrics() const { return {}; }
};

class Source : public MetricRenderer {
 public:
  virtual std::string_view name() const = 0;
  virtual Collection collect(const CollectContext& ctx) = 0;
};

class Stage : public MetricRenderer {
 public:
  virtual std::string_view name() const = 0;
  // Runs on each new snapshot before it is published (e.g. evaluates policies into violations).
  virtual void apply(Snapshot& snapshot) = 0;
};

}  // namespace fabricwatch::core
