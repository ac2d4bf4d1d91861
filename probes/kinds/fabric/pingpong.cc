#include "probes/kinds/fabric/pingpong.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

namespace fabricwatch::probes::fabric {
namespace {

using namespace std::chrono_literals;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Polls the endpoint's completion queue until the caller has what it waits for, checking the
// clock, the deadline and the stop flag every 16 polls. It never sleeps while traffic flows (a
// wake-up per message would be the latency it measures). When to yield the CPU depends on
// where the other end runs, which it infers from where completions turn up:
// - on a core of its own (the usual case; always across nodes), completions arrive while the
//   loop spins; it yields only after 50 µs without one, so a busy node's other tasks do not
//   take the core from a session whose answer is due within microseconds;
// - on the same core (shm runs both ends on one node, and the kernel's wake-up placement often
//   puts the prober and the responder's thread together), nothing arrives while it spins and
//   the answer is there at the first poll after a yield, once the peer has run; then it yields
//   every 16 polls without a completion, about 3 µs a message where the 50 µs spin cost 53.
// A score over the latest completions (+1 found right after a yield, -1 found while spinning,
// within ±8) tells the two apart and follows a migration within a few messages. After 10 ms
// without a completion it naps 50 µs per 16 polls, so that a peer lost mid-session costs
// little CPU until the deadline.
class Waiter {
 public:
  Waiter(Endpoint& ep, Clock::time_point deadline, const std::atomic<bool>* stopping)
      : ep_(ep), deadline_(deadline), stopping_(stopping), progress_(Clock::now()) {}

  // One poll; completions go to `on`. False once the session must end (error() says why).
  template <typename On>
  bool poll(On&& on) {
    Completion c[16];
    FabricError err;
    void* failed = nullptr;
    ssize_t n = ep_.poll(c, 16, &err, &failed);
    if (n < 0) {
      error_ = std::move(err);
      failed_ = failed;
      return false;
    }
    for (ssize_t i = 0; i < n; ++i) on(c[i]);
    if (n > 0) {
      moved_ = true;
      shared_ = yielded_ ? std::min(shared_ + 1, 8) : std::max(shared_ - 1, -8);
    }
    yielded_ = false;
    if ((++polls_ & 15) != 0) return true;
    auto now = Clock::now();
    const bool moved = moved_;
    if (moved) progress_ = now;
    moved_ = false;
    if (now >= deadline_) {
      error_ = FabricError{"completion", 0, "timed out", "no completion before the deadline"};
      return false;
    }
    if (stopping_ && stopping_->load(std::memory_order_relaxed)) {
      error_ = FabricError{"completion", 0, "stopped", "fabricwatch is stopping"};
      return false;
    }
    auto idle = now - progress_;
    if (idle > 10ms) {
      std::this_thread::sleep_for(50us);
    } else if (!moved && (shared_ > 0 || idle > 50us)) {
      std::this_thread::yield();
      yielded_ = true;
    }
    return true;
  }

  // Retries a post while the provider says -FI_EAGAIN, polling in between for progress.
  template <typename Post, typename On>
  bool post(const char* op, Post&& p, On&& on) {
    while (true) {
      ssize_t r = p();
      if (r == 0) return true;
      if (r != -FI_EAGAIN) {
        error_ = libfabricError(op, static_cast<int>(r));
        return false;
      }
      if (!poll(on)) return false;
    }
  }

  std::optional<FabricError>& error() { return error_; }
  // The operation whose failed completion ended the session (done, not in flight), if one did.
  void* failedContext() const { return failed_; }
  void setDeadline(Clock::time_point deadline) { deadline_ = deadline; }

 private:
  Endpoint& ep_;
  Clock::time_point deadline_;
  const std::atomic<bool>* stopping_;
  Clock::time_point progress_;
  uint64_t polls_ = 0;
  bool moved_ = false;    // a completion since the last clock check
  bool yielded_ = false;  // the last poll came right after a yield
  int shared_ = 0;        // > 0: the peer seems to share this core (see above)
  std::optional<FabricError> error_;
  void* failed_ = nullptr;
};

// After a failed session: cancels what is still posted and reads the completion queue until
// those operations have completed (canceled, or failed with the peer) or `grace` has passed,
// so that nothing of the session is in flight when its buffers and contexts go and the
// endpoint closes (rxm's endpoint close crashes on receives it is still serving). True when
// every one of them completed.
// Cancels what is posted and drains the completions for `grace`; `left` is what is still in
// flight then.
bool quiesce(Endpoint& ep, const std::vector<void*>& posted, Clock::duration grace,
             std::vector<void*>& left) {
  left = posted;
  if (ep.closed()) return false;
  for (void* ctx : posted) ep.cancel(ctx);
  auto end = Clock::now() + grace;
  while (!left.empty() && Clock::now() < end)
    if (drainCompletions(ep, left) == 0) std::this_thread::sleep_for(100us);
  return left.empty();
}

bool ours(const Buffer& b, size_t len, uint64_t id, uint64_t* seq) {
  uint64_t got = 0;
  return readHeader(b.payload(), len, &got, seq) && got == id;
}

}  // namespace

size_t drainCompletions(Endpoint& ep, std::vector<void*>& in_flight) {
  size_t seen = 0;
  for (int i = 0; i < 64 && !in_flight.empty(); ++i) {
    Completion c[16];
    FabricError err;
    void* failed = nullptr;
    ssize_t n = ep.poll(c, 16, &err, &failed);
    if (n < 0 && failed) {
      std::erase(in_flight, failed);
      ++seen;
      continue;
    }
    if (n <= 0) break;
    for (ssize_t k = 0; k < n; ++k) std::erase(in_flight, c[k].context);
    seen += static_cast<size_t>(n);
  }
  return seen;
}

const char* sessionKindName(SessionKind k) {
  return k == SessionKind::kBandwidth ? "bandwidth" : "latency";
}

std::optional<std::string> checkSpec(const SessionSpec& s, size_t max_msg_size) {
  if (s.kind != SessionKind::kLatency && s.kind != SessionKind::kBandwidth)
    return "unknown session kind";
  if (s.size < kHeaderBytes || s.size > kMaxMessage || s.size > max_msg_size)
    return "message size " + std::to_string(s.size) + " outside [16, " +
           std::to_string(std::min(kMaxMessage, max_msg_size)) + "]";
  if (s.count == 0 || s.count > 100000)
    return "count " + std::to_string(s.count) + " outside [1, 100000]";
  if (s.kind == SessionKind::kBandwidth && (s.window == 0 || s.window > 256))
    return "window " + std::to_string(s.window) + " outside [1, 256]";
  uint64_t bytes = uint64_t{s.size} * s.count * (s.kind == SessionKind::kBandwidth ? s.window : 1);
  if (bytes > (uint64_t{4} << 30))
    return "session of " + std::to_string(bytes) + " bytes over 4 GiB";
  if (s.timeout_ms == 0 || s.timeout_ms > 60000) return "timeout outside [1ms, 60s]";
  return std::nullopt;
}

uint64_t randomSessionId() {
  static std::mutex mu;
  static std::random_device rd;
  std::lock_guard lock(mu);
  return (uint64_t{rd()} << 32) ^ rd();
}

void writeHeader(char* payload, uint64_t id, uint64_t seq) {
  std::memcpy(payload, &id, 8);
  std::memcpy(payload + 8, &seq, 8);
}

bool readHeader(const char* payload, size_t len, uint64_t* id, uint64_t* seq) {
  if (len < kHeaderBytes) return false;
  std::memcpy(id, payload, 8);
  std::memcpy(seq, payload + 8, 8);
  return true;
}

Measurement runLatency(Endpoint& ep, const Buffer& tx, const Buffer& rx, fi_addr_t peer,
                       const SessionSpec& spec, uint32_t warmup, Clock::time_point deadline,
                       const std::atomic<bool>* stopping) {
  Measurement m;
  if (spec.count > warmup) m.rtt_seconds.reserve(spec.count - warmup);
  Waiter w(ep, deadline, stopping);
  // On the heap: what a failed session leaves in flight keeps its contexts (Endpoint::orphan).
  auto contexts = std::make_shared<std::array<fi_context2, 2>>();
  fi_context2& rx_ctx = (*contexts)[0];
  fi_context2& tx_ctx = (*contexts)[1];
  bool got_rx = false, got_tx = false;
  bool rx_pending = false, tx_pending = false;  // posted, not completed: what a failure leaves
  size_t rx_len = 0;
  auto on = [&](const Completion& c) {
    if (c.context == &rx_ctx) {
      got_rx = true;
      rx_pending = false;
      rx_len = c.len;
    } else if (c.context == &tx_ctx) {
      got_tx = true;
      tx_pending = false;
    }
  };
  const bool inject = ep.canInject(spec.size);  // an injected send has no completion
  auto post_rx = [&] {
    rx_pending = w.post(
        "fi_recv", [&] { return ep.postRecv(rx, spec.size, &rx_ctx); }, on);
    return rx_pending;
  };
  auto fail = [&] {
    m.error = w.error();
    std::vector<void*> posted;
    if (rx_pending && w.failedContext() != &rx_ctx) posted.push_back(&rx_ctx);
    if (tx_pending && w.failedContext() != &tx_ctx) posted.push_back(&tx_ctx);
    m.quiesced = quiesce(ep, posted, std::chrono::milliseconds(100), m.in_flight);
    m.contexts = contexts;
    return m;
  };
  if (!post_rx()) return fail();
  Clock::time_point start{}, t1{};
  for (uint32_t i = 0; i < spec.count; ++i) {
    writeHeader(tx.payload(), spec.id, i);
    if (i == warmup) start = Clock::now();
    const Clock::time_point t0 = Clock::now();
    got_rx = false;
    got_tx = inject;
    bool ok = inject
                  ? w.post(
                        "fi_inject", [&] { return ep.inject(tx, spec.size, peer); }, on)
                  : w.post(
                        "fi_send", [&] { return ep.postSend(tx, spec.size, peer, &tx_ctx); }, on);
    tx_pending = ok && !inject;
    while (ok && !(got_rx && got_tx)) {
      ok = w.poll(on);
      uint64_t seq = 0;
      if (ok && got_rx && !(ours(rx, rx_len, spec.id, &seq) && seq == i)) {
        ++m.stray;  // not this ping's pong: wait on
        got_rx = false;
        ok = post_rx();
      }
    }
    if (!ok) return fail();
    t1 = Clock::now();
    if (i >= warmup) m.rtt_seconds.push_back(seconds(t1 - t0));
    ++m.completed;
    if (i + 1 < spec.count && !post_rx()) return fail();
  }
  if (spec.count > warmup) m.elapsed_seconds = seconds(t1 - start);
  return m;
}

Measurement runBandwidth(Endpoint& ep, const Buffer& tx, const Buffer& rx, fi_addr_t peer,
                         const SessionSpec& spec, uint32_t warmup, Clock::time_point deadline,
                         const std::atomic<bool>* stopping) {
  Measurement m;
  Waiter w(ep, deadline, stopping);
  // On the heap, as in runLatency.
  struct Contexts {
    explicit Contexts(size_t window) : tx(window) {}
    std::vector<fi_context2> tx;
    fi_context2 ack{};
  };
  auto contexts = std::make_shared<Contexts>(spec.window);
  std::vector<fi_context2>& tx_ctx = contexts->tx;
  fi_context2& ack_ctx = contexts->ack;
  uint32_t sent_done = 0;
  bool got_ack = false;
  bool ack_pending = false;                      // posted, not completed
  std::vector<char> tx_pending(spec.window, 0);  // by context, as ack_pending
  size_t ack_len = 0;
  const auto first_tx = reinterpret_cast<uintptr_t>(tx_ctx.data());
  auto on = [&](const Completion& c) {
    if (c.context == &ack_ctx) {
      got_ack = true;
      ack_pending = false;
      ack_len = c.len;
      return;
    }
    auto at = (reinterpret_cast<uintptr_t>(c.context) - first_tx) / sizeof(fi_context2);
    if (reinterpret_cast<uintptr_t>(c.context) >= first_tx && at < tx_ctx.size()) {
      tx_pending[at] = 0;
      ++sent_done;  // one of this window's sends
    }
  };
  auto post_ack = [&] {
    ack_pending = w.post(
        "fi_recv", [&] { return ep.postRecv(rx, kHeaderBytes, &ack_ctx); }, on);
    return ack_pending;
  };
  auto fail = [&] {
    m.error = w.error();
    std::vector<void*> posted;
    if (ack_pending && w.failedContext() != &ack_ctx) posted.push_back(&ack_ctx);
    for (size_t j = 0; j < tx_ctx.size(); ++j)
      if (tx_pending[j] && w.failedContext() != &tx_ctx[j]) posted.push_back(&tx_ctx[j]);
    m.quiesced = quiesce(ep, posted, std::chrono::milliseconds(100), m.in_flight);
    m.contexts = contexts;
    return m;
  };
  if (!post_ack()) return fail();
  Clock::time_point start{}, end{};
  for (uint32_t win = 0; win < spec.count; ++win) {
    if (win == warmup) start = Clock::now();
    writeHeader(tx.payload(), spec.id, win);
    sent_done = 0;
    got_ack = false;
    bool ok = true;
    for (uint32_t j = 0; ok && j < spec.window; ++j) {
      ok = w.post(
          "fi_send", [&] { return ep.postSend(tx, spec.size, peer, &tx_ctx[j]); }, on);
      tx_pending[j] = ok;
    }
    while (ok && !(got_ack && sent_done >= spec.window)) {
      ok = w.poll(on);
      uint64_t seq = 0;
      if (ok && got_ack && !(ours(rx, ack_len, spec.id, &seq) && seq == win)) {
        ++m.stray;
        got_ack = false;
        ok = post_ack();
      }
    }
    if (!ok) return fail();
    end = Clock::now();
    ++m.completed;
    if (win >= warmup) m.bytes += uint64_t{spec.size} * spec.window;
    if (win + 1 < spec.count && !post_ack()) return fail();
  }
  if (spec.count > warmup) m.elapsed_seconds = seconds(end - start);
  return m;
}

// --- responder ---

ResponderSession::ResponderSession(Endpoint& ep, const SessionSpec& spec, fi_addr_t client)
    : ep_(ep), spec_(spec), client_(client) {}

ResponderSession::~ResponderSession() = default;

std::optional<FabricError> ResponderSession::prepare() {
  std::optional<FabricError> err;
  bool bw = spec_.kind == SessionKind::kBandwidth;
  rx_ = ep_.allocate(spec_.size, err);
  if (!rx_) return err;
  tx_ = ep_.allocate(bw ? kHeaderBytes : spec_.size, err);
  if (!tx_) return err;
  rx_ctx_.assign(bw ? spec_.window : 1, fi_context2{});
  for (auto& ctx : rx_ctx_) {
    ssize_t r = ep_.postRecv(*rx_, spec_.size, &ctx);
    if (r) return libfabricError("fi_recv", static_cast<int>(r));
  }
  return std::nullopt;
}

Measurement ResponderSession::respond(Clock::time_point deadline, const std::atomic<bool>* stopping,
                                      Clock::time_point first_by) {
  Measurement m;
  // Until the prober's first message: the setup deadline; then the session's own.
  Waiter w(ep_, std::min(deadline, first_by), stopping);
  const bool bw = spec_.kind == SessionKind::kBandwidth;
  const size_t reply_len = bw ? kHeaderBytes : spec_.size;
  const bool inject = ep_.canInject(reply_len);
  std::vector<fi_context2*> received;  // receive completions not yet handled
  bool tx_done = false;
  auto on = [&](const Completion& c) {
    if (c.context == &tx_ctx_) {
      tx_done = true;
      return;
    }
    // Only the contexts it posted complete here; the length tells a whole message.
    uint64_t id = 0, seq = 0;
    bool mine =
        c.len >= kHeaderBytes && readHeader(rx_->payload(), c.len, &id, &seq) && id == spec_.id;
    if (mine) {
      received.push_back(static_cast<fi_context2*>(c.context));
    } else {
      ++m.stray;
      ssize_t r = ep_.postRecv(*rx_, spec_.size, c.context);  // put the buffer back
      if (r && !w.error()) w.error() = libfabricError("fi_recv", static_cast<int>(r));
    }
  };
  auto repost = [&](fi_context2* ctx) {
    return w.post(
        "fi_recv", [&] { return ep_.postRecv(*rx_, spec_.size, ctx); }, on);
  };
  bool tx_posted = false;  // a send with a completion of its own is in flight
  auto fail = [&] {
    m.error = w.error();
    // What is still posted: the receives not completed (those in `received` are), and a send
    // whose completion has not come.
    std::vector<void*> posted;
    if (tx_posted && !tx_done) posted.push_back(&tx_ctx_);
    for (auto& c : rx_ctx_)
      if (std::find(received.begin(), received.end(), &c) == received.end()) posted.push_back(&c);
    m.quiesced = quiesce(ep_, posted, std::chrono::milliseconds(100), m.in_flight);
    return m;
  };
  const uint32_t per_step = bw ? spec_.window : 1;
  for (uint32_t step = 0; step < spec_.count; ++step) {
    while (received.size() < per_step) {
      if (!w.poll(on) || w.error()) return fail();
    }
    if (step == 0) w.setDeadline(deadline);  // the prober drives it
    uint64_t id = 0, seq = step;
    if (!bw) readHeader(rx_->payload(), spec_.size, &id, &seq);  // echo the ping's number
    bool ok = true;
    if (step + 1 < spec_.count) {
      std::vector<fi_context2*> again(received.begin(), received.begin() + per_step);
      received.erase(received.begin(), received.begin() + per_step);
      for (auto* ctx : again) ok = ok && repost(ctx);
    } else {
      received.clear();
    }
    writeHeader(tx_->payload(), spec_.id, seq);
    tx_done = inject;
    tx_posted = !inject;
    if (ok)
      ok = inject ? w.post(
                        "fi_inject", [&] { return ep_.inject(*tx_, reply_len, client_); }, on)
                  : w.post(
                        "fi_send", [&] { return ep_.postSend(*tx_, reply_len, client_, &tx_ctx_); },
                        on);
    while (ok && !tx_done) ok = w.poll(on);
    if (!ok) return fail();
    ++m.completed;
    if (bw) m.bytes += uint64_t{spec_.size} * spec_.window;
  }
  return m;
}

}  // namespace fabricwatch::probes::fabric
