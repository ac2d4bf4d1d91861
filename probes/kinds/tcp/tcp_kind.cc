#include "probes/kinds/tcp/tcp_kind.h"

#include <algorithm>
#include <map>

#include "probes/mesh/histogram.h"

namespace fabricwatch::probes::tcp {
namespace {

struct TcpTotals : ProbeTotals {
  uint64_t probes = 0, samples = 0, samples_lost = 0;
  std::map<std::string, uint64_t> failures;  // by ChannelFailure name
  Histogram connect, rtt;
};

double lossRatio(const EchoResult& e) {
  return e.sent ? 1.0 - static_cast<double>(e.rtt_seconds.size()) / static_cast<double>(e.sent)
                : 1.0;
}

core::Value tcpValue(const PeerProbe& p) {
  const EchoResult& e = resultAs<TcpResult>(p).echo;
  core::Value v = core::Value::map();
  v["address"] = p.peer.address;
  if (!p.peer.node.empty()) v["node"] = p.peer.node;
  if (!p.peer.group.empty()) v["group"] = p.peer.group;
  v["round"] = p.peer.round;
  v["reachable"] = !e.rtt_seconds.empty();
  if (e.connected) v["connect_seconds"] = e.connect_seconds;
  const auto& s = e.rtt_seconds;
  v["samples_sent"] = e.sent;
  v["samples_received"] = s.size();
  v["loss_ratio"] = lossRatio(e);
  if (!s.empty()) {
    double sum = 0;
    for (double x : s) sum += x;
    v["rtt_seconds"] = core::Value::map({{"min", percentile(s, 0)},
                                         {"avg", sum / static_cast<double>(s.size())},
                                         {"p50", percentile(s, 50)},
                                         {"p99", percentile(s, 99)},
                                         {"max", percentile(s, 100)}});
  }
  if (e.failure != EchoFailure::kNone) {
    v["failure"] = echoFailureName(e.failure);
    v["error"] = e.error;
  }
  return v;
}

class TcpKind : public ProbeKind {
 public:
  explicit TcpKind(TcpKindOptions o) : opts_(std::move(o)) {}

  std::string_view name() const override { return "tcp"; }
  ProbeSchedule schedule() const override {
    return {.timeout = opts_.connect_timeout + opts_.samples * opts_.echo_timeout};
  }

  std::shared_ptr<const ProbeResult> probe(const PeerContext& ctx) override {
    auto r = std::make_shared<TcpResult>();
    if (ctx.channel_address.empty()) {
      r->echo.failure = EchoFailure::kError;
      r->echo.error = ctx.resolve_error;
    } else {
      r->echo = runEcho(ctx.channel_address, {opts_.secret, opts_.node_name, opts_.samples,
                                              opts_.connect_timeout, opts_.echo_timeout});
    }
    r->answered = !r->echo.rtt_seconds.empty();
    if (!r->echo.peer_node.empty())
      r->identity = PeerIdentity{r->echo.peer_node, r->echo.peer_group, r->echo.peer_instance};
    return r;
  }

  std::shared_ptr<const ProbeTotals> account(const std::vector<PeerProbe>& run) override {
    for (const auto& p : run) {
      const EchoResult& e = resultAs<TcpResult>(p).echo;
      ++totals_.probes;
      totals_.samples += static_cast<uint64_t>(e.sent);
      totals_.samples_lost += static_cast<uint64_t>(e.sent) - e.rtt_seconds.size();
      if (e.connected) totals_.connect.observe(e.connect_seconds);
      for (double s : e.rtt_seconds) totals_.rtt.observe(s);
      if (e.failure != EchoFailure::kNone) totals_.failures[echoFailureName(e.failure)]++;
    }
    return std::make_shared<const TcpTotals>(totals_);
  }

  core::Value facts(const KindView& view) const override {
    core::Value peers = core::Value::list();
    int64_t reachable = 0, unreachable = 0, sent = 0, received = 0;
    double worst_p99 = 0;
    for (const auto& p : view.results) {
      const EchoResult& e = resultAs<TcpResult>(p).echo;
      peers.push(tcpValue(p));
      (e.rtt_seconds.empty() ? unreachable : reachable)++;
      sent += e.sent;
      received += static_cast<int64_t>(e.rtt_seconds.size());
      if (!e.rtt_seconds.empty()) worst_p99 = std::max(worst_p99, percentile(e.rtt_seconds, 99));
    }
    core::Value tcp = core::Value::map();
    tcp["peers"] = std::move(peers);
    tcp["reachable"] = reachable;
    tcp["unreachable"] = unreachable;
    if (sent) tcp["loss_ratio"] = 1.0 - static_cast<double>(received) / static_cast<double>(sent);
    if (received) tcp["rtt_p99_seconds"] = worst_p99;
    return tcp;
  }

  void peerStatus(const PeerProbe& p, core::Value& entry) const override {
    core::Value v = tcpValue(p);
    for (auto& [key, value] : v.asMap()) entry[key] = std::move(value);
  }

  void metrics(const KindView& view, core::MetricFamilies& out) const override {
    using core::addSample;
    const auto& t = totalsAs<TcpTotals>(view);
    auto ch =
        histogramFamily("fabricwatch_probe_tcp_connect_seconds", "TCP connect time to peers.");
    t.connect.render(ch, {});
    out.push_back(std::move(ch));
    auto rh = histogramFamily("fabricwatch_probe_tcp_rtt_seconds",
                              "Authenticated echo round-trip time to peers, per sample.");
    t.rtt.render(rh, {});
    out.push_back(std::move(rh));
    auto tp = core::counterFamily("fabricwatch_probe_tcp_probes_total", "TCP peer probes run.");
    addSample(tp, {}, static_cast<double>(t.probes));
    out.push_back(std::move(tp));
    auto ts = core::counterFamily("fabricwatch_probe_tcp_samples_total",
                                  "Echo samples sent, by result (received or lost).");
    addSample(ts, {{"result", "received"}}, static_cast<double>(t.samples - t.samples_lost));
    addSample(ts, {{"result", "lost"}}, static_cast<double>(t.samples_lost));
    out.push_back(std::move(ts));
    auto tf = core::counterFamily(
        "fabricwatch_probe_tcp_failures_total",
        "TCP probes that failed, by reason: timeout, refused, closed (peer hung up, e.g. it "
        "rejected our HMAC), auth (reply failed verification), error.");
    for (const char* r : {"timeout", "refused", "closed", "auth", "error"}) {
      auto it = t.failures.find(r);
      addSample(tf, {{"reason", r}},
                it == t.failures.end() ? 0.0 : static_cast<double>(it->second));
    }
    out.push_back(std::move(tf));

    // Per-peer series: only the peers of the last two runs (see docs/peers.md, series bound).
    auto up = core::gaugeFamily("fabricwatch_probe_tcp_peer_up",
                                "1 if the peer answered its last echo probe, 0 if not.");
    auto rtt = core::gaugeFamily("fabricwatch_probe_tcp_peer_rtt_seconds",
                                 "Median echo RTT to the peer in its last probe.");
    auto loss = core::gaugeFamily("fabricwatch_probe_tcp_peer_loss_ratio",
                                  "Fraction of echo samples lost in the peer's last probe.");
    for (const auto& p : view.results) {
      const EchoResult& e = resultAs<TcpResult>(p).echo;
      core::LabelPairs l{{"peer", p.peer.address}, {"peer_node", p.peer.node}};
      addSample(up, l, e.rtt_seconds.empty() ? 0 : 1);
      if (!e.rtt_seconds.empty()) addSample(rtt, l, percentile(e.rtt_seconds, 50));
      if (e.sent) addSample(loss, l, lossRatio(e));
    }
    out.push_back(std::move(up));
    out.push_back(std::move(rtt));
    out.push_back(std::move(loss));
  }

 private:
  TcpKindOptions opts_;
  TcpTotals totals_;  // the round's thread only
};

}  // namespace

std::shared_ptr<ProbeKind> makeTcpKind(TcpKindOptions opts) {
  return std::make_shared<TcpKind>(std::move(opts));
}

KindRegistration tcpKindRegistration() {
  KindRegistration r;
  r.name = "tcp";
  r.make = [](const KindSetup& s) -> core::Result<std::shared_ptr<ProbeKind>> {
    const auto& p = tcpConfig(s.config);
    auto cap = std::max(s.interval / 2, config::Duration(10));
    return makeTcpKind({s.secret, s.node_name, p.samples, std::min(p.connect_timeout, cap),
                        std::min(p.echo_timeout, cap)});
  };
  r.config = tcpConfigTable();
  r.docs = "docs/configuration.md";
  return r;
}

}  // namespace fabricwatch::probes::tcp
