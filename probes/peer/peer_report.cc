// PeerProber's read side: the facts, the /api/v1/peers document and the metrics, all copies of
// the latest results taken under the prober's lock (never a probe).
#include <chrono>

#include "core/value_format.h"
#include "probes/peer/peer_prober.h"

namespace fabricwatch::probes::peer {
namespace {

core::Value tcpValue(const PeerResult& r) {
  core::Value v = core::Value::map();
  v["address"] = r.address;
  if (!r.node.empty()) v["node"] = r.node;
  if (!r.group.empty()) v["group"] = r.group;
  v["round"] = r.round;
  v["reachable"] = r.reachable;
  if (r.echo.connected) v["connect_seconds"] = r.echo.connect_seconds;
  const auto& s = r.echo.rtt_seconds;
  v["samples_sent"] = r.echo.sent;
  v["samples_received"] = s.size();
  v["loss_ratio"] =
      r.echo.sent ? 1.0 - static_cast<double>(s.size()) / static_cast<double>(r.echo.sent) : 1.0;
  if (!s.empty()) {
    double sum = 0;
    for (double x : s) sum += x;
    v["rtt_seconds"] = core::Value::map({{"min", percentile(s, 0)},
                                         {"avg", sum / static_cast<double>(s.size())},
                                         {"p50", percentile(s, 50)},
                                         {"p99", percentile(s, 99)},
                                         {"max", percentile(s, 100)}});
  }
  if (r.echo.failure != EchoFailure::kNone) {
    v["failure"] = echoFailureName(r.echo.failure);
    v["error"] = r.echo.error;
  }
  return v;
}

core::Value dnsValue(const PeerResult& r) {
  core::Value v = core::Value::map();
  v["name"] = r.dns_name;
  v["address"] = r.address;
  v["ok"] = r.dns->ok;
  v["timed_out"] = r.dns->timed_out;
  v["seconds"] = r.dns->seconds;
  if (!r.dns->error.empty()) v["error"] = r.dns->error;
  core::Value addrs = core::Value::list();
  for (const auto& a : r.dns->addresses) addrs.push(a);
  v["addresses"] = std::move(addrs);
  return v;
}

}  // namespace

core::Value PeerProber::facts() const {
  auto members = membership_->members();
  std::lock_guard lock(mu_);
  core::Value doc = core::Value::map();
  doc["node"] = core::Value::map({{"name", opts_.node_name}});
  core::Value mesh = core::Value::map();
  int64_t active = 0, pending = 0;
  for (const auto& m : members) {
    active += m.state == MemberState::kActive;
    pending += m.state == MemberState::kPending;
  }
  mesh["members"] = active + pending;
  mesh["active"] = active;
  mesh["pending"] = pending;
  mesh["round"] = round_;
  mesh["peers_per_round"] = opts_.peers_per_round;
  mesh["interval_seconds"] = static_cast<double>(opts_.interval.count()) / 1000.0;
  if (!opts_.group.empty()) mesh["group"] = opts_.group;
  if (!opts_.group_label.empty()) mesh["group_label"] = opts_.group_label;
  core::Value tcp_peers = core::Value::list(), dns_peers = core::Value::list();
  int64_t reachable = 0, unreachable = 0, sent = 0, received = 0, dns_failures = 0;
  double worst_p99 = 0;
  for (const auto& [_, r] : results_) {
    tcp_peers.push(tcpValue(r));
    (r.reachable ? reachable : unreachable)++;
    sent += r.echo.sent;
    received += static_cast<int64_t>(r.echo.rtt_seconds.size());
    if (!r.echo.rtt_seconds.empty())
      worst_p99 = std::max(worst_p99, percentile(r.echo.rtt_seconds, 99));
    if (r.dns) {
      dns_peers.push(dnsValue(r));
      dns_failures += !r.dns->ok;
    }
  }
  core::Value tcp = core::Value::map();
  tcp["peers"] = std::move(tcp_peers);
  tcp["reachable"] = reachable;
  tcp["unreachable"] = unreachable;
  if (sent) tcp["loss_ratio"] = 1.0 - static_cast<double>(received) / static_cast<double>(sent);
  if (received) tcp["rtt_p99_seconds"] = worst_p99;
  core::Value dns = core::Value::map();
  dns["peers"] = std::move(dns_peers);
  dns["failures"] = dns_failures;
  doc["probes"] = core::Value::map(
      {{"mesh", std::move(mesh)}, {"tcp", std::move(tcp)}, {"dns", std::move(dns)}});
  return doc;
}

core::Value PeerProber::status() const {
  auto members = membership_->members();
  std::lock_guard lock(mu_);
  core::Value doc = core::Value::map();
  doc["enabled"] = true;
  doc["node"] = opts_.node_name;
  doc["listen_address"] = opts_.channel.listen_address;
  doc["port"] = server_.port();
  if (!opts_.group.empty()) doc["group"] = opts_.group;
  doc["round"] = round_;
  doc["interval_seconds"] = static_cast<double>(opts_.interval.count()) / 1000.0;
  doc["peers_per_round"] = opts_.peers_per_round;
  core::Value ms = core::Value::list();
  for (const auto& m : members) {
    core::Value v = core::Value::map();
    v["address"] = m.address;
    v["state"] = memberStateName(m.state);
    if (!m.node.empty()) v["node"] = m.node;
    if (!m.group.empty()) v["group"] = m.group;
    core::Value src = core::Value::list();
    for (const auto& s : m.sources) src.push(s);
    v["sources"] = std::move(src);
    ms.push(std::move(v));
  }
  doc["members"] = std::move(ms);
  core::Value rp = core::Value::list();
  for (const auto& p : round_peers_) rp.push(p);
  doc["round_peers"] = std::move(rp);
  core::Value res = core::Value::list();
  for (const auto& [_, r] : results_) {
    core::Value v = tcpValue(r);
    v["probed_at"] = core::rfc3339(r.at);
    if (r.dns) v["dns"] = dnsValue(r);
    res.push(std::move(v));
  }
  doc["results"] = std::move(res);
  core::Value errs = core::Value::list();
  for (const auto& e : discovery_errors_) errs.push(e);
  doc["discovery_errors"] = std::move(errs);
  return doc;
}

void PeerProber::renderMetrics(core::MetricFamilies& out) const {
  using core::addSample;
  auto members = membership_->members();
  ChannelStats cs = server_.stats();
  std::lock_guard lock(mu_);

  auto m = core::gaugeFamily("fabricwatch_peer_members",
                             "Mesh members by state: active (answered), pending (listed, not yet "
                             "answered), self.");
  std::map<std::string, int> by_state{{"active", 0}, {"pending", 0}, {"self", 0}};
  for (const auto& mb : members) by_state[memberStateName(mb.state)]++;
  for (const auto& [s, n] : by_state) addSample(m, {{"state", s}}, n);
  out.push_back(std::move(m));

  auto rp = core::gaugeFamily("fabricwatch_peer_round_peers", "Peers probed in the last round.");
  addSample(rp, {}, static_cast<double>(round_peers_.size()));
  out.push_back(std::move(rp));
  auto rt = core::counterFamily("fabricwatch_peer_rounds_total", "Probe rounds run.");
  addSample(rt, {}, static_cast<double>(rounds_total_));
  out.push_back(std::move(rt));
  auto rd = core::gaugeFamily("fabricwatch_peer_round_duration_seconds",
                              "Wall time of the last probe round.");
  addSample(rd, {}, last_round_seconds_);
  out.push_back(std::move(rd));
  auto de = core::counterFamily("fabricwatch_peer_discovery_errors_total",
                                "Membership source failures (the source's previous list is kept).");
  addSample(de, {}, static_cast<double>(discovery_errors_total_));
  out.push_back(std::move(de));
  auto kn = core::counterFamily("fabricwatch_peer_knocks_total",
                                "Single echoes sent to pending members, by result.");
  addSample(kn, {{"result", "answered"}},
            static_cast<double>(knocks_total_ - knock_failures_total_));
  addSample(kn, {{"result", "failed"}}, static_cast<double>(knock_failures_total_));
  out.push_back(std::move(kn));

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
      "Peer channel connections dropped, by reason: limit, malformed, version, oversized, auth "
      "(HMAC failed), replay, timeout (slow frame), slow_reader.");
  for (size_t i = 0; i < cs.dropped.size(); ++i)
    addSample(cd, {{"reason", dropReasonName(static_cast<DropReason>(i))}},
              static_cast<double>(cs.dropped[i]));
  out.push_back(std::move(cd));

  auto ch = histogramFamily("fabricwatch_probe_tcp_connect_seconds", "TCP connect time to peers.");
  connect_hist_.render(ch, {});
  out.push_back(std::move(ch));
  auto rh = histogramFamily("fabricwatch_probe_tcp_rtt_seconds",
                            "Authenticated echo round-trip time to peers, per sample.");
  rtt_hist_.render(rh, {});
  out.push_back(std::move(rh));
  auto tp = core::counterFamily("fabricwatch_probe_tcp_probes_total", "TCP peer probes run.");
  addSample(tp, {}, static_cast<double>(tcp_probes_total_));
  out.push_back(std::move(tp));
  auto ts = core::counterFamily("fabricwatch_probe_tcp_samples_total",
                                "Echo samples sent, by result (received or lost).");
  addSample(ts, {{"result", "received"}},
            static_cast<double>(tcp_samples_total_ - tcp_samples_lost_total_));
  addSample(ts, {{"result", "lost"}}, static_cast<double>(tcp_samples_lost_total_));
  out.push_back(std::move(ts));
  auto tf = core::counterFamily(
      "fabricwatch_probe_tcp_failures_total",
      "TCP probes that failed, by reason: timeout, refused, closed (peer hung up, e.g. it "
      "rejected our HMAC), auth (reply failed verification), error.");
  for (const char* r : {"timeout", "refused", "closed", "auth", "error"}) {
    auto it = tcp_failures_total_.find(r);
    addSample(tf, {{"reason", r}},
              it == tcp_failures_total_.end() ? 0.0 : static_cast<double>(it->second));
  }
  out.push_back(std::move(tf));

  auto dh = histogramFamily("fabricwatch_probe_dns_resolve_seconds",
                            "Resolution time of peers' host names (successful lookups).");
  dns_hist_.render(dh, {});
  out.push_back(std::move(dh));
  auto dl = core::counterFamily("fabricwatch_probe_dns_lookups_total",
                                "Peer host name lookups, by result (ok, failed, timeout).");
  addSample(dl, {{"result", "ok"}},
            static_cast<double>(dns_lookups_total_ - dns_failures_total_ - dns_timeouts_total_));
  addSample(dl, {{"result", "failed"}}, static_cast<double>(dns_failures_total_));
  addSample(dl, {{"result", "timeout"}}, static_cast<double>(dns_timeouts_total_));
  out.push_back(std::move(dl));

  // Per-peer series: only the peers of this and the previous round (results_ expires the
  // rest), so their number is bounded by 2 x (k + k failing + group size) whatever the fleet.
  auto up = core::gaugeFamily("fabricwatch_probe_tcp_peer_up",
                              "1 if the peer answered its last echo probe, 0 if not.");
  auto prtt = core::gaugeFamily("fabricwatch_probe_tcp_peer_rtt_seconds",
                                "Median echo RTT to the peer in its last probe.");
  auto ploss = core::gaugeFamily("fabricwatch_probe_tcp_peer_loss_ratio",
                                 "Fraction of echo samples lost in the peer's last probe.");
  auto pdns = core::gaugeFamily("fabricwatch_probe_dns_peer_resolve_seconds",
                                "Resolution time of the peer's host name in its last probe.");
  for (const auto& [addr, r] : results_) {
    core::LabelPairs l{{"peer", addr}, {"peer_node", r.node}};
    addSample(up, l, r.reachable ? 1 : 0);
    if (r.reachable) addSample(prtt, l, percentile(r.echo.rtt_seconds, 50));
    if (r.echo.sent)
      addSample(
          ploss, l,
          1.0 - static_cast<double>(r.echo.rtt_seconds.size()) / static_cast<double>(r.echo.sent));
    if (r.dns && r.dns->ok) addSample(pdns, l, r.dns->seconds);
  }
  out.push_back(std::move(up));
  out.push_back(std::move(prtt));
  out.push_back(std::move(ploss));
  out.push_back(std::move(pdns));
}

}  // namespace fabricwatch::probes::peer
