// The HTTP server's public face (http_server.h): its routes, and starting and stopping the
// I/O thread (http_io_thread.h lists the files that do its work) and the handler pool.

#include "http/http_server.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "http/http_io_thread.h"
#include "http/http_socket.h"
#include "http/web_security.h"

namespace fabricwatch::http {

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
  ev.data.u64 = Impl::kListenerId;
  epoll_ctl(impl->epoll_fd, EPOLL_CTL_ADD, impl->listen_fd, &ev);
  ev.data.u64 = Impl::kWakeId;
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
