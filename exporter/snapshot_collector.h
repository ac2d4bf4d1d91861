#pragma once
// Turns a snapshot into metric families: per-source health, the publication time, then the
// families each source and stage renders from the facts and those sources captured. Reads only
// the snapshot, never a live object. The daemon renders this once per snapshot (exposition.h).

#include "core/snapshot.h"

namespace fabricwatch::exporter {

core::MetricFamilies renderSnapshot(const core::Snapshot& snapshot);

// The optional families of the pipeline's own (per-source) metrics: [collect] extra_metrics.
std::vector<core::OptionalMetric> pipelineOptionalMetrics();

}  // namespace fabricwatch::exporter
