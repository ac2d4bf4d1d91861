#include "core/metrics.h"

namespace fabricwatch::core {

namespace {
prometheus::MetricFamily family(std::string name, std::string help, prometheus::MetricType t) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = t;
  return f;
}
}  // namespace

prometheus::MetricFamily gaugeFamily(std::string name, std::string help) {
  return family(std::move(name), std::move(help), prometheus::MetricType::Gauge);
}

prometheus::MetricFamily counterFamily(std::string name, std::string help) {
  return family(std::move(name), std::move(help), prometheus::MetricType::Counter);
}

void addSample(prometheus::MetricFamily& family, const LabelPairs& labels, double value) {
  prometheus::ClientMetric m;
  m.label.reserve(labels.size());
  for (const auto& [k, v] : labels) m.label.push_back({k, v});
  if (family.type == prometheus::MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  family.metric.push_back(std::move(m));
}

}  // namespace fabricwatch::core
