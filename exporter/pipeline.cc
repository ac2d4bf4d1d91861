#include "exporter/pipeline.h"

#include "probes/node/sources.h"

namespace fabricwatch::exporter {

std::unique_ptr<core::Scheduler> buildScheduler(const config::Config& cfg,
                                                core::SnapshotStore& store) {
  core::CollectContext ctx;
  ctx.rootfs = cfg.host.rootfs;
  auto sched = std::make_unique<core::Scheduler>(store, ctx, cfg.collect.jitter);
  for (auto& source : probes::node::makeNodeSources()) {
    config::SourceConfig sc = cfg.sourceConfig(source->name());
    if (!sc.enabled) continue;
    sched->addSource(std::move(source), core::Schedule{sc.interval, sc.timeout});
  }
  return sched;
}

std::vector<std::string> knownSourceNames() { return probes::node::nodeSourceNames(); }

}  // namespace fabricwatch::exporter
