#pragma once
// Name resolution with a deadline: getaddrinfo() cannot be cancelled, so it runs on a detached
// worker and the caller stops waiting at the deadline. The number of lookups still running is
// bounded, so a dead resolver cannot pile up threads: beyond the bound, lookups fail at once.
// Used by the DNS probe (each peer's host name) and by DNS discovery (the headless Service).

#include <chrono>
#include <string>
#include <vector>

namespace fabricwatch::probes {

struct DnsResult {
  bool ok = false;
  bool timed_out = false;
  double seconds = 0;
  std::vector<std::string> addresses;  // numeric, A and AAAA, sorted and unique
  std::string error;
};

DnsResult resolveHost(const std::string& name, std::chrono::milliseconds timeout);

inline constexpr int kMaxOutstandingLookups = 32;

}  // namespace fabricwatch::probes
