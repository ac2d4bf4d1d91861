#pragma once
// fabricwatch's HTTP server: exact-path GET/HEAD routes, HTTP/1.1 keep-alive, optional TLS and
// basic authentication (web_security.h), no file serving.
//
// One I/O thread owns every socket (non-blocking, epoll): it accepts, runs TLS handshakes,
// reads request heads within a deadline and writes responses, so a slow or silent client costs
// a descriptor and a buffer, never a thread. A small pool (`threads`) runs the handlers of
// complete requests; password checks run on one thread of their own, so guessing cannot
// occupy the pool. Connections are capped in total and per client address; when a cap is
// reached, connections that have not completed a request (then idle keep-alive ones, then
// those whose client does not read its answer) are evicted oldest first, an address under its
// fair share of the total taking from the address holding the most, so a scraper always gets
// in. Every refusal is counted by reason.

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "core/result.h"
#include "http/http_drop.h"
#include "http/http_message.h"

namespace fabricwatch::http {

class WebSecurity;

struct HttpOptions {
  std::string listen_address = ":19736";  // HOST:PORT, :PORT, [v6]:PORT; port 0 picks a free one
  int threads = 4;                        // handler threads
  int max_request_bytes = 16384;          // request head, headers included
  int request_timeout_ms = 10000;         // TLS handshake + request head; also a response's write
  int idle_timeout_ms = 120000;           // keep-alive connection without a request
  int max_connections = 256;
  int max_connections_per_address = 32;
  size_t max_headers = 64;
  // Paths answered without basic authentication (the kubelet's /healthz, /readyz).
  std::set<std::string> auth_exempt_paths;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // Called after each answered request with the route and status, for self-instrumentation.
  using Observer = std::function<void(const std::string& route, int status, double seconds)>;
  // Called for each connection the server drops or refuses.
  using DropObserver = std::function<void(HttpDrop reason)>;

  HttpServer();
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Where a route's handler runs. kPool: on a handler thread. kIoThread: on the I/O thread, at
  // once, for handlers that only copy what is ready (a rendered exposition, a health answer):
  // a request then costs no hand-over to a pool thread and back, two thread wake-ups that
  // took more of a scrape than the answer itself (a wake-up of an idle vCPU is tens of
  // microseconds in a virtual machine). Such a handler must never block.
  enum class Runs { kPool, kIoThread };

  // Routes and observers are set before start().
  void route(std::string path, Handler handler, Runs runs = Runs::kPool);
  void observe(Observer o) { observer_ = std::move(o); }
  void observeDrops(DropObserver o) { drop_observer_ = std::move(o); }

  // TLS and basic auth for connections accepted from now on (null: plain HTTP, no auth).
  // Whether TLS is on is fixed at start(); setSecurity() may swap certificates and users.
  void setSecurity(std::shared_ptr<const WebSecurity> security);

  core::Status start(const HttpOptions& opts);
  void stop();
  // The port actually bound (useful with port 0).
  int port() const { return port_; }

  uint64_t dropped(HttpDrop reason) const;
  int openConnections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  struct Route {
    Handler handler;
    Runs runs = Runs::kPool;
  };
  std::map<std::string, Route> routes_;
  Observer observer_;
  DropObserver drop_observer_;
  std::shared_ptr<const WebSecurity> pending_security_;  // set before start()
  std::array<std::atomic<uint64_t>, static_cast<size_t>(HttpDrop::kCount)> drops_{};
  int port_ = 0;
};

}  // namespace fabricwatch::http
