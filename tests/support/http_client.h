#pragma once
// A minimal blocking HTTP/1.1 GET client for end-to-end tests (no keep-alive).

#include <chrono>
#include <optional>
#include <string>

namespace fabricwatch::testing {

struct HttpResult {
  int status = 0;
  std::string headers;
  std::string body;
};

// host is an IPv4 literal; nullopt when the connection fails.
std::optional<HttpResult> httpGet(const std::string& host, int port, const std::string& path,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(5));
// Sends raw bytes and returns whatever comes back until the server closes (for abuse tests).
std::optional<std::string> httpRaw(const std::string& host, int port, const std::string& request,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace fabricwatch::testing
