#pragma once
// Inside the HTTP server (internal to http/): the state of its I/O thread, which owns every
// connection, and the steps it takes with them. The steps are one class because they share
// that state and run on one thread, which is what lets them go without locks; they are split
// over files by job, so each can be read alone:
//   http_io_loop.cc          the epoll loop: accepting, readiness events, TLS handshakes,
//                            reading request heads, draining a closed connection
//   http_admission.cc        connection accounting: the caps in total and per address, the
//                            eviction that makes room at a cap, the deadline sweep, closing
//   http_dispatch.cc         a request from its bytes to its answer: framing, the rate limit,
//                            basic auth, routing to the I/O thread, the password thread or the
//                            handler pool, and the pool's answers coming back
//   http_response_writer.cc  writing an answer without blocking, then keep-alive or linger
//   http_server.cc           the public face (http_server.h): routes, start and stop
// Threads: everything here runs on the I/O thread except handle(), which pool threads run too
// (it reads only the routes, fixed before start()), and post(), the pool's way back (under
// done_mu). setSecurity() swaps `security` under security_mu; stop() joins the I/O thread
// before it closes what is left.

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "http/http_drop.h"
#include "http/http_message.h"
#include "http/http_pool.h"
#include "http/http_server.h"
#include "http/rate_limiter.h"

namespace fabricwatch::http {

struct HttpServer::Impl {
  using Clock = std::chrono::steady_clock;

  // epoll data of the two descriptors that are not connections; connection ids start above.
  static constexpr uint64_t kListenerId = 0;
  static constexpr uint64_t kWakeId = 1;
  // After a response that ends the connection, what the client still sends is read and dropped
  // for this long, so that closing does not reset the connection under the response.
  static constexpr auto kLinger = std::chrono::seconds(2);

  enum class State {
    kHandshake,  // TLS handshake
    kHead,       // reading a request head (deadline: request_timeout)
    kBusy,       // the request is with the auth thread or a handler
    kWrite,      // writing the response (deadline: request_timeout; evictable)
    kIdle,       // keep-alive, waiting for the next request (deadline: idle_timeout)
    kLinger,     // answered and shut down for writing; draining what the client sends
  };

  struct Conn {
    uint64_t id = 0;
    int fd = -1;
    SSL* ssl = nullptr;
    std::string addr;
    State state = State::kHead;
    // When it entered its state, or its answer last moved (eviction order).
    Clock::time_point since;
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
  // The rate limit's buckets (one per client: rateLimited()), and the configuration they were
  // filled for.
  RateLimiter rate;
  const WebSecurity* rate_config = nullptr;

  std::shared_ptr<const WebSecurity> currentSecurity() const {
    std::lock_guard lock(security_mu);
    return security;
  }

  void count(HttpDrop d) {
    owner.drops_[static_cast<size_t>(d)].fetch_add(1, std::memory_order_relaxed);
    if (owner.drop_observer_) owner.drop_observer_(d);
  }

  // http_io_loop.cc
  void run();
  void setDeadline(Conn& c, Clock::time_point d);
  void enter(Conn& c, State s);
  void interest(Conn& c, uint32_t events);
  void acceptAll();
  void refresh(Conn& c);
  void onEvent(Conn& c, uint32_t events);
  void handshake(Conn& c);
  void readHead(Conn& c);
  void readPipelined();
  void drain(Conn& c);

  // http_admission.cc
  bool admits(const std::string& addr);
  Conn& track(std::unique_ptr<Conn> c);
  static int evictionRank(State s);
  bool evictOne(const std::string* addr, const std::string& newcomer);
  void sweep(Clock::time_point now);
  void closeConn(Conn& c);

  // http_dispatch.cc
  void processInput(Conn& c);
  bool rateLimited(const WebSecurity* sec, const Conn& c, const std::string* user);
  void dispatch(Conn& c, ParsedHead head);
  void authBusy(Conn& c);
  std::string routeLabel(const std::string& path) const;
  bool onIoThread(const std::string& path) const;
  HttpResponse handle(const HttpRequest& req);
  void post(uint64_t conn, HttpResponse r);
  void completeResponses();

  // http_response_writer.cc
  void respond(Conn& c, HttpResponse r, bool keep_alive, bool head_only);
  void writeResponse(Conn& c);
  void observe(Conn& c);
};

}  // namespace fabricwatch::http
