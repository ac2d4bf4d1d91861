#include "probes/mesh/peer_prober.h"

#include <algorithm>
#include <atomic>

#include "core/log.h"
#include "probes/mesh/dns_probe.h"
#include "probes/mesh/echo_client.h"
#include "probes/mesh/frame.h"
#include "probes/mesh/net_util.h"
#include "probes/mesh/selection.h"

namespace fabricwatch::probes {

using Clock = std::chrono::steady_clock;

namespace {

ChannelServerOptions channelOptions(const ProberOptions& o) {
  ChannelServerOptions c = o.channel;
  c.secret = o.secret;
  c.node_name = o.node_name;
  c.group = o.group;
  return c;
}

}  // namespace

PeerProber::PeerProber(ProberOptions opts, std::unique_ptr<Membership> membership,
                       std::vector<std::shared_ptr<ProbeKind>> kinds)
    : opts_(std::move(opts)), membership_(std::move(membership)), server_([&] {
        ChannelServerOptions c = channelOptions(opts_);
        for (const auto& k : kinds)
          for (auto& h : k->handlers()) c.handlers.push_back(std::move(h));
        return c;
      }()) {
  for (auto& k : kinds) {
    // The membership outlives the channel that calls the kinds' handlers (declared before it).
    k->setMemberNames([m = membership_.get()](const std::string& ip) { return m->namesAt(ip); });
    KindState st;
    st.schedule = k->schedule();
    st.schedule.every_rounds = std::max<uint64_t>(st.schedule.every_rounds, 1);
    if (st.schedule.jitter) st.phase = rng_() % st.schedule.every_rounds;
    st.totals = k->account({});
    st.kind = std::move(k);
    kinds_.push_back(std::move(st));
  }
  publish();
}

PeerProber::~PeerProber() { stop(); }

core::Status PeerProber::start(bool rounds) {
  if (opts_.secret.empty()) return core::Error{"the peer channel needs a shared secret"};
  if (auto st = server_.start(); !st) return st;
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = false;
  }
  stop_requested_ = false;
  if (rounds) thread_ = std::thread([this] { loop(); });
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
  for (auto& k : kinds_) k.kind->stop();
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
      if (r.peer_instance) instances_[addr] = r.peer_instance;
      if (!self) answered.insert(addr);
      core::log::info("peer", self ? "recognised self in membership" : "peer answered",
                      {{"address", addr}, {"node", r.peer_node}});
    } else {
      ++failures;
      core::log::debug("peer", "pending peer did not answer",
                       {{"address", addr}, {"error", numeric ? r.error : err}});
    }
  });
  knocks_total_ += batch.size();
  knock_failures_total_ += failures;
  return answered;
}

PeerContext PeerProber::context(const PeerInfo& peer) {
  PeerContext ctx;
  ctx.peer = peer;
  ctx.stopping = &stop_requested_;
  if (auto numeric = numericAddress(peer.address, &ctx.resolve_error)) {
    ctx.channel_address = *numeric;
    ctx.resolve_error.clear();
  }
  return ctx;
}

std::shared_ptr<const ProbeResult> PeerProber::probeOne(KindState& k, PeerContext& ctx) {
  ctx.deadline = Clock::now() + k.schedule.timeout;
  auto r = k.kind->probe(ctx);
  if (r && r->identity) {
    // What this kind learned about the peer holds for the kinds after it.
    if (!r->identity->node.empty()) {
      ctx.peer.node = r->identity->node;
      ctx.peer.group = r->identity->group;
    }
    if (r->identity->instance) ctx.peer.instance = r->identity->instance;
  }
  return r;
}

void PeerProber::runRound(uint64_t round) {
  std::lock_guard round_lock(round_mu_);
  auto t0 = Clock::now();
  auto errors = membership_->refresh(t0);
  for (const auto& e : errors) core::log::warn("peer", "discovery source failed", {{"error", e}});

  // Selection runs over every listed member, pending ones included, so that all nodes work
  // from the same ring; a selected member that has not answered yet is knocked, not probed.
  // A member's topology group is what its echo replies said: until one came it has none and
  // counts as outside every group (selection.h).
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
  // Peers found silent last time are probed again, so an outage is tracked and its recovery
  // seen within a round; bounded by k so a broken fleet cannot multiply the probe load.
  int extra = 0;
  for (const auto& [addr, r] : records_) {
    if (r.answered != false || extra >= opts_.peers_per_round || !active.count(addr)) continue;
    if (std::find(peers.begin(), peers.end(), addr) == peers.end()) {
      peers.push_back(addr);
      ++extra;
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

  std::shuffle(peers.begin(), peers.end(), rng_);
  std::map<std::string, PeerInfo> who;
  auto now = std::chrono::system_clock::now();
  for (const auto& m : membership_->members()) {
    auto it = instances_.find(m.address);
    who[m.address] = {m.address, m.node, m.group, it == instances_.end() ? 0 : it->second,
                      round,     now};
  }
  std::vector<size_t> due, concurrent, exclusive;
  for (size_t k = 0; k < kinds_.size(); ++k) {
    if (round % kinds_[k].schedule.every_rounds != kinds_[k].phase) continue;
    due.push_back(k);
    (kinds_[k].schedule.exclusive ? exclusive : concurrent).push_back(k);
  }
  std::vector<PeerContext> ctx(peers.size());
  RoundResults results(kinds_.size(),
                       std::vector<std::shared_ptr<const ProbeResult>>(peers.size()));
  forEachParallel(peers, [&](size_t i, const std::string& addr) {
    ctx[i] = context(who.at(addr));
    for (size_t k : concurrent) results[k][i] = probeOne(kinds_[k], ctx[i]);
  });
  // Exclusive kinds: alone, one peer at a time, while the round's interval has room (or, for a
  // kind that may overrun it, its first peer regardless), up to the kind's peers per run.
  for (size_t k : exclusive) {
    const ProbeSchedule& sch = kinds_[k].schedule;
    size_t ran = 0;
    for (size_t i = 0; i < peers.size() && !stop_requested_; ++i) {
      if (sch.max_peers && ran >= sch.max_peers) break;
      bool room = Clock::now() + sch.timeout <= t0 + opts_.interval;
      if (!room && !(sch.overrun && ran == 0)) break;
      results[k][i] = probeOne(kinds_[k], ctx[i]);
      ran += results[k][i] != nullptr;
    }
  }
  if (stop_requested_) return;  // a partial round is not a result
  discovery_errors_ = errors;
  discovery_errors_total_ += errors.size();
  round_peers_ = peers;
  std::sort(round_peers_.begin(), round_peers_.end());
  record(round, due, ctx, results, std::chrono::duration<double>(Clock::now() - t0).count());
}

void PeerProber::record(uint64_t round, const std::vector<size_t>& due,
                        const std::vector<PeerContext>& peers, const RoundResults& results,
                        double seconds) {
  std::set<std::string> listed;
  for (const auto& m : membership_->members()) listed.insert(m.address);
  round_ = round;
  ++rounds_total_;
  last_round_seconds_ = seconds;
  for (size_t i = 0; i < peers.size(); ++i) {
    PeerRecord rec{peers[i].peer, std::nullopt};
    for (const auto& kind_results : results) {
      const auto& r = kind_results[i];
      if (r && r->answered) rec.answered = rec.answered.value_or(false) || *r->answered;
    }
    if (rec.peer.instance) instances_[rec.peer.address] = rec.peer.instance;
    records_[rec.peer.address] = std::move(rec);
  }
  for (size_t k : due) {
    KindState& st = kinds_[k];
    st.previous_run = st.last_run;
    st.last_run = round;
    std::vector<PeerProbe> run;
    for (size_t i = 0; i < peers.size(); ++i)
      if (results[k][i]) run.push_back({peers[i].peer, results[k][i]});
    for (const auto& p : run) st.latest[p.peer.address] = p;
    st.totals = st.kind->account(run);
  }
  for (auto& st : kinds_) {
    // Expiry: a kind's results of its last two runs, of members still listed.
    std::erase_if(st.latest, [&](const auto& kv) {
      return kv.second.peer.round < st.previous_run || !listed.count(kv.first);
    });
  }
  std::erase_if(records_, [&](const auto& kv) {
    return kv.second.peer.round + 1 < round || !listed.count(kv.first);
  });
  std::erase_if(instances_, [&](const auto& kv) { return !listed.count(kv.first); });
  publish();
}

void PeerProber::publish() {
  auto v = std::make_shared<MeshView>();
  v->node_name = opts_.node_name;
  v->group = opts_.group;
  v->group_label = opts_.group_label;
  v->listen_address = opts_.channel.listen_address;
  v->peers_per_round = opts_.peers_per_round;
  v->interval = opts_.interval;
  v->round = round_;
  v->rounds_total = rounds_total_;
  v->last_round_seconds = last_round_seconds_;
  v->round_peers = round_peers_;
  v->discovery_errors = discovery_errors_;
  v->discovery_errors_total = discovery_errors_total_;
  v->knocks_total = knocks_total_;
  v->knock_failures_total = knock_failures_total_;
  for (const auto& [_, r] : records_) v->peers.push_back(r);
  for (const auto& k : kinds_) {
    KindView kv{k.kind, {}, k.totals, nullptr};
    for (const auto& [_, p] : k.latest) kv.results.push_back(p);
    v->kinds.push_back(std::move(kv));
  }
  std::lock_guard lock(mu_);
  published_ = std::move(v);
}

std::shared_ptr<const MeshView> PeerProber::view() const {
  std::shared_ptr<const MeshView> round;
  {
    std::lock_guard lock(mu_);
    round = published_;
  }
  auto v = std::make_shared<MeshView>(*round);
  for (auto& k : v->kinds) k.server = k.kind->serverState();
  v->members = membership_->members();
  v->channel = server_.stats();
  v->port = server_.port();
  return v;
}

}  // namespace fabricwatch::probes
