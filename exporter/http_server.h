#pragma once
// A small HTTP server over civetweb (the server prometheus-cpp's pull module embeds): exact-path
// GET routes, bounded worker threads, request size and idle limits, no file serving.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/result.h"

struct mg_connection;
struct mg_context;

namespace fabricwatch::exporter {

struct HttpRequest {
  std::string path;
  std::string query;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

struct HttpOptions {
  std::string listen_address = ":19736";  // HOST:PORT, :PORT, [v6]:PORT; port 0 picks a free one
  int threads = 4;
  int max_request_bytes = 16384;
  int request_timeout_ms = 10000;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // Called after each request with the route and status, for self-instrumentation.
  using Observer = std::function<void(const std::string& route, int status, double seconds)>;

  HttpServer();
  ~HttpServer();
  void route(std::string path, Handler handler);
  void observe(Observer o) { observer_ = std::move(o); }

  core::Status start(const HttpOptions& opts);
  void stop();
  // The port actually bound (useful with port 0).
  int port() const { return port_; }

 private:
  static int dispatch(mg_connection* conn, void* self);
  std::map<std::string, Handler> routes_;
  Observer observer_;
  mg_context* ctx_ = nullptr;
  int port_ = 0;
};

// Converts a Prometheus-style listen address (":9100", "0.0.0.0:9100", "[::]:9100") to
// civetweb's listening_ports syntax.
std::string toCivetPorts(const std::string& listen_address);

}  // namespace fabricwatch::exporter
