#include "exporter/pipeline.h"

#include <cstdlib>

#include "core/log.h"
#include "probes/node/sources.h"

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
  for (auto& source : probes::node::makeNodeSources()) {
    config::SourceConfig sc = cfg.sourceConfig(source->name());
    if (!sc.enabled) continue;
    sched->addSource(std::move(source), core::Schedule{sc.interval, sc.timeout});
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
  return sched;
}

std::vector<std::string> knownSourceNames() { return probes::node::nodeSourceNames(); }

}  // namespace fabricwatch::exporter
