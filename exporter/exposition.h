#pragma once
// /metrics as bytes rendered once per snapshot. A snapshot is immutable, so its metric families
// are rendered (text, and the start of a gzip member) when it is published, by the last stage
// of the pipeline; a scrape then sends those bytes as they are, shared with the snapshot, and
// renders only what changes per request after them: fabricwatch's own HTTP and process
// metrics. Every series of the snapshot part comes from that one snapshot.

#include <memory>
#include <string>

#include "core/snapshot.h"
#include "core/source.h"
#include "http/http_server.h"

namespace fabricwatch::exporter {

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Renders a snapshot's families (renderSnapshot) as text and as a gzip prefix.
std::shared_ptr<const core::Exposition> renderExposition(const core::Snapshot& snapshot);

// The last stage of the daemon's pipeline: attaches the rendered exposition to each snapshot
// before it is published, with the optional series the configuration turns on.
class ExpositionStage : public core::Stage {
 public:
  explicit ExpositionStage(std::shared_ptr<const core::MetricSelection> selection = nullptr)
      : selection_(std::move(selection)) {}
  std::string_view name() const override { return "exposition"; }
  void apply(core::Snapshot& snapshot) override {
    snapshot.metric_selection = selection_;
    snapshot.exposition = renderExposition(snapshot);
  }

 private:
  std::shared_ptr<const core::MetricSelection> selection_;
};

// The /metrics answer: the snapshot's exposition (rendered now if it has none; nothing before
// the first snapshot), then `per_request` (text format), gzip'd as one member when `gzip`.
http::HttpResponse metricsResponse(const std::shared_ptr<const core::Snapshot>& snapshot,
                                   const std::string& per_request, bool gzip);

}  // namespace fabricwatch::exporter
