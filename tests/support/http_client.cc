#include "tests/support/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace fabricwatch::testing {

std::optional<std::string> httpRaw(const std::string& host, int port, const std::string& request,
                                   std::chrono::milliseconds timeout) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return std::nullopt;
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string resp;
  char buf[8192];
  while (true) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    resp.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return resp;
}

std::optional<HttpResult> httpGet(const std::string& host, int port, const std::string& path,
                                  std::chrono::milliseconds timeout) {
  auto raw = httpRaw(host, port,
                     "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n",
                     timeout);
  if (!raw || raw->rfind("HTTP/1.", 0) != 0) return std::nullopt;
  HttpResult r;
  r.status = std::stoi(raw->substr(9, 3));
  auto split = raw->find("\r\n\r\n");
  r.headers = raw->substr(0, split);
  r.body = split == std::string::npos ? "" : raw->substr(split + 4);
  return r;
}

}  // namespace fabricwatch::testing
