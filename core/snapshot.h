#pragma once
// An immutable view of everything known about the node at one moment. Each change builds a new
// Snapshot and publishes it with one pointer swap; a scrape renders whichever snapshot is
// current and never waits for a probe.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/metric_selection.h"
#include "core/source.h"
#include "core/value.h"

namespace fabricwatch::core {

struct SourceStatus {
  std::string name;
  bool ran = false;      // finished at least one run
  bool success = false;  // the last run finished in time and did not fail as a whole
  double duration_seconds = 0;
  uint64_t runs_total = 0;
  uint64_t failures_total = 0;
  uint64_t read_errors_total = 0;
  // Runs past their deadline that have not returned (each holds a thread), and runs abandoned
  // for a fresh instance of the source (scheduler.h).
  uint64_t stuck_runs = 0;
  uint64_t abandoned_total = 0;
  // Strings of its facts or captured labels that were not valid UTF-8 or held control
  // characters, replaced as they entered the snapshot.
  uint64_t sanitized_total = 0;
  // Cuts at a bound in the last run (Collection::truncated).
  uint64_t truncated = 0;
  std::chrono::system_clock::time_point last_run{};
  std::string last_error;
};

struct Violation {
  std::string pack;
  std::string rule;
  std::string severity;  // critical | warning | info
  std::string subject;   // "node" or a workload (pod/container/pid)
  std::string message;
  std::string remediation;
  // The subject as a bounded metric label: "node" or "workload:<pod uid or pid>".
  std::string metric_subject;
  // Its lifecycle in `serve` (policy/violation_tracker.h); state "" where nothing tracks it
  // (`check`): "active" while its rule fails, "recovering" for the hold after it passed again.
  std::string state;
  std::chrono::system_clock::time_point began_at{};
  std::chrono::system_clock::time_point recovering_since{};  // set while recovering
};

// A snapshot's metric families rendered once, when it is published (exporter/exposition.h):
// every scrape of the snapshot serves these bytes as they are and renders only what changes per
// request (fabricwatch's own HTTP and process metrics) after them.
struct Exposition {
  std::string text;  // the Prometheus text format
  // The same text as the start of a gzip member: the 10-byte header and raw deflate blocks
  // that end on a byte boundary without a final block (a full flush), so that a scrape appends
  // its own part as further deflate blocks and the trailer, and sends one valid gzip member.
  std::string gzip_prefix;
  uint32_t crc32 = 0;  // of text, for the trailer's CRC (crc32_combine)
  size_t series = 0;   // samples in text, for the series budget and the benchmarks
};

struct Snapshot {
  uint64_t generation = 0;
  std::chrono::system_clock::time_point published_at{};
  bool complete = false;  // every source has run at least once (/readyz)
  Value facts = Value::map();
  std::vector<SourceStatus> sources;
  std::vector<Violation> violations;
  // State that stages keep for the API (e.g. status["policy"]: packs, resource group).
  Value status = Value::map();
  // Who renders metrics for this snapshot: its sources and stages.
  std::vector<std::shared_ptr<const MetricRenderer>> renderers;
  // Families sources captured with their facts (Collection::metrics), by source; rendered as
  // they are.
  std::vector<std::shared_ptr<const MetricFamilies>> captured_metrics;
  // The documents sources captured for the API (Collection::api), by source name.
  std::map<std::string, std::shared_ptr<const Value>, std::less<>> captured_api;
  // The optional series to render (null: the defaults; core/metric_selection.h).
  std::shared_ptr<const MetricSelection> metric_selection;
  // The rendered metrics (null where nothing renders them: `check`, `facts`, most tests).
  std::shared_ptr<const Exposition> exposition;
};

// Holds the current snapshot. Both sides hold the lock only to copy or swap one shared_ptr (a
// reference-count change), never while building or rendering a snapshot, so a scrape can't be
// held up by a probe. (libstdc++ 12's std::atomic<std::shared_ptr> would do the same with a
// spin lock that ThreadSanitizer cannot see; this keeps the TSan build meaningful.)
class SnapshotStore {
 public:
  std::shared_ptr<const Snapshot> load() const {
    std::lock_guard lock(mu_);
    return current_;
  }
  void publish(std::shared_ptr<const Snapshot> s) {
    std::lock_guard lock(mu_);
    current_.swap(s);
    // The previous snapshot, now in s, is released after the lock (a last reader frees it).
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> current_;
};

// Deep-merges src's map entries into dst (maps merge key by key; anything else replaces).
void mergeFacts(Value& dst, const Value& src);

}  // namespace fabricwatch::core
