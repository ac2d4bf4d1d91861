// The fabric kind's renderings, pure functions of its view: facts probes.fabric, metrics
// fabricwatch_probe_fabric_*, and its part of /api/v1/peers.
#include <algorithm>
#include <cstdint>
#include <map>

#include "probes/kinds/fabric/fabric_kind.h"

namespace fabricwatch::probes::fabric {
namespace {

core::Value strings(const std::vector<std::string>& v) {
  core::Value l = core::Value::list();
  for (const auto& s : v) l.push(s);
  return l;
}

core::Value stateValue(const FabricState& s) {
  core::Value v = core::Value::map();
  v["available"] = s.available;
  if (!s.unavailable.empty()) v["error"] = s.unavailable;
  const auto& f = s.facts;
  if (!f.provider.empty()) {
    v["provider"] = f.provider;
    v["fabric"] = f.fabric;
    v["domain"] = f.domain;
    v["provider_version"] = f.provider_version;
    v["addr_format"] = f.addr_format;
    v["mode"] = strings(f.mode);
    v["mr_mode"] = strings(f.mr_mode);
    v["memory_registration"] =
        core::Value::map({{"required", f.mr_local}, {"registered", f.registered}});
    // SIZE_MAX ("no limit", tcp) clamps to the largest integer a fact holds.
    auto clamp = [](size_t n) { return static_cast<int64_t>(std::min<size_t>(n, INT64_MAX)); };
    v["inject_size"] = clamp(f.inject_size);
    v["max_msg_size"] = clamp(f.max_msg_size);
  }
  v["api_version"] = f.api_version;
  v["selected_by"] = s.origin;
  if (!s.resource_group.empty()) v["resource_group"] = s.resource_group;
  if (!s.rails_group.empty()) v["rails_group"] = s.rails_group;
  core::Value h = core::Value::map({{"state", fabric::hmemStateName(s.hmem.state)}});
  if (!s.hmem.reason.empty()) h["reason"] = s.hmem.reason;
  if (s.hmem.state != fabric::HmemStatus::State::kOff) h["gpus"] = s.hmem.devices;
  if (!s.hmem.cuda_runtime.empty()) h["cuda_runtime"] = s.hmem.cuda_runtime;
  v["hmem"] = std::move(h);
  v["responder"] = core::Value::map({{"sessions", s.responder.sessions},
                                     {"failed", s.responder.failed},
                                     {"declined_busy", s.responder.declined_busy},
                                     {"reopened", s.responder.reopened}});
  v["reopened"] = s.reopened;
  core::Value rails = core::Value::list();
  for (const auto& r : s.rails) {
    core::Value e = core::Value::map({{"rail", static_cast<int64_t>(r.rail)},
                                      {"domain", r.domain},
                                      {"available", r.available},
                                      {"reopened", r.reopened},
                                      {"sessions_served", r.responder.sessions}});
    if (!r.pci.empty()) e["pci_address"] = r.pci;
    if (!r.address.empty()) e["address"] = r.address;
    if (!r.unavailable.empty()) e["error"] = r.unavailable;
    rails.push(std::move(e));
  }
  v["rails"] = std::move(rails);
  return v;
}

core::Value latencyValue(const LatencyStats& l) {
  return core::Value::map({{"min", l.min},
                           {"p50", l.p50},
                           {"p99", l.p99},
                           {"max", l.max},
                           {"mean", l.mean},
                           {"samples", static_cast<int64_t>(l.samples)}});
}

void failureValue(const FabricMeasurement& r, core::Value& v) {
  if (r.failure.empty()) return;
  v["failure"] = r.failure;
  v["phase"] = r.phase;
  v["error"] = r.error;
  if (!r.detail.empty()) v["detail"] = r.detail;
}

const char* railStatus(const RailResult& r) {
  return r.missing ? "rail_missing" : r.failure.empty() ? "ok" : "failed";
}

uint64_t latestRound(const KindView& view) {
  uint64_t latest = 0;
  for (const auto& p : view.results) latest = std::max(latest, p.peer.round);
  return latest;
}

}  // namespace

core::Value fabricPeerValue(const PeerProbe& p) {
  const auto& r = resultAs<FabricResult>(p);
  core::Value v = core::Value::map();
  v["address"] = p.peer.address;
  if (!p.peer.node.empty()) v["node"] = p.peer.node;
  v["round"] = p.peer.round;
  v["ok"] = r.failure.empty();
  if (!r.peer_provider.empty()) v["provider"] = r.peer_provider;
  v["name_fetched"] = r.fetched_name;
  if (r.latency) v["latency_seconds"] = latencyValue(*r.latency);
  if (r.bandwidth_bytes_per_second) {
    v["bandwidth_bytes_per_second"] = *r.bandwidth_bytes_per_second;
    v["bandwidth_bytes"] = r.bandwidth_bytes;
  }
  if (!r.bandwidth_skipped.empty()) v["bandwidth_skipped"] = r.bandwidth_skipped;
  failureValue(r, v);
  if (r.busy_retries) v["busy_retries"] = static_cast<int64_t>(r.busy_retries);
  core::Value rails = core::Value::list();
  for (const auto& rr : r.rails) {
    core::Value e = core::Value::map({{"rail", static_cast<int64_t>(rr.rail)},
                                      {"domain", rr.domain},
                                      {"status", railStatus(rr)}});
    if (!rr.peer_domain.empty()) e["peer_domain"] = rr.peer_domain;
    if (rr.latency) e["latency_seconds"] = latencyValue(*rr.latency);
    if (rr.bandwidth_bytes_per_second) {
      e["bandwidth_bytes_per_second"] = *rr.bandwidth_bytes_per_second;
      e["bandwidth_bytes"] = rr.bandwidth_bytes;
    }
    if (!rr.bandwidth_skipped.empty()) e["bandwidth_skipped"] = rr.bandwidth_skipped;
    failureValue(rr, e);
    rails.push(std::move(e));
  }
  v["rails"] = std::move(rails);
  return v;
}

core::Value fabricFacts(const KindView& view) {
  const auto& t = totalsAs<FabricTotals>(view);
  core::Value v = stateValue(t.state);
  core::Value peers = core::Value::list();
  int64_t ok = 0, failed = 0;
  double worst_p50 = 0, worst_p99 = 0;
  for (const auto& p : view.results) {
    const auto& r = resultAs<FabricResult>(p);
    peers.push(fabricPeerValue(p));
    (r.failure.empty() ? ok : failed)++;
    if (r.latency) {
      worst_p50 = std::max(worst_p50, r.latency->p50);
      worst_p99 = std::max(worst_p99, r.latency->p99);
    }
  }
  v["peers"] = std::move(peers);
  v["ok"] = ok;
  v["failed"] = failed;
  if (worst_p99 > 0) {
    v["latency_p50_seconds"] = worst_p50;
    v["latency_p99_seconds"] = worst_p99;
  }
  if (!t.bandwidth.empty()) {
    core::Value bw = core::Value::list();
    double lowest = t.bandwidth.front().bytes_per_second;
    for (const auto& b : t.bandwidth) {
      core::Value e = core::Value::map({{"address", b.peer.address},
                                        {"rail", static_cast<int64_t>(b.rail)},
                                        {"bytes_per_second", b.bytes_per_second},
                                        {"bytes", b.bytes}});
      if (!b.peer.node.empty()) e["node"] = b.peer.node;
      bw.push(std::move(e));
      lowest = std::min(lowest, b.bytes_per_second);
    }
    v["bandwidth"] = core::Value::map(
        {{"round", t.bandwidth_round}, {"min_bytes_per_second", lowest}, {"peers", std::move(bw)}});
  }
  // What bandwidth yields to (docs/peers.md, "What a probe costs a job"): the latest round's
  // scan; absent where bandwidth runs next to jobs.
  if (const auto& g = t.gpu_scan; g.scan) {
    core::Value e = core::Value::map({{"round", g.round},
                                      {"gpus_held", !g.scan->holders.empty()},
                                      {"processes_scanned", g.scan->processes_scanned},
                                      {"unreadable", g.scan->unreadable},
                                      {"complete", g.scan->complete}});
    if (!g.scan->holders.empty()) {
      e["reason"] = gpu::busyReason(*g.scan);
      e["gpu_holders"] = gpu::holdersValue(g.scan->holders);
    }
    v["gpu_scan"] = std::move(e);
  }
  return v;
}

namespace {

// Per rail, per (peer, rail) for at most P = probe.peers_per_round peers of the latest run, and
// per (peer, rail) for at most kBandwidthPairPeers peers of the latest bandwidth round: at R
// rails and K = min(R, rails_per_round), 7 R + 2 P K + 2 K series (8 rails, 8 peers: 200;
// docs/peers.md, "Series bound"). What PromQL derives from the pair series is not exported
// per rail (the median of the pairs' medians, the lowest bandwidth).
void railMetrics(const KindView& view, core::MetricFamilies& out) {
  using core::addSample;
  const auto& t = totalsAs<FabricTotals>(view);
  uint64_t latest = latestRound(view);
  auto info = core::gaugeFamily(
      "fabricwatch_probe_fabric_rail_info",
      "This node's fabric rails: the libfabric domain (an RDMA device; with tcp an interface) "
      "probed as rail N against rail N of the peers, and its PCI address; constant 1.");
  for (const auto& r : t.state.rails)
    addSample(info, {{"rail", std::to_string(r.rail)}, {"domain", r.domain}, {"pci", r.pci}}, 1);
  out.push_back(std::move(info));

  struct Agg {
    int64_t measured = 0;
    double p99 = 0;
    int64_t missing = 0;
  };
  std::map<uint32_t, Agg> agg;
  for (const auto& r : t.state.rails) agg[r.rail];
  auto up = core::gaugeFamily(
      "fabricwatch_probe_fabric_peer_rail_up",
      "1 if the peer's rail measured latency in the latest fabric run, 0 if it failed; absent "
      "where the peer lacks the rail (rail_missing) or the run did not probe it.");
  auto lat = core::gaugeFamily(
      "fabricwatch_probe_fabric_peer_rail_latency_seconds",
      "Median one-way latency (RTT/2) to the peer on the rail in the latest fabric run.");
  // The latest run's peers, those with a failed rail first (what localisation needs), at most
  // probe.peers_per_round of them: a run's re-probed failing peers do not raise the bound.
  std::vector<const PeerProbe*> latest_peers;
  for (const auto& p : view.results)
    if (p.peer.round == latest) latest_peers.push_back(&p);
  auto failing = [](const PeerProbe* p) {
    for (const auto& rr : resultAs<FabricResult>(*p).rails)
      if (!rr.failure.empty()) return true;
    return false;
  };
  std::stable_partition(latest_peers.begin(), latest_peers.end(), failing);
  for (size_t k = 0; k < latest_peers.size(); ++k) {
    const auto& p = *latest_peers[k];
    bool series = k < t.rail_peers;
    const auto& r = resultAs<FabricResult>(p);
    for (const auto& rr : r.rails) {
      Agg& a = agg[rr.rail];
      if (rr.missing) {
        ++a.missing;
        continue;
      }
      if (!rr.latency && rr.failure.empty()) continue;
      core::LabelPairs l{
          {"peer", p.peer.address}, {"peer_node", p.peer.node}, {"rail", std::to_string(rr.rail)}};
      if (series) addSample(up, l, rr.latency ? 1 : 0);
      if (!rr.latency) continue;
      if (series) addSample(lat, l, rr.latency->p50);
      ++a.measured;
      a.p99 = std::max(a.p99, rr.latency->p99);
    }
  }
  out.push_back(std::move(up));
  out.push_back(std::move(lat));

  auto rl = core::gaugeFamily(
      "fabricwatch_probe_fabric_rail_latency_seconds",
      "One-way latency on the rail over the peers of the latest fabric run: quantile 0.99, the "
      "highest of their p99s (their medians are fabricwatch_probe_fabric_peer_rail_latency_"
      "seconds).");
  auto missing = core::gaugeFamily(
      "fabricwatch_probe_fabric_rail_peers_missing",
      "Peers of the latest fabric run that have no such rail (rail_missing: not a failure).");
  for (auto& [rail, a] : agg) {
    std::string r = std::to_string(rail);
    addSample(missing, {{"rail", r}}, static_cast<double>(a.missing));
    if (a.measured == 0) continue;
    addSample(rl, {{"rail", r}, {"quantile", "0.99"}}, a.p99);
  }
  out.push_back(std::move(rl));
  out.push_back(std::move(missing));

  // Bandwidth per (peer, rail): what tells a node's slow rail from its peer's (docs/fleet.md,
  // "Grey failure in bandwidth"). The latest bandwidth round's, kept until the next one like
  // the per-peer gauge; the rules keep a window of rounds (last_over_time), so the daemon
  // holds no history. At most kBandwidthPairPeers peers per rail, in the order measured
  // (the round's byte budget: bandwidth_round_bytes / bandwidth_bytes, 2 by default).
  auto bw = core::gaugeFamily(
      "fabricwatch_probe_fabric_peer_rail_bandwidth_bytes_per_second",
      "Bandwidth to the peer on the rail in the latest round that measured bandwidth (every "
      "probes.fabric.bandwidth_interval); kept until the next such round.");
  std::map<uint32_t, uint32_t> per_rail;
  for (const auto& b : t.bandwidth) {
    if (per_rail[b.rail]++ >= kBandwidthPairPeers) continue;
    addSample(
        bw,
        {{"peer", b.peer.address}, {"peer_node", b.peer.node}, {"rail", std::to_string(b.rail)}},
        b.bytes_per_second);
  }
  out.push_back(std::move(bw));

  auto fails = core::counterFamily(
      "fabricwatch_probe_fabric_rail_failures_total",
      "Fabric measurements on the rail that failed, by reason: timeout, provider (a libfabric "
      "error), busy (the peer's responder stayed busy), other (declined, channel, mismatch).");
  for (const auto& [rail, rt] : t.rails) {
    std::string r = std::to_string(rail);
    addSample(fails, {{"rail", r}, {"reason", "timeout"}}, static_cast<double>(rt.timeout));
    addSample(fails, {{"rail", r}, {"reason", "provider"}}, static_cast<double>(rt.provider));
    addSample(fails, {{"rail", r}, {"reason", "busy"}}, static_cast<double>(rt.busy));
    addSample(fails, {{"rail", r}, {"reason", "other"}}, static_cast<double>(rt.other));
  }
  out.push_back(std::move(fails));
}

}  // namespace

void fabricMetrics(const KindView& view, core::MetricFamilies& out) {
  using core::addSample;
  const auto& t = totalsAs<FabricTotals>(view);
  const auto& s = t.state;
  const auto& f = s.facts;

  auto info = core::gaugeFamily(
      "fabricwatch_probe_fabric_info",
      "The fabric probe's libfabric provider, fabric, domain, versions and how the provider was "
      "chosen (selected_by: flag, config, group, auto); constant 1.");
  if (!f.provider.empty())
    addSample(info,
              {{"provider", f.provider},
               {"fabric", f.fabric},
               {"domain", f.domain},
               {"provider_version", f.provider_version},
               {"api_version", f.api_version},
               {"selected_by", s.origin}},
              1);
  out.push_back(std::move(info));
  auto avail = core::gaugeFamily(
      "fabricwatch_probe_fabric_available",
      "1 when the fabric probe has an endpoint, 0 when not, with the failing call and "
      "fi_strerror's text as reason (e.g. \"fi_getinfo: No data available\": no provider or "
      "device).");
  addSample(avail, {{"reason", s.unavailable_reason}}, s.available ? 1 : 0);
  out.push_back(std::move(avail));
  auto hmem = core::gaugeFamily(
      "fabricwatch_probe_fabric_hmem_available",
      "1 when GPU memory registers with the provider (FI_HMEM, GPUDirect RDMA), 0 when not "
      "(probes.fabric.hmem.reason says why); absent when probes.fabric.hmem is off.");
  if (s.hmem.state != fabric::HmemStatus::State::kOff)
    addSample(hmem, {}, s.hmem.state == fabric::HmemStatus::State::kAvailable ? 1 : 0);
  out.push_back(std::move(hmem));

  auto lh = histogramFamily("fabricwatch_probe_fabric_latency_seconds",
                            "One-way fabric latency (RTT/2) per timed ping-pong.");
  t.latency.render(lh, {});
  out.push_back(std::move(lh));
  auto probes = core::counterFamily(
      "fabricwatch_probe_fabric_probes_total",
      "Fabric measurements of peers, by measurement (latency, bandwidth) and result (ok, "
      "failed).");
  addSample(probes, {{"measurement", "latency"}, {"result", "ok"}},
            static_cast<double>(t.latency_ok));
  addSample(probes, {{"measurement", "latency"}, {"result", "failed"}},
            static_cast<double>(t.latency_failed));
  addSample(probes, {{"measurement", "bandwidth"}, {"result", "ok"}},
            static_cast<double>(t.bandwidth_ok));
  addSample(probes, {{"measurement", "bandwidth"}, {"result", "failed"}},
            static_cast<double>(t.bandwidth_failed));
  out.push_back(std::move(probes));
  auto fails = core::counterFamily(
      "fabricwatch_probe_fabric_failures_total",
      "Fabric probes that failed, by reason: timeout, provider (a libfabric error), declined "
      "(the peer's fabric probe is off or has no endpoint), busy (the peer stayed busy), "
      "channel, mismatch (the peer uses another provider).");
  for (const char* r : {"timeout", "provider", "declined", "busy", "channel", "mismatch"}) {
    auto it = t.failures.find(r);
    addSample(fails, {{"reason", r}},
              it == t.failures.end() ? 0.0 : static_cast<double>(it->second));
  }
  out.push_back(std::move(fails));
  auto errs = core::counterFamily(
      "fabricwatch_probe_fabric_errors_total",
      "Fabric probe failures in libfabric or timeouts, by call (op) and fi_strerror's text "
      "(error); at most 32 pairs, then op and error \"other\".");
  for (const auto& [key, n] : t.errors)
    addSample(errs, {{"op", key.first}, {"error", key.second}}, static_cast<double>(n));
  out.push_back(std::move(errs));
  auto names = core::counterFamily(
      "fabricwatch_probe_fabric_name_fetches_total",
      "Endpoint names fetched from peers over the peer channel (first probe, peer restart, "
      "peer endpoint reopened).");
  addSample(names, {}, static_cast<double>(t.name_fetches));
  out.push_back(std::move(names));
  auto busy =
      core::counterFamily("fabricwatch_probe_fabric_busy_retries_total",
                          "Session requests repeated because the peer was serving another prober.");
  addSample(busy, {}, static_cast<double>(t.busy_retries));
  out.push_back(std::move(busy));
  auto wire = core::counterFamily(
      "fabricwatch_probe_fabric_wire_bytes_total",
      "Payload bytes this node's fabric probes sent and received on the fabric.");
  addSample(wire, {}, static_cast<double>(t.wire_bytes));
  out.push_back(std::move(wire));
  auto skipped = core::counterFamily(
      "fabricwatch_probe_fabric_bandwidth_skipped_total",
      "Bandwidth sessions (one peer, one rail) the fabric probe skipped, by reason: gpus_held (a "
      "job holds this node's GPUs), peer_gpus_held (the peer declined: a job holds its GPUs).");
  for (const char* r : {"gpus_held", "peer_gpus_held"}) {
    auto it = t.bandwidth_skipped.find(r);
    addSample(skipped, {{"reason", r}},
              it == t.bandwidth_skipped.end() ? 0.0 : static_cast<double>(it->second));
  }
  out.push_back(std::move(skipped));
  auto reopen = core::counterFamily(
      "fabricwatch_probe_fabric_endpoint_reopens_total",
      "Fabric endpoints replaced after a failed session that left operations in flight (the "
      "old one retired, closed once they have completed), by side (prober, responder).");
  addSample(reopen, {{"side", "prober"}}, static_cast<double>(s.reopened));
  addSample(reopen, {{"side", "responder"}}, static_cast<double>(s.responder.reopened));
  out.push_back(std::move(reopen));
  auto sessions = core::counterFamily(
      "fabricwatch_probe_fabric_responder_sessions_total",
      "Sessions this node's responder served for probing peers, by result (ok, failed, "
      "declined: busy with another).");
  addSample(sessions, {{"result", "ok"}},
            static_cast<double>(s.responder.sessions - s.responder.failed));
  addSample(sessions, {{"result", "failed"}}, static_cast<double>(s.responder.failed));
  addSample(sessions, {{"result", "declined"}}, static_cast<double>(s.responder.declined_busy));
  out.push_back(std::move(sessions));

  // Per-peer series: the peers of the kind's last two runs, and the latest bandwidth round's.
  auto up =
      core::gaugeFamily("fabricwatch_probe_fabric_peer_up",
                        "1 if the peer's last fabric probe measured latency, 0 if it failed.");
  auto lat = core::gaugeFamily(
      "fabricwatch_probe_fabric_peer_latency_seconds",
      "One-way latency (RTT/2) to the peer in its last fabric probe, by quantile (0: min, 0.5, "
      "0.99).");
  for (const auto& p : view.results) {
    const auto& r = resultAs<FabricResult>(p);
    core::LabelPairs l{{"peer", p.peer.address}, {"peer_node", p.peer.node}};
    addSample(up, l, r.latency ? 1 : 0);
    if (!r.latency) continue;
    for (auto [q, v] : {std::pair<const char*, double>{"0", r.latency->min},
                        {"0.5", r.latency->p50},
                        {"0.99", r.latency->p99}}) {
      core::LabelPairs lq = l;
      lq.emplace_back("quantile", q);
      addSample(lat, lq, v);
    }
  }
  out.push_back(std::move(up));
  out.push_back(std::move(lat));
  auto bw =
      core::gaugeFamily("fabricwatch_probe_fabric_peer_bandwidth_bytes_per_second",
                        "Bandwidth to the peer in the latest round that measured bandwidth (every "
                        "probes.fabric.bandwidth_interval).");
  std::map<std::string, const BandwidthSample*> lowest;  // per peer, over its rails
  for (const auto& b : t.bandwidth) {
    auto& l = lowest[b.peer.address];
    if (!l || b.bytes_per_second < l->bytes_per_second) l = &b;
  }
  for (const auto& [_, b] : lowest)
    addSample(bw, {{"peer", b->peer.address}, {"peer_node", b->peer.node}}, b->bytes_per_second);
  out.push_back(std::move(bw));
  railMetrics(view, out);
}

}  // namespace fabricwatch::probes::fabric
