#include "exporter/pipeline.h"

#include <cstdlib>

#include "core/log.h"
#include "exporter/exposition.h"
#include "exporter/snapshot_collector.h"
#include "probes/registry.h"

namespace fabricwatch::exporter {

policy::PackStoreOptions packStoreOptions(const config::Config& cfg) {
  return policy::PackStoreOptions{cfg.policy.paths, cfg.policy.shipped, cfg.policy.reload_interval,
                                  probes::factRoots()};
}

policy::StageOptions policyStageOptions(const config::Config& cfg) {
  policy::StageOptions o;
  if (cfg.policy.resource_group_from_flag)
    o.group.flag = cfg.policy.resource_group;
  else
    o.group.config = cfg.policy.resource_group;
  if (const char* env = std::getenv(std::string(policy::kResourceGroupEnv).c_str()))
    o.group.env = env;
  o.resource_group_file = cfg.policy.resource_group_file;
  o.eval.max_workload_subjects = static_cast<size_t>(cfg.policy.max_workload_subjects);
  o.violation_hold = cfg.policy.violation_hold;
  o.counter_window = cfg.policy.counter_window;
  return o;
}

std::unique_ptr<core::Scheduler> buildScheduler(const config::Config& cfg,
                                                core::SnapshotStore& store,
                                                const PipelineOptions& opts) {
  core::CollectContext ctx;
  ctx.rootfs = cfg.host.rootfs;
  auto sched = std::make_unique<core::Scheduler>(store, ctx, cfg.collect.jitter);
  probes::SourceSetup setup{cfg, opts.prober, opts.heavy_probes};
  for (const auto& reg : probes::sources()) {
    if (!cfg.sourceConfig(reg.name).enabled) continue;
    auto source = reg.make(setup);
    if (!source) continue;
    core::Schedule schedule;
    if (reg.schedule) {
      schedule = reg.schedule(cfg);
    } else {
      config::SourceConfig sc = cfg.sourceConfig(reg.name);
      schedule = core::Schedule{sc.interval, sc.timeout};
    }
    core::SourceFactory fresh;
    if (reg.restartable) fresh = [make = reg.make, setup] { return make(setup); };
    sched->addSource(std::move(source), schedule, std::move(fresh));
  }
  if (opts.policy) {
    auto packs = opts.packs;
    if (!packs) {
      packs = std::make_shared<policy::PackStore>(packStoreOptions(cfg));
      for (const auto& d : packs->reload())
        core::log::error("policy", "invalid policy pack", {{"problem", d.format()}});
    }
    policy::StageOptions stage = policyStageOptions(cfg);
    stage.tracker = opts.violations;
    stage.counters = opts.counters;
    sched->addStage(std::make_shared<policy::PolicyStage>(packs, std::move(stage)));
  }
  // Last: it renders what every source and stage before it renders.
  if (opts.exposition) sched->addStage(std::make_shared<ExpositionStage>(metricSelection(cfg)));
  return sched;
}

std::map<std::string, std::vector<core::OptionalMetric>, std::less<>> optionalMetricsByTable() {
  auto out = probes::optionalMetricsByTable();
  out["collect"] = pipelineOptionalMetrics();
  out["policy"] = policy::policyOptionalMetrics();
  return out;
}

std::shared_ptr<const core::MetricSelection> metricSelection(const config::Config& cfg) {
  if (cfg.metrics.extra.empty()) return nullptr;
  auto declared = optionalMetricsByTable();
  auto sel = std::make_shared<core::MetricSelection>();
  for (const auto& [table, selectors] : cfg.metrics.extra) {
    for (const auto& text : selectors) {
      if (text == "*") {
        for (const auto& m : declared[table]) sel->add({m.family, "", ""});
      } else if (auto s = core::parseSelector(text, nullptr)) {
        sel->add(*s);
      }
    }
  }
  return sel;
}

std::string defaultConfigText() {
  std::string out(config::embeddedDefaultToml());
  auto schema = probes::configSchema();
  for (const auto& t : schema->tables())
    if (!t.defaults.empty()) out += "\n" + t.defaults;
  return out;
}

config::LoadOptions configLoadOptions() {
  config::LoadOptions o;
  o.schema = probes::configSchema();
  o.known_sources = probes::sourceNames();
  o.known_probe_kinds = probes::probeKindNames();
  o.optional_metrics = optionalMetricsByTable();
  return o;
}

}  // namespace fabricwatch::exporter
