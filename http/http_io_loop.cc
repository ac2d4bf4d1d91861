// The I/O thread's loop (http_io_thread.h): one epoll set over the listener, the eventfd the
// handler pool wakes it with, and every connection, all non-blocking. A slow or silent client
// therefore costs a descriptor and a buffer here, never a thread. What a connection's bytes
// mean is http_dispatch.cc's; whether it may stay is http_admission.cc's.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/log.h"
#include "http/http_io_thread.h"
#include "http/http_socket.h"
#include "http/web_security.h"

namespace fabricwatch::http {

void HttpServer::Impl::run() {
  epoll_event events[256];
  while (true) {
    int timeout = ready.empty() ? -1 : 0;
    auto now = Clock::now();
    auto wake = std::min(
        next_sweep, accept_paused_until > now ? accept_paused_until : Clock::time_point::max());
    if (wake != Clock::time_point::max() && timeout != 0) {
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
      timeout = static_cast<int>(std::clamp<int64_t>(ms, 0, 60000));
    }
    int n = epoll_wait(epoll_fd, events, 256, timeout);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < n; ++i) {
      uint64_t id = events[i].data.u64;
      if (id == kListenerId) {
        acceptAll();
      } else if (id == kWakeId) {
        uint64_t v;
        while (read(wake_fd, &v, sizeof v) > 0) {
        }
        {
          std::lock_guard lock(done_mu);
          if (stopping) return;
        }
        completeResponses();
      } else {
        auto it = conns.find(id);
        if (it != conns.end()) onEvent(*it->second, events[i].events);
      }
    }
    readPipelined();
    now = Clock::now();
    if (accept_paused_until != Clock::time_point{} && now >= accept_paused_until) {
      accept_paused_until = {};
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = kListenerId;
      epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
    }
    if (now >= next_sweep) sweep(now);
  }
}

void HttpServer::Impl::setDeadline(Conn& c, Clock::time_point d) {
  c.deadline = d;
  next_sweep = std::min(next_sweep, d);
}

void HttpServer::Impl::enter(Conn& c, State s) {
  c.state = s;
  c.since = Clock::now();
  switch (s) {
    case State::kHandshake:
    case State::kHead:
    case State::kWrite:
      setDeadline(c, c.since + std::chrono::milliseconds(opts.request_timeout_ms));
      break;
    case State::kIdle:
      setDeadline(c, c.since + std::chrono::milliseconds(opts.idle_timeout_ms));
      break;
    case State::kLinger:
      setDeadline(c, c.since + kLinger);
      break;
    case State::kBusy:
      c.deadline = Clock::time_point::max();
      break;
  }
}

void HttpServer::Impl::interest(Conn& c, uint32_t events) {
  if (c.events == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id;
  epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
  c.events = events;
}

void HttpServer::Impl::acceptAll() {
  auto sec = currentSecurity();
  for (int i = 0; i < 64; ++i) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int fd =
        accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: stop accepting for a moment rather than spin on the listener.
        core::log::warn("http", "cannot accept a connection, pausing",
                        {{"error", std::strerror(errno)}});
        accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
        epoll_event ev{};
        ev.data.u64 = kListenerId;
        epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
      }
      return;
    }
    std::string addr = peerHost(ss);
    if (!admits(addr)) {
      close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->id = next_id++;
    c->fd = fd;
    c->addr = addr;
    c->security = sec;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = c->id;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      close(fd);
      continue;
    }
    c->events = EPOLLIN;
    Conn& ref = track(std::move(c));
    enter(ref, tls ? State::kHandshake : State::kHead);
    // A client usually sends its request (or ClientHello) with the connection: take it now,
    // before more accepts could evict the connection as incomplete.
    refresh(ref);
  }
}

// Reads what a connection has been sent, so that it is judged by its state now: a request
// that has arrived is dispatched instead of evicted as incomplete. May close `c`.
void HttpServer::Impl::refresh(Conn& c) {
  if (c.state == State::kHandshake)
    handshake(c);
  else if (c.state == State::kHead || c.state == State::kIdle)
    readHead(c);
}

void HttpServer::Impl::onEvent(Conn& c, uint32_t events) {
  if (events & EPOLLERR) {
    closeConn(c);
    return;
  }
  switch (c.state) {
    case State::kHandshake:
      handshake(c);
      break;
    case State::kHead:
    case State::kIdle:
      readHead(c);
      break;
    case State::kWrite:
      writeResponse(c);
      break;
    case State::kLinger:
      drain(c);
      break;
    case State::kBusy:
      // Nothing is read while a request is answered (no interest), but a hang-up is always
      // reported: the client is gone and its answer would go nowhere.
      if (events & EPOLLHUP) closeConn(c);
      break;
  }
}

void HttpServer::Impl::handshake(Conn& c) {
  std::string error;
  IoResult r = tlsAccept(c.fd, c.security ? c.security->tlsContext() : nullptr, &c.ssl, &error);
  switch (r.status) {
    case Io::kDone: {
      // The handshake and the head share one deadline, from accept.
      auto deadline = c.deadline;
      enter(c, State::kHead);
      c.deadline = deadline;
      readHead(c);
      return;
    }
    case Io::kWantRead:
      interest(c, EPOLLIN);
      return;
    case Io::kWantWrite:
      interest(c, EPOLLOUT);
      return;
    case Io::kNotTls:
      // tlsAccept answered 400 in plain text: linger so that it arrives.
      count(HttpDrop::kTlsHandshake);
      shutdown(c.fd, SHUT_WR);
      enter(c, State::kLinger);
      interest(c, EPOLLIN);
      return;
    case Io::kEof:
      closeConn(c);
      return;
    case Io::kError:
      core::log::debug("http", "TLS handshake failed", {{"client", c.addr}, {"error", error}});
      count(HttpDrop::kTlsHandshake);
      closeConn(c);
      return;
  }
}

void HttpServer::Impl::readHead(Conn& c) {
  char buf[16384];
  size_t limit = static_cast<size_t>(opts.max_request_bytes);
  while (c.in.size() < limit) {
    IoResult r = ioRead(c.fd, c.ssl, buf, std::min(sizeof buf, limit - c.in.size()));
    if (r.status == Io::kDone) {
      if (c.state == State::kIdle) enter(c, State::kHead);  // the head's deadline starts
      c.in.append(buf, r.bytes);
      continue;
    }
    if (r.status == Io::kWantRead) {
      interest(c, EPOLLIN);
      break;
    }
    if (r.status == Io::kWantWrite) {
      interest(c, EPOLLOUT);
      break;
    }
    // EOF or error: a client that half-closed after a whole request still gets its answer.
    c.peer_eof = true;
    break;
  }
  processInput(c);
}

// The connections writeResponse() left ready, as they were when it did (a batch per turn of
// the loop: what they make ready waits for the next turn).
void HttpServer::Impl::readPipelined() {
  std::vector<uint64_t> batch;
  batch.swap(ready);
  for (uint64_t id : batch) {
    auto it = conns.find(id);
    if (it == conns.end()) continue;
    Conn& c = *it->second;
    if (c.state == State::kIdle || c.state == State::kHead) readHead(c);
  }
}

void HttpServer::Impl::drain(Conn& c) {
  char buf[4096];
  for (int i = 0; i < 16; ++i) {
    ssize_t n = recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    break;
  }
  closeConn(c);
}

}  // namespace fabricwatch::http
