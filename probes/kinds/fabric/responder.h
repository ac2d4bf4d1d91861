#pragma once
// The probed side of the fabric probe: this node's responder endpoint, opened once (on the
// responder's own thread) and kept, and one session at a time on it. The peer channel's
// handlers call hello() (what a prober needs to reach the endpoint) and begin() (take part in a
// session: decline when busy); the session itself runs on the responder's thread, bounded by
// its timeout. After a failed session that left something in flight the endpoint is replaced
// (the old one retired, below), so nothing of the session reaches the next; its epoch then
// changes, and probers fetch its new name.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>

#include "probes/kinds/fabric/endpoint.h"
#include "probes/kinds/fabric/pingpong.h"
#include "probes/kinds/fabric/retired_endpoints.h"

namespace fabricwatch::probes::fabric {

struct ResponderStats {
  uint64_t sessions = 0, failed = 0, declined_busy = 0, reopened = 0, stray = 0;
  uint64_t undriven = 0;         // sessions whose prober never sent a first message
  uint64_t declined_member = 0;  // requests of a member held back after an undriven session
  std::optional<FabricError> last_error;
};

// What one member (a source address of the peer channel) may take of the responder, which
// serves one session at a time: a session must see its prober's first message within
// setup_timeout, and a member whose session was never driven is declined for backoff, so a
// member that asks for sessions and never drives them (naming another node's endpoint) cannot
// hold the responder from the others (issue 23, item 5).
struct ResponderLimits {
  std::chrono::milliseconds setup_timeout{1000};
  std::chrono::milliseconds backoff{30000};
};

class Responder {
 public:
  // max_session: a session's limit, whatever the prober asks.
  Responder(EndpointOptions opts, std::chrono::milliseconds max_session,
            ResponderLimits limits = {});
  ~Responder();
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;

  // Starts the thread, which opens the endpoint; wait() blocks until the first attempt ended.
  void start();
  void stop();
  bool waitOpen(std::chrono::milliseconds timeout);

  struct Hello {
    std::optional<std::string> unavailable;  // why there is no endpoint (yet)
    ProviderFacts facts;
    std::string name;  // the endpoint's address
    uint64_t epoch = 0;
  };
  Hello hello();

  // Accepts a session from a prober whose endpoint is `client_name`: its first receives are
  // posted when this returns the epoch; otherwise the reason it was declined.
  // `member`: who asks (the channel's sender address); "" is subject to no backoff.
  std::variant<uint64_t, std::string> begin(const SessionSpec& spec, const std::string& client_name,
                                            const std::string& member = "");

  ResponderStats stats() const;

 private:
  void loop();
  // Closes the endpoint (and with it whatever a session left in flight) and opens a new one,
  // without holding mu_ while libfabric works: the channel's handlers never wait on it.
  void reopen();
  std::optional<fi_addr_t> addressLocked(const std::string& name, std::optional<FabricError>& err);
  // Opens a new endpoint unless the retired ones (retired_) are full; then says why there is
  // none. Without mu_.
  void reopenUnlessRetiredFull();

  EndpointOptions opts_;
  std::chrono::milliseconds max_session_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool attempted_ = false;    // the first open has ended (ok or not)
  bool busy_ = false;         // a session is prepared or running, or the endpoint is reopening
  bool want_reopen_ = false;  // a session failed to prepare: its receives are still posted
  std::atomic<bool> stop_flag_{false};
  std::unique_ptr<Endpoint> ep_;
  ProviderFacts facts_;
  std::optional<FabricError> open_error_;
  uint64_t epoch_ = 0;
  // Clients' addresses in the endpoint's AV, least recently used first (bounded).
  std::list<std::string> lru_;
  std::map<std::string, std::pair<fi_addr_t, std::list<std::string>::iterator>> addrs_;
  std::unique_ptr<ResponderSession> session_;  // the one accepted, not yet run
  // A failed session's endpoint with something still in flight, never closed while anything
  // is, with the session; the loop reads their completions every kRetiredPoll. The loop
  // thread's (and stop()'s after the join) only.
  RetiredEndpoints retired_;
  SessionSpec spec_;
  std::string member_;  // who asked for session_
  ResponderLimits limits_;
  // Members held back after an undriven session, until when (expired entries dropped).
  std::map<std::string, Clock::time_point> backoff_until_;
  ResponderStats stats_;
  std::thread thread_;
};

}  // namespace fabricwatch::probes::fabric
