#include "probes/peer/peer_prober.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "core/log.h"
#include "probes/peer/frame.h"
#include "probes/peer/net_util.h"
#include "probes/peer/selection.h"

namespace fabricwatch::probes::peer {

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

namespace {

ChannelServerOptions channelOptions(const ProberOptions& o) {
  ChannelServerOptions c = o.channel;
  c.secret = o.secret;
  c.node_name = o.node_name;
  c.group = o.group;
  return c;
}

}  // namespace

PeerProber::PeerProber(ProberOptions opts, std::unique_ptr<Membership> membership)
    : opts_(std::move(opts)), membership_(std::move(membership)), server_(channelOptions(opts_)) {}

PeerProber::~PeerProber() { stop(); }

core::Status PeerProber::start() {
  if (opts_.secret.empty()) return core::Error{"the peer channel needs a shared secret"};
  if (auto st = server_.start(); !st) return st;
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = false;
  }
  stop_requested_ = false;
  thread_ = std::thread([this] { loop(); });
  core::log::info("peer", "mesh started",
                  {{"node", opts_.node_name},
                   {"listen", opts_.channel.listen_address},
                   {"port", std::to_string(server_.port())},
                   {"interval_ms", std::to_string(opts_.interval.count())}});
  return core::Status::Ok();
}

void PeerProber::requestStop() {
  stop_requested_ = true;
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
}

void PeerProber::stop() {
  requestStop();
  if (thread_.joinable()) thread_.join();
  server_.stop();
}

void PeerProber::loop() {
  const uint64_t interval_ms = static_cast<uint64_t>(std::max<int64_t>(opts_.interval.count(), 1));
  bool first = true;
  while (true) {
    // Rounds are numbered by wall-clock time so that every node agrees on the round number;
    // the first round runs at once (after the jitter), later ones at each interval boundary.
    uint64_t now_ms = nowUnixMs();
    uint64_t round = now_ms / interval_ms;
    uint64_t start_ms = first ? now_ms : (round + 1) * interval_ms;
    if (!first) ++round;
    std::uniform_int_distribution<uint64_t> jit(
        0, static_cast<uint64_t>(static_cast<double>(interval_ms) * opts_.start_jitter));
    start_ms += jit(rng_);
    first = false;
    {
      std::unique_lock lock(stop_mu_);
      auto wait = std::chrono::milliseconds(start_ms > now_ms ? start_ms - now_ms : 0);
      if (stop_cv_.wait_for(lock, wait, [this] { return stopping_; })) return;
    }
    runRound(round);
  }
}

template <typename Fn>
void PeerProber::forEachParallel(const std::vector<std::string>& items, Fn fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < items.size() && !stop_requested_; i = next++) fn(i, items[i]);
  };
  size_t n = std::min<size_t>(static_cast<size_t>(std::max(opts_.workers, 1)), items.size());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(work);
  if (n > 0) work();
  for (auto& t : threads) t.join();
}

std::optional<std::string> PeerProber::numericAddress(const std::string& address,
                                                      std::string* err) {
  auto hp = splitHostPort(address);
  if (!hp) {
    *err = "bad address";
    return std::nullopt;
  }
  if (isIpLiteral(hp->host)) return address;
  DnsResult r = resolveHost(hp->host, opts_.dns_timeout);
  if (!r.ok) {
    *err = "cannot resolve " + hp->host + ": " + r.error;
    return std::nullopt;
  }
  return joinHostPort(r.addresses.front(), hp->port);
}

std::set<std::string> PeerProber::knock(const std::vector<std::string>& batch) {
  std::mutex mu;
  std::set<std::string> answered;
  uint64_t failures = 0;
  forEachParallel(batch, [&](size_t, const std::string& addr) {
    std::string err;
    auto numeric = numericAddress(addr, &err);
    EchoResult r;
    if (numeric) {
      EchoOptions eo{opts_.secret, opts_.node_name, 1, opts_.connect_timeout, opts_.echo_timeout};
      r = runEcho(*numeric, eo);
    }
    std::lock_guard lock(mu);
    if (!r.rtt_seconds.empty()) {
      bool self = r.peer_node == opts_.node_name;
      membership_->markAnswered(addr, r.peer_node, r.peer_group, self);
      if (!self) answered.insert(addr);
      core::log::info("peer", self ? "recognised self in membership" : "peer answered",
                      {{"address", addr}, {"node", r.peer_node}});
    } else {
      ++failures;
      core::log::debug("peer", "pending peer did not answer",
                       {{"address", addr}, {"error", numeric ? r.error : err}});
    }
  });
  std::lock_guard lock(mu_);
  knocks_total_ += batch.size();
  knock_failures_total_ += failures;
  return answered;
}

PeerResult PeerProber::probe(const std::string& address, const std::string& node,
                             const std::string& group, uint64_t round) {
  PeerResult pr;
  pr.address = address;
  pr.node = node;
  pr.group = group;
  pr.round = round;
  pr.at = std::chrono::system_clock::now();
  // The DNS probe resolves the peer's own name (an instance ID on the platforms we serve),
  // else the host part of a listed host name; plain IP endpoints without a name have none.
  auto hp = splitHostPort(address);
  if (!pr.node.empty())
    pr.dns_name = pr.node;
  else if (hp && !isIpLiteral(hp->host))
    pr.dns_name = hp->host;
  if (opts_.dns_probe && !pr.dns_name.empty()) pr.dns = resolveHost(pr.dns_name, opts_.dns_timeout);

  std::string err;
  auto numeric = numericAddress(address, &err);
  if (!numeric) {
    pr.echo.failure = EchoFailure::kError;
    pr.echo.error = err;
    return pr;
  }
  EchoOptions eo{opts_.secret, opts_.node_name, opts_.samples, opts_.connect_timeout,
                 opts_.echo_timeout};
  pr.echo = runEcho(*numeric, eo);
  pr.reachable = !pr.echo.rtt_seconds.empty();
  if (!pr.echo.peer_node.empty()) {
    pr.node = pr.echo.peer_node;
    pr.group = pr.echo.peer_group;
  }
  return pr;
}

void PeerProber::runRound(uint64_t round) {
  auto t0 = Clock::now();
  auto errors = membership_->refresh(t0);
  for (const auto& e : errors) core::log::warn("peer", "discovery source failed", {{"error", e}});

  // Selection runs over every listed member, pending ones included, so that all nodes work
  // from the same ring; a selected member that has not answered yet is knocked, not probed.
  std::vector<Candidate> candidates;
  std::set<std::string> pending, active;
  Candidate self{opts_.channel.listen_address, opts_.group};
  for (const auto& m : membership_->members()) {
    if (m.state == MemberState::kSelf) {
      self.id = m.address;
      continue;
    }
    candidates.push_back({m.address, m.group});
    (m.state == MemberState::kPending ? pending : active).insert(m.address);
  }
  std::vector<std::string> peers = selectPeers(candidates, self, round, opts_.peers_per_round);
  {
    // Peers that failed last time are probed again, so an outage is tracked and its recovery
    // seen within a round; bounded by k so a broken fleet cannot multiply the probe load.
    std::lock_guard lock(mu_);
    int extra = 0;
    for (const auto& [addr, r] : results_) {
      if (r.reachable || extra >= opts_.peers_per_round || !active.count(addr)) continue;
      if (std::find(peers.begin(), peers.end(), addr) == peers.end()) {
        peers.push_back(addr);
        ++extra;
      }
    }
  }
  std::vector<std::string> knocks;
  for (const auto& p : peers)
    if (pending.count(p)) knocks.push_back(p);
  // A few pending members beyond the selection too, so the membership view converges.
  std::vector<std::string> others;
  for (const auto& p : pending)
    if (std::find(knocks.begin(), knocks.end(), p) == knocks.end()) others.push_back(p);
  std::shuffle(others.begin(), others.end(), rng_);
  others.resize(std::min<size_t>(others.size(), static_cast<size_t>(opts_.max_knocks_per_round)));
  knocks.insert(knocks.end(), others.begin(), others.end());
  std::set<std::string> answered = knock(knocks);
  std::erase_if(peers,
                [&](const std::string& p) { return pending.count(p) && !answered.count(p); });

  std::map<std::string, std::pair<std::string, std::string>> who;
  for (const auto& m : membership_->members()) who[m.address] = {m.node, m.group};
  std::shuffle(peers.begin(), peers.end(), rng_);
  std::vector<PeerResult> results(peers.size());
  forEachParallel(peers, [&](size_t i, const std::string& addr) {
    const auto& [node, group] = who[addr];
    results[i] = probe(addr, node, group, round);
  });
  if (stop_requested_) return;  // a partial round is not a result
  {
    std::lock_guard lock(mu_);
    discovery_errors_ = errors;
    discovery_errors_total_ += errors.size();
    round_peers_ = peers;
    std::sort(round_peers_.begin(), round_peers_.end());
  }
  record(std::move(results), round, std::chrono::duration<double>(Clock::now() - t0).count());
}

void PeerProber::record(std::vector<PeerResult> results, uint64_t round, double seconds) {
  std::set<std::string> listed;
  for (const auto& m : membership_->members()) listed.insert(m.address);
  std::lock_guard lock(mu_);
  round_ = round;
  ++rounds_total_;
  last_round_seconds_ = seconds;
  for (auto& r : results) {
    ++tcp_probes_total_;
    tcp_samples_total_ += static_cast<uint64_t>(r.echo.sent);
    tcp_samples_lost_total_ += static_cast<uint64_t>(r.echo.sent) - r.echo.rtt_seconds.size();
    if (r.echo.connected) connect_hist_.observe(r.echo.connect_seconds);
    for (double s : r.echo.rtt_seconds) rtt_hist_.observe(s);
    if (r.echo.failure != EchoFailure::kNone)
      tcp_failures_total_[echoFailureName(r.echo.failure)]++;
    if (r.dns) {
      ++dns_lookups_total_;
      if (r.dns->ok) dns_hist_.observe(r.dns->seconds);
      if (r.dns->timed_out)
        ++dns_timeouts_total_;
      else if (!r.dns->ok)
        ++dns_failures_total_;
    }
    results_[r.address] = std::move(r);
  }
  // Expiry: keep this round's and the previous round's results of members still listed.
  std::erase_if(results_, [&](const auto& kv) {
    return kv.second.round + 1 < round || !listed.count(kv.first);
  });
}

}  // namespace fabricwatch::probes::peer
