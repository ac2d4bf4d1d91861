#pragma once
// The TCP probe's client side: connect (timed), then `samples` authenticated echo round trips
// on that connection (each timed from send to the verified reply). Failures are classified so
// that metrics can tell a refused port from a timeout from a peer with another secret.

#include <chrono>
#include <string>
#include <vector>

namespace fabricwatch::probes::peer {

struct EchoOptions {
  std::string secret;
  std::string node_name;  // sent in requests
  int samples = 5;
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds echo_timeout{1000};
};

enum class EchoFailure {
  kNone,
  kTimeout,  // connect or reply did not come in time
  kRefused,  // nothing listens (RST)
  kClosed,   // the peer closed the connection (e.g. it rejected our HMAC)
  kAuth,     // the reply failed verification (another secret, tampering, not ours)
  kError,    // anything else (unreachable network, bad address ...)
};
const char* echoFailureName(EchoFailure f);

struct EchoResult {
  bool connected = false;
  double connect_seconds = 0;
  std::vector<double> rtt_seconds;  // one per answered sample
  int sent = 0;
  EchoFailure failure = EchoFailure::kNone;  // why the samples stopped early, if they did
  std::string error;
  std::string peer_node;  // the name the peer answered with
  std::string peer_group;
};

// address: numeric "IP:PORT" or "[v6]:PORT" (resolved by the caller).
EchoResult runEcho(const std::string& address, const EchoOptions& opts);

}  // namespace fabricwatch::probes::peer
