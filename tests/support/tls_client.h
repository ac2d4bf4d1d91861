#pragma once
// A blocking TLS client for the HTTP server's tests, over a TcpClient (so from a chosen loopback
// source address, with whatever socket options the test set): no certificate check, since the
// server's identity is not what these tests are about.

#include <openssl/ssl.h>

#include <string>

#include "tests/support/tcp_client.h"

namespace fabricwatch::testing {

class TlsClient {
 public:
  // Does the handshake on `tcp`; ok() says whether it completed (within 10 s).
  explicit TlsClient(TcpClient tcp);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  bool ok() const { return ok_; }
  // Writes every byte (pipelined requests, say), not waiting for an answer.
  bool send(const std::string& bytes);
  // One GET on this connection: the response's status, 0 when none came.
  int get(const std::string& path, const std::string& headers = "");

 private:
  TcpClient tcp_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  bool ok_ = false;
};

// The status of an HTTP response ("HTTP/1.1 200 OK..." -> 200), 0 when there is none.
int statusOf(const std::string& response);

}  // namespace fabricwatch::testing
