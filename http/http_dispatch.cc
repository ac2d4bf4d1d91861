// A request from its bytes to its answer (http_io_thread.h): a complete head is parsed (or
// refused with its status and counted), then rate-limited per client, checked for basic auth
// and routed.
// Routes marked Runs::kIoThread are answered here at once; a request whose password still needs
// a bcrypt check goes to the password thread first, so that guessing never occupies the
// handler pool (its queue is shared fairly by client address: http_pool.h); the rest go to the
// pool, whose answers come back through post().

#include <unistd.h>

#include "http/http_io_thread.h"
#include "http/web_security.h"

namespace fabricwatch::http {
namespace {

HttpResponse plainText(int status, std::string body) {
  return HttpResponse{status, "text/plain; charset=utf-8", std::move(body)};
}

}  // namespace

// Parses what has arrived; dispatches a complete request or refuses a bad one.
void HttpServer::Impl::processInput(Conn& c) {
  HeadLimits limits{static_cast<size_t>(opts.max_request_bytes), opts.max_headers};
  if (!c.in.empty() && c.scanner.ready(c.in, limits)) {
    std::optional<HeadError> error;
    auto head = parseRequestHead(c.in, limits, &error);
    if (error) {
      count(dropOf(*error));
      c.route = "other";
      c.started = Clock::now();
      c.head_request = false;
      respond(c, plainText(statusOf(*error), std::string(statusText(statusOf(*error))) + "\n"),
              false, false);
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

// The web configuration's rate_limit, a bucket per client: the address for an unauthenticated
// request (no credentials, wrong ones, or ones not verified yet), the address and user for one
// whose credentials are verified (a cache hit). So a flood, authenticated or not, empties only
// its own bucket: it never makes another address's scrapes, nor an authenticated scraper's
// at its own address, answer 429. Password guesses are charged to their address.
bool HttpServer::Impl::rateLimited(const WebSecurity* sec, const Conn& c, const std::string* user) {
  if (!sec || !sec->rateLimit() || sec->rateLimit()->interval.count() <= 0) return false;
  if (rate_config != sec) {  // a new configuration starts with full buckets
    rate_config = sec;
    rate.reset(sec->rateLimit()->burst, sec->rateLimit()->interval);
  }
  std::string key = c.addr;
  if (user) key.append(1, '\0').append(*user);
  return !rate.take(key, Clock::now());
}

void HttpServer::Impl::dispatch(Conn& c, ParsedHead head) {
  enter(c, State::kBusy);
  interest(c, 0);
  c.keep_alive = head.keep_alive && !c.peer_eof;
  c.route = routeLabel(head.request.path);
  c.started = Clock::now();
  bool is_head = head.request.method == "HEAD";
  c.head_request = is_head;
  auto sec = currentSecurity();
  const BasicAuth* auth = sec ? sec->basicAuth() : nullptr;
  std::optional<Credentials> creds;
  bool verified = false;
  if (auth) {
    creds = parseBasicAuthorization(head.request.header("authorization"));
    verified = creds && auth->cached(*creds);
  }
  if (rateLimited(sec.get(), c, verified ? &creds->user : nullptr)) {
    respond(c, plainText(429, "Too Many Requests\n"), c.keep_alive, is_head);
    return;
  }
  HttpJob job{c.id, std::move(head.request), sec, std::nullopt};
  if (auth && !opts.auth_exempt_paths.count(job.request.path)) {
    if (!creds) {
      respond(c, unauthorizedResponse(), c.keep_alive, is_head);
      return;
    }
    if (!verified) {
      job.credentials = std::move(creds);
      HttpPool::AuthAdmission admitted = pool->submitAuth(std::move(job), c.addr);
      if (!admitted.queued) {
        authBusy(c);
        return;
      }
      if (admitted.displaced) {
        auto it = conns.find(*admitted.displaced);
        if (it != conns.end()) authBusy(*it->second);
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

// 503 for a request the password queue has no room for (http_pool.h: each address's share).
void HttpServer::Impl::authBusy(Conn& c) {
  count(HttpDrop::kAuthBusy);
  HttpResponse busy = plainText(503, "Service Unavailable: too many logins at once\n");
  busy.extra_headers.emplace_back("Retry-After", "1");
  respond(c, std::move(busy), false, c.head_request);
}

// The observer's route label: a route's path, or "other", so that what clients make up never
// adds a label value.
std::string HttpServer::Impl::routeLabel(const std::string& path) const {
  return owner.routes_.count(path) ? path : "other";
}

bool HttpServer::Impl::onIoThread(const std::string& path) const {
  auto it = owner.routes_.find(path);
  return it != owner.routes_.end() && it->second.runs == Runs::kIoThread;
}

// Runs on the I/O thread for kIoThread routes and on a pool thread for the others.
HttpResponse HttpServer::Impl::handle(const HttpRequest& req) {
  auto it = owner.routes_.find(req.path);
  if (it == owner.routes_.end()) return plainText(404, "404 page not found\n");
  if (req.method != "GET" && req.method != "HEAD") {
    HttpResponse r = plainText(405, "method not allowed\n");
    r.extra_headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  try {
    return it->second.handler(req);
  } catch (const std::exception& e) {
    return plainText(500, std::string("internal error: ") + e.what() + "\n");
  }
}

// The pool's side (its threads, and the password thread's 401s): hands an answer to the I/O
// thread and wakes it.
void HttpServer::Impl::post(uint64_t conn, HttpResponse r) {
  {
    std::lock_guard lock(done_mu);
    done.emplace_back(conn, std::move(r));
  }
  uint64_t one = 1;
  (void)!write(wake_fd, &one, sizeof one);
}

// Back on the I/O thread: writes the answers post() queued.
void HttpServer::Impl::completeResponses() {
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

}  // namespace fabricwatch::http
