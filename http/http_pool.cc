#include "http/http_pool.h"

#include "http/web_security.h"

namespace fabricwatch::http {

HttpResponse unauthorizedResponse() {
  HttpResponse r{401, "text/plain; charset=utf-8", "Unauthorized\n"};
  r.extra_headers.emplace_back("WWW-Authenticate", "Basic realm=\"fabricwatch\"");
  return r;
}

HttpPool::HttpPool(int threads, Handle handle, Post post)
    : handle_(std::move(handle)), post_(std::move(post)) {
  for (int i = 0; i < std::max(1, threads); ++i) workers_.emplace_back([this] { workerLoop(); });
  auth_ = std::thread([this] { authLoop(); });
}

HttpPool::~HttpPool() { stop(); }

void HttpPool::submit(HttpJob job) {
  std::lock_guard lock(mu_);
  jobs_.push_back(std::move(job));
  jobs_cv_.notify_one();
}

bool HttpPool::submitAuth(HttpJob job) {
  std::lock_guard lock(mu_);
  if (auth_jobs_.size() >= kMaxAuthQueue) return false;
  auth_jobs_.push_back(std::move(job));
  auth_cv_.notify_one();
  return true;
}

void HttpPool::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  jobs_cv_.notify_all();
  auth_cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  if (auth_.joinable()) auth_.join();
}

void HttpPool::workerLoop() {
  while (true) {
    HttpJob job;
    {
      std::unique_lock lock(mu_);
      jobs_cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    post_(job.conn, handle_(job.request));
  }
}

void HttpPool::authLoop() {
  while (true) {
    HttpJob job;
    {
      std::unique_lock lock(mu_);
      auth_cv_.wait(lock, [&] { return stopping_ || !auth_jobs_.empty(); });
      if (stopping_) return;
      job = std::move(auth_jobs_.front());
      auth_jobs_.pop_front();
    }
    bool ok = job.security->basicAuth()->verify(*job.credentials);
    job.credentials.reset();
    if (!ok) {
      post_(job.conn, unauthorizedResponse());
      continue;
    }
    submit(std::move(job));
  }
}

}  // namespace fabricwatch::http
