#include "probes/kinds/fabric/responder.h"

#include "core/log.h"

namespace fabricwatch::probes::fabric {
namespace {

constexpr size_t kMaxClients = 256;  // addresses kept in the responder's AV
constexpr auto kRetryOpen = std::chrono::seconds(30);
constexpr auto kRetiredPoll = std::chrono::milliseconds(200);

}  // namespace

Responder::Responder(EndpointOptions opts, std::chrono::milliseconds max_session,
                     ResponderLimits limits)
    : opts_(std::move(opts)), max_session_(max_session), limits_(limits) {}

Responder::~Responder() { stop(); }

void Responder::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  stop_flag_ = false;
  busy_ = true;  // until the endpoint is open
  thread_ = std::thread([this] { loop(); });
}

void Responder::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    stop_flag_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  retired_.stop();
  std::lock_guard lock(mu_);
  if (ep_) ep_->closeEndpoint();  // a prepared session's receives end before its buffers go
  session_.reset();
  addrs_.clear();
  lru_.clear();
  ep_.reset();
}

bool Responder::waitOpen(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return attempted_; }) && ep_ != nullptr;
}

void Responder::reopen() {
  std::unique_ptr<Endpoint> old;
  {
    std::lock_guard lock(mu_);
    busy_ = true;
    if (ep_) ep_->closeEndpoint();
    session_.reset();
    addrs_.clear();
    lru_.clear();
    old = std::move(ep_);
  }
  old.reset();
  ProviderFacts facts;
  std::optional<FabricError> err;
  auto ep = Endpoint::open(opts_, facts, err);
  if (err)
    core::log::warn("fabric", "responder endpoint unavailable", {{"error", err->message()}});
  else
    core::log::info("fabric", "responder endpoint open",
                    {{"provider", facts.provider}, {"domain", facts.domain}});
  {
    std::lock_guard lock(mu_);
    ep_ = std::move(ep);
    facts_ = std::move(facts);
    open_error_ = std::move(err);
    ++epoch_;
    attempted_ = true;
    busy_ = false;
  }
  cv_.notify_all();
}

void Responder::reopenUnlessRetiredFull() {
  if (!retired_.full()) return reopen();
  std::lock_guard lock(mu_);
  open_error_ = retired_.fullError();
  attempted_ = true;
  busy_ = false;
}

void Responder::loop() {
  reopen();
  auto next_open = Clock::now() + kRetryOpen;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    // Retired endpoints are read every kRetiredPoll until they settle and close.
    auto wake = retired_.empty() ? next_open : std::min(next_open, Clock::now() + kRetiredPoll);
    cv_.wait_until(lock, wake, [this] { return stopping_ || session_ != nullptr || want_reopen_; });
    if (stopping_) break;
    if (want_reopen_) {
      want_reopen_ = false;
      lock.unlock();
      reopen();
      lock.lock();
      continue;
    }
    if (!session_) {
      if (!retired_.empty()) {
        lock.unlock();
        retired_.settle();
        lock.lock();
      }
      if (!ep_ && Clock::now() >= next_open) {
        lock.unlock();
        reopenUnlessRetiredFull();
        lock.lock();
      }
      if (Clock::now() >= next_open) next_open = Clock::now() + kRetryOpen;
      continue;
    }
    // The session runs without the lock; busy_ keeps begin() away from the endpoint.
    auto session = std::move(session_);
    SessionSpec spec = spec_;
    std::string member = member_;
    auto limit = std::min(std::chrono::milliseconds(spec.timeout_ms), max_session_);
    auto setup = std::min(limit, limits_.setup_timeout);
    lock.unlock();
    core::log::debug("fabric", "responder session started",
                     {{"kind", sessionKindName(spec.kind)},
                      {"size", std::to_string(spec.size)},
                      {"count", std::to_string(spec.count)}});
    auto started = Clock::now();
    Measurement m = session->respond(started + limit, &stop_flag_, started + setup);
    bool undriven = m.error && m.completed == 0 && !stop_flag_;
    // A failed session whose posted operations all completed or were canceled leaves the
    // endpoint as it was: it serves the next session. Only one with something still in flight
    // gets a new endpoint, the old one closed before the session's buffers go. Closing rxm's
    // endpoint after a prober's connection broke off mid-session crashed libfabric 1.17's
    // tcp;ofi_rxm (SIGSEGV in fi_close from this loop, once in a few observe e2e runs), and
    // an undriven session, the common failure, never needs it.
    const bool replace = m.error && !m.quiesced;
    if (replace) {
      lock.lock();
      std::unique_ptr<Endpoint> old = std::move(ep_);
      lock.unlock();
      // The session holds the contexts and buffers its operations use.
      retired_.add(std::move(old), m.in_flight,
                   std::shared_ptr<ResponderSession>(std::move(session)));
    }
    session.reset();
    if (m.error && !stop_flag_)
      core::log::debug("fabric", "responder session failed",
                       {{"kind", sessionKindName(spec.kind)},
                        {"error", m.error->message()},
                        {"endpoint", replace ? "replaced" : "kept"}});
    if (replace && !stop_flag_) reopenUnlessRetiredFull();
    lock.lock();
    ++stats_.sessions;
    stats_.stray += m.stray;
    if (undriven) {
      ++stats_.undriven;
      if (!member.empty()) {
        auto now = Clock::now();
        std::erase_if(backoff_until_, [&](const auto& kv) { return kv.second <= now; });
        backoff_until_[member] = now + limits_.backoff;
        core::log::info(
            "fabric", "a member's session was never driven; holding it back",
            {{"member", member}, {"backoff_ms", std::to_string(limits_.backoff.count())}});
      }
    }
    if (m.error) {
      ++stats_.failed;
      if (replace) ++stats_.reopened;
      stats_.last_error = m.error;
    }
    busy_ = false;
  }
}

Responder::Hello Responder::hello() {
  std::lock_guard lock(mu_);
  Hello h;
  h.facts = facts_;
  h.epoch = epoch_;
  if (!ep_) {
    h.unavailable = open_error_ ? open_error_->message() : "endpoint not open yet";
    return h;
  }
  h.name = ep_->name();
  return h;
}

std::optional<fi_addr_t> Responder::addressLocked(const std::string& name,
                                                  std::optional<FabricError>& err) {
  auto it = addrs_.find(name);
  if (it != addrs_.end()) {
    lru_.splice(lru_.end(), lru_, it->second.second);
    return it->second.first;
  }
  if (addrs_.size() >= kMaxClients) {
    auto old = addrs_.find(lru_.front());
    ep_->remove(old->second.first);
    addrs_.erase(old);
    lru_.pop_front();
  }
  auto addr = ep_->insert(name, err);
  if (!addr) return std::nullopt;
  lru_.push_back(name);
  addrs_[name] = {*addr, std::prev(lru_.end())};
  return addr;
}

std::variant<uint64_t, std::string> Responder::begin(const SessionSpec& spec,
                                                     const std::string& client_name,
                                                     const std::string& member) {
  std::unique_lock lock(mu_);
  if (auto it = backoff_until_.find(member); !member.empty() && it != backoff_until_.end()) {
    auto left = it->second - Clock::now();
    if (left > Clock::duration::zero()) {
      ++stats_.declined_member;
      return "busy: this member's last session was never driven (retry in " +
             std::to_string(std::chrono::duration_cast<std::chrono::seconds>(left).count() + 1) +
             " s)";
    }
    backoff_until_.erase(it);
  }
  if (!ep_ && !busy_)
    return std::string("endpoint unavailable: ") +
           (open_error_ ? open_error_->message() : "not open yet");
  if (busy_ || stopping_) {
    ++stats_.declined_busy;
    return std::string("busy");
  }
  if (auto bad = checkSpec(spec, facts_.max_msg_size)) return "bad session: " + *bad;
  std::optional<FabricError> err;
  auto addr = addressLocked(client_name, err);
  if (!addr) return "cannot reach the prober's endpoint: " + err->message();
  auto session = std::make_unique<ResponderSession>(*ep_, spec, *addr);
  if (auto e = session->prepare()) {
    // Whatever it posted stays on the endpoint: the responder's thread opens a new one. The
    // endpoint closes first (no more data into the buffers), then the buffers, while their
    // domain is still open.
    ep_->closeEndpoint();
    session.reset();
    ++stats_.failed;
    ++stats_.reopened;
    stats_.last_error = e;
    want_reopen_ = true;
    busy_ = true;
    lock.unlock();
    cv_.notify_all();
    return "cannot prepare the session: " + e->message();
  }
  session_ = std::move(session);
  spec_ = spec;
  member_ = member;
  busy_ = true;
  uint64_t epoch = epoch_;
  lock.unlock();
  cv_.notify_all();
  return epoch;
}

ResponderStats Responder::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace fabricwatch::probes::fabric
