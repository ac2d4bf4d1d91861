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
  auto& dropped = prometheus::BuildCounter()
                      .Name("fabricwatch_http_dropped_total")
                      .Help(
                          "HTTP connections the server refused or closed before answering, or "
                          "answered with an error and closed, by reason: limit, address_limit, "
                          "evicted (no complete request, closed to make room), evicted_idle, "
                          "head_timeout, write_timeout, tls_handshake, malformed, target, "
                          "version, too_large, too_many_headers, body, auth_busy.")
                      .Register(*registry_);
  // Every reason from the start, so that rate() has a series before the first event.
  for (size_t i = 0; i < dropped_.size(); ++i)
    dropped_[i] = &dropped.Add({{"reason", httpDropReason(static_cast<HttpDrop>(i))}});
  auto& web_ok = prometheus::BuildGauge()
                     .Name("fabricwatch_web_config_last_reload_successful")
                     .Help(
                         "Whether the last load of --web.config.file (TLS, basic auth) succeeded "
                         "(1) or kept the previous one (0); 1 without the flag.")
                     .Register(*registry_);
  web_reload_ok_ = &web_ok.Add({});
  web_reload_ok_->Set(1);
  auto& web_ts = prometheus::BuildGauge()
                     .Name("fabricwatch_web_config_last_reload_success_timestamp_seconds")
                     .Help("Unix time of the last successful load of --web.config.file.")
                     .Register(*registry_);
  web_reload_ts_ = &web_ts.Add({});
}

void SelfMetrics::httpDropped(HttpDrop reason) {
  if (reason < HttpDrop::kCount) dropped_[static_cast<size_t>(reason)]->Increment();
}

void SelfMetrics::webConfigReloaded(bool success) {
  web_reload_ok_->Set(success ? 1 : 0);
  if (success) {
    web_reload_ts_->Set(
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  }
}

void SelfMetrics::observeRequest(const std::string& route, int status, double seconds) {
  requests_->Add({{"route", route}, {"code", std::to_string(status)}}).Increment();
  // Scrapes only: a histogram per route would add 8 series for every probe path a kubelet or
  // a person hits (/healthz, /readyz, the status page), for latencies nobody alerts on.
  if (route != "/metrics") return;
  // Five bounds, a factor of about five apart: a scrape served from the snapshot's bytes takes
  // well under a millisecond, and what matters is seeing it take ten or a hundred times that.
  // (Eight bounds put the p5 root over its 400-series budget once the HTTP server's drop reasons
  // and the verbs source came.)
  static const prometheus::Histogram::BucketBoundaries kBuckets = {0.0005, 0.0025, 0.01, 0.05,
                                                                   0.25};
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
