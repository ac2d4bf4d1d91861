#pragma once
// The policy stage of the snapshot pipeline: on each new snapshot it resolves the node's
// resource group, prepares the facts (resource_group, NCCL list annotations, and in serve the
// counters' increases and rates), evaluates the current packs, and fills snapshot.violations
// and snapshot.status["policy"] (served at /api/v1/violations). At scrape time it renders the
// fabricwatch_policy_* metrics from that snapshot alone, the pack store's reload state included
// (docs/policies.md lists them).

#include <atomic>
#include <memory>
#include <string>

#include "core/source.h"
#include "policy/counter_history.h"
#include "policy/evaluator.h"
#include "policy/pack_store.h"
#include "policy/resource_group.h"
#include "policy/violation_tracker.h"

namespace fabricwatch::policy {

struct StageOptions {
  // flag, env and config values of the resource group; the label file is read on each apply.
  ResourceGroupInputs group;
  std::string resource_group_file;
  EvalSettings eval;
  // serve: the violations' lifecycle, kept across reloads by the daemon; null (check): none.
  std::shared_ptr<ViolationTracker> tracker;
  std::chrono::milliseconds violation_hold{std::chrono::minutes(5)};  // policy.violation_hold
  // serve: the counters' samples, kept across reloads by the daemon, from which the stage adds
  // the increases and rates to the facts (policy/counter_history.h); null (check): none.
  std::shared_ptr<CounterHistory> counters;
  std::chrono::milliseconds counter_window{std::chrono::minutes(10)};  // policy.counter_window
};

class PolicyStage : public core::Stage {
 public:
  PolicyStage(std::shared_ptr<PackStore> packs, StageOptions opts);

  std::string_view name() const override { return "policy"; }
  void apply(core::Snapshot& snapshot) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
  std::vector<core::OptionalMetric> optionalMetrics() const override;

 private:
  std::shared_ptr<PackStore> packs_;
  StageOptions opts_;
  std::atomic<uint64_t> errors_total_{0};
};

// The group as set without facts (flag, env, configuration, label file read now); "" when it
// would be derived from the facts. The peer mesh starts before the first facts and takes it
// from here (the fabric probe's provider per group).
std::string configuredResourceGroup(const StageOptions& opts);

// Turns an evaluation into the snapshot's violations and status["policy"] (shared by the stage
// and tests).
void publishEvaluation(const Evaluation& e, const ResourceGroup& group, const PackSet& packs,
                       const ReloadStatus& reload, uint64_t errors_total, core::Snapshot& snapshot);

// Samples the rdma source's counters when its collection is new (the stage runs on every
// publish) and adds their increases and rates to the facts (shared by the stage and tests).
void deriveCounterChanges(CounterHistory& history, std::chrono::milliseconds window,
                          core::Snapshot& snapshot);

// Gives this evaluation's violations their lifecycle (began, recovering) and lists the recently
// cleared ones in status["policy"] (shared by the stage and tests).
void trackViolations(ViolationTracker& tracker, std::chrono::milliseconds hold,
                     core::Snapshot& snapshot);

// The optional families of the policy metrics: [policy] extra_metrics.
std::vector<core::OptionalMetric> policyOptionalMetrics();

}  // namespace fabricwatch::policy
