#include "probes/kinds/nccl/nccl_kind.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/log.h"
#include "probes/kinds/nccl/nccl_probe_source.h"
#include "probes/kinds/nccl/nccl_report.h"
#include "probes/kinds/nccl/nccl_responder.h"
#include "probes/mesh/channel_client.h"

namespace fabricwatch::probes::nccl {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// How bad an outcome is, to combine the two sides of a run: the worse one names the run.
int severity(const std::string& state) {
  if (state == "ok") return 0;
  if (state == "cancelled") return 1;  // stopped because the other side ended
  if (state == "unavailable") return 2;
  if (state == "timeout") return 4;
  if (state == "crashed") return 5;
  return 3;  // failed, or a state this build does not know
}

// The rank 0 child on its own thread, so that this thread can talk to the peer meanwhile.
class Rank0 {
 public:
  Rank0(const nccl::RunSettings& s, ChildRequest req) {
    thread_ = std::thread([this, &s, req = std::move(req)] {
      nccl::RunHooks hooks;
      hooks.cancel = &cancel_;
      hooks.on_unique_id = [this](const std::string& id) {
        std::lock_guard lock(mu_);
        if (id_.empty()) id_ = id;
        cv_.notify_all();
      };
      nccl::RunOutcome o = nccl::runProbe(s, req, hooks);
      std::lock_guard lock(mu_);
      outcome_ = std::move(o);
      done_ = true;
      ended_ = Clock::now();
      cv_.notify_all();
    });
  }
  ~Rank0() {
    cancel();
    if (thread_.joinable()) thread_.join();
  }
  // Waits up to `until` for the unique id or the end of the child; returns the id ("" if none).
  std::string waitForId(Clock::time_point until) {
    std::unique_lock lock(mu_);
    cv_.wait_until(lock, until, [&] { return !id_.empty() || done_; });
    return id_;
  }
  // Waits up to `until` for the child to end; true when it has.
  bool waitDone(Clock::time_point until) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, until, [&] { return done_; });
  }
  bool done() {
    std::lock_guard lock(mu_);
    return done_;
  }
  Clock::time_point ended() {
    std::lock_guard lock(mu_);
    return ended_;
  }
  std::string state() {
    std::lock_guard lock(mu_);
    return outcome_.state;
  }
  void cancel() { cancel_ = true; }
  nccl::RunOutcome take() {
    if (thread_.joinable()) thread_.join();
    return std::move(outcome_);
  }

 private:
  std::atomic<bool> cancel_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::string id_;
  bool done_ = false;
  Clock::time_point ended_;
  nccl::RunOutcome outcome_;
  std::thread thread_;
};

struct NcclTotals : ProbeTotals {
  std::map<std::string, uint64_t> runs;  // by state
  int64_t last_run_seconds = -1;         // Unix time of the latest run's start
};

class NcclKind : public ProbeKind {
 public:
  explicit NcclKind(NcclKindOptions o)
      : opts_(std::move(o)), responder_([&] {
          NcclResponderOptions r;
          r.run = opts_.run;
          r.rootfs = opts_.rootfs;
          r.node_name = opts_.node_name;
          r.serve = opts_.peers;
          r.gate = opts_.gate;
          r.serve_min_interval = opts_.serve_min_interval;
          return r;
        }()) {}

  std::string_view name() const override { return "nccl"; }

  ProbeSchedule schedule() const override {
    ProbeSchedule s;
    s.every_rounds = opts_.every_rounds;
    s.jitter = true;
    s.exclusive = true;
    s.max_peers = 1;
    s.overrun = true;
    // The child's limit, the other side's grace, and the exchange and reports around them.
    s.timeout = opts_.run.timeout + opts_.side_grace + std::chrono::seconds(15);
    return s;
  }

  std::vector<RequestHandler> handlers() override { return responder_.handlers(); }
  void setMemberNames(MemberNames names) override { responder_.setMemberNames(std::move(names)); }
  void stop() override { responder_.stop(); }

  std::shared_ptr<const ProbeResult> probe(const PeerContext& ctx) override {
    if (!opts_.peers) return nullptr;
    auto r = runWith(ctx);
    r->seconds =
        std::chrono::duration<double>(std::chrono::system_clock::now() - r->started).count();
    const std::string peer = ctx.peer.node.empty() ? ctx.peer.address : ctx.peer.node;
    if (r->state == "ok" || r->state == "unavailable" || r->state == "skipped")
      core::log::info("nccl_peer", "NCCL peer run",
                      {{"peer", peer}, {"state", r->state}, {"reason", r->reason}});
    else
      core::log::warn("nccl_peer", "NCCL peer run did not succeed",
                      {{"peer", peer}, {"state", r->state}, {"reason", r->reason}});
    return r;
  }

  std::shared_ptr<const ProbeTotals> account(const std::vector<PeerProbe>& run) override {
    for (const auto& p : run) {
      const auto& r = resultAs<NcclPeerResult>(p);
      ++totals_.runs[r.state];
      totals_.last_run_seconds =
          std::chrono::duration_cast<std::chrono::seconds>(r.started.time_since_epoch()).count();
    }
    return std::make_shared<const NcclTotals>(totals_);
  }

  std::shared_ptr<const ProbeTotals> serverState() const override {
    return opts_.peers ? responder_.state() : nullptr;
  }

  core::Value facts(const KindView& view) const override {
    if (!opts_.peers) return core::Value::map();
    const auto* served = static_cast<const NcclServedState*>(view.server.get());
    return ncclFacts(view.results, served);
  }

  void metrics(const KindView& view, core::MetricFamilies& out) const override {
    if (!opts_.peers) return;
    const auto& t = totalsAs<NcclTotals>(view);
    const auto* served = static_cast<const NcclServedState*>(view.server.get());
    ncclMetrics(view.results, t.runs, t.last_run_seconds, served, out);
  }

  void peerStatus(const PeerProbe& p, core::Value& entry) const override {
    entry["nccl"] = ncclPeerEntry(p);
  }

 private:
  std::shared_ptr<NcclPeerResult> runWith(const PeerContext& ctx);
  void follow(const PeerContext& ctx, ChannelClient& client, uint64_t session, Rank0& rank0,
              NcclPeerResult& r, bool& deadline_hit, std::string& lost);

  NcclKindOptions opts_;
  NcclResponder responder_;
  uint64_t next_device_ = 0;  // the round's thread only
  NcclTotals totals_;         // the round's thread only
};

std::shared_ptr<NcclPeerResult> NcclKind::runWith(const PeerContext& ctx) {
  auto r = std::make_shared<NcclPeerResult>();
  r->started = std::chrono::system_clock::now();
  r->operation = opts_.operation;
  r->env = opts_.run.env;
  const std::string peer = ctx.peer.node.empty() ? ctx.peer.address : ctx.peer.node;
  if (ctx.channel_address.empty()) {
    r->state = "unreachable";
    r->reason = "the peer's address does not resolve: " + ctx.resolve_error;
    r->answered = false;
    return r;
  }
  std::string holder;
  auto hold = opts_.gate->tryAcquire("a peer run with " + peer + " (rank 0)", &holder);
  if (!hold) {
    r->state = "skipped";
    r->reason = "another NCCL run of this daemon is running: " + holder;
    return r;
  }
  if (nccl::GpuScan scan = nccl::scanForBusyGpus(opts_.run, opts_.rootfs); !scan.holders.empty()) {
    r->state = "skipped";
    r->reason = nccl::busyReason(scan);
    r->gpu_holders = scan.holders;
    return r;
  }

  ChildRequest req = nccl::baseRequest(opts_.run);
  req.mode = "rank";
  req.operation = opts_.operation;
  req.rank = 0;
  req.nranks = 2;
  if (opts_.device >= 0) {
    req.device = opts_.device;
  } else {
    req.device = static_cast<int>(next_device_++ % 1024);
    req.rotate_device = true;
  }
  const auto child_deadline = Clock::now() + opts_.run.timeout;
  Rank0 rank0(opts_.run, req);
  // Rank 0 reports the id before it looks for a GPU; without one, it has ended (no library).
  std::string id;
  while (id.empty() && !rank0.done() && Clock::now() < ctx.deadline &&
         !(ctx.stopping && *ctx.stopping))
    id = rank0.waitForId(std::min(ctx.deadline, Clock::now() + milliseconds(200)));
  bool deadline_hit = false;
  std::string lost;
  if (!id.empty()) {
    r->id = nccl::uniqueIdFingerprint(id);
    uint64_t session = randomNonce();
    NcclRunRequest rr;
    rr.session = session;
    rr.prober = opts_.node_name;
    rr.unique_id = id;
    rr.operation = opts_.operation;
    rr.device = static_cast<uint16_t>(req.device);
    rr.rotate_device = req.rotate_device;
    // The peer's child gets what is left of ours: both end by the same time.
    auto left = std::chrono::duration_cast<milliseconds>(child_deadline - Clock::now());
    rr.timeout_ms = static_cast<uint32_t>(std::max<int64_t>(left.count(), 1));
    rr.warmup = static_cast<uint16_t>(req.warmup);
    rr.iterations = static_cast<uint32_t>(req.iterations);
    rr.sizes = req.sizes;
    ChannelClient client(opts_.secret);
    CallResult c = client.connect(ctx.channel_address, opts_.connect_timeout);
    if (c.ok())
      c = client.call(kNcclRunRequest, encodeNcclRunRequest(rr), kNcclRunReply, opts_.call_timeout);
    r->asked = true;
    r->answered = c.failure == ChannelFailure::kNone;
    if (c.declined) {
      rank0.cancel();
      r->state = "declined";
      r->reason = peer + " declined: " + *c.declined;
      if (c.declined->find("is not served") != std::string::npos)
        r->reason = peer +
                    " does not run NCCL peer runs (probes.nccl is off there, or it is an older "
                    "fabricwatch): " +
                    *c.declined;
    } else if (!c.ok()) {
      rank0.cancel();
      r->state = "unreachable";
      r->reason =
          std::string("the peer channel (") + channelFailureName(c.failure) + "): " + c.error;
    } else {
      follow(ctx, client, session, rank0, *r, deadline_hit, lost);
    }
  }
  r->self = rank0.take();
  if (!r->state.empty()) return r;  // declined or unreachable
  const std::string self_name = opts_.node_name.empty() ? "this node" : opts_.node_name;
  if (!r->asked) {
    // The child ended before it had an id (no library, a crash), or the run was stopped.
    r->state = r->self.state == "cancelled" ? "failed" : r->self.state;
    r->reason = self_name + ": " + r->self.reason;
    return r;
  }
  if (!lost.empty()) {
    r->state = "lost";
    r->reason = lost;
    return r;
  }
  if (r->peer && r->peer->state == "declined") {
    r->state = "declined";
    r->reason = peer + " declined: " + r->peer->reason;
    return r;
  }
  std::string theirs = r->peer ? r->peer->state : "failed";
  if (theirs == "running") theirs = "timeout";  // it never reported an end
  const std::string& ours = r->self.state;
  if (deadline_hit) {
    r->state = "timeout";
  } else {
    r->state = severity(ours) >= severity(theirs) ? ours : theirs;
    if (r->state == "cancelled") r->state = "failed";
  }
  auto add = [&](const std::string& who, const std::string& state, const std::string& why) {
    if (state == "ok") return;
    if (!r->reason.empty()) r->reason += "; ";
    r->reason += who + ": " + (why.empty() ? state : why);
  };
  if (deadline_hit) r->reason = "the run did not end within its deadline";
  add(self_name, ours, r->self.reason);
  add(peer, r->peer ? r->peer->state : "failed",
      r->peer ? r->peer->reason : "it never reported its side");
  return r;
}

// Follows the peer's side until both have ended: status requests every poll_interval; a side
// that has ended gives the other side_grace to end by itself before cancelling it; a peer that
// stops answering ends the run ("lost") and this side's child with it.
void NcclKind::follow(const PeerContext& ctx, ChannelClient& client, uint64_t session, Rank0& rank0,
                      NcclPeerResult& r, bool& deadline_hit, std::string& lost) {
  const std::string peer = ctx.peer.node.empty() ? ctx.peer.address : ctx.peer.node;
  std::optional<Clock::time_point> peer_ended;
  bool cancel_sent = false;
  int failures = 0;
  auto sendCancel = [&] {
    if (cancel_sent) return;
    cancel_sent = true;
    if (!client.connected() && !client.connect(ctx.channel_address, opts_.connect_timeout).ok())
      return;
    client.call(kNcclCancelRequest, encodeNcclCancelRequest({session}), kNcclCancelReply,
                opts_.call_timeout);
  };
  while (true) {
    auto next_poll = Clock::now() + opts_.poll_interval;
    bool ours_done = rank0.waitDone(next_poll);
    // Once this side has ended waitDone returns at once: without this wait the status requests
    // went out back to back (thousands in 80 ms), until the peer's replay guard refused the
    // sender (issue 13's per-sender share) and the run read as "lost".
    if (ours_done) std::this_thread::sleep_until(next_poll);
    CallResult st;
    if (!client.connected()) st = client.connect(ctx.channel_address, opts_.connect_timeout);
    if (client.connected())
      st = client.call(kNcclStatusRequest, encodeNcclStatusRequest({session}), kNcclStatusReply,
                       opts_.call_timeout);
    std::optional<NcclStatusReply> reply;
    if (st.ok()) reply = decodeNcclStatusReply(st.payload);
    if (reply && reply->known) {
      failures = 0;
      r.peer = reply->side;
      if (reply->side.state != "running" && !peer_ended) peer_ended = Clock::now();
    } else if (reply) {
      lost = peer + " no longer knows the run (it restarted)";
    } else if (++failures >= 3 || st.failure == ChannelFailure::kRefused) {
      lost = peer + " stopped answering during the run: " +
             (st.declined ? *st.declined
                          : std::string(channelFailureName(st.failure)) + ": " + st.error);
    }
    auto now = Clock::now();
    if (!lost.empty()) {
      rank0.cancel();  // rank 0 cannot finish without its peer
      return;
    }
    if (ours_done && peer_ended) return;
    // A peer that refused to run (its GPUs were busy) or was cancelled will never join: rank 0
    // need not wait any longer.
    if (peer_ended && (r.peer->state == "declined" || r.peer->state == "cancelled")) rank0.cancel();
    bool stopping = ctx.stopping && *ctx.stopping;
    if (now >= ctx.deadline || stopping) {
      deadline_hit = !stopping;
      rank0.cancel();
      sendCancel();
      // One more look at the peer's side after the cancel, then give up.
      rank0.waitDone(now + std::chrono::seconds(2));
      return;
    }
    // One side has ended: the other gets side_grace to end by itself (and say why).
    if (!ours_done && peer_ended && now - *peer_ended >= opts_.side_grace) rank0.cancel();
    if (ours_done && !peer_ended && now - rank0.ended() >= opts_.side_grace) sendCancel();
  }
}

}  // namespace

int ncclPeerStateCode(const std::string& state) {
  static const char* kStates[] = {"",        "ok",      "skipped",  "unavailable", "failed",
                                  "timeout", "crashed", "declined", "unreachable", "lost"};
  for (int i = 1; i < 10; ++i)
    if (state == kStates[i]) return i;
  return -1;
}

std::shared_ptr<ProbeKind> makeNcclKind(NcclKindOptions opts) {
  return std::make_shared<NcclKind>(std::move(opts));
}

KindRegistration ncclKindRegistration() {
  KindRegistration r;
  r.name = "nccl";
  r.enabled_by_default = false;  // it runs NCCL on the GPUs: on only when asked (ncclEnabled)
  r.make = [](const KindSetup& s) -> core::Result<std::shared_ptr<ProbeKind>> {
    const auto& n = ncclConfig(s.config);
    NcclKindOptions o;
    o.run = nccl::runSettings(n);
    o.rootfs = s.config.host.rootfs;
    o.node_name = s.node_name;
    o.secret = s.secret;
    o.peers = n.peers;
    o.operation = n.operation;
    o.device = n.device;
    o.serve_min_interval = n.serve_min_interval;
    auto interval = std::max<int64_t>(s.interval.count(), 1);
    o.every_rounds = std::max<uint64_t>(1, static_cast<uint64_t>(n.interval.count() / interval));
    return makeNcclKind(std::move(o));
  };
  r.config = ncclConfigTable();
  r.frames = kNcclFrames;
  r.sources = {ncclProbeSourceRegistration()};
  r.docs = "docs/configuration.md";
  return r;
}

}  // namespace fabricwatch::probes::nccl
