#include "exporter/self_metrics.h"

#include <chrono>

#include "exporter/build_info.h"

namespace fabricwatch::exporter {

SelfMetrics::SelfMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  prometheus::BuildGauge()
      .Name("fabricwatch_build_info")
      .Help(
          "A metric with a constant '1' value labeled by version, revision and build flags of "
          "fabricwatch.")
      .Register(*registry_)
      .Add({{"version", kVersion}, {"revision", kRevision}, {"build", kBuildFlags}})
      .Set(1);
  requests_ = &prometheus::BuildCounter()
                   .Name("fabricwatch_http_requests_total")
                   .Help("HTTP requests served, by route and status code.")
                   .Register(*registry_);
  request_duration_ = &prometheus::BuildHistogram()
                           .Name("fabricwatch_http_request_duration_seconds")
                           .Help(
                               "Time to serve an HTTP request, by route: /metrics only (the "
                               "other routes are counted in fabricwatch_http_requests_total).")
                           .Register(*registry_);
  auto& ok = prometheus::BuildGauge()
                 .Name("fabricwatch_config_last_reload_successful")
                 .Help(
                     "Whether the last configuration load or reload succeeded (1) or kept the "
                     "previous configuration (0).")
                 .Register(*registry_);
  reload_ok_ = &ok.Add({});
  auto& ts = prometheus::BuildGauge()
                 .Name("fabricwatch_config_last_reload_success_timestamp_seconds")
                 .Help("Unix time of the last successful configuration load.")
                 .Register(*registry_);
  reload_ts_ = &ts.Add({});
}

void SelfMetrics::observeRequest(const std::string& route, int status, double seconds) {
  requests_->Add({{"route", route}, {"code", std::to_string(status)}}).Increment();
  // Scrapes only: a histogram per route would add 12 series for every probe path a kubelet or
  // a person hits (/healthz, /readyz, the status page), for latencies nobody alerts on.
  if (route != "/metrics") return;
  static const prometheus::Histogram::BucketBoundaries kBuckets = {0.0005, 0.001, 0.005, 0.01,
                                                                   0.05,   0.1,   0.5,   1};
  request_duration_->Add({{"route", route}}, kBuckets).Observe(seconds);
}

void SelfMetrics::configReloaded(bool success) {
  reload_ok_->Set(success ? 1 : 0);
  if (success) {
    reload_ts_->Set(
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  }
}

}  // namespace fabricwatch::exporter
