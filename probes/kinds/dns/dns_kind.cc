#include "probes/kinds/dns/dns_kind.h"

#include <algorithm>

#include "probes/mesh/histogram.h"
#include "probes/mesh/net_util.h"

namespace fabricwatch::probes::dns {
namespace {

struct DnsTotals : ProbeTotals {
  uint64_t lookups = 0, failures = 0, timeouts = 0;
  Histogram seconds;
};

core::Value dnsValue(const PeerProbe& p) {
  const auto& r = resultAs<DnsKindResult>(p);
  core::Value v = core::Value::map();
  v["name"] = r.name;
  v["address"] = p.peer.address;
  v["ok"] = r.dns.ok;
  v["timed_out"] = r.dns.timed_out;
  v["seconds"] = r.dns.seconds;
  if (!r.dns.error.empty()) v["error"] = r.dns.error;
  core::Value addrs = core::Value::list();
  for (const auto& a : r.dns.addresses) addrs.push(a);
  v["addresses"] = std::move(addrs);
  return v;
}

class DnsKind : public ProbeKind {
 public:
  explicit DnsKind(std::chrono::milliseconds timeout) : timeout_(timeout) {}

  std::string_view name() const override { return "dns"; }
  ProbeSchedule schedule() const override { return {.timeout = timeout_}; }

  std::shared_ptr<const ProbeResult> probe(const PeerContext& ctx) override {
    std::string name = ctx.peer.node;
    if (auto hp = splitHostPort(ctx.peer.address); name.empty() && hp && !isIpLiteral(hp->host))
      name = hp->host;
    if (name.empty()) return nullptr;  // an IP endpoint whose node name is not known yet
    auto r = std::make_shared<DnsKindResult>();
    r->name = name;
    r->dns = resolveHost(name, timeout_);
    return r;
  }

  std::shared_ptr<const ProbeTotals> account(const std::vector<PeerProbe>& run) override {
    for (const auto& p : run) {
      const DnsResult& d = resultAs<DnsKindResult>(p).dns;
      ++totals_.lookups;
      if (d.ok) totals_.seconds.observe(d.seconds);
      if (d.timed_out)
        ++totals_.timeouts;
      else if (!d.ok)
        ++totals_.failures;
    }
    return std::make_shared<const DnsTotals>(totals_);
  }

  core::Value facts(const KindView& view) const override {
    core::Value peers = core::Value::list();
    int64_t failures = 0;
    for (const auto& p : view.results) {
      peers.push(dnsValue(p));
      failures += !resultAs<DnsKindResult>(p).dns.ok;
    }
    return core::Value::map({{"peers", std::move(peers)}, {"failures", failures}});
  }

  void peerStatus(const PeerProbe& p, core::Value& entry) const override {
    entry["dns"] = dnsValue(p);
  }

  void metrics(const KindView& view, core::MetricFamilies& out) const override {
    using core::addSample;
    const auto& t = totalsAs<DnsTotals>(view);
    auto dh = histogramFamily("fabricwatch_probe_dns_resolve_seconds",
                              "Resolution time of peers' host names (successful lookups).");
    t.seconds.render(dh, {});
    out.push_back(std::move(dh));
    auto dl = core::counterFamily("fabricwatch_probe_dns_lookups_total",
                                  "Peer host name lookups, by result (ok, failed, timeout).");
    addSample(dl, {{"result", "ok"}}, static_cast<double>(t.lookups - t.failures - t.timeouts));
    addSample(dl, {{"result", "failed"}}, static_cast<double>(t.failures));
    addSample(dl, {{"result", "timeout"}}, static_cast<double>(t.timeouts));
    out.push_back(std::move(dl));
    auto pdns = core::gaugeFamily("fabricwatch_probe_dns_peer_resolve_seconds",
                                  "Resolution time of the peer's host name in its last probe.");
    for (const auto& p : view.results) {
      const DnsResult& d = resultAs<DnsKindResult>(p).dns;
      if (d.ok) addSample(pdns, {{"peer", p.peer.address}, {"peer_node", p.peer.node}}, d.seconds);
    }
    out.push_back(std::move(pdns));
  }

 private:
  std::chrono::milliseconds timeout_;
  DnsTotals totals_;  // the round's thread only
};

}  // namespace

std::shared_ptr<ProbeKind> makeDnsKind(std::chrono::milliseconds timeout) {
  return std::make_shared<DnsKind>(timeout);
}

KindRegistration dnsKindRegistration() {
  KindRegistration r;
  r.name = "dns";
  r.make = [](const KindSetup& s) -> core::Result<std::shared_ptr<ProbeKind>> {
    auto cap = std::max(s.interval / 2, config::Duration(10));
    return makeDnsKind(std::min(dnsConfig(s.config).timeout, cap));
  };
  r.config = dnsConfigTable();
  r.docs = "docs/configuration.md";
  return r;
}

}  // namespace fabricwatch::probes::dns
