#include "exporter/http_server.h"

#include <civetweb.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <mutex>

namespace fabricwatch::exporter {
namespace {

std::once_flag g_init_once;

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

void send(mg_connection* conn, const HttpResponse& r, bool head) {
  size_t length = r.body.size() + (r.shared_body ? r.shared_body->size() : 0) + r.tail.size();
  std::string encoding;
  if (!r.content_encoding.empty())
    encoding = "Content-Encoding: " + r.content_encoding + "\r\nVary: Accept-Encoding\r\n";
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            r.status, reason(r.status), r.content_type.c_str(), length, encoding.c_str());
  if (head) return;
  if (!r.body.empty()) mg_write(conn, r.body.data(), r.body.size());
  if (r.shared_body && !r.shared_body->empty())
    mg_write(conn, r.shared_body->data(), r.shared_body->size());
  if (!r.tail.empty()) mg_write(conn, r.tail.data(), r.tail.size());
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return {};
}

bool HttpRequest::acceptsEncoding(std::string_view coding) const {
  std::string_view list = header("accept-encoding");
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    size_t semi = item.find(';');
    std::string name = lower(trim(item.substr(0, semi)));
    if (name != coding && name != "*") continue;
    if (semi == std::string_view::npos) return true;
    // "q=0", "q=0.0", "q=0.000" refuse the coding; any other q-value accepts it.
    std::string_view param = trim(item.substr(semi + 1));
    if (param.size() < 2 || (param[0] != 'q' && param[0] != 'Q') || param[1] != '=') return true;
    std::string_view q = trim(param.substr(2));
    return q.find_first_not_of("0.") != std::string_view::npos;
  }
  return false;
}

std::string toCivetPorts(const std::string& addr) {
  auto colon = addr.rfind(':');
  std::string host = colon == std::string::npos ? "" : addr.substr(0, colon);
  std::string port = colon == std::string::npos ? addr : addr.substr(colon + 1);
  if (host.empty() || host == "0.0.0.0") return port;
  if (host == "[::]") return "[::]:" + port;  // civetweb: v6 any (dual stack where the host allows)
  return host + ":" + port;
}

HttpServer::HttpServer() {
  std::call_once(g_init_once, [] { mg_init_library(0); });
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::route(std::string path, Handler handler) {
  routes_[std::move(path)] = std::move(handler);
}

int HttpServer::dispatch(mg_connection* conn, void* self_ptr) {
  auto* self = static_cast<HttpServer*>(self_ptr);
  const mg_request_info* info = mg_get_request_info(conn);
  auto started = std::chrono::steady_clock::now();
  HttpRequest req;
  req.path = info->local_uri ? info->local_uri : "/";
  req.query = info->query_string ? info->query_string : "";
  for (int i = 0; i < info->num_headers; ++i) {
    const auto& h = info->http_headers[i];
    if (h.name) req.headers.emplace_back(lower(h.name), h.value ? h.value : "");
  }
  bool head = std::strcmp(info->request_method, "HEAD") == 0;
  HttpResponse resp;
  std::string route = req.path;
  auto it = self->routes_.find(req.path);
  if (it == self->routes_.end()) {
    resp = {404, "text/plain; charset=utf-8", "404 page not found\n"};
    route = "other";
  } else if (!head && std::strcmp(info->request_method, "GET") != 0) {
    resp = {405, "text/plain; charset=utf-8", "method not allowed\n"};
  } else {
    try {
      resp = it->second(req);
    } catch (const std::exception& e) {
      resp = {500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n"};
    }
  }
  send(conn, resp, head);
  if (self->observer_) {
    self->observer_(
        route, resp.status,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  return resp.status;
}

core::Status HttpServer::start(const HttpOptions& opts) {
  std::string ports = toCivetPorts(opts.listen_address);
  std::string threads = std::to_string(opts.threads);
  std::string max_req = std::to_string(opts.max_request_bytes);
  std::string timeout = std::to_string(opts.request_timeout_ms);
  const char* options[] = {"listening_ports",
                           ports.c_str(),
                           "num_threads",
                           threads.c_str(),
                           "max_request_size",
                           max_req.c_str(),
                           "request_timeout_ms",
                           timeout.c_str(),
                           "enable_keep_alive",
                           "no",
                           nullptr};
  mg_callbacks callbacks{};
  mg_init_data init{};
  init.callbacks = &callbacks;
  init.user_data = this;
  init.configuration_options = options;
  char error_text[256] = {0};
  mg_error_data error{};
  error.text = error_text;
  error.text_buffer_size = sizeof error_text;
  ctx_ = mg_start2(&init, &error);
  if (!ctx_) {
    return core::Error{"cannot listen on " + opts.listen_address + ": " +
                       (error_text[0] ? error_text : "civetweb failed to start")};
  }
  mg_set_request_handler(ctx_, "/", &HttpServer::dispatch, this);
  mg_server_port server_ports[4];
  int n = mg_get_server_ports(ctx_, 4, server_ports);
  port_ = n > 0 ? server_ports[0].port : 0;
  return core::Status::Ok();
}

void HttpServer::stop() {
  if (ctx_) {
    mg_stop(ctx_);
    ctx_ = nullptr;
  }
}

}  // namespace fabricwatch::exporter
