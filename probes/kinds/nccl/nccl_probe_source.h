#pragma once
// The NCCL probe as a node source (probes.nccl.local): every interval (tens of minutes, with the
// scheduler's jitter) it runs a local all-reduce across the node's GPUs in a child process,
// `fabricwatch __nccl-probe` started through /proc/self/exe, with NCCL_DEBUG=INFO written to a
// file that the log parser then reads, so the facts say what NCCL really chose, with algbw and
// busbw per size. It runs with the resource group's recommended NCCL environment (the config's
// [probes.nccl.env]), so a good run also proves those values work.
//
// It is a heavy probe: one at a time per process (the HeavyGate it shares with the peer kind),
// never while another process holds a GPU (/proc/*/fd under the host root), and never in
// process: a hang is a child killed at its deadline, a crash a child's signal. A skipped run
// keeps the last run's results.

#include <chrono>
#include <memory>
#include <string>

#include "core/source.h"
#include "core/value.h"
#include "probes/kinds/nccl/heavy_gate.h"
#include "probes/kinds/nccl/probe_run.h"
#include "probes/mesh/source_registration.h"

namespace fabricwatch::probes::nccl {

struct NcclProbeOptions : RunSettings {
  bool run_at_start = false;
  std::shared_ptr<HeavyGate> gate = HeavyGate::process();
};

class NcclProbeSource : public core::Source {
 public:
  explicit NcclProbeSource(NcclProbeOptions opts) : opts_(std::move(opts)) {}
  std::string_view name() const override { return "nccl_probe"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;

  // The state codes of fabricwatch_nccl_probe_state.
  static int stateCode(const std::string& state);

 private:
  core::Value run(const core::CollectContext& ctx);

  NcclProbeOptions opts_;
  bool first_ = true;
  core::Value last_run_;  // the facts of the last run that ran (null before)
};

// The source as the nccl kind brings it: only in a daemon, with probes.nccl.enabled and
// probes.nccl.local, on probes.nccl.interval.
SourceRegistration ncclProbeSourceRegistration();

}  // namespace fabricwatch::probes::nccl
