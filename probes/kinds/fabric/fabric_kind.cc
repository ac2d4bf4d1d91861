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

std::string bounded(std::string_view s, size_t n = 200) { return core::sanitizeUtf8(s, n); }

// A peer's responder as this node last learned it.
struct PeerEndpoint {
  uint64_t instance = 0;
  uint64_t epoch = 0;
  std::string name;
};

class FabricKind : public ProbeKind {
 public:
  explicit FabricKind(FabricKindOptions o)
      : opts_(std::move(o)), initiator_(opts_.endpoint, opts_.latency_size) {
    // The prober's endpoint first: with "auto" the responder then opens the provider it chose,
    // so that both sides of every node speak the same one.
    fabric::EndpointOptions resp = opts_.endpoint;
    if (!initiator_.ensureOpen()) resp.provider = initiator_.facts().provider;
    responder_ = std::make_unique<fabric::Responder>(
        resp, opts_.timeout,
        fabric::ResponderLimits{opts_.serve_setup_timeout, opts_.serve_backoff});
    responder_->start();
    responder_->waitOpen(std::chrono::seconds(10));
    if (opts_.hmem) {
      fabric::EndpointOptions h = resp;
      hmem_ = fabric::checkHmem(opts_.cudart, h);
    }
    if (opts_.bandwidth_every_rounds)
      bw_phase_ = std::random_device{}() % opts_.bandwidth_every_rounds;
  }
  ~FabricKind() override { stop(); }

  std::string_view name() const override { return "fabric"; }
  ProbeSchedule schedule() const override {
    return {.every_rounds = 1, .jitter = false, .exclusive = true, .timeout = opts_.timeout};
  }

  std::vector<RequestHandler> handlers() override {
    return {
        {kFabricHelloRequest, kFabricHelloReply, 512,
         [this](std::string_view payload, const Sender&) { return hello(payload); }},
        {kFabricSessionRequest, kFabricSessionReply, 1024,
         [this](std::string_view payload, const Sender& from) { return session(payload, from); }}};
  }
  void stop() override {
    if (responder_) responder_->stop();
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
  // Server side (the channel's thread): answer at once.
  Answer hello(std::string_view payload) {
    if (!decodeFabricHello(payload)) return Answer::malformed();
    auto h = responder_->hello();
    if (h.unavailable) return Answer::decline("fabric endpoint unavailable: " + *h.unavailable);
    if (h.name.size() > kMaxNameBytes) return Answer::decline("endpoint name over 253 bytes");
    return Answer::reply(
        encodeFabricHelloReply({h.facts.provider, h.facts.fabric, h.epoch, h.name}));
  }
  Answer session(std::string_view payload, const Sender& from) {
    auto req = decodeFabricSessionRequest(payload);
    if (!req) return Answer::malformed();
    auto h = responder_->hello();
    if (!h.unavailable && req->provider != h.facts.provider)
      return Answer::decline("provider mismatch: this node uses " + h.facts.provider);
    auto begun = responder_->begin(req->spec, req->name, from.address);
    if (auto* why = std::get_if<std::string>(&begun)) return Answer::decline(*why);
    return Answer::reply(encodeFabricSessionReply({std::get<uint64_t>(begun)}));
  }

  // Client side (the round's thread, one peer at a time).
  const PeerEndpoint* peerEndpoint(const PeerContext& ctx, ChannelClient& ch, FabricResult& r,
                                   bool refresh);
  bool startSession(const PeerContext& ctx, ChannelClient& ch, FabricResult& r,
                    fabric::SessionSpec& spec, const PeerEndpoint*& peer);
  void measureLatency(const PeerContext& ctx, ChannelClient& ch, FabricResult& r,
                      const PeerEndpoint*& peer);
  void measureBandwidth(const PeerContext& ctx, ChannelClient& ch, FabricResult& r,
                        const PeerEndpoint*& peer);
  milliseconds left(const PeerContext& ctx) const {
    auto d = std::chrono::duration_cast<milliseconds>(ctx.deadline - Clock::now());
    return std::max(d, milliseconds(1));
  }
  static void fail(FabricResult& r, std::string failure, std::string phase, std::string_view error,
                   std::string_view detail = "", std::string op = "") {
    r.failure = std::move(failure);
    r.phase = std::move(phase);
    r.error = bounded(error);
    r.detail = bounded(detail, 500);
    r.error_op = std::move(op);
  }
  static void failFabric(FabricResult& r, const std::string& phase, const fabric::FabricError& e) {
    bool timeout = e.code == 0 && e.text == "timed out";
    fail(r, timeout ? "timeout" : "provider", phase, e.text, e.detail, e.op);
  }
  FabricState stateLocked() const;

  FabricKindOptions opts_;
  mutable std::mutex mu_;  // the prober's endpoint and the cache
  fabric::Initiator initiator_;
  std::unique_ptr<fabric::Responder> responder_;
  fabric::HmemStatus hmem_;
  std::map<std::string, PeerEndpoint> peers_;  // by channel address
  uint64_t bw_phase_ = 0;
  uint64_t budget_round_ = 0, budget_used_ = 0;
  FabricTotals totals_;  // the round's thread only
};

const PeerEndpoint* FabricKind::peerEndpoint(const PeerContext& ctx, ChannelClient& ch,
                                             FabricResult& r, bool refresh) {
  const std::string& key = ctx.peer.address;
  auto it = peers_.find(key);
  if (!refresh && it != peers_.end() && ctx.peer.instance &&
      it->second.instance == ctx.peer.instance)
    return &it->second;
  if (it != peers_.end()) initiator_.forget(it->second.name);
  CallResult c = ch.call(kFabricHelloRequest, encodeFabricHello({initiator_.facts().provider}),
                         kFabricHelloReply, std::min(left(ctx), milliseconds(1000)));
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
  r.peer_provider = bounded(reply->provider, 64);
  r.fetched_name = true;
  if (reply->provider != initiator_.facts().provider) {
    fail(r, "mismatch", "hello", "peer uses provider " + r.peer_provider);
    return nullptr;
  }
  PeerEndpoint& p = peers_[key];
  p = {ctx.peer.instance, reply->epoch, reply->name};
  return &p;
}

bool FabricKind::startSession(const PeerContext& ctx, ChannelClient& ch, FabricResult& r,
                              fabric::SessionSpec& spec, const PeerEndpoint*& peer) {
  std::mt19937 rng(static_cast<uint32_t>(spec.id));
  const char* phase = fabric::sessionKindName(spec.kind);
  while (true) {
    // The responder's limit is the time this prober has left when it asks, not when the probe
    // began: after busy retries (a responder reopening after a failed session is busy for a
    // while) a stale limit kept the responder serving a session its prober had given up on, so
    // that the next probe found it busy in turn and started its session late.
    spec.timeout_ms = static_cast<uint32_t>(left(ctx).count());
    FabricSessionRequest req{spec, initiator_.facts().provider, initiator_.name()};
    CallResult c = ch.call(kFabricSessionRequest, encodeFabricSessionRequest(req),
                           kFabricSessionReply, std::min(left(ctx), milliseconds(1000)));
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
    if (reply->epoch != peer->epoch) peer = peerEndpoint(ctx, ch, r, /*refresh=*/true);
    return peer != nullptr;
  }
}

void FabricKind::measureLatency(const PeerContext& ctx, ChannelClient& ch, FabricResult& r,
                                const PeerEndpoint*& peer) {
  fabric::SessionSpec spec{fabric::randomSessionId(),
                           fabric::SessionKind::kLatency,
                           opts_.latency_size,
                           opts_.warmup + opts_.iterations,
                           1,
                           0};  // timeout_ms: startSession's, when it asks
  if (!startSession(ctx, ch, r, spec, peer)) return;
  std::optional<fabric::FabricError> err;
  auto addr = initiator_.address(peer->name, err);
  if (!addr) return failFabric(r, "latency", *err);
  fabric::Measurement m = initiator_.latency(*addr, spec, opts_.warmup, ctx.deadline, ctx.stopping);
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

void FabricKind::measureBandwidth(const PeerContext& ctx, ChannelClient& ch, FabricResult& r,
                                  const PeerEndpoint*& peer) {
  if (!opts_.bandwidth_every_rounds || ctx.peer.round % opts_.bandwidth_every_rounds != bw_phase_)
    return;
  if (budget_round_ != ctx.peer.round) {
    budget_round_ = ctx.peer.round;
    budget_used_ = 0;
  }
  if (budget_used_ + opts_.bandwidth_bytes > opts_.bandwidth_round_bytes) return;
  budget_used_ += opts_.bandwidth_bytes;
  uint64_t window_bytes = uint64_t{opts_.bandwidth_size} * opts_.bandwidth_window;
  fabric::SessionSpec spec{
      fabric::randomSessionId(), fabric::SessionKind::kBandwidth,
      opts_.bandwidth_size,      static_cast<uint32_t>(opts_.bandwidth_bytes / window_bytes),
      opts_.bandwidth_window,    0};  // timeout_ms: startSession's, when it asks
  if (!startSession(ctx, ch, r, spec, peer)) return;
  std::optional<fabric::FabricError> err;
  auto addr = initiator_.address(peer->name, err);
  if (!addr) return failFabric(r, "bandwidth", *err);
  fabric::Measurement m = initiator_.bandwidth(*addr, spec, 1, ctx.deadline, ctx.stopping);
  r.wire_bytes += (window_bytes + fabric::kHeaderBytes) * m.completed;
  if (m.error) return failFabric(r, "bandwidth", *m.error);
  r.bandwidth_bytes = m.bytes;
  if (m.elapsed_seconds > 0)
    r.bandwidth_bytes_per_second = static_cast<double>(m.bytes) / m.elapsed_seconds;
}

std::shared_ptr<const ProbeResult> FabricKind::probe(const PeerContext& ctx) {
  std::lock_guard lock(mu_);
  // No endpoint of its own (no provider, no device): nothing to probe; the facts say why.
  if (initiator_.ensureOpen()) return nullptr;
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
  const PeerEndpoint* peer = peerEndpoint(ctx, ch, *r, /*refresh=*/false);
  if (!peer) return r;
  measureLatency(ctx, ch, *r, peer);
  if (r->failure.empty()) measureBandwidth(ctx, ch, *r, peer);
  return r;
}

FabricState FabricKind::stateLocked() const {
  FabricState s;
  const auto& err = initiator_.openError();
  s.available = !err;
  if (err) {
    s.unavailable = bounded(err->message(), 500);
    s.unavailable_reason = bounded(err->op + ": " + err->text, 100);
  }
  s.facts = initiator_.facts();
  s.origin = opts_.provider_origin;
  s.resource_group = opts_.resource_group;
  s.hmem = hmem_;
  s.reopened = initiator_.reopened();
  s.responder = responder_->stats();
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
    if (r.latency) {
      ++t.latency_ok;
      for (double s : r.one_way) t.latency.observe(s);
    } else {
      ++t.latency_failed;
    }
    if (r.bandwidth_bytes_per_second) {
      ++t.bandwidth_ok;
      bandwidth.push_back({p.peer, *r.bandwidth_bytes_per_second, r.bandwidth_bytes});
    }
    if (r.phase == "bandwidth") ++t.bandwidth_failed;
    if (!r.failure.empty()) ++t.failures[r.failure];
    if (r.failure == "provider" || r.failure == "timeout") {
      std::pair<std::string, std::string> key{r.error_op, r.error};
      if (!t.errors.count(key) && t.errors.size() >= kMaxErrorSeries) key = {"other", "other"};
      ++t.errors[key];
    }
  }
  if (!bandwidth.empty()) {
    t.bandwidth = std::move(bandwidth);
    t.bandwidth_round = t.bandwidth.front().peer.round;
  }
  t.state = stateLocked();
  return std::make_shared<const FabricTotals>(t);
}

// "127.0.0.1:19737" -> "127.0.0.1"; "" for a wildcard (":19737", "0.0.0.0:..", "[::]:..").
std::string sourceAddress(const std::string& listen) {
  auto hp = splitHostPort(listen);
  if (!hp || hp->host.empty() || hp->host == "0.0.0.0" || hp->host == "::") return "";
  return hp->host;
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

KindRegistration fabricKindRegistration() {
  KindRegistration r;
  r.name = "fabric";
  r.enabled_by_default = false;
  r.make = [](const KindSetup& s) -> core::Result<std::shared_ptr<ProbeKind>> {
    const auto& f = fabricConfig(s.config);
    std::vector<GroupProvider> table;
    for (const auto& row : f.group_providers) {
      std::string why;
      if (auto g = parseGroupProvider(row, &why)) table.push_back(*g);
    }
    auto choice = fabric::chooseProvider(
        f.provider, f.provider_origin == FabricConfig::Origin::kFlag, table, s.resource_group);
    FabricKindOptions o;
    o.secret = s.secret;
    o.node_name = s.node_name;
    o.endpoint.provider = choice.provider;
    o.endpoint.domain = f.domain;
    o.endpoint.source_address = sourceAddress(s.config.peer.listen_address);
    o.endpoint.register_buffers = f.register_buffers;
    o.provider_origin = choice.origin;
    if (choice.origin == "group") o.resource_group = s.resource_group;
    o.latency_size = static_cast<uint32_t>(f.latency_size);
    o.warmup = static_cast<uint32_t>(f.warmup);
    o.iterations = static_cast<uint32_t>(f.iterations);
    o.bandwidth_size = static_cast<uint32_t>(f.bandwidth_size);
    o.bandwidth_window = static_cast<uint32_t>(f.bandwidth_window);
    o.bandwidth_bytes = f.bandwidth_bytes;
    o.bandwidth_round_bytes = f.bandwidth_round_bytes;
    auto interval = std::max<int64_t>(s.interval.count(), 1);
    o.bandwidth_every_rounds =
        f.bandwidth_interval.count() == 0
            ? 0
            : static_cast<uint64_t>(std::max<int64_t>(1, f.bandwidth_interval.count() / interval));
    o.endpoint.max_message =
        o.bandwidth_every_rounds ? std::max(o.latency_size, o.bandwidth_size) : o.latency_size;
    o.timeout = std::min(f.timeout, std::max(s.interval / 2, config::Duration(10)));
    o.serve_setup_timeout = f.serve_setup_timeout;
    o.serve_backoff = f.serve_backoff;
    o.hmem = f.hmem;
    o.cudart = fabric::cudartNames(f.cudart_library);
    return makeFabricKind(std::move(o));
  };
  r.config = fabricConfigTable();
  r.frames = kFabricFrames;
  r.docs = "docs/configuration.md";
  return r;
}

}  // namespace fabricwatch::probes::fabric
