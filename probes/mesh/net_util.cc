#include "probes/mesh/net_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fabricwatch::probes {

bool toSockaddr(const std::string& host, int port, sockaddr_storage& out, socklen_t& len) {
  std::memset(&out, 0, sizeof out);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (host.empty()) {
    v4->sin_family = AF_INET;
    v4->sin_addr.s_addr = htonl(INADDR_ANY);
    v4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

std::string sockaddrHost(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, buf, sizeof buf);
  else if (ss.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof buf);
  return buf;
}

int msUntil(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

core::Result<int> connectWithTimeout(const sockaddr_storage& addr, socklen_t len,
                                     std::chrono::milliseconds timeout) {
  int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return core::Error{std::string("error: socket: ") + std::strerror(errno)};
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto fail = [&](std::string msg) {
    ::close(fd);
    return core::Error{std::move(msg)};
  };
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) == 0) return fd;
  if (errno != EINPROGRESS) {
    int e = errno;
    return fail((e == ECONNREFUSED ? "refused: " : "error: ") + std::string(std::strerror(e)));
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd p{fd, POLLOUT, 0};
  while (true) {
    int n = ::poll(&p, 1, msUntil(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return fail("timeout: connect");
    if (n < 0) return fail(std::string("error: poll: ") + std::strerror(errno));
    break;
  }
  int err = 0;
  socklen_t elen = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
  if (err == ECONNREFUSED) return fail("refused: " + std::string(std::strerror(err)));
  if (err == ETIMEDOUT) return fail("timeout: " + std::string(std::strerror(err)));
  if (err != 0) return fail("error: " + std::string(std::strerror(err)));
  return fd;
}

}  // namespace fabricwatch::probes
