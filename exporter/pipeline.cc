#include "exporter/pipeline.h"

#include "probes/node/sources.h"
#include "probes/peer/peer_setup.h"
#include "probes/peer/peer_source.h"

namespace fabricwatch::exporter {

std::unique_ptr<core::Scheduler> buildScheduler(
    const config::Config& cfg, core::SnapshotStore& store,
    std::shared_ptr<const probes::peer::PeerProber> prober) {
  core::CollectContext ctx;
  ctx.rootfs = cfg.host.rootfs;
  auto sched = std::make_unique<core::Scheduler>(store, ctx, cfg.collect.jitter);
  for (auto& source : probes::node::makeNodeSources()) {
    config::SourceConfig sc = cfg.sourceConfig(source->name());
    if (!sc.enabled) continue;
    sched->addSource(std::move(source), core::Schedule{sc.interval, sc.timeout});
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
    sched->addSource(std::make_shared<probes::peer::PeerSource>(std::move(prober),
                                                                probes::peer::resolveNodeName(cfg)),
                     sc);
  }
  return sched;
}

std::vector<std::string> knownSourceNames() {
  auto names = probes::node::nodeSourceNames();
  names.push_back("peer");
  return names;
}

}  // namespace fabricwatch::exporter
