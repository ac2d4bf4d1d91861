#include "probes/mesh/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fabricwatch::probes {

const std::vector<double>& latencyBuckets() {
  static const std::vector<double> b = {0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                        0.0025,   0.005,   0.01,   0.025,   0.05,   0.1,
                                        0.25,     0.5,     1.0,    2.5};
  return b;
}

void Histogram::observe(double v) {
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);
  counts_[static_cast<size_t>(it - bounds_.begin())]++;
  ++count_;
  sum_ += v;
}

void Histogram::render(prometheus::MetricFamily& family, const core::LabelPairs& labels) const {
  prometheus::ClientMetric m;
  for (const auto& [k, v] : labels) m.label.push_back({k, v});
  m.histogram.sample_count = count_;
  m.histogram.sample_sum = sum_;
  uint64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    m.histogram.bucket.push_back({cum, bounds_[i]});
  }
  m.histogram.bucket.push_back({count_, std::numeric_limits<double>::infinity()});
  family.metric.push_back(std::move(m));
}

prometheus::MetricFamily histogramFamily(std::string name, std::string help) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = prometheus::MetricType::Histogram;
  return f;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

}  // namespace fabricwatch::probes
