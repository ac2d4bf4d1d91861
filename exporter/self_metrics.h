#pragma once
// fabricwatch's own instrumentation: build info, HTTP requests and refusals, configuration and
// web configuration reloads. These are persistent counters, kept here under one lock (HTTP
// handler threads and the I/O thread update them concurrently); everything about the node is
// rendered from the snapshot instead (snapshot_collector.h).
//
// Rendered as prometheus-cpp's Registry rendered them before this class replaced it, so that
// /metrics did not change: counters, then gauges, then the histogram, each kind in the order
// below, a family with no series yet left out. Label sets within a family come in a fixed order
// (the Registry's was its hash map's), sorted by their labels in the order they are written.

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "core/metrics.h"
#include "http/http_drop.h"

namespace fabricwatch::exporter {

class SelfMetrics {
 public:
  SelfMetrics() = default;

  void observeRequest(const std::string& route, int status, double seconds);
  void configReloaded(bool success);
  void httpDropped(http::HttpDrop reason);
  // `refused`: why a reload was refused (WebConfigWatcher::Report), "" on success.
  void webConfigReloaded(bool success, std::string_view refused = "");

  // Appends the families to `out` (a consistent view: taken under the lock).
  void collect(core::MetricFamilies& out) const;

  // Upper bounds of fabricwatch_http_request_duration_seconds' buckets (+Inf is added).
  static constexpr std::array<double, 5> kDurationBounds = {0.0005, 0.0025, 0.01, 0.05, 0.25};

 private:
  struct Durations {
    std::array<uint64_t, kDurationBounds.size() + 1> buckets{};  // not cumulative; last is +Inf
    uint64_t count = 0;
    double sum = 0;
  };

  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, uint64_t> requests_;  // (code, route) -> count
  std::map<std::string, Durations> durations_;                        // by route
  std::array<uint64_t, static_cast<size_t>(http::HttpDrop::kCount)> dropped_{};
  double reload_ok_ = 0;
  double reload_ts_ = 0;
  double web_reload_ok_ = 1;
  double web_reload_ts_ = 0;
  std::map<std::string, uint64_t, std::less<>> web_refused_;  // reason -> refused reloads
};

}  // namespace fabricwatch::exporter
