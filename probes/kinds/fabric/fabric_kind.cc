#include "probes/kinds/fabric/fabric_kind.h"

#include <algorithm>
#include <mutex>
#include <random>
#include <thread>

#include "core/utf8.h"
#include "probes/kinds/fabric/fabric_wire.h"
#include "probes/kinds/fabric/initiator.h"
#include "probes/kinds/fabric/providers.h"
#include "probes/mesh/channel_client.h"
#include "probes/mesh/net_util.h"

namespace fabricwatch::probes::fabric {
namespace {

using fabric::Clock;
using std::chrono::milliseconds;
constexpr size_t kMaxErrorSeries = 32;  // (op, error) pairs counted one by one; then "other"
constexpr size_t kMaxNameBytes = 253;   // what a channel string carries
// Each round scans for GPU holders when the last scan is this old (once a round at the default
// 10 s interval); the responder, on the channel's thread, uses the round's last scan.
constexpr auto kJobScanMaxAge = std::chrono::seconds(10);

std::string bounded(std::string_view s, size_t n = 200) { return core::sanitizeUtf8(s, n); }

// A peer's responder on one rail as this node last learned it.
struct PeerEndpoint {
  uint64_t instance = 0;
  uint64_t epoch = 0;
  std::string name;
  std::string domain;
};

// One rail of this node: its two endpoints.
struct RailEngine {
  fabric::Rail rail;
  std::string pci;
  std::unique_ptr<fabric::Initiator> initiator;
  std::unique_ptr<fabric::Responder> responder;
};

class FabricKind : public ProbeKind {
 public:
  explicit FabricKind(FabricKindOptions o) : opts_(std::move(o)) {
    openRails();
    if (opts_.hmem && !rails_.empty()) {
      fabric::EndpointOptions h = opts_.endpoint;
      h.provider = rails_.front()->initiator->facts().provider;
      h.domain = rails_.front()->rail.domain;
      if (h.provider.empty()) h.provider = opts_.endpoint.provider;
      hmem_ = fabric::checkHmem(opts_.cudart, h);
    }
    if (opts_.bandwidth_every_rounds)
      bw_phase_ = std::random_device{}() % opts_.bandwidth_every_rounds;
    if (!opts_.bandwidth_when_gpus_held)
      jobs_ = std::make_unique<gpu::JobWatch>(opts_.rootfs, opts_.ignore_processes, kJobScanMaxAge);
  }
  ~FabricKind() override { stop(); }

  std::string_view name() const override { return "fabric"; }
  ProbeSchedule schedule() const override {
    return {.every_rounds = 1, .jitter = false, .exclusive = true, .timeout = opts_.timeout};
  }

  std::vector<RequestHandler> handlers() override {
    return {
        {kFabricHelloRequest, kFabricHelloReply, 1024,
         [this](std::string_view payload, const Sender&) { return hello(payload); }},
        {kFabricSessionRequest, kFabricSessionReply, 1024,
         [this](std::string_view payload, const Sender& from) { return session(payload, from); }}};
  }
  void stop() override {
    for (auto& r : rails_)
      if (r->responder) r->responder->stop();
  }

  std::shared_ptr<const ProbeResult> probe(const PeerContext& ctx) override;
  std::shared_ptr<const ProbeTotals> account(const std::vector<PeerProbe>& run) override;

  core::Value facts(const KindView& view) const override { return fabricFacts(view); }
  void metrics(const KindView& view, core::MetricFamilies& out) const override {
    fabricMetrics(view, out);
  }
  void peerStatus(const PeerProbe& p, core::Value& entry) const override {
    entry["fabric"] = fabricPeerValue(p);
  }

 private:
  void openRails();
  RailEngine* railOf(uint32_t index) const {
    for (const auto& r : rails_)
      if (r->rail.index == index) return r.get();
    return nullptr;
  }
  std::string missingReason(uint32_t rail) const {
    return std::string(kRailMissing) + ": this node has no rail " + std::to_string(rail);
  }

  // Server side (the channel's thread): answer at once.
  Answer hello(std::string_view payload) {
    auto req = decodeFabricHello(payload);
    if (!req) return Answer::malformed();
    RailEngine* e = railOf(req->rail);
    if (!e) return Answer::decline(missingReason(req->rail));
    auto h = e->responder->hello();
    if (h.unavailable) return Answer::decline("fabric endpoint unavailable: " + *h.unavailable);
    if (h.name.size() > kMaxNameBytes) return Answer::decline("endpoint name over 253 bytes");
    return Answer::reply(encodeFabricHelloReply(
        {h.facts.provider, h.facts.fabric, h.epoch, h.name, req->rail, rails_mask_,
         bounded(e->rail.domain.empty() ? h.facts.domain : e->rail.domain, 64)}));
  }
  Answer session(std::string_view payload, const Sender& from) {
    auto req = decodeFabricSessionRequest(payload);
    if (!req) return Answer::malformed();
    RailEngine* e = railOf(req->rail);
    if (!e) return Answer::decline(missingReason(req->rail));
    auto h = e->responder->hello();
    if (!h.unavailable && req->provider != h.facts.provider)
      return Answer::decline("provider mismatch: this node uses " + h.facts.provider);
    // Bandwidth yields to a job here as on the prober's side; latency is served on.
    if (req->spec.kind == fabric::SessionKind::kBandwidth && jobs_)
      if (auto scan = jobs_->latest(); scan && !scan->holders.empty())
        return Answer::decline(std::string(kGpusHeld) + ": " + gpu::busyReason(*scan));
    auto begun = e->responder->begin(req->spec, req->name, from.address);
    if (auto* why = std::get_if<std::string>(&begun)) return Answer::decline(*why);
    return Answer::reply(encodeFabricSessionReply({std::get<uint64_t>(begun)}));
  }

  // Client side (the round's thread, one peer at a time, one rail after the other).
  const PeerEndpoint* peerEndpoint(const PeerContext& ctx, ChannelClient& ch, RailEngine& e,
                                   RailResult& r, FabricResult& peer, bool refresh);
  bool startSession(const PeerContext& ctx, ChannelClient& ch, RailEngine& e, RailResult& r,
                    FabricResult& whole, fabric::SessionSpec& spec, const PeerEndpoint*& peer);
  void measureLatency(const PeerContext& ctx, ChannelClient& ch, RailEngine& e, RailResult& r,
                      FabricResult& whole, const PeerEndpoint*& peer);
  void measureBandwidth(const PeerContext& ctx, ChannelClient& ch, RailEngine& e, RailResult& r,
                        FabricResult& whole, const PeerEndpoint*& peer);
  void probeRail(const PeerContext& ctx, ChannelClient& ch, RailEngine& e, RailResult& r,
                 FabricResult& whole, bool latency, bool bandwidth);
  milliseconds left(const PeerContext& ctx) const {
    auto d = std::chrono::duration_cast<milliseconds>(ctx.deadline - Clock::now());
    return std::max(d, milliseconds(1));
  }
  static void fail(FabricMeasurement& r, std::string failure, std::string phase,
                   std::string_view error, std::string_view detail = "", std::string op = "") {
    r.failure = std::move(failure);
    r.phase = std::move(phase);
    r.error = bounded(error);
    r.detail = bounded(detail, 500);
    r.error_op = std::move(op);
  }
  static void failFabric(FabricMeasurement& r, const std::string& phase,
                         const fabric::FabricError& e) {
    bool timeout = e.code == 0 && e.text == "timed out";
    fail(r, timeout ? "timeout" : "provider", phase, e.text, e.detail, e.op);
  }
  // Whether a job holds this node's GPUs (never when bandwidth runs next to jobs): the round's
  // scan (refreshJobScan()).
  bool gpusHeld() const { return jobs_ && !totals_.gpu_scan.scan->holders.empty(); }
  void refreshJobScan(uint64_t round) {
    if (jobs_) totals_.gpu_scan = {round, jobs_->current()};
  }
  bool bandwidthRound(uint64_t round) const {
    return opts_.bandwidth_every_rounds && round % opts_.bandwidth_every_rounds == bw_phase_;
  }
  FabricState stateLocked() const;

  FabricKindOptions opts_;
  mutable std::mutex mu_;                           // the prober's endpoints and the cache
  std::vector<std::unique_ptr<RailEngine>> rails_;  // by rail index; fixed once constructed
  uint64_t rails_mask_ = 0;
  fabric::HmemStatus hmem_;
  std::map<std::pair<std::string, uint32_t>, PeerEndpoint> peers_;  // by channel address, rail
  uint64_t bw_phase_ = 0;
  std::unique_ptr<gpu::JobWatch> jobs_;  // null: bandwidth_when_gpus_held
  uint64_t budget_round_ = 0;
  std::map<uint32_t, uint64_t> budget_used_;  // per rail, in budget_round_
  FabricTotals totals_;                       // the round's thread only
};

void FabricKind::openRails() {
  // Which rails: listed domains of the chosen provider, or the configured ones among them.
  std::vector<fabric::Rail> rails;
  std::string provider = opts_.endpoint.provider;
  bool bind_channel = true;  // socket providers bind to the channel's address (one rail)
  if (!opts_.rails.empty() || opts_.endpoint.domain.empty()) {
    std::optional<fabric::FabricError> err;
    auto list = fabric::listDomains(opts_.endpoint, err);
    if (list) {
      bool socket = fabric::isSocketProvider(list->provider);
      if (!opts_.rails.empty() || !socket) {
        provider = list->provider;
        rails = fabric::assignRails(
            opts_.rails, list->domains,
            [&](const std::string& d) { return fabric::pciAddressOf(opts_.sysfs_root, d); },
            fabric::hostAddressesOf(opts_.sysfs_root));
        bind_channel = false;
      }
    }
  }
  // One rail as before rails: `domain`, or the provider's first (bound to the channel's
  // address on socket providers); also where listing failed, so that its error is reported.
  if (rails.empty() && (opts_.rails.empty() || bind_channel))
    rails.push_back({0, opts_.endpoint.domain, ""});
  for (const auto& rail : rails) {
    auto e = std::make_unique<RailEngine>();
    e->rail = rail;
    if (!rail.domain.empty()) e->pci = fabric::pciAddressOf(opts_.sysfs_root, rail.domain);
    fabric::EndpointOptions o = opts_.endpoint;
    o.domain = rail.domain;
    if (!bind_channel) {
      o.provider = provider;
      // With a socket provider the domain is an interface: bind to the address its subnet
      // entry matched, else its IPv4 address, as the single rail binds to the channel's.
      o.source_address = "";
      if (fabric::isSocketProvider(provider) && !rail.domain.empty())
        o.source_address = rail.address.empty() ? fabric::interfaceIpv4(rail.domain) : rail.address;
    }
    e->initiator = std::make_unique<fabric::Initiator>(o, opts_.latency_size);
    // The prober's endpoint first: with "auto" the responder then opens the provider it chose,
    // so that both sides of every node speak the same one.
    fabric::EndpointOptions resp = o;
    if (!e->initiator->ensureOpen()) resp.provider = e->initiator->facts().provider;
    e->responder = std::make_unique<fabric::Responder>(
        resp, opts_.timeout,
        fabric::ResponderLimits{opts_.serve_setup_timeout, opts_.serve_backoff});
    e->responder->start();
    if (rail.index < 64) rails_mask_ |= uint64_t{1} << rail.index;
    rails_.push_back(std::move(e));
  }
  for (auto& e : rails_) e->responder->waitOpen(std::chrono::seconds(10));
}

const PeerEndpoint* FabricKind::peerEndpoint(const PeerContext& ctx, ChannelClient& ch,
                                             RailEngine& e, RailResult& r, FabricResult& whole,
                                             bool refresh) {
  std::pair<std::string, uint32_t> key{ctx.peer.address, e.rail.index};
  auto it = peers_.find(key);
  if (!refresh && it != peers_.end() && ctx.peer.instance &&
      it->second.instance == ctx.peer.instance) {
    r.peer_domain = it->second.domain;
    return &it->second;
  }
  if (it != peers_.end()) e.initiator->forget(it->second.name);
  auto& init = *e.initiator;
  CallResult c =
      ch.call(kFabricHelloRequest, encodeFabricHello({init.facts().provider, e.rail.index}),
              kFabricHelloReply, std::min(left(ctx), milliseconds(1000)));
  if (c.declined && c.declined->rfind(kRailMissing, 0) == 0) {
    r.missing = true;
    return nullptr;
  }
  if (c.declined) {
    fail(r, "declined", "hello", *c.declined);
    return nullptr;
  }
  if (!c.ok()) {
    fail(r, "channel", "hello", c.error);
    return nullptr;
  }
  auto reply = decodeFabricHelloReply(c.payload);
  if (!reply) {
    fail(r, "channel", "hello", "malformed hello reply");
    return nullptr;
  }
  whole.peer_provider = bounded(reply->provider, 64);
  r.fetched_name = true;
  if (reply->provider != init.facts().provider) {
    fail(r, "mismatch", "hello", "peer uses provider " + whole.peer_provider);
    return nullptr;
  }
  PeerEndpoint& p = peers_[key];
  p = {ctx.peer.instance, reply->epoch, reply->name, bounded(reply->domain, 64)};
  r.peer_domain = p.domain;
  return &p;
}

bool FabricKind::startSession(const PeerContext& ctx, ChannelClient& ch, RailEngine& e,
                              RailResult& r, FabricResult& whole, fabric::SessionSpec& spec,
                              const PeerEndpoint*& peer) {
  std::mt19937 rng(static_cast<uint32_t>(spec.id));
  const char* phase = fabric::sessionKindName(spec.kind);
  while (true) {
    // The responder's limit is the time this prober has left when it asks, not when the probe
    // began: after busy retries (a responder reopening after a failed session is busy for a
    // while) a stale limit kept the responder serving a session its prober had given up on, so
    // that the next probe found it busy in turn and started its session late.
    spec.timeout_ms = static_cast<uint32_t>(left(ctx).count());
    FabricSessionRequest req{spec, e.initiator->facts().provider, e.initiator->name(),
                             e.rail.index};
    CallResult c = ch.call(kFabricSessionRequest, encodeFabricSessionRequest(req),
                           kFabricSessionReply, std::min(left(ctx), milliseconds(1000)));
    if (c.declined && spec.kind == fabric::SessionKind::kBandwidth &&
        c.declined->rfind(kGpusHeld, 0) == 0) {
      r.bandwidth_skipped = "peer_gpus_held";  // not a failure: the peer yields to its job
      return false;
    }
    if (c.declined && *c.declined == "busy") {
      // The peer serves another prober's session (milliseconds): try again until the deadline.
      auto nap = milliseconds(1 + rng() % 10);
      if (Clock::now() + nap + milliseconds(50) >= ctx.deadline ||
          (ctx.stopping && ctx.stopping->load())) {
        fail(r, "busy", phase, "peer busy with other sessions until the deadline");
        return false;
      }
      ++r.busy_retries;
      std::this_thread::sleep_for(nap);
      continue;
    }
    if (c.declined) {
      fail(r, "declined", phase, *c.declined);
      return false;
    }
    if (!c.ok()) {
      fail(r, "channel", phase, c.error);
      return false;
    }
    auto reply = decodeFabricSessionReply(c.payload);
    if (!reply) {
      fail(r, "channel", phase, "malformed session reply");
      return false;
    }
    // A new epoch: the peer reopened its endpoint since we learned its name.
    if (reply->epoch != peer->epoch) peer = peerEndpoint(ctx, ch, e, r, whole, /*refresh=*/true);
    return peer != nullptr;
  }
}

void FabricKind::measureLatency(const PeerContext& ctx, ChannelClient& ch, RailEngine& e,
                                RailResult& r, FabricResult& whole, const PeerEndpoint*& peer) {
  fabric::SessionSpec spec{fabric::randomSessionId(),
                           fabric::SessionKind::kLatency,
                           opts_.latency_size,
                           opts_.warmup + opts_.iterations,
                           1,
                           0};  // timeout_ms: startSession's, when it asks
  if (!startSession(ctx, ch, e, r, whole, spec, peer)) return;
  std::optional<fabric::FabricError> err;
  auto addr = e.initiator->address(peer->name, err);
  if (!addr) return failFabric(r, "latency", *err);
  fabric::Measurement m =
      e.initiator->latency(*addr, spec, opts_.warmup, ctx.deadline, ctx.stopping);
  r.wire_bytes += uint64_t{2} * spec.size * m.completed;
  if (m.error) return failFabric(r, "latency", *m.error);
  LatencyStats st;
  std::vector<double> one_way;
  one_way.reserve(m.rtt_seconds.size());
  for (double s : m.rtt_seconds) one_way.push_back(s / 2);
  st.samples = one_way.size();
  if (!one_way.empty()) {
    st.min = percentile(one_way, 0);
    st.p50 = percentile(one_way, 50);
    st.p99 = percentile(one_way, 99);
    st.max = percentile(one_way, 100);
    st.mean = m.elapsed_seconds / (2.0 * static_cast<double>(one_way.size()));
  }
  r.latency = st;
  r.one_way = std::move(one_way);
}

void FabricKind::measureBandwidth(const PeerContext& ctx, ChannelClient& ch, RailEngine& e,
                                  RailResult& r, FabricResult& whole, const PeerEndpoint*& peer) {
  // The byte budget is per rail: each rail is a link of its own.
  if (budget_round_ != ctx.peer.round) {
    budget_round_ = ctx.peer.round;
    budget_used_.clear();
  }
  uint64_t& used = budget_used_[e.rail.index];
  if (used + opts_.bandwidth_bytes > opts_.bandwidth_round_bytes) return;
  used += opts_.bandwidth_bytes;
  if (gpusHeld()) {
    r.bandwidth_skipped = "gpus_held";
    return;
  }
  uint64_t window_bytes = uint64_t{opts_.bandwidth_size} * opts_.bandwidth_window;
  fabric::SessionSpec spec{
      fabric::randomSessionId(), fabric::SessionKind::kBandwidth,
      opts_.bandwidth_size,      static_cast<uint32_t>(opts_.bandwidth_bytes / window_bytes),
      opts_.bandwidth_window,    0};  // timeout_ms: startSession's, when it asks
  if (!startSession(ctx, ch, e, r, whole, spec, peer)) return;
  std::optional<fabric::FabricError> err;
  auto addr = e.initiator->address(peer->name, err);
  if (!addr) return failFabric(r, "bandwidth", *err);
  fabric::Measurement m = e.initiator->bandwidth(*addr, spec, 1, ctx.deadline, ctx.stopping);
  r.wire_bytes += (window_bytes + fabric::kHeaderBytes) * m.completed;
  if (m.error) return failFabric(r, "bandwidth", *m.error);
  r.bandwidth_bytes = m.bytes;
  if (m.elapsed_seconds > 0)
    r.bandwidth_bytes_per_second = static_cast<double>(m.bytes) / m.elapsed_seconds;
}

void FabricKind::probeRail(const PeerContext& ctx, ChannelClient& ch, RailEngine& e, RailResult& r,
                           FabricResult& whole, bool latency, bool bandwidth) {
  r.rail = e.rail.index;
  r.domain = e.rail.domain.empty() ? e.initiator->facts().domain : e.rail.domain;
  if (auto err = e.initiator->ensureOpen()) return failFabric(r, "hello", *err);
  const PeerEndpoint* peer = peerEndpoint(ctx, ch, e, r, whole, /*refresh=*/false);
  if (!peer) return;
  if (latency) measureLatency(ctx, ch, e, r, whole, peer);
  if (r.failure.empty() && bandwidth) measureBandwidth(ctx, ch, e, r, whole, peer);
}

std::shared_ptr<const ProbeResult> FabricKind::probe(const PeerContext& ctx) {
  std::lock_guard lock(mu_);
  // No endpoint of its own on any rail (no provider, no device): nothing to probe; the facts
  // say why.
  bool any = false;
  for (auto& e : rails_) any = !e->initiator->ensureOpen() || any;
  if (!any) return nullptr;
  refreshJobScan(ctx.peer.round);  // for this round's bandwidth and the responder's
  auto r = std::make_shared<FabricResult>();
  if (ctx.channel_address.empty()) {
    fail(*r, "channel", "hello", ctx.resolve_error);
    return r;
  }
  ChannelClient ch(opts_.secret);
  CallResult c = ch.connect(ctx.channel_address, std::min(left(ctx), milliseconds(1000)));
  r->answered = c.ok();
  if (!c.ok()) {
    fail(*r, "channel", "hello", c.error);
    return r;
  }
  // This round's rails of the peer: latency on rails_per_round of them, rotating with the
  // rounds; bandwidth (in its rounds) rotating with the bandwidth rounds, so that neither
  // always lands on the same rails whatever the interval.
  size_t n = rails_.size();
  std::vector<bool> lat(n, false), bw(n, false);
  for (size_t i : railsForRun(n, opts_.rails_per_round, ctx.peer.round)) lat[i] = true;
  if (bandwidthRound(ctx.peer.round))
    for (size_t i :
         railsForRun(n, opts_.rails_per_round,
                     ctx.peer.round / std::max<uint64_t>(opts_.bandwidth_every_rounds, 1)))
      bw[i] = true;
  size_t todo = 0;
  for (size_t i = 0; i < n; ++i) todo += (lat[i] || bw[i]) ? 1 : 0;
  for (size_t i = 0; i < n; ++i) {
    if (!lat[i] && !bw[i]) continue;
    // Each rail gets its share of the time left, so that a dead rail leaves the others theirs.
    PeerContext rc = ctx;
    rc.deadline = Clock::now() + (ctx.deadline - Clock::now()) / static_cast<int>(todo--);
    RailResult rr;
    probeRail(rc, ch, *rails_[i], rr, *r, lat[i], bw[i]);
    r->rails.push_back(std::move(rr));
    if (ctx.stopping && ctx.stopping->load()) break;
  }
  // Over the rails: the worst latency, the lowest bandwidth, the first failure.
  for (const auto& rr : r->rails) {
    r->fetched_name = r->fetched_name || rr.fetched_name;
    r->busy_retries += rr.busy_retries;
    r->wire_bytes += rr.wire_bytes;
    if (r->bandwidth_skipped.empty()) r->bandwidth_skipped = rr.bandwidth_skipped;
    if (rr.latency && (!r->latency || rr.latency->p50 > r->latency->p50)) r->latency = rr.latency;
    if (rr.bandwidth_bytes_per_second &&
        (!r->bandwidth_bytes_per_second ||
         *rr.bandwidth_bytes_per_second < *r->bandwidth_bytes_per_second)) {
      r->bandwidth_bytes_per_second = rr.bandwidth_bytes_per_second;
      r->bandwidth_bytes = rr.bandwidth_bytes;
    }
    if (r->failure.empty() && !rr.failure.empty())
      fail(*r, rr.failure, rr.phase, rr.error, rr.detail, rr.error_op);
  }
  return r;
}

FabricState FabricKind::stateLocked() const {
  FabricState s;
  for (const auto& e : rails_) {
    RailState rs;
    rs.rail = e->rail.index;
    const auto& err = e->initiator->openError();
    rs.domain = e->rail.domain.empty() ? e->initiator->facts().domain : e->rail.domain;
    rs.pci = e->pci;
    rs.address = e->rail.address;
    rs.available = !err;
    if (err) rs.unavailable = bounded(err->message(), 500);
    rs.reopened = e->initiator->reopened();
    rs.responder = e->responder->stats();
    s.reopened += rs.reopened;
    s.responder.sessions += rs.responder.sessions;
    s.responder.failed += rs.responder.failed;
    s.responder.declined_busy += rs.responder.declined_busy;
    s.responder.reopened += rs.responder.reopened;
    s.responder.stray += rs.responder.stray;
    if (!s.available && !err) {
      s.available = true;
      s.facts = e->initiator->facts();
    }
    s.rails.push_back(std::move(rs));
  }
  if (!s.available && !rails_.empty()) {
    const auto& e = rails_.front();
    s.facts = e->initiator->facts();
    if (const auto& err = e->initiator->openError()) {
      s.unavailable = bounded(err->message(), 500);
      s.unavailable_reason = bounded(err->op + ": " + err->text, 100);
    }
  }
  s.origin = opts_.provider_origin;
  s.resource_group = opts_.resource_group;
  s.rails_group = opts_.rails_group;
  s.hmem = hmem_;
  return s;
}

std::shared_ptr<const ProbeTotals> FabricKind::account(const std::vector<PeerProbe>& run) {
  std::lock_guard lock(mu_);
  auto& t = totals_;
  std::vector<BandwidthSample> bandwidth;
  for (const auto& p : run) {
    const auto& r = resultAs<FabricResult>(p);
    if (r.fetched_name) ++t.name_fetches;
    t.busy_retries += r.busy_retries;
    t.wire_bytes += r.wire_bytes;
    // A peer's probe that failed before any rail (the channel) counts once, as before rails.
    auto count = [&](const FabricMeasurement& m, RailTotals* rt) {
      if (m.latency) {
        ++t.latency_ok;
        if (rt) ++rt->latency_ok;
        for (double s : m.one_way) t.latency.observe(s);
      } else {
        ++t.latency_failed;
        if (rt) ++rt->latency_failed;
      }
      if (m.bandwidth_bytes_per_second) {
        ++t.bandwidth_ok;
        if (rt) ++rt->bandwidth_ok;
      }
      if (m.phase == "bandwidth") {
        ++t.bandwidth_failed;
        if (rt) ++rt->bandwidth_failed;
      }
      if (!m.failure.empty()) {
        ++t.failures[m.failure];
        if (rt)
          ++(m.failure == "timeout"    ? rt->timeout
             : m.failure == "provider" ? rt->provider
             : m.failure == "busy"     ? rt->busy
                                       : rt->other);
      }
      if (m.failure == "provider" || m.failure == "timeout") {
        std::pair<std::string, std::string> key{m.error_op, m.error};
        if (!t.errors.count(key) && t.errors.size() >= kMaxErrorSeries) key = {"other", "other"};
        ++t.errors[key];
      }
    };
    if (r.rails.empty()) count(r, nullptr);
    for (const auto& rr : r.rails) {
      RailTotals& rt = t.rails[rr.rail];
      if (!rr.bandwidth_skipped.empty()) ++t.bandwidth_skipped[rr.bandwidth_skipped];
      if (rr.missing) {
        ++rt.missing;
        continue;
      }
      if (rr.bandwidth_bytes_per_second)
        bandwidth.push_back({p.peer, rr.rail, *rr.bandwidth_bytes_per_second, rr.bandwidth_bytes});
      if (!rr.latency && rr.failure.empty()) {  // bandwidth alone (a rail latency skipped)
        if (rr.bandwidth_bytes_per_second) ++t.bandwidth_ok, ++rt.bandwidth_ok;
        continue;
      }
      count(rr, &rt);
    }
  }
  if (!bandwidth.empty()) {
    t.bandwidth = std::move(bandwidth);
    t.bandwidth_round = t.bandwidth.front().peer.round;
  }
  t.state = stateLocked();
  t.rail_peers = opts_.rail_peers;
  for (const auto& rs : t.state.rails) t.rails[rs.rail];  // every rail has its counters
  return std::make_shared<const FabricTotals>(t);
}

}  // namespace

const std::vector<double>& FabricTotals::fabricLatencyBuckets() {
  // One-way: 1 µs (InfiniBand, shm) .. 25 µs (EFA) .. a congested or TCP path in ms.
  static const std::vector<double> b = {0.000001, 0.0000025, 0.000005, 0.00001, 0.000025,
                                        0.00005,  0.0001,    0.00025,  0.0005,  0.001,
                                        0.0025,   0.01,      0.1,      1.0};
  return b;
}

std::shared_ptr<ProbeKind> makeFabricKind(FabricKindOptions opts) {
  return std::make_shared<FabricKind>(std::move(opts));
}

}  // namespace fabricwatch::probes::fabric
