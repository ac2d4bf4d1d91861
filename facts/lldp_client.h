#pragma once
// What the host's lldpd knows of the switches this node's interfaces are cabled to, asked
// through liblldpctl (lldpd's own client library, the one lldpcli uses; opened with dlopen():
// Debian's lldpd package ships liblldpctl.so.4) over lldpd's control socket. No command runs.
// The exchange is bounded: one deadline for all of it (every read and write of the socket
// waits at most until then), a cap on the bytes read from lldpd, on interfaces, neighbours per
// interface and each string's length. No lldpd (no socket, or nobody listening on it) is an
// answer, not an error: the node has no LLDP neighbours to report.

#include <chrono>
#include <string>
#include <vector>

namespace fabricwatch::facts {

struct LldpNeighbor {
  std::string chassis_name;        // the switch's system name (sysName)
  std::string chassis_id;          // as lldpd formats it (a MAC address, a name ...)
  std::string chassis_id_subtype;  // "mac", "local", "ifname" ...
  std::string port_id;             // the switch's port (e.g. "Ethernet12", "swp3")
  std::string port_id_subtype;
  std::string port_descr;
};

struct LldpInterface {
  std::string name;  // the local interface, as lldpd (in the host's namespace) names it
  std::vector<LldpNeighbor> neighbors;
};

struct LldpAnswer {
  enum class Status {
    kNoDaemon,   // no socket, or nobody listening on it: no neighbours, not an error
    kNoLibrary,  // lldpd listens but liblldpctl.so.4 cannot be loaded here
    kOk,
    kFailed,  // timed out, or lldpd's answer was refused
  };
  Status status = Status::kNoDaemon;
  std::string error;  // kNoLibrary, kFailed: why
  std::vector<LldpInterface> interfaces;
  bool truncated = false;  // more interfaces or neighbours than are kept
};

struct LldpLimits {
  std::chrono::milliseconds timeout{2000};
  size_t max_bytes = 4 << 20;  // read from lldpd in one exchange
  size_t max_interfaces = 64;
  size_t max_neighbors = 4;  // per interface
  size_t max_string_bytes = 128;
};

// Asks the lldpd listening on `socket_path` (a path on this machine: the host root included).
LldpAnswer queryLldpd(const std::string& socket_path, const LldpLimits& limits = {});

const char* lldpStatusName(LldpAnswer::Status s);

}  // namespace fabricwatch::facts
