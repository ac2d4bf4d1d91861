#include "exporter/pipeline.h"

#include <cstdlib>

#include "core/log.h"
#include "exporter/exposition.h"
#include "exporter/snapshot_collector.h"
#include "facts/sources.h"
#include "probes/kinds/nccl/nccl_probe_source.h"
#include "probes/mesh/peer_source.h"
#include "probes/mesh/probe_kind.h"
#include "probes/peer_setup.h"

namespace fabricwatch::exporter {

policy::PackStoreOptions packStoreOptions(const config::Config& cfg) {
  return policy::PackStoreOptions{cfg.policy.paths, cfg.policy.shipped, cfg.policy.reload_interval};
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
  return o;
}

std::unique_ptr<core::Scheduler> buildScheduler(const config::Config& cfg,
                                                core::SnapshotStore& store,
                                                const PipelineOptions& opts) {
  core::CollectContext ctx;
  ctx.rootfs = cfg.host.rootfs;
  auto sched = std::make_unique<core::Scheduler>(store, ctx, cfg.collect.jitter);
  for (auto& source : facts::makeNodeSources()) {
    config::SourceConfig sc = cfg.sourceConfig(source->name());
    if (!sc.enabled) continue;
    std::string name(source->name());
    sched->addSource(std::move(source), core::Schedule{sc.interval, sc.timeout},
                     [name] { return facts::makeNodeSource(name); });
  }
  if (cfg.sourceConfig("peer").enabled) {
    // The peer source only copies the prober's results, so it runs as often as rounds do
    // unless [collect.sources.peer] says otherwise.
    core::Schedule sc{cfg.probe.interval, cfg.collect.timeout};
    if (auto it = cfg.collect.sources.find("peer"); it != cfg.collect.sources.end()) {
      if (it->second.interval.count()) sc.interval = it->second.interval;
      if (it->second.timeout.count()) sc.timeout = it->second.timeout;
    }
    sc.timeout = std::min(sc.timeout, sc.interval);
    sched->addSource(
        std::make_shared<probes::PeerSource>(opts.prober, probes::resolveNodeName(cfg)), sc);
  }
  if (opts.heavy_probes && cfg.probes.ncclEnabled() && cfg.probes.nccl.local) {
    const auto& n = cfg.probes.nccl;
    probes::nccl::NcclProbeOptions o;
    static_cast<probes::nccl::RunSettings&>(o) = probes::nccl::runSettings(n);
    o.run_at_start = n.run_at_start;
    // The source's own deadline lies beyond the child's, which the source enforces itself: the
    // scheduler's is only a backstop (reading the log, a slow reap).
    auto timeout = std::min<config::Duration>(n.interval, n.timeout + std::chrono::seconds(30));
    sched->addSource(std::make_shared<probes::nccl::NcclProbeSource>(std::move(o)),
                     core::Schedule{n.interval, timeout});
  }
  if (opts.policy) {
    auto packs = opts.packs;
    if (!packs) {
      packs = std::make_shared<policy::PackStore>(packStoreOptions(cfg));
      for (const auto& d : packs->reload())
        core::log::error("policy", "invalid policy pack", {{"problem", d.format()}});
    }
    sched->addStage(std::make_shared<policy::PolicyStage>(packs, policyStageOptions(cfg)));
  }
  // Last: it renders what every source and stage before it renders.
  if (opts.exposition) sched->addStage(std::make_shared<ExpositionStage>(metricSelection(cfg)));
  return sched;
}

std::vector<std::string> knownSourceNames() {
  auto names = facts::nodeSourceNames();
  names.push_back("peer");
  return names;
}

std::map<std::string, std::vector<core::OptionalMetric>, std::less<>> optionalMetricsByTable() {
  std::map<std::string, std::vector<core::OptionalMetric>, std::less<>> out;
  out["collect"] = pipelineOptionalMetrics();
  for (const auto& s : facts::makeNodeSources())
    out["collect.sources." + std::string(s->name())] = s->optionalMetrics();
  out["collect.sources.peer"] = {};
  out["policy"] = policy::policyOptionalMetrics();
  for (const auto& k : probes::probeKindNames()) out["probes." + k] = {};
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

config::LoadOptions configLoadOptions() {
  return {knownSourceNames(), probes::probeKindNames(), optionalMetricsByTable()};
}

}  // namespace fabricwatch::exporter
