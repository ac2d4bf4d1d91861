// fabricwatch's own counters: the families and the order prometheus-cpp's Registry rendered
// them in, and updates from many threads (this suite runs under TSan: scripts/dev).
#include "exporter/self_metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <regex>
#include <thread>
#include <vector>

#include "core/text_format.h"
#include "exporter/build_info.h"

namespace fabricwatch::exporter {
namespace {

std::string text(const SelfMetrics& m) {
  core::MetricFamilies fams;
  m.collect(fams);
  return core::textFormat(fams);
}

// Time-dependent values masked: reload timestamps and the duration sum.
std::string masked(const SelfMetrics& m) {
  static const std::regex kTime(
      "((_timestamp_seconds|duration_seconds_sum\\{route=\"[^\"]*\"\\}) )[0-9.e+-]+");
  return std::regex_replace(text(m), kTime, "$1<t>");
}

const char* const kDroppedHelp =
    "# HELP fabricwatch_http_dropped_total HTTP connections the server refused or closed before "
    "answering, or answered with an error and closed, by reason: limit, address_limit, evicted "
    "(no complete request, or not reading its answer; closed to make room), evicted_idle, "
    "head_timeout, write_timeout, "
    "tls_handshake, malformed, target, version, too_large, too_many_headers, body, auth_busy.\n"
    "# TYPE fabricwatch_http_dropped_total counter\n";

std::string dropped(int malformed) {
  std::string s = kDroppedHelp;
  for (const char* r : {"limit", "address_limit", "evicted", "evicted_idle", "head_timeout",
                        "write_timeout", "tls_handshake", "malformed", "target", "version",
                        "too_large", "too_many_headers", "body", "auth_busy"}) {
    s += std::string("fabricwatch_http_dropped_total{reason=\"") + r + "\"} " +
         (std::string(r) == "malformed" ? std::to_string(malformed) : "0") + "\n";
  }
  return s;
}

std::string gauges(int reload_ok, int web_ok) {
  return std::string(
             "# HELP fabricwatch_build_info A metric with a constant '1' value labeled by "
             "version, revision and build flags of fabricwatch.\n"
             "# TYPE fabricwatch_build_info gauge\n"
             "fabricwatch_build_info{build=\"") +
         kBuildFlags + "\",revision=\"" + kRevision + "\",version=\"" + kVersion +
         "\"} 1\n"
         "# HELP fabricwatch_config_last_reload_successful Whether the last configuration load "
         "or reload succeeded (1) or kept the previous configuration (0).\n"
         "# TYPE fabricwatch_config_last_reload_successful gauge\n"
         "fabricwatch_config_last_reload_successful " +
         std::to_string(reload_ok) +
         "\n"
         "# HELP fabricwatch_config_last_reload_success_timestamp_seconds Unix time of the last "
         "successful configuration load.\n"
         "# TYPE fabricwatch_config_last_reload_success_timestamp_seconds gauge\n"
         "fabricwatch_config_last_reload_success_timestamp_seconds <t>\n"
         "# HELP fabricwatch_web_config_last_reload_successful Whether the last load of "
         "--web.config.file (TLS, basic auth) succeeded (1) or kept the previous one (0); 1 "
         "without the flag.\n"
         "# TYPE fabricwatch_web_config_last_reload_successful gauge\n"
         "fabricwatch_web_config_last_reload_successful " +
         std::to_string(web_ok) +
         "\n"
         "# HELP fabricwatch_web_config_last_reload_success_timestamp_seconds Unix time of the "
         "last successful load of --web.config.file.\n"
         "# TYPE fabricwatch_web_config_last_reload_success_timestamp_seconds gauge\n"
         "fabricwatch_web_config_last_reload_success_timestamp_seconds <t>\n";
}

TEST(SelfMetricsTest, BeforeAnyRequestOnlyTheDropReasonsAndGauges) {
  SelfMetrics m;
  // No request yet: neither the request counter nor the histogram has a series, and a family
  // without series is left out, as the Registry left it out.
  EXPECT_EQ(masked(m), dropped(0) + gauges(0, 1));
}

TEST(SelfMetricsTest, RendersCountersThenGaugesThenTheHistogram) {
  SelfMetrics m;
  m.configReloaded(true);
  m.webConfigReloaded(false);
  m.httpDropped(http::HttpDrop::kMalformed);
  m.httpDropped(http::HttpDrop::kCount);  // not a reason: ignored
  m.observeRequest("/readyz", 503, 0.1);
  m.observeRequest("/metrics", 200, 0.0005);  // on a bound: counts in le="0.0005"
  m.observeRequest("/metrics", 200, 0.003);
  m.observeRequest("/metrics", 200, 1.5);  // past the last bound: +Inf only
  m.observeRequest("other", 404, 0.0001);
  m.observeRequest("/", 200, 0.0001);
  m.observeRequest("/readyz", 200, 0.0001);
  // Label sets sorted by their labels as written (code, then route).
  std::string requests =
      "# HELP fabricwatch_http_requests_total HTTP requests served, by route and status code.\n"
      "# TYPE fabricwatch_http_requests_total counter\n"
      "fabricwatch_http_requests_total{code=\"200\",route=\"/\"} 1\n"
      "fabricwatch_http_requests_total{code=\"200\",route=\"/metrics\"} 3\n"
      "fabricwatch_http_requests_total{code=\"200\",route=\"/readyz\"} 1\n"
      "fabricwatch_http_requests_total{code=\"404\",route=\"other\"} 1\n"
      "fabricwatch_http_requests_total{code=\"503\",route=\"/readyz\"} 1\n";
  std::string histogram =
      "# HELP fabricwatch_http_request_duration_seconds Time to serve an HTTP request, by route: "
      "/metrics only (the other routes are counted in fabricwatch_http_requests_total).\n"
      "# TYPE fabricwatch_http_request_duration_seconds histogram\n"
      "fabricwatch_http_request_duration_seconds_count{route=\"/metrics\"} 3\n"
      "fabricwatch_http_request_duration_seconds_sum{route=\"/metrics\"} <t>\n"
      "fabricwatch_http_request_duration_seconds_bucket{route=\"/metrics\",le=\"0.0005\"} 1\n"
      "fabricwatch_http_request_duration_seconds_bucket{route=\"/metrics\",le=\"0.0025\"} 1\n"
      "fabricwatch_http_request_duration_seconds_bucket{route=\"/metrics\",le=\"0.01\"} 2\n"
      "fabricwatch_http_request_duration_seconds_bucket{route=\"/metrics\",le=\"0.05\"} 2\n"
      "fabricwatch_http_request_duration_seconds_bucket{route=\"/metrics\",le=\"0.25\"} 2\n"
      "fabricwatch_http_request_duration_seconds_bucket{route=\"/metrics\",le=\"+Inf\"} 3\n";
  EXPECT_EQ(masked(m), requests + dropped(1) + gauges(1, 0) + histogram);
  EXPECT_NE(text(m).find("duration_seconds_sum{route=\"/metrics\"} 1.5035\n"), std::string::npos)
      << text(m);
}

TEST(SelfMetricsTest, AReloadStampsItsTimeAndAFailureKeepsTheLastSuccessfulOne) {
  SelfMetrics m;
  m.configReloaded(true);
  std::string first = text(m);
  std::smatch t;
  ASSERT_TRUE(std::regex_search(
      first, t, std::regex("config_last_reload_success_timestamp_seconds ([0-9.e+]+)\n")));
  EXPECT_GT(std::stod(t[1]), 1.7e9);
  m.configReloaded(false);
  std::string second = text(m);
  EXPECT_NE(second.find("fabricwatch_config_last_reload_successful 0\n"), std::string::npos);
  EXPECT_NE(second.find("config_last_reload_success_timestamp_seconds " + t[1].str() + "\n"),
            std::string::npos);
}

TEST(SelfMetricsTest, CountsEveryUpdateFromConcurrentThreadsWhileScraped) {
  SelfMetrics m;
  constexpr int kThreads = 8, kEach = 2000;
  std::atomic<bool> done{false};
  std::thread scraper([&] {
    while (!done.load()) {
      core::MetricFamilies fams;
      m.collect(fams);
    }
  });
  std::vector<std::thread> workers;
  for (int i = 0; i < kThreads; ++i) {
    workers.emplace_back([&m, i] {
      for (int n = 0; n < kEach; ++n) {
        m.observeRequest(i % 2 ? "/metrics" : "/healthz", 200, 0.001);
        m.httpDropped(http::HttpDrop::kHeadTimeout);
        if (n % 100 == 0) m.configReloaded(true);
      }
    });
  }
  for (auto& w : workers) w.join();
  done = true;
  scraper.join();
  std::string s = text(m);
  EXPECT_NE(s.find("{code=\"200\",route=\"/healthz\"} 8000\n"), std::string::npos) << s;
  EXPECT_NE(s.find("{code=\"200\",route=\"/metrics\"} 8000\n"), std::string::npos) << s;
  EXPECT_NE(s.find("duration_seconds_count{route=\"/metrics\"} 8000\n"), std::string::npos);
  EXPECT_NE(s.find("{reason=\"head_timeout\"} 16000\n"), std::string::npos) << s;
}

}  // namespace
}  // namespace fabricwatch::exporter
