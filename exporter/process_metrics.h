#pragma once
// The standard process_* metrics every Prometheus exporter serves (CPU, memory, file
// descriptors, start time), read from /proc/self at scrape time. Not rooted at --path.rootfs:
// they describe fabricwatch itself.

#include "core/metrics.h"

namespace fabricwatch::exporter {

void appendProcessMetrics(core::MetricFamilies& out);

}  // namespace fabricwatch::exporter
