#pragma once
// The serving side of the peer-channel bench harnesses (peer_echo_rtt, fabric_pingpong): N
// channel listeners on consecutive ports, each with the request handlers its caller gives
// (none: echoes only), held until SIGTERM or SIGINT; and OpenSSL, which both sides need.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "probes/mesh/channel_server.h"

namespace fabricwatch::bench {

// Starts `count` listeners from ADDRESS (host:port, then port + 1 ...); `handlers(i)` gives the
// i-th listener's. Prints the error and returns an empty vector when one does not start.
std::vector<std::unique_ptr<probes::ChannelServer>> startListeners(
    const std::string& address, const std::string& secret, int count,
    const std::function<std::vector<probes::RequestHandler>(int)>& handlers = {});

// Loads OpenSSL for the channel's HMAC (fabricwatch loads it on demand: core/openssl.h), as
// the daemon's mesh does before it starts; prints the error and returns false without it.
bool loadOpenSsl();

// Blocks until SIGTERM or SIGINT.
void waitForTermination();

}  // namespace fabricwatch::bench
