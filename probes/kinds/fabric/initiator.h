#pragma once
// The probing side of the fabric probe: this node's prober endpoint with its latency buffers,
// opened once and kept, and the responders' addresses in its AV (by endpoint name, bounded).
// A failed session whose operations all completed or were canceled keeps the endpoint; one
// that left something in flight (a send cannot be canceled) takes a new one and retires the
// old (RetiredEndpoints says why and for how long; the crash it avoids: a prober's 32 MiB
// ping that timed out, observe e2e under ASan).
// An endpoint that cannot be opened (no provider, no device) is tried again at most every
// `retry`. Used by one thread at a time (the fabric kind's).

#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "probes/kinds/fabric/endpoint.h"
#include "probes/kinds/fabric/pingpong.h"
#include "probes/kinds/fabric/retired_endpoints.h"

namespace fabricwatch::probes::fabric {

class Initiator {
 public:
  Initiator(EndpointOptions opts, size_t latency_size,
            std::chrono::milliseconds retry = std::chrono::seconds(30));
  ~Initiator();
  Initiator(const Initiator&) = delete;
  Initiator& operator=(const Initiator&) = delete;

  // Opens the endpoint if it is not open; nullopt when it is, else why not.
  std::optional<FabricError> ensureOpen();
  // The provider as last opened (or tried), and why the last attempt failed, if it did.
  const ProviderFacts& facts() const { return facts_; }
  const std::optional<FabricError>& openError() const { return open_error_; }
  uint64_t reopened() const { return reopened_; }
  size_t retired() const { return retired_.size(); }
  const std::string& name() const;

  // A responder's endpoint in the AV, inserted once per name.
  std::optional<fi_addr_t> address(const std::string& responder, std::optional<FabricError>& error);
  void forget(const std::string& responder);

  // One measurement with a responder that accepted `spec`.
  Measurement latency(fi_addr_t peer, const SessionSpec& spec, uint32_t warmup,
                      Clock::time_point deadline, const std::atomic<bool>* stopping);
  Measurement bandwidth(fi_addr_t peer, const SessionSpec& spec, uint32_t warmup,
                        Clock::time_point deadline, const std::atomic<bool>* stopping);

 private:
  void close();
  // After a failed session: retires the endpoint if the session left something in flight, with
  // what it uses (`session_tx`: a bandwidth session's own send buffer).
  void failed(Measurement& m, std::optional<Buffer> session_tx);

  EndpointOptions opts_;
  size_t latency_size_;
  std::chrono::milliseconds retry_;
  std::unique_ptr<Endpoint> ep_;
  std::optional<Buffer> tx_, rx_;  // latency buffers (rx also takes bandwidth acks)
  ProviderFacts facts_;
  std::optional<FabricError> open_error_;
  std::optional<Clock::time_point> last_attempt_;
  bool was_open_ = false;
  uint64_t reopened_ = 0;
  std::list<std::string> lru_;
  std::map<std::string, std::pair<fi_addr_t, std::list<std::string>::iterator>> addrs_;
  RetiredEndpoints retired_;
};

}  // namespace fabricwatch::probes::fabric
