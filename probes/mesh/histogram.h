#pragma once
// A cumulative histogram rendered as a Prometheus histogram family at scrape time (the prober
// owns the counts, as the source of every snapshot metric owns its values).

#include <cstdint>
#include <string>
#include <vector>

#include "core/metrics.h"

namespace fabricwatch::probes {

// 25 µs .. 2.5 s: loopback RTTs are tens of µs, a congested fabric path is ms, a timeout is s.
const std::vector<double>& latencyBuckets();

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds = latencyBuckets())
      : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
  void observe(double v);
  uint64_t count() const { return count_; }
  // Appends one sample (with +Inf) to `family` (whose type must be Histogram).
  void render(prometheus::MetricFamily& family, const core::LabelPairs& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; last is +Inf
  uint64_t count_ = 0;
  double sum_ = 0;
};

prometheus::MetricFamily histogramFamily(std::string name, std::string help);

// Percentile (0..100) of an unsorted sample set by nearest rank; 0 for an empty set.
double percentile(std::vector<double> v, double p);

}  // namespace fabricwatch::probes
