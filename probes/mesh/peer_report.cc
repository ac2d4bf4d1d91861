// The mesh's renderings: facts, the /api/v1/peers document and metrics, each a pure function
// of a MeshView. The mesh renders what is its own (membership, rounds, knocks, the channel);
// every kind renders its own part from its KindView.
#include <chrono>
#include <map>

#include "core/value_format.h"
#include "probes/mesh/peer_prober.h"

namespace fabricwatch::probes {

core::Value PeerProber::facts() const { return meshFacts(*view()); }
core::Value PeerProber::status() const { return meshStatus(*view()); }
void PeerProber::renderMetrics(core::MetricFamilies& out) const { renderMeshMetrics(*view(), out); }

core::Value meshFacts(const MeshView& v) {
  core::Value doc = core::Value::map();
  doc["node"] = core::Value::map({{"name", v.node_name}});
  core::Value mesh = core::Value::map();
  int64_t active = 0, pending = 0;
  for (const auto& m : v.members) {
    active += m.state == MemberState::kActive;
    pending += m.state == MemberState::kPending;
  }
  mesh["members"] = active + pending;
  mesh["active"] = active;
  mesh["pending"] = pending;
  mesh["round"] = v.round;
  mesh["peers_per_round"] = v.peers_per_round;
  mesh["interval_seconds"] = static_cast<double>(v.interval.count()) / 1000.0;
  if (!v.group.empty()) mesh["group"] = v.group;
  if (!v.group_label.empty()) mesh["group_label"] = v.group_label;
  core::Value probes = core::Value::map({{"mesh", std::move(mesh)}});
  for (const auto& k : v.kinds) probes[k.kind->name()] = k.kind->facts(k);
  doc["probes"] = std::move(probes);
  return doc;
}

core::Value meshStatus(const MeshView& v) {
  core::Value doc = core::Value::map();
  doc["enabled"] = true;
  doc["node"] = v.node_name;
  doc["listen_address"] = v.listen_address;
  doc["port"] = v.port;
  if (!v.group.empty()) doc["group"] = v.group;
  doc["round"] = v.round;
  doc["interval_seconds"] = static_cast<double>(v.interval.count()) / 1000.0;
  doc["peers_per_round"] = v.peers_per_round;
  core::Value ms = core::Value::list();
  for (const auto& m : v.members) {
    core::Value e = core::Value::map();
    e["address"] = m.address;
    e["state"] = memberStateName(m.state);
    if (!m.node.empty()) e["node"] = m.node;
    if (!m.group.empty()) e["group"] = m.group;
    core::Value src = core::Value::list();
    for (const auto& s : m.sources) src.push(s);
    e["sources"] = std::move(src);
    ms.push(std::move(e));
  }
  doc["members"] = std::move(ms);
  core::Value rp = core::Value::list();
  for (const auto& p : v.round_peers) rp.push(p);
  doc["round_peers"] = std::move(rp);

  // One entry per peer: who it is, then each kind's part of its latest result.
  std::map<std::string, core::Value> entries;
  auto entry = [&](const PeerInfo& peer) -> core::Value& {
    core::Value& e = entries[peer.address];
    if (e.isNull()) {
      e = core::Value::map();
      e["address"] = peer.address;
      if (!peer.node.empty()) e["node"] = peer.node;
      if (!peer.group.empty()) e["group"] = peer.group;
      e["round"] = peer.round;
      e["probed_at"] = core::rfc3339(peer.at);
    }
    return e;
  };
  for (const auto& r : v.peers) {
    core::Value& e = entry(r.peer);
    if (r.answered) e["reachable"] = *r.answered;
  }
  for (const auto& k : v.kinds)
    for (const auto& p : k.results) k.kind->peerStatus(p, entry(p.peer));
  core::Value res = core::Value::list();
  for (auto& [_, e] : entries) res.push(std::move(e));
  doc["results"] = std::move(res);
  core::Value errs = core::Value::list();
  for (const auto& e : v.discovery_errors) errs.push(e);
  doc["discovery_errors"] = std::move(errs);
  return doc;
}

core::Value disabledMeshStatus(const std::string& node_name) {
  core::Value v = core::Value::map();
  v["enabled"] = false;
  v["node"] = node_name;
  v["members"] = core::Value::list();
  v["round_peers"] = core::Value::list();
  v["results"] = core::Value::list();
  return v;
}

void renderMeshMetrics(const MeshView& v, core::MetricFamilies& out) {
  using core::addSample;
  auto m = core::gaugeFamily("fabricwatch_peer_members",
                             "Mesh members by state: active (answered), pending (listed, not yet "
                             "answered), self.");
  std::map<std::string, int> by_state{{"active", 0}, {"pending", 0}, {"self", 0}};
  for (const auto& mb : v.members) by_state[memberStateName(mb.state)]++;
  for (const auto& [s, n] : by_state) addSample(m, {{"state", s}}, n);
  out.push_back(std::move(m));

  // The prober's own name as its peers' series carry it (peer_node), so that fleet rules can
  // join what a node measures (its target labels) with what others measure of it
  // (docs/fleet.md). Not `node`: the shipped PodMonitor sets that target label.
  auto self = core::gaugeFamily("fabricwatch_peer_self_info",
                                "This node's name in the peer mesh, the peer_node label of the "
                                "series its peers export about it; constant 1.");
  addSample(self, {{"peer_node", v.node_name}}, 1);
  out.push_back(std::move(self));

  auto rp = core::gaugeFamily("fabricwatch_peer_round_peers", "Peers probed in the last round.");
  addSample(rp, {}, static_cast<double>(v.round_peers.size()));
  out.push_back(std::move(rp));
  auto rt = core::counterFamily("fabricwatch_peer_rounds_total", "Probe rounds run.");
  addSample(rt, {}, static_cast<double>(v.rounds_total));
  out.push_back(std::move(rt));
  auto rd = core::gaugeFamily("fabricwatch_peer_round_duration_seconds",
                              "Wall time of the last probe round.");
  addSample(rd, {}, v.last_round_seconds);
  out.push_back(std::move(rd));
  auto de = core::counterFamily("fabricwatch_peer_discovery_errors_total",
                                "Membership source failures (the source's previous list is kept).");
  addSample(de, {}, static_cast<double>(v.discovery_errors_total));
  out.push_back(std::move(de));
  auto kn = core::counterFamily("fabricwatch_peer_knocks_total",
                                "Single echoes sent to pending members, by result.");
  addSample(kn, {{"result", "answered"}},
            static_cast<double>(v.knocks_total - v.knock_failures_total));
  addSample(kn, {{"result", "failed"}}, static_cast<double>(v.knock_failures_total));
  out.push_back(std::move(kn));

  const ChannelStats& cs = v.channel;
  auto ca = core::counterFamily("fabricwatch_peer_channel_connections_total",
                                "Connections accepted by the peer channel listener.");
  addSample(ca, {}, static_cast<double>(cs.accepted));
  out.push_back(std::move(ca));
  auto co = core::gaugeFamily("fabricwatch_peer_channel_open_connections",
                              "Peer channel connections open now.");
  addSample(co, {}, static_cast<double>(cs.open));
  out.push_back(std::move(co));
  auto cf = core::counterFamily("fabricwatch_peer_channel_frames_total",
                                "Authenticated frames handled by the peer channel listener.");
  addSample(cf, {}, static_cast<double>(cs.frames));
  out.push_back(std::move(cf));
  auto cd = core::counterFamily(
      "fabricwatch_peer_channel_dropped_total",
      "Peer channel connections closed by the listener, by reason: limit, malformed, version, "
      "oversized, auth (HMAC failed), replay, timeout (slow frame), slow_reader, unauthenticated "
      "(no authenticated frame in time), evicted (gave way to a newcomer), idle, replay_budget "
      "(the sender's share of the replay guard used up).");
  for (size_t i = 0; i < cs.dropped.size(); ++i)
    addSample(cd, {{"reason", dropReasonName(static_cast<DropReason>(i))}},
              static_cast<double>(cs.dropped[i]));
  out.push_back(std::move(cd));

  for (const auto& k : v.kinds) k.kind->metrics(k, out);
}

}  // namespace fabricwatch::probes
