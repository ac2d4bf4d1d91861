#include "http/http_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fabricwatch::http {
namespace {

core::Result<int> bindListen(int family, const sockaddr* addr, socklen_t len, bool v6only) {
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return core::Error{std::strerror(errno)};
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (family == AF_INET6) {
    int v = v6only ? 1 : 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof v);
  }
  if (bind(fd, addr, len) != 0 || listen(fd, SOMAXCONN) != 0) {
    int err = errno;
    close(fd);
    return core::Error{std::strerror(err)};
  }
  return fd;
}

}  // namespace

core::Result<int> listenOn(const std::string& listen_address) {
  auto colon = listen_address.rfind(':');
  std::string host = colon == std::string::npos ? "" : listen_address.substr(0, colon);
  std::string port = colon == std::string::npos ? listen_address : listen_address.substr(colon + 1);
  auto fail = [&](const std::string& why) {
    return core::Error{"cannot listen on " + listen_address + ": " + why};
  };
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
    return fail("bad port");
  uint16_t p = static_cast<uint16_t>(std::stoi(port));
  if (host.empty()) {
    // Every address: IPv6 dual stack, as Go's net.Listen(":PORT"); IPv4 when IPv6 is off.
    sockaddr_in6 a6{};
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons(p);
    a6.sin6_addr = in6addr_any;
    auto fd = bindListen(AF_INET6, reinterpret_cast<sockaddr*>(&a6), sizeof a6, false);
    if (fd) return fd;
    if (fd.error().message != std::strerror(EAFNOSUPPORT)) return fail(fd.error().message);
    sockaddr_in a4{};
    a4.sin_family = AF_INET;
    a4.sin_port = htons(p);
    a4.sin_addr.s_addr = htonl(INADDR_ANY);
    fd = bindListen(AF_INET, reinterpret_cast<sockaddr*>(&a4), sizeof a4, false);
    if (!fd) return fail(fd.error().message);
    return fd;
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
    return fail(gai_strerror(rc));
  std::string last = "no address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    // "[::]" is dual stack, as civetweb and Go treat it; a specific IPv6 address is itself.
    bool any6 = ai->ai_family == AF_INET6 &&
                IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr);
    auto fd = bindListen(ai->ai_family, ai->ai_addr, ai->ai_addrlen, !any6);
    if (fd) {
      freeaddrinfo(res);
      return fd;
    }
    last = fd.error().message;
  }
  freeaddrinfo(res);
  return fail(last);
}

int boundPort(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

std::string peerHost(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, buf, sizeof buf);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr))
      inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], buf, sizeof buf);
    else
      inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof buf);
  }
  return buf;
}

IoResult tlsAccept(int fd, SSL_CTX* ctx, SSL** ssl, std::string* error) {
  if (!*ssl) {
    unsigned char first = 0;
    ssize_t n = recv(fd, &first, 1, MSG_PEEK);
    if (n == 0) return {Io::kEof, 0};
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {Io::kWantRead, 0};
      return {Io::kEof, 0};
    }
    if (first != 0x16) {  // not a TLS handshake record
      static const char kMsg[] =
          "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
          "Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
      (void)!send(fd, kMsg, sizeof kMsg - 1, MSG_NOSIGNAL);
      return {Io::kNotTls, 0};
    }
    *ssl = ctx ? SSL_new(ctx) : nullptr;
    if (!*ssl || SSL_set_fd(*ssl, fd) != 1) {
      *error = "cannot set up TLS for the connection";
      return {Io::kError, 0};
    }
    SSL_set_accept_state(*ssl);
  }
  ERR_clear_error();
  int rc = SSL_do_handshake(*ssl);
  if (rc == 1) return {Io::kDone, 0};
  switch (SSL_get_error(*ssl, rc)) {
    case SSL_ERROR_WANT_READ:
      return {Io::kWantRead, 0};
    case SSL_ERROR_WANT_WRITE:
      return {Io::kWantWrite, 0};
    default: {
      char buf[256] = "the connection closed during the handshake";
      if (unsigned long e = ERR_peek_last_error()) ERR_error_string_n(e, buf, sizeof buf);
      *error = buf;
      ERR_clear_error();
      return {Io::kError, 0};
    }
  }
}

IoResult ioRead(int fd, SSL* ssl, char* buf, size_t cap) {
  if (!ssl) {
    ssize_t n = recv(fd, buf, cap, 0);
    if (n > 0) return {Io::kDone, static_cast<size_t>(n)};
    if (n == 0) return {Io::kEof, 0};
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {Io::kWantRead, 0};
    return {Io::kError, 0};
  }
  ERR_clear_error();
  size_t got = 0;
  int rc = SSL_read_ex(ssl, buf, cap, &got);
  if (rc == 1) return {Io::kDone, got};
  switch (SSL_get_error(ssl, rc)) {
    case SSL_ERROR_WANT_READ:
      return {Io::kWantRead, 0};
    case SSL_ERROR_WANT_WRITE:
      return {Io::kWantWrite, 0};
    case SSL_ERROR_ZERO_RETURN:
      return {Io::kEof, 0};
    default:
      return {Io::kError, 0};
  }
}

IoResult ioWrite(int fd, SSL* ssl, const iovec* iov, int iovcnt) {
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  if (!ssl) {
    msghdr msg{};
    msg.msg_iov = const_cast<iovec*>(iov);
    msg.msg_iovlen = static_cast<size_t>(iovcnt);
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {Io::kWantWrite, 0};
      return {Io::kError, 0};
    }
    size_t sent = static_cast<size_t>(n);
    return {sent == total ? Io::kDone : Io::kWantWrite, sent};
  }
  // TLS: one record stream; SSL_MODE_ENABLE_PARTIAL_WRITE lets each call take what fits.
  size_t sent = 0;
  for (int i = 0; i < iovcnt; ++i) {
    const char* p = static_cast<const char*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    while (left > 0) {
      ERR_clear_error();
      size_t n = 0;
      int rc = SSL_write_ex(ssl, p, left, &n);
      if (rc != 1) {
        switch (SSL_get_error(ssl, rc)) {
          case SSL_ERROR_WANT_READ:
            return {Io::kWantRead, sent};
          case SSL_ERROR_WANT_WRITE:
            return {Io::kWantWrite, sent};
          default:
            return {Io::kError, sent};
        }
      }
      p += n;
      left -= n;
      sent += n;
    }
  }
  return {Io::kDone, sent};
}

}  // namespace fabricwatch::http
