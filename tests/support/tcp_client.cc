#include "tests/support/tcp_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

namespace fabricwatch::testing {

TcpClient::~TcpClient() {
  if (fd_ >= 0) close(fd_);
}

TcpClient& TcpClient::operator=(TcpClient&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    pending_ = std::move(o.pending_);
    o.fd_ = -1;
  }
  return *this;
}

std::optional<TcpClient> TcpClient::connect(int port, const std::string& source) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, source.c_str(), &src.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) {
    close(fd);
    return std::nullopt;
  }
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    close(fd);
    return std::nullopt;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return TcpClient(fd);
}

bool TcpClient::send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string TcpClient::readUntil(const std::function<bool(const std::string&)>& done,
                                 std::chrono::milliseconds timeout) {
  std::string out = std::move(pending_);
  pending_.clear();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  while (!done(out)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

namespace {

// The lowest port the kernel hands out on its own (bind to port 0, a connect's source port).
int ephemeralLow() {
  std::ifstream f("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  return (f >> low) && low > 2048 ? low : 32768;
}

bool bindable(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

}  // namespace

// A port the kernel gave to bind(0) can be handed out again the moment it is closed, to another
// test's bind(0) or to any connect()'s source port, before the daemon it was meant for listens
// (seen in CI: "peer listener: cannot listen ... Address already in use"). Ports below the
// ephemeral range are never handed out by the kernel, so only another freePort() could collide:
// a random start per process and a step per call make that unlikely.
int freePort() {
  static std::atomic<unsigned> calls{0};
  const int low = 10000, high = ephemeralLow() - 1, span = high - low + 1;
  std::random_device seed;
  static const unsigned start = seed() ^ static_cast<unsigned>(getpid()) * 2654435761u;
  for (int tries = 0; tries < 200; ++tries) {
    int port = low + static_cast<int>((start + calls++ * 7919u) % static_cast<unsigned>(span));
    if (bindable(port)) return port;
  }
  return 0;
}

long contentLength(const std::string& r) {
  auto head_end = r.find("\r\n\r\n");
  std::string head = r.substr(0, head_end);
  for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto at = head.find("\r\ncontent-length:");
  if (at == std::string::npos) return -1;
  return std::strtol(head.c_str() + at + 17, nullptr, 10);
}

std::string TcpClient::readResponse(std::chrono::milliseconds timeout, bool head) {
  std::string all = readUntil(
      [head](const std::string& s) {
        auto end = s.find("\r\n\r\n");
        if (end == std::string::npos) return false;
        long len = contentLength(s);
        return len < 0 || head || s.size() >= end + 4 + static_cast<size_t>(len);
      },
      timeout);
  auto end = all.find("\r\n\r\n");
  if (end == std::string::npos) return all;
  long len = head ? 0 : contentLength(all);
  size_t total = end + 4 + static_cast<size_t>(len < 0 ? 0 : len);
  if (all.size() > total) {
    pending_ = all.substr(total);
    all.resize(total);
  }
  return all;
}

bool TcpClient::waitClosed(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
  }
}

}  // namespace fabricwatch::testing
