#pragma once
// Small helpers for building prometheus-cpp metric families from snapshot data, on each scrape
// (prometheus-cpp's Collectable model: "create new metrics each time").

#include <prometheus/metric_family.h>

#include <string>
#include <utility>
#include <vector>

namespace fabricwatch::core {

using MetricFamilies = std::vector<prometheus::MetricFamily>;
using LabelPairs = std::vector<std::pair<std::string, std::string>>;

prometheus::MetricFamily gaugeFamily(std::string name, std::string help);
prometheus::MetricFamily counterFamily(std::string name, std::string help);
void addSample(prometheus::MetricFamily& family, const LabelPairs& labels, double value);

}  // namespace fabricwatch::core
