#pragma once
// Endpoints of failed sessions that left operations in flight, kept open until those have
// completed. libfabric 1.17's tcp;ofi_rxm crashed (SIGSEGV) closing such an endpoint, at once
// and even after 30 s idle, and removing the peer from its AV with a send in flight; the
// connection itself stays blocked behind such a send, so the session's side (Responder,
// Initiator) takes a new endpoint and retires the old one here, with what the operations use
// (the session's contexts and buffers). settle() reads their completions (Endpoint::orphan)
// and closes an endpoint close_after its last one. A send whose receiver canceled its receive may
// never complete: while max_waiting wait, the side opens no new endpoint (it says why), and the
// oldest that has not settled for give_up_after is then abandoned (left open, leaked with what
// it uses), at most max_abandoned in this object's life; after that the side waits. stop()
// closes what has settled for close_after and abandons the rest. Used by one thread at a time.

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "probes/kinds/fabric/endpoint.h"

namespace fabricwatch::probes::fabric {

class RetiredEndpoints {
 public:
  using Clock = std::chrono::steady_clock;
  struct Limits {
    size_t max_waiting = 4;
    size_t max_abandoned = 4;
    Clock::duration close_after = std::chrono::seconds(30);
    Clock::duration give_up_after = std::chrono::minutes(2);
  };
  RetiredEndpoints() = default;
  explicit RetiredEndpoints(Limits limits) : limits_(limits) {}
  ~RetiredEndpoints() { stop(); }
  RetiredEndpoints(const RetiredEndpoints&) = delete;
  RetiredEndpoints& operator=(const RetiredEndpoints&) = delete;

  // `in_flight`: the contexts of the operations still in flight on `ep`; `storage`: what they
  // use, kept until `ep` closes.
  void add(std::unique_ptr<Endpoint> ep, const std::vector<void*>& in_flight,
           std::shared_ptr<void> storage);
  void settle(Clock::time_point now = Clock::now());
  void stop(Clock::time_point now = Clock::now());

  size_t size() const { return waiting_.size(); }
  bool empty() const { return waiting_.empty(); }
  bool full() const { return waiting_.size() >= limits_.max_waiting; }
  size_t abandoned() const { return abandoned_; }
  // Why the side opens no new endpoint while full().
  FabricError fullError() const;

 private:
  struct Waiting {
    std::unique_ptr<Endpoint> ep;
    std::shared_ptr<void> storage;
    Clock::time_point since;                   // retired at
    std::optional<Clock::time_point> settled;  // when its last operation completed
  };
  void abandon(Waiting& w);

  Limits limits_;
  std::deque<Waiting> waiting_;
  size_t abandoned_ = 0;
};

}  // namespace fabricwatch::probes::fabric
