#include "probes/kinds/nccl/nccl_responder.h"

#include <algorithm>

#include "core/log.h"
#include "core/utf8.h"
#include "nccl/log_verdict.h"

namespace fabricwatch::probes::nccl {

struct NcclResponder::Session {
  NcclRunRequest req;
  std::string address;
  std::chrono::system_clock::time_point started;
  std::atomic<bool> cancel{false};
  std::optional<nccl::HeavyGate::Hold> hold;
  // Guarded by the responder's mutex.
  bool done = false;
  NcclSide side;

  NcclServed record() const { return {req.session, req.prober, address, started, done, side}; }
};

NcclSide sideOfRun(const nccl::RunOutcome& o) {
  NcclSide s;
  s.state = o.state;
  s.reason = o.reason;
  s.nccl_version = o.child.nccl_version;
  s.cuda_runtime_version = o.child.cuda_runtime_version;
  s.cuda_driver_version = o.child.cuda_driver_version;
  s.gpus = static_cast<int32_t>(o.child.gpus);
  s.device = static_cast<int32_t>(o.child.device);
  if (!o.child.unique_id.empty()) s.id = nccl::uniqueIdFingerprint(o.child.unique_id);
  if (o.has_log) {
    core::Value f = fabricwatch::nccl::factsValue(o.log, o.verdict);
    s.inter_node_transport = o.verdict.inter_node_transport;
    s.gdr = o.verdict.gdr;
    s.log_status = o.verdict.status;
    if (const core::Value* n = f.find("network"); n && n->isString()) s.network = n->asString();
  }
  s.seconds = o.seconds;
  s.results = o.child.results;
  return s;
}

std::optional<std::string> exceedsLocalBounds(const NcclRunRequest& r, const nccl::RunSettings& s) {
  if (r.nranks != 2 || r.rank != 1)
    return "asks for rank " + std::to_string(r.rank) + " of " + std::to_string(r.nranks) +
           ": peer runs are rank 1 of 2";
  uint64_t largest = s.sizes.empty() ? 0 : *std::max_element(s.sizes.begin(), s.sizes.end());
  if (r.sizes.size() > s.sizes.size())
    return "asks for " + std::to_string(r.sizes.size()) + " sizes, more than this node runs (" +
           std::to_string(s.sizes.size()) + ", probes.nccl.sizes)";
  for (uint64_t b : r.sizes)
    if (b > largest)
      return "asks for " + std::to_string(b) + " bytes, more than this node's largest size (" +
             std::to_string(largest) + ", probes.nccl.sizes)";
  if (r.iterations > static_cast<uint32_t>(std::max(s.iterations, 0)))
    return "asks for " + std::to_string(r.iterations) + " iterations, more than this node runs (" +
           std::to_string(s.iterations) + ", probes.nccl.iterations)";
  if (r.warmup > std::max(s.warmup, 0))
    return "asks for " + std::to_string(r.warmup) +
           " warm-up iterations, more than this node runs (" + std::to_string(s.warmup) +
           ", probes.nccl.warmup)";
  return std::nullopt;
}

NcclResponder::NcclResponder(NcclResponderOptions opts) : opts_(std::move(opts)) {
  if (!opts_.gate) opts_.gate = nccl::HeavyGate::process();
  std::lock_guard lock(mu_);
  publishLocked();
}

NcclResponder::~NcclResponder() { stop(); }

std::vector<RequestHandler> NcclResponder::handlers() {
  return {
      {kNcclRunRequest, kNcclRunReply, 2048,
       [this](std::string_view p, const Sender& s) { return onRun(p, s); }},
      {kNcclStatusRequest, kNcclStatusReply, 64,
       [this](std::string_view p, const Sender& s) { return onStatus(p, s); }},
      {kNcclCancelRequest, kNcclCancelReply, 64,
       [this](std::string_view p, const Sender& s) { return onCancel(p, s); }},
  };
}

Answer NcclResponder::declineLocked(const std::string& reason) {
  ++results_["declined"];
  publishLocked();
  return Answer::decline(reason);
}

Answer NcclResponder::onRun(std::string_view payload, const Sender& from) {
  auto req = decodeNcclRunRequest(payload);
  if (!req) return Answer::malformed();
  std::unique_lock lock(mu_);
  if (!opts_.serve)
    return declineLocked("NCCL peer runs are off on this node (probes.nccl.peers = false)");
  if (stopping_) return declineLocked("this node is stopping");
  if (auto why = exceedsLocalBounds(*req, opts_.run)) return declineLocked(*why);
  // Every member holds the secret, so `prober` is a claim: it must be the name the member at
  // the sender's address answered this node's echoes with (when this node lists one there).
  if (member_names_) {
    auto names = member_names_(from.address);
    if (!names.empty() && std::find(names.begin(), names.end(), req->prober) == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      core::log::warn("nccl_peer", "a run request claims another member's name",
                      {{"prober", req->prober}, {"address", from.address}, {"known", known}});
      return declineLocked("the request names its prober \"" + core::sanitizeUtf8(req->prober, 64) +
                           "\", but the member at " + from.address + " is " + known);
    }
  }
  auto now = opts_.now();
  if (auto it = last_accepted_.find(from.address);
      it != last_accepted_.end() && now - it->second < opts_.serve_min_interval) {
    auto wait = std::chrono::duration_cast<std::chrono::seconds>(opts_.serve_min_interval -
                                                                 (now - it->second));
    return declineLocked(
        "busy: this member's last run started less than " +
        std::to_string(
            std::chrono::duration_cast<std::chrono::seconds>(opts_.serve_min_interval).count()) +
        " s ago (probes.nccl.serve_min_interval); next in " + std::to_string(wait.count() + 1) +
        " s");
  }
  if (current_ && !current_->done)
    return declineLocked("busy: serving a peer run for " + current_->req.prober);
  std::string holder;
  auto hold =
      opts_.gate->tryAcquire("serving a peer run for " + req->prober + " (rank 1)", &holder);
  if (!hold) return declineLocked("busy: " + holder);
  // The previous session has finished (done is set as its thread's last act): joining is
  // immediate.
  if (worker_.joinable()) worker_.join();
  auto s = std::make_shared<Session>();
  s->req = std::move(*req);
  s->address = from.address;
  s->started = std::chrono::system_clock::now();
  s->hold.emplace(std::move(*hold));
  s->side.state = "running";
  current_ = s;
  std::erase_if(last_accepted_,
                [&](const auto& kv) { return now - kv.second >= opts_.serve_min_interval; });
  last_accepted_[from.address] = now;
  publishLocked();
  worker_ = std::thread([this, s] { serve(s); });
  core::log::info("nccl_peer", "serving an NCCL peer run",
                  {{"prober", s->req.prober},
                   {"address", s->address},
                   {"session", std::to_string(s->req.session)}});
  return Answer::reply(encodeNcclRunReply({s->req.session, opts_.node_name}));
}

void NcclResponder::serve(const std::shared_ptr<Session>& s) {
  NcclSide side;
  nccl::GpuScan scan = nccl::scanForBusyGpus(opts_.run, opts_.rootfs);
  if (!scan.holders.empty()) {
    side.state = "declined";
    side.reason = nccl::busyReason(scan);
  } else {
    const NcclRunRequest& r = s->req;
    ChildRequest req = nccl::baseRequest(opts_.run);
    // The run's shape is the prober's: every rank must run the same operations and sizes.
    req.mode = "rank";
    req.operation = r.operation;
    req.rank = r.rank;
    req.nranks = r.nranks;
    req.device = r.device;
    req.rotate_device = r.rotate_device;
    req.unique_id = r.unique_id;
    req.sizes = r.sizes;
    req.warmup = r.warmup;
    req.iterations = static_cast<int>(r.iterations);
    nccl::RunHooks hooks;
    hooks.cancel = &s->cancel;
    hooks.timeout = std::min(opts_.run.timeout, std::chrono::milliseconds(r.timeout_ms));
    side = sideOfRun(nccl::runProbe(opts_.run, req, hooks));
    if (side.id.empty()) side.id = nccl::uniqueIdFingerprint(r.unique_id);
  }
  core::log::info("nccl_peer", "served an NCCL peer run",
                  {{"prober", s->req.prober}, {"state", side.state}, {"reason", side.reason}});
  std::lock_guard lock(mu_);
  s->side = std::move(side);
  s->done = true;
  s->hold.reset();
  ++results_[s->side.state];
  done_.push_front(s);
  while (done_.size() > opts_.history) done_.pop_back();
  publishLocked();
}

std::shared_ptr<NcclResponder::Session> NcclResponder::findLocked(
    uint64_t session, const std::string& address) const {
  // Only the node that started a run may follow or cancel it.
  auto matches = [&](const std::shared_ptr<Session>& s) {
    return s && s->req.session == session && s->address == address;
  };
  if (matches(current_)) return current_;
  for (const auto& s : done_)
    if (matches(s)) return s;
  return nullptr;
}

Answer NcclResponder::onStatus(std::string_view payload, const Sender& from) {
  auto req = decodeNcclStatusRequest(payload);
  if (!req) return Answer::malformed();
  std::lock_guard lock(mu_);
  NcclStatusReply reply;
  reply.session = req->session;
  if (auto s = findLocked(req->session, from.address)) {
    reply.known = true;
    reply.side = s->side;
  }
  return Answer::reply(encodeNcclStatusReply(reply));
}

Answer NcclResponder::onCancel(std::string_view payload, const Sender& from) {
  auto req = decodeNcclCancelRequest(payload);
  if (!req) return Answer::malformed();
  std::lock_guard lock(mu_);
  NcclCancelReply reply;
  reply.session = req->session;
  if (auto s = findLocked(req->session, from.address); s && !s->done) {
    s->cancel = true;
    reply.cancelled = true;
  }
  return Answer::reply(encodeNcclCancelReply(reply));
}

void NcclResponder::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (current_) current_->cancel = true;
  }
  if (worker_.joinable()) worker_.join();
}

void NcclResponder::publishLocked() {
  auto st = std::make_shared<NcclServedState>();
  if (current_ && !current_->done) st->recent.push_back(current_->record());
  for (const auto& s : done_) st->recent.push_back(s->record());
  st->results = results_;
  published_ = std::move(st);
}

std::shared_ptr<const NcclServedState> NcclResponder::state() const {
  std::lock_guard lock(mu_);
  return published_;
}

}  // namespace fabricwatch::probes::nccl
