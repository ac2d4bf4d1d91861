#pragma once
// Assembles the snapshot pipeline from a configuration: which sources run, on what schedule,
// and which stages derive from their facts. Shared by `serve`, `facts` and `check`.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/loader.h"
#include "core/scheduler.h"
#include "policy/pack_store.h"
#include "policy/policy_stage.h"
#include "probes/mesh/peer_prober.h"

namespace fabricwatch::exporter {

struct PipelineOptions {
  // The packs the policy stage evaluates; null: loaded here from the configuration (a load
  // error is logged and no pack runs).
  std::shared_ptr<policy::PackStore> packs;
  bool policy = true;  // add the policy stage
  // The peer mesh (serve, when the mesh is on) feeds the "peer" source; without it that source
  // reports node.name and an empty membership.
  std::shared_ptr<const probes::PeerProber> prober;
  // Heavy probes (the local NCCL run, when [probes.nccl] enables it) run only in the daemon: a
  // one-shot `facts` or `check` never starts NCCL.
  bool heavy_probes = false;
  // Render each snapshot's /metrics exposition when it is published (serve), as the last stage.
  bool exposition = false;
  // The violations' lifecycle (serve: one tracker for the daemon's life, so a reload keeps
  // when each began); null: none (check, facts).
  std::shared_ptr<policy::ViolationTracker> violations;
  // The counters' samples (serve: kept for the daemon's life, so rates span a reload); null:
  // no increases or rates (check, facts).
  std::shared_ptr<policy::CounterHistory> counters;
};

std::unique_ptr<core::Scheduler> buildScheduler(const config::Config& cfg,
                                                core::SnapshotStore& store,
                                                const PipelineOptions& opts = {});

// The pack store and stage settings a configuration asks for (the stage reads
// FABRICWATCH_RESOURCE_GROUP from the environment here).
policy::PackStoreOptions packStoreOptions(const config::Config& cfg);
policy::StageOptions policyStageOptions(const config::Config& cfg);

// The optional metric families each configuration table may turn on with extra_metrics
// ("collect", "collect.sources.<name>", "policy", "probes.<kind>"), as their renderers declare
// them; docs/metrics.md lists them.
std::map<std::string, std::vector<core::OptionalMetric>, std::less<>> optionalMetricsByTable();
// The selection a configuration asks for ("*" in a table: all of that table's optional series).
std::shared_ptr<const core::MetricSelection> metricSelection(const config::Config& cfg);

// What a configuration may set and name: the schema with every kind's table, the sources
// ([collect.sources.NAME]), the probe kinds ([probes.KIND]) and the optional series.
config::LoadOptions configLoadOptions();
// The whole default configuration as documented TOML: config/fabricwatch.toml (the daemon's
// own tables, compiled in), then each registered table's defaults (every probe kind's).
std::string defaultConfigText();

}  // namespace fabricwatch::exporter
