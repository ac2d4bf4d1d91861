#include "probes/peer_setup.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "core/host_fs.h"
#include "core/openssl.h"
#include "probes/kinds/dns/dns_config.h"
#include "probes/kinds/tcp/tcp_config.h"
#include "probes/mesh/net_util.h"
#include "probes/registry.h"

namespace fabricwatch::probes {

std::string resolveNodeName(const config::Config& cfg) {
  if (!cfg.peer.node_name.empty()) return cfg.peer.node_name;
  if (const char* env = std::getenv("NODE_NAME"); env && *env) return env;
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) == 0 && buf[0]) return buf;
  return "unknown";
}

core::Result<std::string> readSecretFile(const std::string& path) {
  auto text = core::readRegularFile(path, 64 << 10);
  if (!text)
    return core::Error{"cannot read peer secret file " + path + ": " + text.error().message};
  std::string s = std::move(*text);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.size() < 16)
    return core::Error{"peer secret file " + path + " holds " + std::to_string(s.size()) +
                       " bytes; at least 16 are needed (e.g. openssl rand -hex 32)"};
  return s;
}

core::Result<std::shared_ptr<PeerProber>> makePeerProber(
    const config::Config& cfg, const std::string& resource_group,
    std::shared_ptr<const core::MetricSelection> metrics) {
  const auto& p = cfg.probe;
  if (!p.meshEnabled()) return std::shared_ptr<PeerProber>();
  if (cfg.peer.secret_file.empty())
    return core::Error{
        "the peer mesh is configured but peer.secret_file is not set; refusing to "
        "run an unauthenticated peer channel"};
  auto secret = readSecretFile(cfg.peer.secret_file);
  if (!secret) return secret.error();
  // Every frame carries an HMAC-SHA256 (libcrypto), so the mesh loads OpenSSL; a node without
  // the mesh never maps it (core/openssl.h).
  if (auto st = core::openssl::require("the peer mesh (HMAC-SHA256 frames)"); !st)
    return core::Error{st.message()};

  auto listen = splitHostPort(cfg.peer.listen_address);
  if (!listen) return core::Error{"bad peer.listen_address " + cfg.peer.listen_address};
  std::vector<std::unique_ptr<MembershipSource>> sources;
  if (!p.peers.empty()) sources.push_back(std::make_unique<StaticSource>(p.peers));
  if (!p.dns_name.empty())
    sources.push_back(std::make_unique<DnsSource>(
        p.dns_name, p.dns_port ? p.dns_port : listen->port, dns::dnsConfig(cfg).timeout));
  if (!p.peers_file.empty()) sources.push_back(std::make_unique<FileSource>(p.peers_file));
  auto membership = std::make_unique<Membership>(std::move(sources), p.grace_period);

  ProberOptions o;
  o.node_name = resolveNodeName(cfg);
  o.group = p.topology_group;
  o.group_label = p.topology_label;
  o.secret = std::move(*secret);
  o.channel.listen_address = cfg.peer.listen_address;
  o.channel.max_connections = cfg.peer.max_connections;
  o.channel.max_connections_per_address = cfg.peer.max_connections_per_address;
  o.channel.frame_timeout = cfg.peer.frame_timeout;
  o.channel.idle_timeout = cfg.peer.idle_timeout;
  o.channel.max_clock_skew_ms = static_cast<uint64_t>(cfg.peer.max_clock_skew.count());
  o.interval = p.interval;
  o.peers_per_round = p.peers_per_round;
  // A probe never outlives its round: timeouts are capped at half the interval.
  auto cap = std::max(p.interval / 2, config::Duration(10));
  // Knocks are one echo with the tcp kind's timeouts; resolutions use the dns kind's.
  o.connect_timeout = std::min(tcp::tcpConfig(cfg).connect_timeout, cap);
  o.echo_timeout = std::min(tcp::tcpConfig(cfg).echo_timeout, cap);
  o.dns_timeout = std::min(dns::dnsConfig(cfg).timeout, cap);
  o.workers = p.workers;

  std::vector<std::shared_ptr<ProbeKind>> kinds;
  KindSetup setup{cfg, o.node_name, o.secret, p.interval, resource_group, std::move(metrics)};
  auto registrations = probeKinds();
  if (auto err = checkFrameRanges(registrations)) return core::Error{*err};
  for (const auto& reg : registrations) {
    if (!cfg.probes.enabled(reg.name, reg.enabled_by_default)) continue;
    auto kind = reg.make(setup);
    if (!kind) return core::Error{"probe kind " + reg.name + ": " + kind.error().message};
    if ((*kind)->name() != reg.name)
      return core::Error{"probe kind " + reg.name + " calls itself " +
                         std::string((*kind)->name())};
    // A kind answers only its own frame types (or, a test's kind, the private range).
    for (const auto& h : (*kind)->handlers())
      for (FrameType t : {h.request, h.reply})
        if (!reg.frames.contains(t) && t < FrameType::kPrivateFirst)
          return core::Error{"probe kind " + reg.name + " serves frame type " +
                             std::to_string(static_cast<int>(t)) + " outside its range"};
    kinds.push_back(std::move(*kind));
  }
  return std::make_shared<PeerProber>(std::move(o), std::move(membership), std::move(kinds));
}

}  // namespace fabricwatch::probes
