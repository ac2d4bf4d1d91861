#pragma once
// The TCP probe's client side: connect (timed), then `samples` authenticated echo round trips
// on that connection (each timed from send to the verified reply), over channel_client.h.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "probes/mesh/channel_client.h"

namespace fabricwatch::probes {

struct EchoOptions {
  std::string secret;
  std::string node_name;  // sent in requests
  int samples = 5;
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds echo_timeout{1000};
};

// Echo failures are the channel's (the names are metric label values).
using EchoFailure = ChannelFailure;
inline const char* echoFailureName(EchoFailure f) { return channelFailureName(f); }

struct EchoResult {
  bool connected = false;
  double connect_seconds = 0;
  std::vector<double> rtt_seconds;  // one per answered sample
  int sent = 0;
  EchoFailure failure = EchoFailure::kNone;  // why the samples stopped early, if they did
  std::string error;
  std::string peer_node;  // the name the peer answered with
  std::string peer_group;
  uint64_t peer_instance = 0;  // its daemon's instance ID (0: not sent)
};

// address: numeric "IP:PORT" or "[v6]:PORT" (resolved by the caller).
EchoResult runEcho(const std::string& address, const EchoOptions& opts);

}  // namespace fabricwatch::probes
