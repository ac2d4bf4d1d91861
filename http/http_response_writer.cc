// Writing an answer (http_io_thread.h) without blocking: the head, the body, the bytes shared
// with a snapshot (written from where they are, never copied) and the per-request tail go out
// as one iovec list, as far as the socket takes them; the rest waits for EPOLLOUT within
// request_timeout. Then the connection is kept alive for its next request or shut down and
// lingered on, so that closing does not reset it under the answer.

#include <openssl/err.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "http/http_io_thread.h"
#include "http/http_socket.h"
#include "http/web_security.h"

namespace fabricwatch::http {

void HttpServer::Impl::respond(Conn& c, HttpResponse r, bool keep_alive, bool head_only) {
  auto sec = c.security;
  static const std::vector<std::pair<std::string, std::string>> kNone;
  c.keep_alive = keep_alive && !c.peer_eof;
  c.status = r.status;
  c.out_head = responseHead(r, c.keep_alive, sec ? sec->headers() : kNone);
  if (head_only) {
    c.out_body.clear();
    c.out_shared.reset();
    c.out_tail.clear();
  } else {
    c.out_body = std::move(r.body);
    c.out_shared = std::move(r.shared_body);
    c.out_tail = std::move(r.tail);
  }
  c.out_off = 0;
  enter(c, State::kWrite);
  writeResponse(c);
}

void HttpServer::Impl::writeResponse(Conn& c) {
  while (true) {
    iovec iov[4];
    int n = 0;
    size_t off = c.out_off;
    const std::string* parts[] = {&c.out_head, &c.out_body, c.out_shared.get(), &c.out_tail};
    for (const std::string* s : parts) {
      if (!s) continue;
      if (off >= s->size()) {
        off -= s->size();
        continue;
      }
      iov[n].iov_base = const_cast<char*>(s->data() + off);
      iov[n].iov_len = s->size() - off;
      off = 0;
      ++n;
    }
    if (n == 0) break;
    IoResult r = ioWrite(c.fd, c.ssl, iov, n);
    c.out_off += r.bytes;
    if (r.bytes > 0) c.since = Clock::now();  // a reader that reads is not the slowest
    if (r.status == Io::kDone) continue;
    if (r.status == Io::kWantWrite) {
      interest(c, EPOLLOUT);
      return;
    }
    if (r.status == Io::kWantRead) {
      interest(c, EPOLLIN);
      return;
    }
    closeConn(c);  // the client went away
    return;
  }
  observe(c);
  c.out_head.clear();
  c.out_body.clear();
  c.out_body.shrink_to_fit();
  c.out_shared.reset();
  c.out_tail.clear();
  c.out_tail.shrink_to_fit();
  c.out_off = 0;
  if (!c.keep_alive) {
    if (c.ssl) {
      ERR_clear_error();
      SSL_shutdown(c.ssl);  // close_notify; its answer is not awaited
    }
    shutdown(c.fd, SHUT_WR);
    enter(c, State::kLinger);
    interest(c, EPOLLIN);
    drain(c);
    return;
  }
  enter(c, c.in.empty() ? State::kIdle : State::kHead);
  interest(c, EPOLLIN);
  // A pipelined request may already be buffered, here or inside the TLS layer.
  ready.push_back(c.id);
}

// The observer sees a request once, when its answer is written (or when the connection closes
// in the middle of writing it: closeConn()).
void HttpServer::Impl::observe(Conn& c) {
  if (owner.observer_)
    owner.observer_(c.route, c.status,
                    std::chrono::duration<double>(Clock::now() - c.started).count());
}

}  // namespace fabricwatch::http
