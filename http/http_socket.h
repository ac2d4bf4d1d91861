#pragma once
// Socket plumbing of the HTTP server: the listener for a Prometheus-style listen address, the
// client's address as a per-address key, and reads and writes that are the same call for a
// plain and a TLS connection (non-blocking; "would block" says which way).

#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <string>

#include "core/result.h"

namespace fabricwatch::http {

// ":PORT" listens on every address (IPv6 dual stack, IPv4 where the host has no IPv6),
// "0.0.0.0:PORT" on IPv4, "[::]:PORT" on IPv6 (dual stack), "HOST:PORT" on that address
// (a name is resolved once). Returns a non-blocking listening socket.
core::Result<int> listenOn(const std::string& listen_address);
int boundPort(int fd);

// The numeric host of a peer address; IPv4-mapped IPv6 addresses as IPv4.
std::string peerHost(const sockaddr_storage& ss);

enum class Io { kDone, kWantRead, kWantWrite, kEof, kError, kNotTls };
struct IoResult {
  Io status = Io::kError;
  size_t bytes = 0;
};

// One step of a server-side TLS handshake on a non-blocking socket; creates *ssl from `ctx` on
// the first call. kDone: complete; kWantRead/kWantWrite: call again when the socket is ready;
// kEof: the client left first; kNotTls: the client spoke something else (plain HTTP gets a
// readable 400, as from Go's server); kError: the handshake failed, *error says why.
IoResult tlsAccept(int fd, SSL_CTX* ctx, SSL** ssl, std::string* error);

// One read of at most `cap` bytes; kDone with bytes > 0, or why not.
IoResult ioRead(int fd, SSL* ssl, char* buf, size_t cap);
// Writes from the iovecs as far as the socket takes them; kDone when all went, else the
// bytes written and what to wait for.
IoResult ioWrite(int fd, SSL* ssl, const iovec* iov, int iovcnt);

}  // namespace fabricwatch::http
