#pragma once
// Socket plumbing shared by the peer channel's server and clients: HOST:PORT parsing, numeric
// IPv4/IPv6 addresses, non-blocking connect with a deadline.

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <string>

#include "core/result.h"

namespace fabricwatch::probes {

struct HostPort {
  std::string host;  // without IPv6 brackets; empty for ":PORT"
  int port = 0;
};

// "host:port", "[v6]:port" or ":port".
std::optional<HostPort> splitHostPort(const std::string& s);
std::string joinHostPort(const std::string& host, int port);
bool isIpLiteral(const std::string& host);

// A numeric address (no name resolution); empty host means the IPv4 wildcard.
bool toSockaddr(const std::string& host, int port, sockaddr_storage& out, socklen_t& len);
std::string sockaddrHost(const sockaddr_storage& ss);

// Connects with a deadline. On success returns a blocking-mode-free (O_NONBLOCK) socket with
// TCP_NODELAY set. Error messages start with "timeout", "refused" or "error".
core::Result<int> connectWithTimeout(const sockaddr_storage& addr, socklen_t len,
                                     std::chrono::milliseconds timeout);

// Milliseconds left until `deadline` (0 when past), for poll().
int msUntil(std::chrono::steady_clock::time_point deadline);

}  // namespace fabricwatch::probes
