#include "probes/kinds/nccl/nccl_probe_source.h"

#include <utility>

#include "core/log.h"
#include "core/snapshot.h"

namespace fabricwatch::probes::nccl {

int NcclProbeSource::stateCode(const std::string& s) {
  static const char* kStates[] = {"waiting", "ok",      "skipped", "unavailable",
                                  "failed",  "timeout", "crashed"};
  for (int i = 0; i < 7; ++i) {
    if (s == kStates[i]) return i;
  }
  return -1;
}

core::Collection NcclProbeSource::collect(const core::CollectContext& ctx) {
  core::Collection c;
  core::Value local;
  auto skipped = [&](const std::string& state, const std::string& reason) {
    // A run that did not run keeps the last run's results, with what happened this time.
    core::Value v = last_run_.isMap() ? last_run_ : core::Value::map();
    if (last_run_.isMap()) v["run_state"] = *last_run_.find("state");
    v["state"] = state;
    v["reason"] = reason;
    return v;
  };
  bool first = std::exchange(first_, false);
  if (first && !opts_.run_at_start) {
    local = skipped("waiting",
                    "the first run is one interval after start (probes.nccl.run_at_start), so "
                    "that a fleet restarted together does not run NCCL at once");
  } else {
    std::string holder;
    auto hold = opts_.gate->tryAcquire("the local NCCL probe", &holder);
    GpuScan scan = hold ? scanForBusyGpus(opts_, ctx.rootfs) : GpuScan{};
    if (!hold) {
      local = skipped("skipped", "another NCCL run of this daemon is running: " + holder);
    } else if (!scan.holders.empty()) {
      local = skipped("skipped", busyReason(scan));
      local["gpu_holders"] = holdersValue(scan.holders);
    } else {
      local = run(ctx);
      last_run_ = local;
      local["run_state"] = *local.find("state");
    }
  }
  c.facts.setPath("probes.nccl.local", std::move(local));
  return c;
}

core::Value NcclProbeSource::run(const core::CollectContext&) {
  RunOutcome o = runProbe(opts_, baseRequest(opts_));
  core::Value v = runFacts(o, opts_.env);
  if (o.state != "ok" && o.state != "unavailable")
    core::log::warn("nccl_probe", "NCCL probe did not succeed",
                    {{"state", o.state}, {"reason", o.reason}});
  return v;
}

void NcclProbeSource::renderMetrics(const core::Snapshot& snapshot,
                                    core::MetricFamilies& out) const {
  const core::Value* local = snapshot.facts.findPath("probes.nccl.local");
  if (!local || !local->isMap()) return;
  const core::LabelPairs probe = {{"probe", "local"}};
  auto num = [&](std::string_view key) -> const core::Value* {
    const core::Value* v = local->find(key);
    return v && v->isNumber() ? v : nullptr;
  };
  if (const auto* s = local->find("state"); s && s->isString()) {
    auto f = core::gaugeFamily("fabricwatch_nccl_probe_state",
                               "The NCCL probe's last attempt: 0 waiting, 1 ok, 2 skipped (GPUs "
                               "busy), 3 unavailable (no NCCL, CUDA or GPU), 4 failed, 5 timeout, "
                               "6 crashed.");
    core::addSample(f, probe, stateCode(s->asString()));
    out.push_back(std::move(f));
  }
  if (const auto* t = num("last_run_timestamp_seconds")) {
    auto f = core::gaugeFamily("fabricwatch_nccl_probe_last_run_timestamp_seconds",
                               "When the last NCCL probe run started (Unix time).");
    core::addSample(f, probe, t->asDouble());
    out.push_back(std::move(f));
  }
  if (const auto* d = num("duration_seconds")) {
    auto f = core::gaugeFamily("fabricwatch_nccl_probe_duration_seconds",
                               "How long the last NCCL probe run took, child process included.");
    core::addSample(f, probe, d->asDouble());
    out.push_back(std::move(f));
  }
  const core::Value* results = local->find("results");
  if (!results || !results->isList() || results->size() == 0) return;
  auto bus = core::gaugeFamily("fabricwatch_nccl_probe_busbw_bytes_per_second",
                               "All-reduce bus bandwidth of the last NCCL probe run, per message "
                               "size: algbw x 2(n-1)/n as nccl-tests reports it.");
  auto alg = core::gaugeFamily("fabricwatch_nccl_probe_algbw_bytes_per_second",
                               "All-reduce algorithm bandwidth (bytes / time) of the last NCCL "
                               "probe run, per message size.");
  for (const auto& r : results->asList()) {
    const core::Value* size = r.find("size_bytes");
    const core::Value* b = r.find("busbw_gbps");
    const core::Value* a = r.find("algbw_gbps");
    if (!size || !size->isInt() || !b || !a || !b->isNumber() || !a->isNumber()) continue;
    core::LabelPairs l = {{"probe", "local"}, {"size_bytes", std::to_string(size->asInt())}};
    core::addSample(bus, l, b->asDouble() * 1e9);
    core::addSample(alg, l, a->asDouble() * 1e9);
  }
  out.push_back(std::move(bus));
  out.push_back(std::move(alg));
}

SourceRegistration ncclProbeSourceRegistration() {
  SourceRegistration r;
  r.name = "nccl_probe";
  r.fact_roots = {"probes"};
  r.make = [](const SourceSetup& s) -> std::shared_ptr<core::Source> {
    const auto& n = ncclConfig(s.config);
    if (!s.daemon || !ncclEnabled(s.config) || !n.local) return nullptr;
    NcclProbeOptions o;
    static_cast<RunSettings&>(o) = runSettings(n);
    o.run_at_start = n.run_at_start;
    return std::make_shared<NcclProbeSource>(std::move(o));
  };
  r.schedule = [](const config::Config& c) {
    const auto& n = ncclConfig(c);
    // The source's own deadline lies beyond the child's, which the source enforces itself: the
    // scheduler's is only a backstop (reading the log, a slow reap).
    auto timeout = std::min<config::Duration>(n.interval, n.timeout + std::chrono::seconds(30));
    return core::Schedule{n.interval, timeout};
  };
  return r;
}

}  // namespace fabricwatch::probes::nccl
