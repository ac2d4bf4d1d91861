#pragma once
// HOST:PORT as fabricwatch's configuration, peers file and peer channel spell an endpoint, and
// what a peer's endpoint may be. Shared by the configuration (probe.peers), the peers file and
// the mesh, so that every way a peer is named is judged by one rule.

#include <optional>
#include <string>

namespace fabricwatch::core {

struct HostPort {
  std::string host;  // without IPv6 brackets; empty for ":PORT"
  int port = 0;
};

// "host:port", "[v6]:port" or ":port"; the port 0-65535.
std::optional<HostPort> splitHostPort(const std::string& s);
std::string joinHostPort(const std::string& host, int port);
// A numeric IPv4 or IPv6 address. Never one with a NUL in it: inet_pton reads a C string, and
// would judge "10.0.0.1" of "10.0.0.1\0x".
bool isIpLiteral(const std::string& host);

// An endpoint a peer can have: an IPv4 address, an IPv6 address in brackets or a DNS name
// (ASCII letters, digits, '-', '.', '_'; at most 253 bytes; not starting with '.' or '-'), and a
// port 1-65535. What splitHostPort alone lets through is no address to connect to: "[]:80" (an
// empty host, which a socket address reads as the wildcard), ":80", "[node-1]:80", "a b:80",
// port 0.
bool isPeerEndpoint(const std::string& s);

}  // namespace fabricwatch::core
