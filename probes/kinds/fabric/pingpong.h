#pragma once
// The measurements on an Endpoint, both sides, measured as libfabric's fi_pingpong and
// fabtests' rdm_bw measure them:
//   latency:   `count` ping-pongs of `size` bytes, the first `warmup` untimed; each round trip
//              timed on the client from before its send to its receive completion. One-way
//              latency is RTT/2. Messages below the provider's inject_size go out with
//              fi_inject (no send completion), as fi_pingpong does; completions are polled.
//   bandwidth: `count` windows of `window` messages of `size` bytes; the responder acknowledges
//              each window once it has received all of it, and the client's clock runs from
//              the first timed window's first send to the last acknowledgement.
// Every message starts with a 16-byte header: the session ID (drawn by the client, sent to the
// responder over the authenticated channel) and a sequence number. A responder answers only
// messages of its session, so nothing that merely knows its endpoint name can drive it.
// Each side gives up at its deadline; the caller reopens an endpoint a session failed on (what
// was in flight dies with it).

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "probes/kinds/fabric/endpoint.h"

namespace fabricwatch::probes::fabric {

inline constexpr size_t kHeaderBytes = 16;
inline constexpr size_t kMaxMessage = size_t{64} << 20;  // 64 MiB: any session's message bound

enum class SessionKind : uint8_t { kLatency = 1, kBandwidth = 2 };
const char* sessionKindName(SessionKind k);

// What a client asks a responder to take part in.
struct SessionSpec {
  uint64_t id = 0;
  SessionKind kind = SessionKind::kLatency;
  uint32_t size = 64;       // bytes per message, header included (>= kHeaderBytes)
  uint32_t count = 0;       // latency: ping-pongs; bandwidth: windows (warm-up included)
  uint32_t window = 1;      // bandwidth: messages in flight per window
  uint32_t timeout_ms = 0;  // the responder's limit for the whole session
};

// The bounds a responder accepts; nullopt when the spec is within them, else why not.
std::optional<std::string> checkSpec(const SessionSpec& s, size_t max_msg_size);

// A fresh session ID (std::random_device).
uint64_t randomSessionId();

void writeHeader(char* payload, uint64_t id, uint64_t seq);
bool readHeader(const char* payload, size_t len, uint64_t* id, uint64_t* seq);

struct Measurement {
  std::vector<double> rtt_seconds;  // latency: one per timed ping-pong
  double elapsed_seconds = 0;       // the timed part, first send to last completion
  uint64_t bytes = 0;               // bandwidth: payload bytes in the timed windows
  uint32_t completed = 0;           // ping-pongs or windows done (warm-up included)
  uint32_t stray = 0;               // messages of another session, ignored
  std::optional<FabricError> error;
  // After an error: whether every operation the session had posted completed or was canceled
  // (nothing of it is in flight, and the endpoint can serve the next session as it is), and
  // if not, the contexts of those still in flight.
  bool quiesced = false;
  std::vector<void*> in_flight;
  std::shared_ptr<void> contexts;  // the session's contexts, which in_flight points into
};

// Reads the endpoint's completions (a bounded number) and drops the contexts that completed,
// with or without error, from `in_flight`; returns how many it read.
size_t drainCompletions(Endpoint& ep, std::vector<void*>& in_flight);

// Client side: the responder at `peer` takes part in `spec` (accepted over the channel).
// `tx` and `rx` hold at least spec.size bytes of payload (bandwidth: `rx` only the 16-byte
// acknowledgement).
Measurement runLatency(Endpoint& ep, const Buffer& tx, const Buffer& rx, fi_addr_t peer,
                       const SessionSpec& spec, uint32_t warmup, Clock::time_point deadline,
                       const std::atomic<bool>* stopping = nullptr);
Measurement runBandwidth(Endpoint& ep, const Buffer& tx, const Buffer& rx, fi_addr_t peer,
                         const SessionSpec& spec, uint32_t warmup, Clock::time_point deadline,
                         const std::atomic<bool>* stopping = nullptr);

// Responder side, in two steps: prepare() posts the first receives (before the channel
// answers the client, so its first message finds them) and respond() serves the session.
class ResponderSession {
 public:
  ResponderSession(Endpoint& ep, const SessionSpec& spec, fi_addr_t client);
  ~ResponderSession();
  ResponderSession(const ResponderSession&) = delete;
  ResponderSession& operator=(const ResponderSession&) = delete;

  std::optional<FabricError> prepare();
  // Serves the session until it is complete, the deadline passes or `stopping` is set. The
  // prober's first message must arrive by `first_by` (a session nobody drives ends there, with
  // completed == 0).
  Measurement respond(Clock::time_point deadline, const std::atomic<bool>* stopping = nullptr,
                      Clock::time_point first_by = Clock::time_point::max());

 private:
  Endpoint& ep_;
  SessionSpec spec_;
  fi_addr_t client_;
  std::optional<Buffer> tx_, rx_;
  std::vector<fi_context2> rx_ctx_;
  fi_context2 tx_ctx_{};
};

}  // namespace fabricwatch::probes::fabric
