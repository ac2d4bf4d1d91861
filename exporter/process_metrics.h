#pragma once
// The standard process_* metrics every Prometheus exporter serves (CPU, memory, file
// descriptors, start time), read from /proc/self at scrape time. Not rooted at --path.rootfs:
// they describe fabricwatch itself.

#include "core/metrics.h"

namespace fabricwatch::exporter {

void appendProcessMetrics(core::MetricFamilies& out);

// The process's open descriptors. Listing /proc/self/fd costs the kernel a dentry per entry
// (about 0.6 ms for the ~630 kept sysfs descriptors of a p5 node, a third of a scrape's CPU);
// one poll() over the descriptor table (FDSize in /proc/self/status) answers POLLNVAL for each
// closed slot, in a tenth of that. Falls back to the listing when the table size is unknown.
size_t countOpenFds();

}  // namespace fabricwatch::exporter
