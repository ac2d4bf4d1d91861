#pragma once
// fabricwatch's own instrumentation: build info, HTTP requests and refusals, configuration and
// web configuration reloads. These are
// persistent counters (prometheus-cpp Registry); everything about the node is rendered from the
// snapshot instead (snapshot_collector.h).

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <memory>
#include <string>

#include "exporter/http_server.h"

namespace fabricwatch::exporter {

class SelfMetrics {
 public:
  SelfMetrics();
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  void observeRequest(const std::string& route, int status, double seconds);
  void configReloaded(bool success);
  void httpDropped(HttpDrop reason);
  void webConfigReloaded(bool success);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* requests_;
  prometheus::Family<prometheus::Histogram>* request_duration_;
  prometheus::Gauge* reload_ok_;
  prometheus::Gauge* reload_ts_;
  std::array<prometheus::Counter*, static_cast<size_t>(HttpDrop::kCount)> dropped_{};
  prometheus::Gauge* web_reload_ok_;
  prometheus::Gauge* web_reload_ts_;
};

}  // namespace fabricwatch::exporter
