#pragma once
// A small HTTP server over civetweb (the server prometheus-cpp's pull module embeds): exact-path
// GET routes, bounded worker threads, request size and idle limits, no file serving.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

struct mg_connection;
struct mg_context;

namespace fabricwatch::exporter {

struct HttpRequest {
  std::string path;
  std::string query;
  // Request headers, names lower-cased, in arrival order.
  std::vector<std::pair<std::string, std::string>> headers;

  // The value of the first header named `name` (lower case), or "" when absent.
  std::string_view header(std::string_view name) const;
  // True when Accept-Encoding lists `coding` with a non-zero q-value (RFC 9110 12.5.3).
  bool acceptsEncoding(std::string_view coding) const;
};

struct HttpResponse {
  HttpResponse() = default;
  HttpResponse(int status, std::string content_type, std::string body)
      : status(status), content_type(std::move(content_type)), body(std::move(body)) {}

  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Bytes shared with a longer-lived owner (e.g. an exposition rendered once per snapshot);
  // sent after `body` without a copy when set.
  std::shared_ptr<const std::string> shared_body;
  // Sent after shared_body: what a request adds to shared bytes (/metrics: the per-request
  // self metrics, or the end of a gzip member whose start is shared).
  std::string tail;
  std::string content_encoding;  // e.g. "gzip"; sent with "Vary: Accept-Encoding"
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
