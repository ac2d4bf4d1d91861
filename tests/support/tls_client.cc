#include "tests/support/tls_client.h"

#include <sys/socket.h>

#include <cstdlib>
#include <type_traits>

#include "core/openssl.h"

namespace fabricwatch::testing {
namespace {

// The client's side of OpenSSL, which fabricwatch (a server) never calls, so it has no
// trampolines for them (core/openssl_functions.h): resolved from the loaded library. SSL_new and
// the rest of what both sides call go through fabricwatch's own.
struct ClientCalls {
  decltype(&::TLS_client_method) client_method = nullptr;
  decltype(&::SSL_connect) connect = nullptr;
  decltype(&::SSL_read) read = nullptr;
  decltype(&::SSL_write) write = nullptr;
};

const ClientCalls& clientCalls() {
  static const ClientCalls calls = [] {
    ClientCalls c;
    if (!core::openssl::require("the tests' TLS client")) return c;
    auto get = [](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(core::openssl::symbol(name));
    };
    get(c.client_method, "TLS_client_method");
    get(c.connect, "SSL_connect");
    get(c.read, "SSL_read");
    get(c.write, "SSL_write");
    return c;
  }();
  return calls;
}

}  // namespace

int statusOf(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

TlsClient::TlsClient(TcpClient tcp) : tcp_(std::move(tcp)) {
  const auto& calls = clientCalls();
  if (!calls.client_method || !calls.connect || !calls.read || !calls.write) return;
  timeval tv{10, 0};
  setsockopt(tcp_.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(tcp_.fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  ctx_ = SSL_CTX_new(calls.client_method());
  if (!ctx_) return;
  ssl_ = SSL_new(ctx_);
  SSL_set_fd(ssl_, tcp_.fd());
  ok_ = calls.connect(ssl_) == 1;
}

TlsClient::~TlsClient() {
  if (ssl_) SSL_free(ssl_);
  if (ctx_) SSL_CTX_free(ctx_);
}

bool TlsClient::send(const std::string& bytes) {
  if (!ok_) return false;
  size_t sent = 0;
  while (sent < bytes.size()) {
    int n = clientCalls().write(ssl_, bytes.data() + sent, static_cast<int>(bytes.size() - sent));
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

int TlsClient::get(const std::string& path, const std::string& headers) {
  if (!send("GET " + path + " HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n")) return 0;
  std::string in;
  char buf[4096];
  while (true) {
    auto end = in.find("\r\n\r\n");
    long len = contentLength(in);
    if (end != std::string::npos && len >= 0 && in.size() >= end + 4 + static_cast<size_t>(len))
      break;
    int n = clientCalls().read(ssl_, buf, sizeof buf);
    if (n <= 0) return 0;
    in.append(buf, static_cast<size_t>(n));
  }
  return statusOf(in);
}

}  // namespace fabricwatch::testing
