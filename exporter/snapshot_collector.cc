#include "exporter/snapshot_collector.h"

#include <chrono>

namespace fabricwatch::exporter {

namespace {
double unixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}
}  // namespace

core::MetricFamilies renderSnapshot(const core::Snapshot& snap) {
  core::MetricFamilies out;
  auto success = core::gaugeFamily(
      "fabricwatch_source_success",
      "Whether the last run of a fact source succeeded (1) or failed or timed out (0).");
  auto duration = core::gaugeFamily("fabricwatch_source_duration_seconds",
                                    "Duration of the last run of a fact source.");
  auto errors = core::counterFamily(
      "fabricwatch_source_read_errors_total",
      "Files a fact source found but could not read or parse; their facts are absent.");
  auto runs = core::counterFamily("fabricwatch_source_runs_total", "Runs of a fact source.");
  auto failures = core::counterFamily("fabricwatch_source_failures_total",
                                      "Runs of a fact source that failed or timed out.");
  auto last = core::gaugeFamily("fabricwatch_source_last_run_timestamp_seconds",
                                "Unix time at which a fact source last finished.");
  // success, duration, errors and the last run are what the alerts and dashboards read; the
  // run and failure totals are optional ([collect] extra_metrics).
  const bool with_runs = core::wantsFamily(snap, runs.name);
  const bool with_failures = core::wantsFamily(snap, failures.name);
  for (const auto& s : snap.sources) {
    if (!s.ran) continue;
    core::LabelPairs l{{"source", s.name}};
    core::addSample(success, l, s.success ? 1 : 0);
    core::addSample(duration, l, s.duration_seconds);
    core::addSample(errors, l, static_cast<double>(s.read_errors_total));
    if (with_runs) core::addSample(runs, l, static_cast<double>(s.runs_total));
    if (with_failures) core::addSample(failures, l, static_cast<double>(s.failures_total));
    core::addSample(last, l, unixSeconds(s.last_run));
  }
  for (auto* f : {&success, &duration, &errors, &runs, &failures, &last}) {
    if (!f->metric.empty()) out.push_back(std::move(*f));
  }
  auto published = core::gaugeFamily("fabricwatch_snapshot_timestamp_seconds",
                                     "Unix time at which the current snapshot was published; a "
                                     "stale value means the pipeline is stuck.");
  core::addSample(published, {}, unixSeconds(snap.published_at));
  out.push_back(std::move(published));
  for (const auto& r : snap.renderers) r->renderMetrics(snap, out);
  for (const auto& fams : snap.captured_metrics) out.insert(out.end(), fams->begin(), fams->end());
  return out;
}

std::vector<core::OptionalMetric> pipelineOptionalMetrics() {
  return {{"fabricwatch_source_runs_total", "", "+1 per source"},
          {"fabricwatch_source_failures_total", "", "+1 per source"}};
}

}  // namespace fabricwatch::exporter
