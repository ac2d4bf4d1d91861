#pragma once
// Socket plumbing shared by the peer channel's server and clients: numeric IPv4/IPv6 socket
// addresses, non-blocking connect with a deadline (HOST:PORT itself: core/host_port.h).

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <string>

#include "core/host_port.h"
#include "core/result.h"

namespace fabricwatch::probes {

using core::HostPort;
using core::isIpLiteral;
using core::joinHostPort;
using core::splitHostPort;

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
