#include "http/http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/log.h"
#include "http/http_pool.h"
#include "http/http_socket.h"
#include "http/web_security.h"

namespace fabricwatch::http {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenerId = 0;
constexpr uint64_t kWakeId = 1;
// After a response that ends the connection, what the client still sends is read and dropped
// for this long, so that closing does not reset the connection under the response.
constexpr auto kLinger = std::chrono::seconds(2);

enum class State {
  kHandshake,  // TLS handshake
  kHead,       // reading a request head (deadline: request_timeout)
  kBusy,       // the request is with the auth thread or a handler
  kWrite,      // writing the response (deadline: request_timeout)
  kIdle,       // keep-alive, waiting for the next request (deadline: idle_timeout)
  kLinger,     // answered and shut down for writing; draining what the client sends
};

struct Conn {
  uint64_t id = 0;
  int fd = -1;
  SSL* ssl = nullptr;
  std::string addr;
  State state = State::kHead;
  Clock::time_point since;     // when it entered its state (eviction order)
  Clock::time_point deadline;  // when its state times out
  uint32_t events = 0;         // the epoll interest now
  bool peer_eof = false;
  bool head_request = false;  // the request being answered is a HEAD
  std::string in;
  HeadScanner scanner;
  // The response being written: head, body, shared body and tail, as iovecs from `out_off`.
  std::string out_head;
  std::string out_body;
  std::shared_ptr<const std::string> out_shared;
  std::string out_tail;
  size_t out_off = 0;
  bool keep_alive = false;
  // For the observer.
  std::string route;
  int status = 0;
  Clock::time_point started;
  // The security it was accepted under (its TLS context).
  std::shared_ptr<const WebSecurity> security;
};

HttpResponse plain(int status, std::string body) {
  return HttpResponse{status, "text/plain; charset=utf-8", std::move(body)};
}

}  // namespace

struct HttpServer::Impl {
  Impl(HttpServer& owner, HttpOptions opts) : owner(owner), opts(std::move(opts)) {}

  HttpServer& owner;
  HttpOptions opts;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  bool tls = false;
  std::thread io;
  std::unique_ptr<HttpPool> pool;

  std::mutex done_mu;  // done, stopping
  std::vector<std::pair<uint64_t, HttpResponse>> done;
  bool stopping = false;

  mutable std::mutex security_mu;
  std::shared_ptr<const WebSecurity> security;

  std::atomic<int> open{0};

  // I/O thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns;
  // Connections that finished a response and may hold a pipelined request: read by the loop
  // rather than from inside the response's write, so that answers given on this thread
  // (errors, kIoThread routes) never recurse through a client's pipeline.
  std::vector<uint64_t> ready;
  std::unordered_map<std::string, int> per_address;
  uint64_t next_id = 2;
  Clock::time_point next_sweep = Clock::time_point::max();
  Clock::time_point accept_paused_until{};
  double tokens = 0;
  Clock::time_point tokens_at{};
  const WebSecurity* rate_config = nullptr;

  std::shared_ptr<const WebSecurity> currentSecurity() const {
    std::lock_guard lock(security_mu);
    return security;
  }

  void count(HttpDrop d) {
    owner.drops_[static_cast<size_t>(d)].fetch_add(1, std::memory_order_relaxed);
    if (owner.drop_observer_) owner.drop_observer_(d);
  }

  std::string routeLabel(const std::string& path) const {
    return owner.routes_.count(path) ? path : "other";
  }

  // --- the I/O thread -----------------------------------------------------------------------

  void run() {
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

  void setDeadline(Conn& c, Clock::time_point d) {
    c.deadline = d;
    next_sweep = std::min(next_sweep, d);
  }

  void enter(Conn& c, State s) {
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

  void interest(Conn& c, uint32_t events) {
    if (c.events == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.id;
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
    c.events = events;
  }

  void acceptAll() {
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
      auto n = per_address.find(addr);
      if (n != per_address.end() && n->second >= opts.max_connections_per_address &&
          !evictOne(&addr)) {
        count(HttpDrop::kAddressLimit);
        close(fd);
        continue;
      }
      if (static_cast<int>(conns.size()) >= opts.max_connections && !evictOne(nullptr)) {
        count(HttpDrop::kLimit);
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
      ++per_address[addr];
      open.fetch_add(1, std::memory_order_relaxed);
      Conn& ref = *c;
      conns.emplace(c->id, std::move(c));
      enter(ref, tls ? State::kHandshake : State::kHead);
      // A client usually sends its request (or ClientHello) with the connection: take it now,
      // before more accepts could evict the connection as incomplete.
      refresh(ref);
    }
  }

  // Reads what a connection has been sent, so that it is judged by its state now: a request
  // that has arrived is dispatched instead of evicted as incomplete. May close `c`.
  void refresh(Conn& c) {
    if (c.state == State::kHandshake)
      handshake(c);
    else if (c.state == State::kHead || c.state == State::kIdle)
      readHead(c);
  }

  static int evictionRank(State s) {
    switch (s) {
      case State::kLinger:
        return 0;
      case State::kHandshake:
      case State::kHead:
        return 1;
      case State::kIdle:
        return 2;
      default:
        return -1;  // being answered: never evicted
    }
  }

  // Closes the connection a cap makes room from: lingering ones first, then those without a
  // complete request (head or handshake), then idle keep-alive ones, oldest first in each.
  // Connections whose request is being answered are never evicted.
  bool evictOne(const std::string* addr) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      Conn* victim = nullptr;
      int victim_rank = 3;
      for (auto& [id, c] : conns) {
        if (addr && c->addr != *addr) continue;
        int rank = evictionRank(c->state);
        if (rank < 0) continue;
        if (rank < victim_rank || (rank == victim_rank && c->since < victim->since)) {
          victim = c.get();
          victim_rank = rank;
        }
      }
      if (!victim) return false;
      uint64_t id = victim->id;
      if (victim_rank > 0) {
        refresh(*victim);
        auto it = conns.find(id);
        if (it == conns.end()) return true;  // it was closed (the client left): room made
        if (evictionRank(it->second->state) != victim_rank) continue;  // it made progress
      }
      if (victim_rank == 1) count(HttpDrop::kEvicted);
      if (victim_rank == 2) count(HttpDrop::kEvictedIdle);
      closeConn(*victim);
      return true;
    }
    return false;
  }

  void observe(Conn& c) {
    if (owner.observer_)
      owner.observer_(c.route, c.status,
                      std::chrono::duration<double>(Clock::now() - c.started).count());
  }

  void closeConn(Conn& c) {
    if (c.state == State::kWrite) observe(c);  // answered, if not all of it went out
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
    if (c.ssl) SSL_free(c.ssl);
    close(c.fd);
    auto it = per_address.find(c.addr);
    if (it != per_address.end() && --it->second <= 0) per_address.erase(it);
    open.fetch_sub(1, std::memory_order_relaxed);
    uint64_t id = c.id;  // erase() destroys c: not a reference into it
    conns.erase(id);
  }

  void sweep(Clock::time_point now) {
    next_sweep = Clock::time_point::max();
    std::vector<std::pair<Conn*, State>> expired;
    for (auto& [id, c] : conns) {
      if (c->deadline <= now)
        expired.emplace_back(c.get(), c->state);
      else
        next_sweep = std::min(next_sweep, c->deadline);
    }
    for (auto [c, state] : expired) {
      if (state == State::kHandshake || state == State::kHead) count(HttpDrop::kHeadTimeout);
      if (state == State::kWrite) count(HttpDrop::kWriteTimeout);
      closeConn(*c);
    }
  }

  void onEvent(Conn& c, uint32_t events) {
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

  void handshake(Conn& c) {
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

  void readHead(Conn& c) {
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

  // Parses what has arrived; dispatches a complete request or refuses a bad one.
  void processInput(Conn& c) {
    HeadLimits limits{static_cast<size_t>(opts.max_request_bytes), opts.max_headers};
    if (!c.in.empty() && c.scanner.ready(c.in, limits)) {
      std::optional<HeadError> error;
      auto head = parseRequestHead(c.in, limits, &error);
      if (error) {
        count(dropOf(*error));
        c.route = "other";
        c.started = Clock::now();
        c.head_request = false;
        respond(c, plain(statusOf(*error), std::string(statusText(statusOf(*error))) + "\n"), false,
                false);
        return;
      }
      if (head) {
        c.in.erase(0, head->head_bytes);
        c.scanner.reset();
        dispatch(c, std::move(*head));
        return;
      }
    }
    if (c.peer_eof) closeConn(c);
  }

  bool rateLimited(const WebSecurity* sec) {
    if (!sec || !sec->rateLimit() || sec->rateLimit()->interval.count() <= 0) return false;
    const auto& rl = *sec->rateLimit();
    auto now = Clock::now();
    if (rate_config != sec) {  // a new configuration starts with a full bucket
      rate_config = sec;
      tokens = rl.burst;
      tokens_at = now;
    }
    tokens = std::min<double>(rl.burst, tokens + std::chrono::duration<double>(now - tokens_at) /
                                                     std::chrono::duration<double>(rl.interval));
    tokens_at = now;
    if (tokens < 1) return true;
    tokens -= 1;
    return false;
  }

  void dispatch(Conn& c, ParsedHead head) {
    enter(c, State::kBusy);
    interest(c, 0);
    c.keep_alive = head.keep_alive && !c.peer_eof;
    c.route = routeLabel(head.request.path);
    c.started = Clock::now();
    bool is_head = head.request.method == "HEAD";
    c.head_request = is_head;
    auto sec = currentSecurity();
    if (rateLimited(sec.get())) {
      respond(c, plain(429, "Too Many Requests\n"), c.keep_alive, is_head);
      return;
    }
    HttpJob job{c.id, std::move(head.request), sec, std::nullopt};
    const BasicAuth* auth = sec ? sec->basicAuth() : nullptr;
    if (auth && !opts.auth_exempt_paths.count(job.request.path)) {
      auto creds = parseBasicAuthorization(job.request.header("authorization"));
      if (!creds) {
        respond(c, unauthorizedResponse(), c.keep_alive, is_head);
        return;
      }
      if (!auth->cached(*creds)) {
        job.credentials = std::move(creds);
        if (!pool->submitAuth(std::move(job))) {
          count(HttpDrop::kAuthBusy);
          HttpResponse busy = plain(503, "Service Unavailable: too many logins at once\n");
          busy.extra_headers.emplace_back("Retry-After", "1");
          respond(c, std::move(busy), false, is_head);
        }
        return;
      }
    }
    if (onIoThread(job.request.path)) {
      respond(c, handle(job.request), c.keep_alive, is_head);
      return;
    }
    pool->submit(std::move(job));
  }

  bool onIoThread(const std::string& path) const {
    auto it = owner.routes_.find(path);
    return it != owner.routes_.end() && it->second.runs == Runs::kIoThread;
  }

  void completeResponses() {
    std::vector<std::pair<uint64_t, HttpResponse>> batch;
    {
      std::lock_guard lock(done_mu);
      batch.swap(done);
    }
    for (auto& [id, response] : batch) {
      auto it = conns.find(id);
      if (it == conns.end()) continue;  // evicted or gone meanwhile
      Conn& c = *it->second;
      respond(c, std::move(response), c.keep_alive, c.head_request);
    }
  }

  void respond(Conn& c, HttpResponse r, bool keep_alive, bool head_only) {
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

  void writeResponse(Conn& c) {
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

  // The connections writeResponse() left ready, as they were when it did (a batch per turn of
  // the loop: what they make ready waits for the next turn).
  void readPipelined() {
    std::vector<uint64_t> batch;
    batch.swap(ready);
    for (uint64_t id : batch) {
      auto it = conns.find(id);
      if (it == conns.end()) continue;
      Conn& c = *it->second;
      if (c.state == State::kIdle || c.state == State::kHead) readHead(c);
    }
  }

  void drain(Conn& c) {
    char buf[4096];
    for (int i = 0; i < 16; ++i) {
      ssize_t n = recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      break;
    }
    closeConn(c);
  }

  // --- the handler pool's side ---------------------------------------------------------------

  void post(uint64_t conn, HttpResponse r) {
    {
      std::lock_guard lock(done_mu);
      done.emplace_back(conn, std::move(r));
    }
    uint64_t one = 1;
    (void)!write(wake_fd, &one, sizeof one);
  }

  HttpResponse handle(const HttpRequest& req) {
    auto it = owner.routes_.find(req.path);
    if (it == owner.routes_.end()) return plain(404, "404 page not found\n");
    if (req.method != "GET" && req.method != "HEAD") {
      HttpResponse r = plain(405, "method not allowed\n");
      r.extra_headers.emplace_back("Allow", "GET, HEAD");
      return r;
    }
    try {
      return it->second.handler(req);
    } catch (const std::exception& e) {
      return plain(500, std::string("internal error: ") + e.what() + "\n");
    }
  }
};

HttpServer::HttpServer() = default;

HttpServer::~HttpServer() { stop(); }

void HttpServer::route(std::string path, Handler handler, Runs runs) {
  routes_[std::move(path)] = Route{std::move(handler), runs};
}

void HttpServer::setSecurity(std::shared_ptr<const WebSecurity> security) {
  if (impl_) {
    std::lock_guard lock(impl_->security_mu);
    impl_->security = std::move(security);
  } else {
    pending_security_ = std::move(security);
  }
}

core::Status HttpServer::start(const HttpOptions& opts) {
  if (impl_) return core::Error{"the HTTP server is already running"};
  // OpenSSL writes to the socket with write(2), which raises SIGPIPE when a client has hung
  // up; a server must never die of that (plain sockets use MSG_NOSIGNAL).
  signal(SIGPIPE, SIG_IGN);
  auto impl = std::make_unique<Impl>(*this, opts);
  impl->security = std::move(pending_security_);
  impl->tls = impl->security && impl->security->tlsContext();
  auto fd = listenOn(opts.listen_address);
  if (!fd) return core::Error{fd.error().message};
  impl->listen_fd = *fd;
  impl->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  impl->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl->epoll_fd < 0 || impl->wake_fd < 0) {
    int err = errno;
    close(impl->listen_fd);
    if (impl->epoll_fd >= 0) close(impl->epoll_fd);
    if (impl->wake_fd >= 0) close(impl->wake_fd);
    return core::Error{std::string("cannot start the HTTP server: ") + std::strerror(err)};
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerId;
  epoll_ctl(impl->epoll_fd, EPOLL_CTL_ADD, impl->listen_fd, &ev);
  ev.data.u64 = kWakeId;
  epoll_ctl(impl->epoll_fd, EPOLL_CTL_ADD, impl->wake_fd, &ev);
  port_ = boundPort(impl->listen_fd);
  Impl* p = impl.get();
  p->pool = std::make_unique<HttpPool>(
      opts.threads, [p](const HttpRequest& r) { return p->handle(r); },
      [p](uint64_t conn, HttpResponse r) { p->post(conn, std::move(r)); });
  p->io = std::thread([p] { p->run(); });
  impl_ = std::move(impl);
  return core::Status::Ok();
}

void HttpServer::stop() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->done_mu);
    impl_->stopping = true;
  }
  uint64_t one = 1;
  (void)!write(impl_->wake_fd, &one, sizeof one);
  impl_->io.join();
  impl_->pool->stop();
  while (!impl_->conns.empty()) impl_->closeConn(*impl_->conns.begin()->second);
  close(impl_->listen_fd);
  close(impl_->epoll_fd);
  close(impl_->wake_fd);
  impl_.reset();
}

uint64_t HttpServer::dropped(HttpDrop reason) const {
  return drops_[static_cast<size_t>(reason)].load(std::memory_order_relaxed);
}

int HttpServer::openConnections() const { return impl_ ? impl_->open.load() : 0; }

}  // namespace fabricwatch::http
