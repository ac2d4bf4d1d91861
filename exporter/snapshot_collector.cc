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
  auto sanitized = core::counterFamily(
      "fabricwatch_source_sanitized_strings_total",
      "Strings in a fact source's facts or labels that were not valid UTF-8 (or held NUL) and "
      "had the offending bytes replaced by U+FFFD before publication.");
  auto truncated =
      core::gaugeFamily("fabricwatch_source_truncated",
                        "Directories or budgets the last run of a fact source cut short at a bound "
                        "(collection.truncated in the facts); what lies past the bound is absent.");
  auto stuck = core::gaugeFamily(
      "fabricwatch_source_stuck_runs",
      "Runs of a fact source past their timeout that have not returned (each holds a thread).");
  auto abandoned = core::counterFamily(
      "fabricwatch_source_abandoned_runs_total",
      "Stuck runs of a fact source given up so that a fresh instance of the source could run.");
  // success, duration, errors and the last run are what the alerts and dashboards read; the
  // run and failure totals are optional ([collect] extra_metrics). The hardening series
  // (sanitized strings, truncation, stuck and abandoned runs) are zero on a healthy node: a
  // source gets them once one is non-zero, every source when the family is selected, so that
  // a fleet does not pay four series per source for nothing.
  const bool with_runs = core::wantsFamily(snap, runs.name);
  const bool with_failures = core::wantsFamily(snap, failures.name);
  const bool all_sanitized = core::wantsFamily(snap, sanitized.name);
  const bool all_truncated = core::wantsFamily(snap, truncated.name);
  const bool all_stuck = core::wantsFamily(snap, stuck.name);
  const bool all_abandoned = core::wantsFamily(snap, abandoned.name);
  for (const auto& s : snap.sources) {
    if (!s.ran) continue;
    core::LabelPairs l{{"source", s.name}};
    core::addSample(success, l, s.success ? 1 : 0);
    core::addSample(duration, l, s.duration_seconds);
    core::addSample(errors, l, static_cast<double>(s.read_errors_total));
    if (with_runs) core::addSample(runs, l, static_cast<double>(s.runs_total));
    if (with_failures) core::addSample(failures, l, static_cast<double>(s.failures_total));
    core::addSample(last, l, unixSeconds(s.last_run));
    if (all_sanitized || s.sanitized_total > 0)
      core::addSample(sanitized, l, static_cast<double>(s.sanitized_total));
    if (all_truncated || s.truncated > 0)
      core::addSample(truncated, l, static_cast<double>(s.truncated));
    if (all_stuck || s.stuck_runs > 0) core::addSample(stuck, l, static_cast<double>(s.stuck_runs));
    if (all_abandoned || s.abandoned_total > 0)
      core::addSample(abandoned, l, static_cast<double>(s.abandoned_total));
  }
  for (auto* f : {&success, &duration, &errors, &runs, &failures, &last, &sanitized, &truncated,
                  &stuck, &abandoned}) {
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
          {"fabricwatch_source_failures_total", "", "+1 per source"},
          {"fabricwatch_source_sanitized_strings_total", "", "+1 per source (while zero)"},
          {"fabricwatch_source_truncated", "", "+1 per source (while zero)"},
          {"fabricwatch_source_stuck_runs", "", "+1 per source (while zero)"},
          {"fabricwatch_source_abandoned_runs_total", "", "+1 per source (while zero)"}};
}

}  // namespace fabricwatch::exporter
