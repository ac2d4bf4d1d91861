#include "probes/kinds/nccl/nccl_report.h"

#include "core/value_format.h"
#include "nccl/log_verdict.h"
#include "probes/kinds/nccl/nccl_kind.h"

namespace fabricwatch::probes::nccl {
namespace {

// Every state a run or a served session can end in: the counters' label values, all present
// from the start so that rate() sees the first increment.
const std::vector<std::string> kRunStates = {"ok",       "skipped",     "unavailable",
                                             "failed",   "timeout",     "crashed",
                                             "declined", "unreachable", "lost"};
const std::vector<std::string> kServedStates = {"ok",      "unavailable", "failed",  "timeout",
                                                "crashed", "cancelled",   "declined"};

using fabricwatch::nccl::gdrLabel;
using fabricwatch::nccl::transportLabel;

void setIf(core::Value& m, const char* key, const std::string& v) {
  if (!v.empty()) m[key] = v;
}

core::Value resultsValue(const std::vector<nccl::SizeResult>& rs,
                         const std::map<uint64_t, std::string>* algorithms) {
  core::Value list = core::Value::list();
  for (const auto& s : rs) {
    core::Value m = core::Value::map({{"size_bytes", s.bytes},
                                      {"time_us", s.time_us},
                                      {"algbw_gbps", s.algbw_gbps},
                                      {"busbw_gbps", s.busbw_gbps}});
    if (algorithms)
      if (auto it = algorithms->find(s.bytes); it != algorithms->end()) m["algorithm"] = it->second;
    list.push(std::move(m));
  }
  return list;
}

core::Value sideValue(const NcclSide& s) {
  core::Value v = core::Value::map({{"state", s.state}});
  setIf(v, "reason", s.reason);
  setIf(v, "nccl_version", s.nccl_version);
  setIf(v, "cuda_runtime_version", s.cuda_runtime_version);
  setIf(v, "cuda_driver_version", s.cuda_driver_version);
  if (s.gpus >= 0) v["gpus"] = static_cast<int64_t>(s.gpus);
  if (s.device >= 0) v["device"] = static_cast<int64_t>(s.device);
  setIf(v, "id", s.id);
  setIf(v, "inter_node_transport", s.inter_node_transport);
  setIf(v, "gdr", s.gdr);
  setIf(v, "network", s.network);
  setIf(v, "log_status", s.log_status);
  v["duration_seconds"] = s.seconds;
  if (!s.results.empty()) v["results"] = resultsValue(s.results, nullptr);
  return v;
}

std::string rfc3339(std::chrono::system_clock::time_point t) { return core::rfc3339(t); }

int64_t unixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

core::Value ncclPeerEntry(const PeerProbe& p) {
  const auto& r = resultAs<NcclPeerResult>(p);
  core::Value v = core::Value::map();
  v["address"] = p.peer.address;
  if (!p.peer.node.empty()) v["node"] = p.peer.node;
  v["round"] = p.peer.round;
  v["state"] = r.state;
  setIf(v, "reason", r.reason);
  v["operation"] = r.operation;
  v["last_run"] = rfc3339(r.started);
  v["last_run_timestamp_seconds"] = unixSeconds(r.started);
  v["duration_seconds"] = r.seconds;
  setIf(v, "id", r.id);
  const nccl::RunOutcome& self = r.self;
  if (!self.state.empty()) {
    NcclSide mine = sideOfRun(self);
    core::Value sv = sideValue(mine);
    sv.asMap().erase("results");  // the run's results are this side's: below
    v["self"] = std::move(sv);
    if (self.has_log) {
      v["inter_node_transport"] = self.verdict.inter_node_transport;
      v["gdr"] = self.verdict.gdr;
      core::Value log = fabricwatch::nccl::factsValue(self.log, self.verdict);
      if (const core::Value* n = log.find("network"); n && n->isString()) v["network"] = *n;
      v["log"] = std::move(log);
    }
    v["results"] = resultsValue(self.child.results, &self.log.allreduce_algorithms);
  }
  if (r.peer) v["peer"] = sideValue(*r.peer);
  if (!r.gpu_holders.empty()) v["gpu_holders"] = nccl::holdersValue(r.gpu_holders);
  core::Value env = core::Value::map();
  for (const auto& [k, val] : r.env) env[k] = val;
  v["env"] = std::move(env);
  return v;
}

core::Value ncclFacts(const std::vector<PeerProbe>& results, const NcclServedState* served) {
  core::Value peers = core::Value::list();
  for (const auto& p : results) peers.push(ncclPeerEntry(p));
  core::Value out = core::Value::map({{"peers", std::move(peers)}});
  core::Value sv = core::Value::list();
  if (served) {
    for (const auto& s : served->recent) {
      core::Value e = sideValue(s.side);
      e["prober"] = s.prober;
      e["address"] = s.address;
      e["started"] = rfc3339(s.started);
      sv.push(std::move(e));
    }
  }
  out["served"] = std::move(sv);
  return out;
}

void ncclMetrics(const std::vector<PeerProbe>& results, const std::map<std::string, uint64_t>& runs,
                 int64_t last_run_seconds, const NcclServedState* served,
                 core::MetricFamilies& out) {
  using core::addSample;
  auto rt = core::counterFamily(
      "fabricwatch_probe_nccl_runs_total",
      "NCCL peer runs this node started, by result: ok, skipped (this node busy), unavailable "
      "(no NCCL, CUDA or GPU on a side), failed, timeout, crashed, declined (by the peer), "
      "unreachable, lost (the peer vanished mid-run).");
  for (const auto& s : kRunStates) {
    auto it = runs.find(s);
    addSample(rt, {{"result", s}}, it == runs.end() ? 0.0 : static_cast<double>(it->second));
  }
  out.push_back(std::move(rt));

  auto st = core::counterFamily(
      "fabricwatch_probe_nccl_served_total",
      "NCCL peer runs this node served as rank 1, by result: ok, unavailable, failed, timeout, "
      "crashed, cancelled (by the prober), declined (off, busy or GPUs in use).");
  for (const auto& s : kServedStates) {
    uint64_t n = 0;
    if (served)
      if (auto it = served->results.find(s); it != served->results.end()) n = it->second;
    addSample(st, {{"result", s}}, static_cast<double>(n));
  }
  out.push_back(std::move(st));

  if (last_run_seconds >= 0) {
    auto lr = core::gaugeFamily("fabricwatch_probe_nccl_last_run_timestamp_seconds",
                                "When the last NCCL peer run this node started began (Unix time).");
    addSample(lr, {}, static_cast<double>(last_run_seconds));
    out.push_back(std::move(lr));
  }

  auto state = core::gaugeFamily(
      "fabricwatch_probe_nccl_peer_state",
      "The last NCCL run with the peer: 1 ok, 2 skipped, 3 unavailable, 4 failed, 5 timeout, "
      "6 crashed, 7 declined, 8 unreachable, 9 lost.");
  auto dur =
      core::gaugeFamily("fabricwatch_probe_nccl_peer_duration_seconds",
                        "How long the last NCCL run with the peer took, both sides included.");
  auto tr = core::gaugeFamily(
      "fabricwatch_probe_nccl_peer_transport_info",
      "What NCCL chose between this node and the peer in their last run, from NCCL's log: "
      "inter_node_transport (ib, roce, efa, ofi, socket, ...) and gdr (GPUDirect RDMA on, off, "
      "partial, unknown). Constant 1.");
  auto bus = core::gaugeFamily(
      "fabricwatch_probe_nccl_peer_busbw_bytes_per_second",
      "Bus bandwidth of the last NCCL run with the peer, per message size, as nccl-tests reports "
      "it (2 ranks: equal to algbw for all-reduce and send/recv).");
  auto alg = core::gaugeFamily(
      "fabricwatch_probe_nccl_peer_algbw_bytes_per_second",
      "Algorithm bandwidth (bytes / time) of the last NCCL run with the peer, per message size.");
  for (const auto& p : results) {
    const auto& r = resultAs<NcclPeerResult>(p);
    core::LabelPairs who = {{"peer", p.peer.address}, {"peer_node", p.peer.node}};
    addSample(state, who, ncclPeerStateCode(r.state));
    addSample(dur, who, r.seconds);
    if (r.self.has_log) {
      core::LabelPairs l = who;
      l.push_back({"inter_node_transport", transportLabel(r.self.verdict.inter_node_transport)});
      l.push_back({"gdr", gdrLabel(r.self.verdict.gdr)});
      addSample(tr, l, 1);
    }
    for (const auto& s : r.self.child.results) {
      core::LabelPairs l = who;
      l.push_back({"size_bytes", std::to_string(s.bytes)});
      addSample(bus, l, s.busbw_gbps * 1e9);
      addSample(alg, l, s.algbw_gbps * 1e9);
    }
  }
  out.push_back(std::move(state));
  out.push_back(std::move(dur));
  out.push_back(std::move(tr));
  out.push_back(std::move(bus));
  out.push_back(std::move(alg));
}

}  // namespace fabricwatch::probes::nccl
