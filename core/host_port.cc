#include "core/host_port.h"

#include <arpa/inet.h>

#include <algorithm>

namespace fabricwatch::core {

std::optional<HostPort> splitHostPort(const std::string& s) {
  HostPort hp;
  std::string port;
  if (!s.empty() && s[0] == '[') {
    auto close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return std::nullopt;
    hp.host = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    auto colon = s.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    hp.host = s.substr(0, colon);
    if (hp.host.find(':') != std::string::npos) return std::nullopt;  // bare v6 needs []
    port = s.substr(colon + 1);
  }
  // At most 5 digits before converting: std::stoi throws past its range.
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  hp.port = std::stoi(port);
  if (hp.port > 65535) return std::nullopt;
  return hp;
}

std::string joinHostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

bool isIpLiteral(const std::string& host) {
  if (host.find('\0') != std::string::npos) return false;
  in6_addr a6;
  in_addr a4;
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 || inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

namespace {

// ASCII by hand, not std::isalnum, which follows the locale.
bool hostByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

}  // namespace

bool isPeerEndpoint(const std::string& s) {
  auto hp = splitHostPort(s);
  if (!hp || hp->port < 1) return false;
  const std::string& host = hp->host;
  if (s.front() == '[') {
    in6_addr a6;
    return std::all_of(host.begin(), host.end(), [](char c) { return hostByte(c) || c == ':'; }) &&
           inet_pton(AF_INET6, host.c_str(), &a6) == 1;
  }
  if (host.empty() || host.size() > 253 || !std::all_of(host.begin(), host.end(), hostByte))
    return false;
  in_addr a4;
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 || (host.front() != '.' && host.front() != '-');
}

}  // namespace fabricwatch::core
