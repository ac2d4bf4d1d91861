#pragma once
// A raw TCP client for HTTP abuse and keep-alive tests: connect (from a chosen loopback source
// address), send bytes, read with a deadline, tell whether the server closed the connection.

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace fabricwatch::testing {

class TcpClient {
 public:
  TcpClient() = default;
  ~TcpClient();
  TcpClient(TcpClient&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  TcpClient& operator=(TcpClient&& o) noexcept;

  // Connects to 127.0.0.1:port from `source` (any 127.0.0.0/8 address works on Linux).
  static std::optional<TcpClient> connect(int port, const std::string& source = "127.0.0.1");

  bool send(const std::string& bytes);
  // Reads until `done(received)` holds, the server closes, or the deadline passes.
  std::string readUntil(const std::function<bool(const std::string&)>& done,
                        std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Reads one HTTP response with a Content-Length body (none for a HEAD request), no more.
  std::string readResponse(std::chrono::milliseconds timeout = std::chrono::seconds(10),
                           bool head = false);
  // Waits until the server closes the connection (EOF or reset); false at the deadline.
  bool waitClosed(std::chrono::milliseconds timeout);
  int fd() const { return fd_; }

 private:
  explicit TcpClient(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::string pending_;  // bytes read past the last response
};

// A loopback port that was free a moment ago (for a server whose port must be known in advance).
int freePort();

// Content-Length of a response head, or -1.
long contentLength(const std::string& response);

}  // namespace fabricwatch::testing
