#include "exporter/self_metrics.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "exporter/build_info.h"

namespace fabricwatch::exporter {

namespace {

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

prometheus::MetricFamily family(const char* name, const char* help, prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

}  // namespace

void SelfMetrics::observeRequest(const std::string& route, int status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{std::to_string(status), route}];
  // Scrapes only: a histogram per route would add 8 series for every probe path a kubelet or
  // a person hits (/healthz, /readyz, the status page), for latencies nobody alerts on.
  if (route != "/metrics") return;
  // Five bounds, a factor of about five apart: a scrape served from the snapshot's bytes takes
  // well under a millisecond, and what matters is seeing it take ten or a hundred times that.
  // (Eight bounds put the p5 root over its 400-series budget once the HTTP server's drop reasons
  // and the verbs source came.) A value equal to a bound counts in that bound's bucket (le).
  auto& d = durations_[route];
  auto bucket = std::lower_bound(kDurationBounds.begin(), kDurationBounds.end(), seconds) -
                kDurationBounds.begin();
  ++d.buckets[static_cast<size_t>(bucket)];
  ++d.count;
  d.sum += seconds;
}

void SelfMetrics::httpDropped(http::HttpDrop reason) {
  if (reason >= http::HttpDrop::kCount) return;
  std::lock_guard lock(mu_);
  ++dropped_[static_cast<size_t>(reason)];
}

void SelfMetrics::configReloaded(bool success) {
  double now = success ? unixNow() : 0;
  std::lock_guard lock(mu_);
  reload_ok_ = success ? 1 : 0;
  if (success) reload_ts_ = now;
}

void SelfMetrics::webConfigReloaded(bool success, std::string_view refused) {
  double now = success ? unixNow() : 0;
  std::lock_guard lock(mu_);
  web_reload_ok_ = success ? 1 : 0;
  if (success) web_reload_ts_ = now;
  if (!success && !refused.empty()) {
    auto it = web_refused_.find(refused);
    if (it == web_refused_.end()) it = web_refused_.emplace(std::string(refused), 0).first;
    ++it->second;
  }
}

void SelfMetrics::collect(core::MetricFamilies& out) const {
  using prometheus::MetricType;
  std::lock_guard lock(mu_);

  // Counters.
  if (!requests_.empty()) {
    auto f = family("fabricwatch_http_requests_total",
                    "HTTP requests served, by route and status code.", MetricType::Counter);
    for (const auto& [key, n] : requests_)
      core::addSample(f, {{"code", key.first}, {"route", key.second}}, static_cast<double>(n));
    out.push_back(std::move(f));
  }
  auto dropped =
      family("fabricwatch_http_dropped_total",
             "HTTP connections the server refused or closed before answering, or answered with an "
             "error and closed, by reason: limit, address_limit, evicted (no complete request, or "
             "not reading its answer; closed to make room), evicted_idle, head_timeout, "
             "write_timeout, tls_handshake, malformed, "
             "target, version, too_large, too_many_headers, body, auth_busy.",
             MetricType::Counter);
  // Every reason from the start, so that rate() has a series before the first event.
  for (size_t i = 0; i < dropped_.size(); ++i) {
    core::addSample(dropped, {{"reason", http::httpDropReason(static_cast<http::HttpDrop>(i))}},
                    static_cast<double>(dropped_[i]));
  }
  out.push_back(std::move(dropped));
  // Only once a reload was refused: most daemons have no web configuration file.
  if (!web_refused_.empty()) {
    auto f = family("fabricwatch_web_config_reloads_refused_total",
                    "Reloads of --web.config.file refused, the previous file kept, by reason: "
                    "invalid, tls_change (TLS on or off needs a restart), less_protection (basic "
                    "auth off, fewer users or client certificates weakened without "
                    "fabricwatch_allow_less_protection: true). Absent until the first.",
                    MetricType::Counter);
    for (const auto& [reason, n] : web_refused_)
      core::addSample(f, {{"reason", reason}}, static_cast<double>(n));
    out.push_back(std::move(f));
  }

  // Gauges.
  auto gauge = [&out](const char* name, const char* help, const core::LabelPairs& labels,
                      double value) {
    auto f = family(name, help, MetricType::Gauge);
    core::addSample(f, labels, value);
    out.push_back(std::move(f));
  };
  gauge("fabricwatch_build_info",
        "A metric with a constant '1' value labeled by version, revision and build flags of "
        "fabricwatch.",
        {{"build", kBuildFlags}, {"revision", kRevision}, {"version", kVersion}}, 1);
  gauge("fabricwatch_config_last_reload_successful",
        "Whether the last configuration load or reload succeeded (1) or kept the previous "
        "configuration (0).",
        {}, reload_ok_);
  gauge("fabricwatch_config_last_reload_success_timestamp_seconds",
        "Unix time of the last successful configuration load.", {}, reload_ts_);
  gauge("fabricwatch_web_config_last_reload_successful",
        "Whether the last load of --web.config.file (TLS, basic auth) succeeded (1) or kept the "
        "previous one (0); 1 without the flag.",
        {}, web_reload_ok_);
  gauge("fabricwatch_web_config_last_reload_success_timestamp_seconds",
        "Unix time of the last successful load of --web.config.file.", {}, web_reload_ts_);

  // Histograms.
  if (!durations_.empty()) {
    auto f = family("fabricwatch_http_request_duration_seconds",
                    "Time to serve an HTTP request, by route: /metrics only (the other routes are "
                    "counted in fabricwatch_http_requests_total).",
                    MetricType::Histogram);
    for (const auto& [route, d] : durations_) {
      prometheus::ClientMetric m;
      m.label.push_back({"route", route});
      m.histogram.sample_count = d.count;
      m.histogram.sample_sum = d.sum;
      uint64_t cumulative = 0;
      for (size_t i = 0; i < d.buckets.size(); ++i) {
        cumulative += d.buckets[i];
        double bound = i < kDurationBounds.size() ? kDurationBounds[i]
                                                  : std::numeric_limits<double>::infinity();
        m.histogram.bucket.push_back({cumulative, bound});
      }
      f.metric.push_back(std::move(m));
    }
    out.push_back(std::move(f));
  }
}

}  // namespace fabricwatch::exporter
