#pragma once
// The families of tests/core/golden/text_format.prom: every metric type and what the format
// escapes or spells specially. That file was written by prometheus-cpp 1.0.1's TextSerializer
// (Debian's libprometheus-cpp-core, which fabricwatch linked before core/text_format.h) from
// these families, so the golden test proves our writer byte-identical to it.

#include <cmath>
#include <limits>

#include "core/metrics.h"

namespace fabricwatch::testing {

inline core::MetricFamilies textFormatGoldenFamilies() {
  using prometheus::ClientMetric;
  using prometheus::MetricFamily;
  using prometheus::MetricType;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  core::MetricFamilies out;

  auto counters = core::counterFamily("golden_events_total", "Events, by kind.");
  core::addSample(counters, {{"kind", "plain"}}, 42);
  core::addSample(counters, {{"kind", "quote\"back\\slash\nnewline"}}, 1);
  core::addSample(counters, {{"kind", "2^60"}}, 1152921504606846976.0);
  core::addSample(counters, {{"kind", "2^53+2"}}, 9007199254740994.0);
  core::addSample(counters, {{"a", ""}, {"kind", "utf8 ✓"}}, 0);
  out.push_back(std::move(counters));

  auto gauges = core::gaugeFamily("golden_value", "Values as %.16g writes them.");
  const std::pair<const char*, double> values[] = {{"zero", 0.0},
                                                   {"negative_zero", -0.0},
                                                   {"one", 1.0},
                                                   {"tenth", 0.1},
                                                   {"third", 1.0 / 3},
                                                   {"1e21", 1e21},
                                                   {"1e-7", 1e-7},
                                                   {"1e15", 1e15},
                                                   {"1e16", 1e16},
                                                   {"1e17", 1e17},
                                                   {"negative", -2.5},
                                                   {"max", std::numeric_limits<double>::max()},
                                                   {"denormal", 5e-324},
                                                   {"nan", std::nan("")},
                                                   {"inf", kInf},
                                                   {"minus_inf", -kInf},
                                                   {"unix_time", 1796112876.930453}};
  for (const auto& [name, v] : values) core::addSample(gauges, {{"case", name}}, v);
  out.push_back(std::move(gauges));

  auto bare = core::gaugeFamily("golden_no_labels", "A gauge without labels.");
  core::addSample(bare, {}, 3);
  out.push_back(std::move(bare));

  MetricFamily no_help;
  no_help.name = "golden_no_help";
  no_help.type = MetricType::Gauge;
  no_help.metric.emplace_back();
  out.push_back(std::move(no_help));

  out.push_back(core::gaugeFamily("golden_empty", "A family without samples."));

  MetricFamily untyped{
      "golden_untyped", "An untyped sample with a timestamp.", MetricType::Untyped, {}};
  ClientMetric u;
  u.label = {{"x", "y"}};
  u.untyped.value = 7;
  u.timestamp_ms = 1796112876930;
  untyped.metric.push_back(u);
  u.label.clear();
  u.untyped.value = -1;
  u.timestamp_ms = -5;
  untyped.metric.push_back(u);
  out.push_back(std::move(untyped));

  MetricFamily summary{"golden_summary", "A summary.", MetricType::Summary, {}};
  ClientMetric s;
  s.label = {{"route", "/metrics"}};
  s.summary.sample_count = 18446744073709551615ull;
  s.summary.sample_sum = 12.5;
  s.summary.quantile = {{0.5, 0.001}, {0.99, 0.25}, {1e-7, kInf}};
  summary.metric.push_back(s);
  out.push_back(std::move(summary));

  MetricFamily histogram{"golden_seconds", "Histograms.", MetricType::Histogram, {}};
  ClientMetric h;
  // Bounds without +Inf: the writer adds it with the sample count.
  h.label = {{"route", "/metrics"}};
  h.histogram.sample_count = 9;
  h.histogram.sample_sum = 0.004350778;
  h.histogram.bucket = {{1, 0.0005}, {2, 0.0025}, {3, 0.01}, {3, 0.05}, {3, 0.25}};
  histogram.metric.push_back(h);
  // Bounds ending at +Inf, as probes/mesh/histogram.cc renders them.
  h.label = {{"peer", "b\"c"}};
  h.histogram.sample_count = 4;
  h.histogram.sample_sum = 1e-7;
  h.histogram.bucket = {{0, 0.000025}, {4, 2.5}, {4, kInf}};
  h.timestamp_ms = 1000;
  histogram.metric.push_back(h);
  // No buckets at all, no labels.
  h.label.clear();
  h.histogram = {};
  h.timestamp_ms = 0;
  histogram.metric.push_back(h);
  out.push_back(std::move(histogram));
  return out;
}

}  // namespace fabricwatch::testing
