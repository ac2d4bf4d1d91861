#pragma once
// The client side of the peer channel, for every probe kind: one connection to a peer's
// listener and request/reply exchanges on it. A reply counts only when it is authentic, of the
// expected type and names the request it answers (the server puts the request's nonce first).
// Failures are classified so that metrics can tell a refused port from a timeout from a peer
// with another secret.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "probes/mesh/frame.h"

namespace fabricwatch::probes {

enum class ChannelFailure {
  kNone,
  kTimeout,  // connect or reply did not come in time
  kRefused,  // nothing listens (RST)
  kClosed,   // the peer closed the connection (e.g. it rejected our HMAC)
  kAuth,     // the reply failed verification (another secret, tampering, not ours)
  kError,    // anything else (unreachable network, bad address ...)
};
const char* channelFailureName(ChannelFailure f);

struct CallResult {
  ChannelFailure failure = ChannelFailure::kNone;
  std::string error;                    // what failed
  std::optional<std::string> declined;  // the peer understood the request and declined it: why
  std::string payload;                  // the reply (after the request's nonce)
  double seconds = 0;                   // from sending the request to the verified reply

  bool ok() const { return failure == ChannelFailure::kNone && !declined; }
};

class ChannelClient {
 public:
  explicit ChannelClient(std::string secret) : secret_(std::move(secret)) {}
  ~ChannelClient() { close(); }
  ChannelClient(const ChannelClient&) = delete;
  ChannelClient& operator=(const ChannelClient&) = delete;

  // Connects to a numeric "IP:PORT" or "[v6]:PORT" (the caller resolves names).
  CallResult connect(const std::string& address, std::chrono::milliseconds timeout);
  // One exchange: sends `payload` as a `request` frame and waits for the `reply` frame that
  // answers it. After a failure the connection is closed (a late reply must not answer the
  // next request).
  CallResult call(FrameType request, std::string_view payload, FrameType reply,
                  std::chrono::milliseconds timeout);
  bool connected() const { return fd_ >= 0; }
  void close();

 private:
  std::string secret_;
  int fd_ = -1;
  std::string in_;  // bytes received and not yet decoded
};

}  // namespace fabricwatch::probes
